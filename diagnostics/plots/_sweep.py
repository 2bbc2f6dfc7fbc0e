"""A sweep's validation curves: the selection metric at every validation check of each run, one line per seed."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure


def validation_curves(runs: str | Path | Iterable) -> Figure:
    """Draw each run's validation curve (``metrics.json`` ``history``): one panel per experiment and language.

    Parameters
    ----------
    runs : str, Path or iterable of Run
        A run store, experiment or run folder (its runs listed by :func:`diagnostics.finetune.list_runs`), or the
        runs themselves. Runs without a readable ``metrics.json`` (pending, failed, still training) are left out.

    Returns
    -------
    matplotlib.figure.Figure
        One panel per (experiment, language); in it one line per run (labelled ``seed=<k>``, with the model's name
        when the panel holds several models): its selection metric (``validation_<metric>``) against the step.

    Raises
    ------
    ValueError
        When no run has a validation history.
    """
    from ..finetune import list_runs

    runs = list_runs(runs) if isinstance(runs, (str, Path)) else list(runs)
    curves = _histories(runs)
    if curves.empty:
        raise ValueError("no run has a validation history (metrics.json) yet")
    groups = list(curves.groupby(["experiment", "language"], sort=False, dropna=False))
    columns = min(len(groups), 3)
    rows = -(-len(groups) // columns)
    fig = Figure(figsize=(5.2 * columns, 3.6 * rows), layout="constrained")
    axes = fig.subplots(rows, columns, squeeze=False).ravel()
    for ax, ((experiment, language), panel) in zip(axes, groups):
        several = panel["model"].nunique() > 1
        for (model, seed), line in panel.groupby(["model", "seed"], sort=False, dropna=False):
            label = f"{model} seed={seed}" if several else f"seed={seed}"
            ax.plot(line["step"], line["value"], marker="o", markersize=3, linewidth=1.1, label=label)
        metrics = ", ".join(dict.fromkeys(panel["metric"]))
        ax.set_title(f"{experiment} / {language}", fontsize=9)
        ax.set_xlabel("training step")
        ax.set_ylabel(f"validation {metrics}")
        ax.legend(fontsize=7, loc="best")
    for ax in axes[len(groups):]:
        ax.set_axis_off()
    fig.suptitle("Validation curves per run (the selection metric at each check)")
    return fig


def _histories(runs: list) -> pd.DataFrame:
    """One row per run and validation check: coordinates, ``metric``, ``step`` and ``value``."""
    rows = []
    for run in runs:
        try:
            metrics = run.metrics()
        except (FileNotFoundError, ValueError):
            continue
        metric = str(metrics.get("selection_metric", "accuracy"))
        for check in metrics.get("history") or []:
            value = check.get(f"validation_{metric}") if isinstance(check, dict) else None
            if value is not None:
                rows.append({"experiment": run.experiment, "language": run.language, "model": run.model,
                             "seed": run.seed, "metric": metric, "step": check.get("step"), "value": float(value)})
    return pd.DataFrame(rows, columns=["experiment", "language", "model", "seed", "metric", "step", "value"])
