"""A second probing run on cached vectors against the first run (target ratio >= 20).

Probes every layer of a model (the embedded model, or with ``--random`` a randomly initialised BERT of its
size: hidden 384, 12 layers, 12 heads, intermediate 1536, XLM-R vocabulary) for the three coarse tasks on real
RTE train/validation pairs (rule-annotated) and AX-b pairs, three times in one process:

* ``first``: cold cache: load the model, encode every sentence (all layers in one pass), fit the probes;
* ``second``: the identical call: vectors and probe tables come from the cache (target: >= 20x faster);
* ``refit``: the same call with ``reuse_results=False``: cached vectors, probes fitted again (shows what the
  vector cache alone saves: model loading and the forward passes).

The rule annotations are computed before the timed runs (they are cached separately and are not what this
measures). Prints and saves timings and ratios to ``benchmarks/results/bench_probe_cache.json``.

Run: ``python benchmarks/bench_probe_cache.py [--random] [--train 300] [--test 200] [--threads 2]``
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"
TASKS = ("logic", "lexical_semantics", "predicate_argument_structure")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--train", type=int, default=300, help="RTE train+validation pairs")
    parser.add_argument("--test", type=int, default=200, help="AX-b pairs")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--random", action="store_true", help="random model of the embedded model's size")
    args = parser.parse_args()
    import sklearn
    import torch
    import transformers

    from diagnostics.models import resolve_model, tiny_random_model
    from diagnostics.probe import probe_models
    from diagnostics.probe import annotated_training_frame

    torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        folder = (tiny_random_model(tmp / "random", seed=0, hidden_size=384, num_hidden_layers=12,
                                    num_attention_heads=12, intermediate_size=1536)
                  if args.random else resolve_model("embedded").path)
        cache = tmp / "cache"
        annotated_training_frame("en", max_train=args.train, seed=0, cache_dir=cache)  # untimed
        call = dict(models={"pretrained": folder}, lang="en", tasks=TASKS, cache_dir=cache, max_train=args.train,
                    max_test=args.test, seed=0)
        timings, tables = {}, {}
        for name, extra in [("first", {}), ("second", {}), ("refit", {"reuse_results": False})]:
            start = time.perf_counter()
            tables[name] = probe_models(**call, **extra)
            timings[name] = time.perf_counter() - start
            print(f"{name:>6}: {timings[name]:7.2f} s")
        identical = bool(tables["first"].equals(tables["second"]) and tables["first"].equals(tables["refit"]))
        cache_bytes = sum(p.stat().st_size for p in cache.glob("*.npy"))
    result = {"benchmark": "second probing run on cached vectors vs first run",
              "model": "random (embedded size)" if args.random else "embedded multilingual-e5-small",
              "train_pairs": args.train, "test_pairs": args.test, "tasks": list(TASKS), "layers": 13,
              "threads": args.threads, "timings_s": timings,
              "ratio_first_vs_second": timings["first"] / timings["second"],
              "ratio_first_vs_refit_on_cached_vectors": timings["first"] / timings["refit"],
              "target": "ratio_first_vs_second >= 20", "tables_identical": identical,
              "vector_cache_bytes_float16": cache_bytes, "load_average": os.getloadavg()[0],
              "versions": {"torch": torch.__version__, "transformers": transformers.__version__,
                           "scikit-learn": sklearn.__version__}}
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "bench_probe_cache.json").write_text(json.dumps(result, indent=2))
    print(f"ratio first / second = {result['ratio_first_vs_second']:.1f} (target >= 20); first / refit on cached "
          f"vectors = {result['ratio_first_vs_refit_on_cached_vectors']:.2f}; identical tables: {identical}")


if __name__ == "__main__":
    main()
