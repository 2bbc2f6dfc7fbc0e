"""The demo recipe (configs/demo.yaml) end to end: minutes, and whether every run really learned.

Runs the sweep (or only summarises an existing run store with ``--summarise DIR``) and checks the demo's bar:
on every language, validation MCC clearly above 0 and at most a third of the 33 diagnostic
categories with constant predictions. Writes ``benchmarks/results/bench_finetune_demo.json``.

Run: ``python benchmarks/bench_finetune_demo.py [--out /tmp/demo-runs] [--set seeds=[0,1]]``
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"


def summarise(experiment_dir: Path) -> list[dict]:
    rows = []
    for metrics_path in sorted(experiment_dir.glob("*/*/seed=*/metrics.json")):
        m = json.loads(metrics_path.read_text())
        run = json.loads((metrics_path.parent / "config.json").read_text())["run"]
        diag_name, diag = next(iter(m["diagnostics"].items()))
        r = m["resources"]
        rows.append({"language": run["language"], "seed": run["seed"], "best_epoch": m["best"]["epoch"],
                     "validation_mcc": m["best"]["validation_mcc"],
                     "validation_accuracy": m["best"]["validation_accuracy"], "diagnostic": diag_name,
                     "diagnostic_mcc": diag["mcc"], "mean_category_mcc": diag["mean_category_mcc"],
                     "constant_categories": diag["constant_categories"], "categories": diag["categories"],
                     "wall_s": r["total_s"], "cpu_s": r["cpu_s"], "train_examples_per_s": r["train_examples_per_s"],
                     "peak_rss_mib": r["peak_rss_mib"], "load_average_1min": r["load_average_1min"]})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default="/tmp/diagnostics-demo-bench", help="output_dir of the sweep")
    parser.add_argument("--set", dest="overrides", action="append", default=[])
    parser.add_argument("--summarise", type=Path, help="only summarise this experiment folder")
    args = parser.parse_args()
    from diagnostics.finetune import load_config, run_sweep

    cfg = load_config(ROOT / "configs" / "demo.yaml", [f"output_dir={args.out}", "progress=false", *args.overrides])
    total_s = None
    if args.summarise is None:
        t0 = time.perf_counter()
        run_sweep(cfg)
        total_s = time.perf_counter() - t0
    rows = summarise(args.summarise or Path(cfg.output_dir) / cfg.experiment)
    ok = all(r["validation_mcc"] > 0.05 and r["constant_categories"] <= r["categories"] / 3 for r in rows)
    result = {"benchmark": "demo recipe (configs/demo.yaml)", "config": cfg.to_dict(), "runs": rows,
              "sweep_wall_minutes": None if total_s is None else total_s / 60,
              "all_runs_learned": ok, "load_average_1min_at_end": os.getloadavg()[0]}
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "bench_finetune_demo.json").write_text(json.dumps(result, indent=2, default=str))
    for r in rows:
        print(f"{r['language']} seed {r['seed']}: val MCC {r['validation_mcc']:.3f}, {r['diagnostic']} MCC "
              f"{r['diagnostic_mcc']:.3f}, constant categories {r['constant_categories']}/{r['categories']}, "
              f"{r['wall_s']:.0f} s wall, {r['cpu_s']:.0f} s CPU")
    if total_s is not None:
        print(f"sweep: {total_s / 60:.1f} min wall; every run learned: {ok}")


if __name__ == "__main__":
    main()
