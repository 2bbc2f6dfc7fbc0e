"""MDL probing against the accuracy probes it sits beside (target: at most 2x their time), on cached vectors.

Probes every layer of a pretrained model and of its fine-tuned seeds (a run store's ``seed=<k>`` runs of one
experiment, language and model) on the study's protocol: rule-annotated RTE-style train + validation pairs, L2
strength chosen on the annotated RTE-style test split, gold-tagged diagnostic pairs. The vectors are extracted once
(untimed; the sentence-vector cache), then, ``--repeat`` times in one process:

* ``accuracy``: :func:`diagnostics.probe.probe_models` with ``reuse_results=False`` (the L2 grid, the control
  task: what ``diagnostics probe run`` fits);
* ``mdl``: :func:`diagnostics.probe.probe_mdl` as ``diagnostics probe run --mdl`` runs it: the online code of every
  task and its control task with the default fixed L2 strength;
* ``mdl_probe_alpha``: the same with ``alpha="probe"`` given the accuracy table (the accuracy probes' strengths per
  task and layer; no refit of the accuracy probes);
* ``mdl_probe_alpha_selecting``: ``alpha="probe"`` without the table and without cached results, so it fits the
  accuracy probes again to learn their strengths (the worst case).

Each repeat times the four right after one another; the ratios are the medians over repeats of each MDL time over
the accuracy time of the same repeat (the machine is shared: neighbours' load changes within minutes). The result
JSON also holds the figures: per task and layer, the pretrained model's and each seed's compression, codelength and
MDL selectivity, beside their accuracy and balanced accuracy, and how far the seeds' mean lies from the pretrained
model in units of the seeds' spread (``separation``), for each metric.

Stores: ``--store tiny`` builds the tiny scale's base runs (a 2-layer random BERT fine-tuned with 2 seeds, what
``tests/pipeline/test_main_job.py`` builds) in a temporary folder; ``--store PATH`` reads a finished run store
(``PATH/<experiment>/<lang>/<model>/seed=<k>``) and ``--pretrained`` names its pretrained model (default
``embedded``).

Run: ``python benchmarks/bench_probe_mdl.py --store tiny`` or
``python benchmarks/bench_probe_mdl.py --store runs/demo --train 400 --test 400 --label demo``
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"
TASKS = "logic,lexical_semantics,predicate_argument_structure,negation"


def tiny_store(root: Path) -> tuple[str, Path]:
    """The tiny scale's base runs (as the tiny main job trains them) under ``root``; (pretrained, model folder)."""
    from diagnostics.pipeline import ScalePlan, ensure_runs, pretrained_models

    plan = ScalePlan.resolve("tiny", root)
    ensure_runs(plan, only=("base",))
    name, pretrained = next(iter(pretrained_models(plan).items()))
    return str(pretrained), root / "base" / "en" / name


def timed(call):
    start = time.perf_counter()
    value = call()
    return time.perf_counter() - start, value


def separation(table, metric: str) -> list[dict]:
    """Per task and layer: the pretrained value, the seeds' values, their mean and the mean's distance from the
    pretrained value in units of the seeds' standard deviation."""
    rows = []
    for (task, layer), group in table.groupby(["task", "layer"]):
        base = group.loc[group["seed"].isna(), metric]
        seeds = group.loc[group["seed"].notna()].sort_values("seed")
        values = seeds[metric].to_numpy(dtype=float)
        sd = float(values.std(ddof=1)) if len(values) > 1 else float("nan")
        sd = sd if sd > 1e-12 * max(1.0, abs(float(values.mean()))) else float("nan")
        pretrained = float(base.iloc[0]) if len(base) else float("nan")
        diff = float(values.mean() - pretrained) if len(values) else float("nan")
        rows.append({"task": task, "layer": int(layer), "pretrained": pretrained,
                     "seeds": [float(v) for v in values], "seed_mean": float(values.mean()), "seed_sd": sd,
                     "difference": diff, "separation": diff / sd if sd == sd else None})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--store", default="tiny", help="'tiny' or a run-store folder")
    parser.add_argument("--pretrained", default="embedded", help="pretrained model of --store PATH")
    parser.add_argument("--experiment", default="base")
    parser.add_argument("--lang", default="en")
    parser.add_argument("--train", type=int, default=80, help="training (and selection) pairs")
    parser.add_argument("--test", type=int, default=80, help="diagnostic pairs")
    parser.add_argument("--tasks", default=TASKS)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--cache", default=None, help="vector cache folder (default: a temporary one)")
    parser.add_argument("--label", default=None, help="result name: bench_probe_mdl_<label>.json")
    args = parser.parse_args()
    import numpy as np
    import sklearn
    import torch

    from diagnostics.probe import discover_runs, probe_mdl, probe_models, resolve_models

    torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        if args.store == "tiny":
            pretrained, model_dir = tiny_store(tmp / "runs")
        else:
            pretrained = next(iter(resolve_models([args.pretrained]).values()))
            model_dir = next((Path(args.store) / args.experiment / args.lang).iterdir())
        models = {"pretrained": pretrained, **discover_runs(model_dir)}
        cache = Path(args.cache) if args.cache else tmp / "cache"
        call = dict(models=models, lang=args.lang, tasks=args.tasks, cache_dir=cache, max_train=args.train,
                    max_test=args.test, seed=0)
        warm_s, accuracy = timed(lambda: probe_models(**call))  # vectors (and annotations) into the cache
        timings = {"accuracy": [], "mdl": [], "mdl_probe_alpha": [], "mdl_probe_alpha_selecting": []}
        for _ in range(args.repeat):
            seconds, accuracy = timed(lambda: probe_models(**call, reuse_results=False))
            timings["accuracy"].append(seconds)
            seconds, codes = timed(lambda: probe_mdl(**call, reuse_results=False))
            timings["mdl"].append(seconds)
            seconds, by_probe = timed(lambda: probe_mdl(**call, alpha="probe", accuracy=accuracy, reuse_results=False))
            timings["mdl_probe_alpha"].append(seconds)
            seconds, _ = timed(lambda: probe_mdl(**call, alpha="probe", reuse_results=False))
            timings["mdl_probe_alpha_selecting"].append(seconds)
        gold = probe_mdl(**call, data="test")
    ratios = {name: float(np.median([t / a for t, a in zip(values, timings["accuracy"])]))
              for name, values in timings.items() if name != "accuracy"}
    figures = {"alpha": float(codes["alpha"].iloc[0]),
               "train": {metric: separation(codes, metric)
                         for metric in ("compression", "online_codelength", "control_compression", "mdl_selectivity")},
               "train_probe_alpha": {metric: separation(by_probe, metric)
                                     for metric in ("compression", "mdl_selectivity", "alpha")},
               "train_probe_alpha_note": "alpha: the accuracy probes' choices (their separation is meaningless)",
               "test_gold": {metric: separation(gold, metric) for metric in ("compression", "mdl_selectivity")},
               "accuracy": {metric: separation(accuracy, metric)
                            for metric in ("accuracy", "balanced_accuracy", "selectivity")}}
    label = args.label or ("tiny" if args.store == "tiny" else Path(args.store).name)
    result = {"benchmark": "MDL probes (online code + control) vs the accuracy probes, on cached vectors",
              "store": "tiny scale base runs" if args.store == "tiny" else f"{Path(args.store).name} store",
              "pretrained": Path(str(pretrained)).name, "models": list(models), "language": args.lang,
              "tasks": args.tasks.split(","), "train_pairs": int(codes["n_pairs"].iloc[0]),
              "test_pairs": int(gold["n_pairs"].iloc[0]), "layers": int(codes["layer"].max()) + 1,
              "repeat": args.repeat, "timings_s": timings, "first_call_with_extraction_s": warm_s,
              "ratio_vs_accuracy": ratios, "target": "ratio_vs_accuracy['mdl'] <= 2", "figures": figures,
              "host": {"cpus": os.cpu_count(), "load_average": os.getloadavg()[0], "python": platform.python_version(),
                       "scikit-learn": sklearn.__version__, "torch": torch.__version__}}
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"bench_probe_mdl_{label}.json").write_text(json.dumps(result, indent=1))
    print(f"accuracy probes {np.median(timings['accuracy']):.2f} s (median); MDL / accuracy (median of the repeats): "
          + ", ".join(f"{name} {ratio:.2f}" for name, ratio in ratios.items()) + " (target: mdl <= 2)")
    for task in codes["task"].unique():
        print(f"\n{task}: layer, compression (pretrained | seeds), MDL selectivity bits (pretrained | seeds), "
              f"balanced accuracy (pretrained | seeds)")
        rows = {name: [r for r in figures[part][name] if r["task"] == task]
                for part, name in (("train", "compression"), ("train", "mdl_selectivity"),
                                   ("accuracy", "balanced_accuracy"))}
        for comp, sel, bal in zip(rows["compression"], rows["mdl_selectivity"], rows["balanced_accuracy"]):
            print(f"  {comp['layer']:>2}  {comp['pretrained']:.3f} | {' '.join(f'{v:.3f}' for v in comp['seeds'])}"
                  f"   {sel['pretrained']:7.1f} | {' '.join(f'{v:7.1f}' for v in sel['seeds'])}"
                  f"   {bal['pretrained']:.3f} | {' '.join(f'{v:.3f}' for v in bal['seeds'])}")


if __name__ == "__main__":
    main()
