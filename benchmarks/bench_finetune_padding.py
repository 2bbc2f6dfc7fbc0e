"""Dynamic padding against padding to max length on RTE's length distribution (target ratio >= 1.5).

Our training loop on an RTE train subset (embedded model, or a random model of its size with ``--random``;
full fine-tuning with word embeddings frozen, batch 16, max length 128), three ways:

* ``static``: every batch padded to 128 tokens (the baseline);
* ``dynamic``: each batch padded to its longest member, random batches;
* ``dynamic+bucketing``: the same, batches grouped by length (``length_bucketing``, still a seeded random order);

all three computing every padded position (``skip_padding: false``), and with our default of skipping padded
positions in the token-wise layers (:mod:`diagnostics.finetune._unpadding`):

* ``dynamic+skip``: random batches, padded positions skipped (the loop's default);
* ``dynamic+bucketing+skip``: the demo's setting.

Rounds alternate the settings so machine-load drift hits all. Prints and saves examples/s and the ratios to
``benchmarks/results/bench_finetune_padding.json``.

Run: ``python benchmarks/bench_finetune_padding.py [--steps 12] [--rounds 2] [--threads 2]``
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"
SETTINGS = {"static": {"pad_to_max_length": True, "skip_padding": False}, "dynamic": {"skip_padding": False},
            "dynamic+bucketing": {"length_bucketing": True, "skip_padding": False},
            "dynamic+skip": {}, "dynamic+bucketing+skip": {"length_bucketing": True}}


def measure(folder: Path, setting: str, steps: int, batch: int, threads: int, tmp: Path, tag: str) -> dict:
    from diagnostics.finetune import SweepConfig
    from diagnostics.finetune._train import RunSpec, spec_dict, train_run

    # a fixed 1600-example pool keeps the length distribution RTE's; max_steps bounds the work
    cfg = SweepConfig(experiment=f"{setting}-{tag}".replace("+", "_"), output_dir=str(tmp / "runs"),
                      models=[{"name": "m", "path": str(folder)}], languages=["en"], seeds=[0],
                      data={"en": {"diagnostics": []}}, train_size=1600, max_steps=steps, max_seq_length=128,
                      batch_size=batch, lr=2e-5, max_epochs=1, freeze_embeddings=True, num_threads=threads,
                      progress=False, **SETTINGS[setting])
    res = train_run(RunSpec(cfg.to_dict(), "en", spec_dict(cfg.models[0]), 0))["metrics"]["resources"]
    return {k: res[k] for k in ("train_examples_per_s", "train_s", "mean_padded_length", "mean_length")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--random", action="store_true", help="random model of the embedded model's size")
    args = parser.parse_args()
    import torch
    import transformers

    from diagnostics.models import resolve_model, tiny_random_model

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        folder = (tiny_random_model(tmp / "random", seed=0, hidden_size=384, num_hidden_layers=12,
                                    num_attention_heads=12, intermediate_size=1536)
                  if args.random else resolve_model("embedded").path)
        rounds = []
        for r in range(args.rounds):
            order = list(SETTINGS)[r % len(SETTINGS):] + list(SETTINGS)[:r % len(SETTINGS)]  # rotate who goes first
            row = {s: measure(folder, s, args.steps, args.batch, args.threads, tmp, str(r)) for s in order}
            row["load_average"] = os.getloadavg()[0]
            rounds.append(row)
            print(f"round {r}: " + ", ".join(f"{s} {row[s]['train_examples_per_s']:.2f} ex/s "
                                             f"(padded length {row[s]['mean_padded_length']:.0f})" for s in SETTINGS))
    best = {s: max(r[s]["train_examples_per_s"] for r in rounds) for s in SETTINGS}
    result = {"benchmark": "dynamic padding vs padding to max length, RTE train lengths",
              "model": "random" if args.random else "embedded multilingual-e5-small", "steps": args.steps,
              "batch_size": args.batch, "threads": args.threads, "max_seq_length": 128, "rounds": rounds,
              "best_examples_per_s": best,
              "ratio_dynamic_vs_static": best["dynamic"] / best["static"],
              "ratio_dynamic_bucketing_vs_static": best["dynamic+bucketing"] / best["static"],
              "ratio_dynamic_skip_vs_static": best["dynamic+skip"] / best["static"],
              "ratio_dynamic_bucketing_skip_vs_static": best["dynamic+bucketing+skip"] / best["static"],
              "target": ">= 1.5", "versions": {"torch": torch.__version__, "transformers": transformers.__version__}}
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "bench_finetune_padding.json").write_text(json.dumps(result, indent=2))
    print(f"ratio vs static (target >= 1.5): dynamic {result['ratio_dynamic_vs_static']:.3f}, dynamic+bucketing "
          f"{result['ratio_dynamic_bucketing_vs_static']:.3f}, dynamic+skip {result['ratio_dynamic_skip_vs_static']:.3f}, "
          f"dynamic+bucketing+skip {result['ratio_dynamic_bucketing_skip_vs_static']:.3f}")


if __name__ == "__main__":
    main()
