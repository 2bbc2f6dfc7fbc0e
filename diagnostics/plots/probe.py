"""Probing figures: accuracy by layer, one line per fine-tuned seed, the pretrained reference and a seed band
(the study's Figures 16-18)."""

from __future__ import annotations

from matplotlib.figure import Figure
import numpy as np
import pandas as pd
import seaborn as sns

_TITLES = {"logic": "Logic", "lexical_semantics": "Lexical Semantics",
           "predicate_argument_structure": "Predicate-Argument Structure", "knowledge": "Knowledge"}


def accuracy_by_layer(table: pd.DataFrame, *, metric: str = "accuracy", language: str | None = None,
                      tasks: list[str] | None = None, band: bool = True, baseline: bool = True,
                      height: float = 3.2):
    """Line plot of a probing metric by layer, one panel per task.

    Each fine-tuned seed is a thin coloured line, the pretrained model (rows whose ``seed`` is missing) a thick
    black dashed line, the seed mean +/- one standard deviation a shaded band, and the majority baseline a
    grey dotted line (for ``accuracy`` and ``control``).

    Parameters
    ----------
    table : pandas.DataFrame
        From :func:`diagnostics.probe.probe_models` (columns ``model, seed, language, task, layer`` + metric).
    metric : {"accuracy", "selectivity", "control"}
    language : str, optional
        Keep only this language (required when the table holds several).
    tasks : list of str, optional
        Panels to draw, in this order; all tasks of the table by default.
    band : bool
        Draw the seed-variance band (needs at least two seeds).
    baseline : bool
        Draw the majority baseline.
    height : float
        Inches per panel row.

    Returns
    -------
    matplotlib.figure.Figure
    """
    if metric not in table.columns:
        raise KeyError(f"no column {metric!r} in the probing table")
    if language is not None:
        table = table[table["language"] == language]
    languages = table["language"].unique()
    if len(languages) != 1:
        raise ValueError(f"the table holds {len(languages)} languages ({', '.join(map(str, languages))}); "
                         f"pass language=")
    tasks = list(tasks) if tasks is not None else list(dict.fromkeys(table["task"]))
    missing = set(tasks) - set(table["task"])
    if missing:
        raise ValueError(f"tasks not in the table: {', '.join(sorted(missing))}")
    tuned = table[table["seed"].notna()]
    base = table[table["seed"].isna()]
    seeds = sorted(tuned["seed"].unique())
    palette = dict(zip(seeds, sns.color_palette("viridis", n_colors=max(len(seeds), 1))))
    fig = Figure(figsize=(4.2 * len(tasks), height))
    axes = fig.subplots(1, len(tasks), sharey=True, squeeze=False)
    for ax, task in zip(axes[0], tasks):
        for seed in seeds:
            rows = tuned[(tuned["task"] == task) & (tuned["seed"] == seed)].sort_values("layer")
            ax.plot(rows["layer"], rows[metric], color=palette[seed], lw=1.2, alpha=0.85, marker="o", ms=2.5,
                    label=f"seed {seed}")
        if band and len(seeds) >= 2:
            stats = tuned[tuned["task"] == task].groupby("layer")[metric].agg(["mean", "std"])
            ax.fill_between(stats.index, stats["mean"] - stats["std"], stats["mean"] + stats["std"],
                            color="tab:blue", alpha=0.15, lw=0, label="seed mean ± σ")
        for model, rows in base[base["task"] == task].groupby("model"):
            rows = rows.sort_values("layer")
            ax.plot(rows["layer"], rows[metric], color="black", lw=2, ls="--", label=f"{model} (pretrained)")
        if baseline and metric in ("accuracy", "control"):
            majority = table.loc[table["task"] == task, "majority"]
            if majority.notna().any():
                ax.axhline(float(majority.mean()), color="grey", ls=":", lw=1.2, label="majority")
        if metric == "selectivity":
            ax.axhline(0.0, color="grey", ls=":", lw=1.0)
        ax.set_title(_TITLES.get(task, task))
        ax.set_xlabel("layer (0 = embeddings)")
        layers = np.sort(table["layer"].unique())
        ax.set_xticks(layers[:: max(1, len(layers) // 7)])
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel(f"probe {metric} ({languages[0]})")
    handles, labels = axes[0][-1].get_legend_handles_labels()
    unique = dict(zip(labels, handles))
    fig.legend(unique.values(), unique.keys(), loc="center left", bbox_to_anchor=(1.0, 0.5), frameon=False)
    fig.tight_layout()
    return fig


def seed_spread_by_layer(table: pd.DataFrame, *, metric: str = "accuracy", height: float = 3.0):
    """Heat map of the across-seed standard deviation of ``metric`` (rows: language x task, columns: layer).

    Parameters
    ----------
    table : pandas.DataFrame
        From :func:`diagnostics.probe.probe_models`; only fine-tuned rows (with a seed) are used.
    metric : str
    height : float
        Minimum figure height in inches.

    Returns
    -------
    matplotlib.figure.Figure
    """
    tuned = table[table["seed"].notna()]
    if tuned["seed"].nunique() < 2:
        raise ValueError("the seed spread needs at least two fine-tuned seeds")
    spread = tuned.groupby(["language", "task", "layer"])[metric].std().unstack("layer")
    spread.index = [f"{lang} · {_TITLES.get(task, task)}" for lang, task in spread.index]
    fig = Figure(figsize=(1.0 + 0.55 * spread.shape[1], max(height, 0.5 + 0.45 * len(spread))))
    ax = fig.subplots()
    sns.heatmap(spread, annot=True, fmt=".3f", cmap="rocket_r", cbar_kws={"label": f"σ of {metric} across seeds"},
                ax=ax, annot_kws={"fontsize": 7})
    ax.set_xlabel("layer (0 = embeddings)")
    ax.set_ylabel("")
    ax.set_title(f"Seed spread of probe {metric}")
    fig.tight_layout()
    return fig
