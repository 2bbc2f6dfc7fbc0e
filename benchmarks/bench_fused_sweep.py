"""Fused training through the real sweep: the study's recipe with ``fuse: 1`` and ``fuse: auto`` in one run.

Both arms run ``diagnostics sweep run configs/paper.yaml`` (the jiant recipe at batch 4, fp32) on the same
randomly initialised model and the same RTE training subset, English only, one epoch (one validation check), and
differ only in ``fuse``. The model is a BERT of mBERT's depth and width (12 x 768, 12 heads, 3072) whose embedding
has the embedded tokenizer's XLM-R vocabulary (250,037 rows; mBERT's own has 119,547 and its tokenizer cannot be
fetched offline): its optimizer state is 1.6x mBERT's, so the figures are conservative for the study's model.

Reported per arm, from the runs' ``metrics.json``: aggregate training pairs/s (every run's training pairs over the
training time of its job: a fused group's runs share one clock, so it is counted once), peak device memory, the
group size K, and the padding share of the training batches (1 - real tokens / padded tokens). ``speedup`` is
``fuse: auto`` over ``fuse: 1`` (fp32), per precision of ``--precisions`` (e.g. ``fp32,tf32,bf16``: the fused arm
runs once per precision). ``fuse: 1`` trains ``--solo-seeds`` runs one after another (its rate does not
depend on how many); ``fuse: auto`` trains ``--seeds`` runs. With ``--plan PLAN.json`` (``diagnostics pipeline
--scale paper --dry-run --json``) the plan's pairs to train are divided by each arm's rate: the projected upper bound
of the whole study in device-hours (training only; early stopping ends most runs sooner).

Run: ``python benchmarks/bench_fused_sweep.py --device cuda [--seeds 16] [--train-size 1000] [--precisions
fp32,tf32,bf16] [--plan plan.json]``;
writes ``benchmarks/results/bench_fused_sweep_<device>.json``. ``--size tiny --device cpu --seeds 3 --solo-seeds 1
--train-size 64`` checks the script itself on a CPU.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"
ROOT = Path(__file__).resolve().parent.parent
SIZES = {"mbert": {"hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12,
                   "intermediate_size": 3072, "max_position_embeddings": 512},
         "tiny": {}}


def sweep(config: Path, work: Path, name: str, seeds: int, fuse: str, device: str, train_size: int,
          precision: str = "fp32") -> dict:
    """One arm: ``diagnostics sweep run`` with the given ``fuse`` and precision; its figures from the runs' metrics."""
    overrides = [f"experiment={name}", f"output_dir={work / 'runs'}", f"seeds=[{','.join(map(str, range(seeds)))}]",
                 f"fuse={fuse}", f"device={device}", f"train_size={train_size}", "max_epochs=1",
                 f"precision={precision}",
                 "languages=[en]", "save_checkpoint=false", "progress=false",
                 f"models=[{{name: bench, path: {work / 'model'}}}]"]
    command = [sys.executable, "-m", "diagnostics", "sweep", "run", str(config)]
    for item in overrides:
        command += ["--set", item]
    started = time.perf_counter()
    subprocess.run(command, check=True, cwd=work, env=os.environ | {"HF_HUB_OFFLINE": "1"})
    wall = time.perf_counter() - started
    runs = sorted((work / "runs" / name / "en" / "bench").glob("seed=*/metrics.json"))
    metrics = [json.loads(path.read_text(encoding="utf-8")) for path in runs]
    jobs: dict[str, float] = {}
    pairs = padded = real = 0.0
    for run in metrics:
        resources = run["resources"]
        job = json.dumps(run.get("fused", {}).get("seeds")) if "fused" in run else str(id(run))
        jobs[job] = max(jobs.get(job, 0.0), resources["train_s"])
        pairs += resources["train_examples_per_s"] * resources["train_s"]
        padded += resources["mean_padded_length"]
        real += resources["mean_length"]
    train_s = sum(jobs.values())
    return {"fuse": fuse, "precision": precision, "runs": len(metrics), "jobs": len(jobs),
            "group_size": max(run.get("fused", {}).get("size", 1) for run in metrics),
            "train_pairs": int(round(pairs)), "train_s": round(train_s, 2),
            "pairs_per_s": round(pairs / train_s, 1) if train_s else None,
            "padding_share": round(1 - real / padded, 3) if padded else None,
            "peak_memory_mib": max(run["resources"]["train_peak_memory_mib"] for run in metrics),
            "peak_memory_kind": metrics[0]["resources"]["train_peak_memory_kind"], "wall_s": round(wall, 1)}


def project(plan_path: Path, pairs_per_s: float) -> dict:
    """Device-hours of a dry-run plan's runs still to train, at ``pairs_per_s``."""
    plan = json.loads(plan_path.read_text(encoding="utf-8"))
    todo = [r for r in plan["runs"] if r["state"] != "done"]
    pairs = sum(r["max_pair_epochs"] or 0 for r in todo)
    return {"runs": len(todo), "max_pairs": pairs, "max_hours": round(pairs / pairs_per_s / 3600, 1)}


def main() -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--size", choices=sorted(SIZES), default="mbert")
    parser.add_argument("--seeds", type=int, default=16, help="runs of the fused arm")
    parser.add_argument("--solo-seeds", type=int, default=2, help="runs of the fuse=1 arm")
    parser.add_argument("--fuse", default="auto", help="fuse of the fused arm (auto or K)")
    parser.add_argument("--train-size", type=int, default=1000)
    parser.add_argument("--config", type=Path, default=ROOT / "configs" / "paper.yaml")
    parser.add_argument("--precisions", default="fp32",
                        help="precisions of the fused arm, comma-separated (fp32,tf32,bf16); fuse=1 runs fp32")
    parser.add_argument("--plan", type=Path)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    import torch

    from diagnostics.models import tiny_random_model

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        tiny_random_model(work / "model", seed=0, **SIZES[args.size])
        arms = [sweep(args.config, work, "fuse-1", args.solo_seeds, "1", args.device, args.train_size)]
        arms += [sweep(args.config, work, f"fuse-{args.fuse}-{precision}", args.seeds, args.fuse, args.device,
                       args.train_size, precision) for precision in args.precisions.split(",")]
    cuda = args.device.startswith("cuda")
    report = {"device": torch.cuda.get_device_name() if cuda else platform.processor() or platform.machine(),
              "torch": torch.__version__, "size": args.size, "train_size": args.train_size,
              "config": str(args.config.relative_to(ROOT)) if args.config.is_relative_to(ROOT) else str(args.config),
              "arms": arms,
              "speedup": {arm["precision"]: round(arm["pairs_per_s"] / arms[0]["pairs_per_s"], 2) for arm in arms[1:]}}
    if args.plan is not None:
        report["projection"] = {f"fuse={arm['fuse']} {arm['precision']}": project(args.plan, arm["pairs_per_s"])
                                for arm in arms}
    out = args.out or RESULTS / f"bench_fused_sweep_{'cuda' if cuda else 'cpu'}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2), encoding="utf-8")
    print(json.dumps(report, indent=2))
    return report


if __name__ == "__main__":
    main()
