"""Probing figures: accuracy (or balanced accuracy, macro-F1, selectivity) by layer, one line per fine-tuned seed,
the pretrained reference, a seed band and the metric's chance level (the study's Figures 16-18); the same for MDL
probes (compression, codelength, MDL selectivity); and a comparison of probing protocols (annotator-trained vs
cross-validated on gold tags) on one set of panels."""

from __future__ import annotations

from matplotlib.figure import Figure
import numpy as np
import pandas as pd
import seaborn as sns

_TITLES = {"logic": "Logic", "lexical_semantics": "Lexical Semantics",
           "predicate_argument_structure": "Predicate-Argument Structure", "knowledge": "Knowledge"}


_LABELS = {"accuracy": "accuracy", "balanced_accuracy": "balanced accuracy", "macro_f1": "macro-F1",
           "control": "control accuracy", "control_balanced_accuracy": "control balanced accuracy",
           "selectivity": "selectivity", "compression": "MDL compression (uniform / online)",
           "control_compression": "control compression", "online_codelength": "online codelength (bits)",
           "control_codelength": "control codelength (bits)", "mdl_selectivity": "MDL selectivity (bits)"}
_COMPRESSION = ("compression", "control_compression")


def accuracy_by_layer(table: pd.DataFrame, *, metric: str | list[str] = "accuracy", language: str | None = None,
                      tasks: list[str] | None = None, band: bool = True, baseline: bool = True,
                      height: float = 3.2, sharey: bool = True):
    """Line plot of probing metric(s) by layer: one panel per task, one row per metric.

    Each fine-tuned seed is a thin coloured line, the pretrained model (rows whose ``seed`` is missing) a thick
    black dashed line, the seed mean +/- one standard deviation a shaded band, and the metric's chance level a
    grey dotted line: the majority baseline for ``accuracy`` / ``control``, 0.5 for ``balanced_accuracy`` /
    ``control_balanced_accuracy`` (what any constant prediction scores), ``p / (1 + p)`` for ``macro_f1`` and 0
    for ``selectivity`` (see :func:`diagnostics.probe.chance_level`).

    Parameters
    ----------
    table : pandas.DataFrame
        From :func:`diagnostics.probe.probe_models` or :func:`diagnostics.probe.probe_gold_cv` (columns
        ``model, seed, language, task, layer, majority`` + metric).
    metric : str or list of str
        ``accuracy``, ``balanced_accuracy``, ``macro_f1``, ``selectivity``, ``control`` or
        ``control_balanced_accuracy``; a list draws one row of panels per metric
        (e.g. ``["accuracy", "balanced_accuracy"]``).
    language : str, optional
        Keep only this language (required when the table holds several).
    tasks : list of str, optional
        Panels to draw, in this order; all tasks of the table by default.
    band : bool
        Draw the seed-variance band (needs at least two seeds).
    baseline : bool
        Draw the chance level.
    height : float
        Inches per panel row.
    sharey : bool
        One y scale per row of panels.

    Returns
    -------
    matplotlib.figure.Figure
    """
    return _layer_curves(table, metric, language, tasks, band=band, baseline=baseline, height=height,
                         sharey=sharey)


def mdl_by_layer(table: pd.DataFrame, *, metric: str | list[str] = ("compression", "mdl_selectivity"),
                 language: str | None = None, tasks: list[str] | None = None, band: bool = True,
                 baseline: bool = True, height: float = 3.2, sharey: bool = False):
    """Line plot of MDL probing metric(s) by layer: one panel per task, one row per metric.

    Drawn as :func:`accuracy_by_layer` draws accuracy, with the same ``language``, ``tasks``, ``band``, ``height``
    and ``sharey``. Compression gets two reference lines: 1 (the uniform code: the probe learned nothing) and
    ``1 / H`` (a code that knows only the class balance of the binary labels, :func:`diagnostics.probe.chance_level`);
    MDL selectivity gets 0. Each panel has its own y scale by default: a nearly one-class task compresses far more
    than the others.

    Parameters
    ----------
    table : pandas.DataFrame
        From :func:`diagnostics.probe.probe_mdl` (columns ``model, seed, language, task, layer, majority`` +
        metric).
    metric : str or list of str
        ``compression``, ``control_compression``, ``online_codelength``, ``control_codelength`` or
        ``mdl_selectivity``; a list draws one row of panels per metric (default compression above MDL selectivity).
    language : str, optional
    tasks : list of str, optional
    band : bool
    baseline : bool
        Draw the reference lines.
    height : float
    sharey : bool

    Returns
    -------
    matplotlib.figure.Figure
    """
    return _layer_curves(table, metric, language, tasks, band=band, baseline=baseline, height=height,
                         sharey=sharey)


def _layer_curves(table: pd.DataFrame, metric, language: str | None, tasks: list[str] | None, *, band: bool,
                  baseline: bool, height: float, sharey: bool) -> Figure:
    """Draw ``metric`` (one name or several) by layer: a panel per task, a row of panels per metric."""
    metrics = [metric] if isinstance(metric, str) else list(metric)
    for name in metrics:
        if name not in table.columns:
            raise KeyError(f"no column {name!r} in the probing table")
    table = _one_language(table, language)
    tasks = _tasks(table, tasks)
    fig = Figure(figsize=(4.2 * len(tasks), height * len(metrics)))
    axes = fig.subplots(len(metrics), len(tasks), sharey="row" if sharey else False, squeeze=False)
    for row, name in zip(axes, metrics):
        for ax, task in zip(row, tasks):
            _draw_panel(ax, table, task, name, band=band, baseline=baseline)
        row[0].set_ylabel(f"probe {_LABELS.get(name, name)} ({table['language'].iloc[0]})")
    for ax, task in zip(axes[0], tasks):
        ax.set_title(_TITLES.get(task, task))
    for ax in axes[-1]:
        ax.set_xlabel("layer (0 = embeddings)")
    _legend(fig, axes)
    return fig


def _one_language(table: pd.DataFrame, language: str | None) -> pd.DataFrame:
    if language is not None:
        table = table[table["language"] == language]
    languages = table["language"].unique()
    if len(languages) != 1:
        raise ValueError(f"the table holds {len(languages)} languages ({', '.join(map(str, languages))}); "
                         f"pass language=")
    return table


def _tasks(table: pd.DataFrame, tasks: list[str] | None) -> list[str]:
    tasks = list(tasks) if tasks is not None else list(dict.fromkeys(table["task"]))
    missing = set(tasks) - set(table["task"])
    if missing:
        raise ValueError(f"tasks not in the table: {', '.join(sorted(missing))}")
    return tasks


def _draw_panel(ax, table: pd.DataFrame, task: str, metric: str, *, band: bool, baseline: bool) -> None:
    """One task x metric panel: seeds, seed band, pretrained reference, chance level."""
    rows = table[table["task"] == task]
    tuned = rows[rows["seed"].notna()]
    seeds = sorted(table.loc[table["seed"].notna(), "seed"].unique())
    palette = dict(zip(seeds, sns.color_palette("viridis", n_colors=max(len(seeds), 1))))
    for seed in seeds:
        line = tuned[tuned["seed"] == seed].sort_values("layer")
        ax.plot(line["layer"], line[metric], color=palette[seed], lw=1.2, alpha=0.85, marker="o", ms=2.5,
                label=f"seed {seed}")
    if band and len(seeds) >= 2:
        stats = tuned.groupby("layer")[metric].agg(["mean", "std"])
        ax.fill_between(stats.index, stats["mean"] - stats["std"], stats["mean"] + stats["std"],
                        color="tab:blue", alpha=0.15, lw=0, label="seed mean ± σ")
    for model, line in rows[rows["seed"].isna()].groupby("model"):
        line = line.sort_values("layer")
        name = str(model) if "pretrained" in str(model) else f"{model} (pretrained)"
        ax.plot(line["layer"], line[metric], color="black", lw=2, ls="--", label=name)
    if baseline:
        _chance_line(ax, rows, metric)
        if metric in _COMPRESSION:
            ax.axhline(1.0, color="grey", ls="-.", lw=1.0, label="uniform code (no compression)")
    _layer_axis(ax, table)


def _chance_line(ax, rows: pd.DataFrame, metric: str) -> None:
    from diagnostics.probe import chance_level

    majority = rows["majority"] if "majority" in rows else pd.Series(dtype=float)
    level = chance_level(metric, float(majority.mean()) if majority.notna().any() else float("nan"))
    if np.isnan(level):
        return
    if metric in ("accuracy", "control"):
        label = "majority baseline"
    elif metric in ("selectivity", "mdl_selectivity"):
        label = "no selectivity"
    elif metric in _COMPRESSION:
        label = "label prior only (1 / H)"
    else:
        label = f"chance ({level:.2g})"
    ax.axhline(level, color="grey", ls=":", lw=1.2, label=label)


def _layer_axis(ax, table: pd.DataFrame) -> None:
    layers = np.sort(table["layer"].unique())
    ax.set_xticks(layers[:: max(1, len(layers) // 7)])
    ax.grid(alpha=0.3)


def _legend(fig: Figure, axes) -> None:
    entries: dict = {}
    for ax in np.ravel(axes):
        handles, labels = ax.get_legend_handles_labels()
        for label, handle in zip(labels, handles):
            entries.setdefault(label, handle)
    fig.legend(entries.values(), entries.keys(), loc="center left", bbox_to_anchor=(1.0, 0.5), frameon=False)
    fig.tight_layout()


def compare_by_layer(tables: dict[str, pd.DataFrame], *, metric: str = "balanced_accuracy",
                     language: str | None = None, tasks: list[str] | None = None, height: float = 3.2):
    """Several probing tables on one set of panels (e.g. annotator-trained probes vs probes cross-validated on
    the gold tags), one panel per task.

    Each table gives a solid line for its pretrained model (rows without a seed) and a dashed line for the mean
    over its fine-tuned seeds, in one colour per table; a ``<metric>_std`` column (the across-fold spread of
    :func:`diagnostics.probe.probe_gold_cv`) becomes a shaded band around the pretrained line. The chance level of
    ``metric`` is a grey dotted line.

    Parameters
    ----------
    tables : dict
        Legend name -> table (columns ``model, seed, language, task, layer, majority`` + metric).
    metric : str
        A metric column every table holds (``accuracy``, ``balanced_accuracy``, ``macro_f1``).
    language : str, optional
        Keep only this language (required when a table holds several).
    tasks : list of str, optional
        Panels; the tasks of the first table by default (every table must hold them).
    height : float
        Inches per panel row.

    Returns
    -------
    matplotlib.figure.Figure
    """
    if not tables:
        raise ValueError("no table to compare")
    for name, table in tables.items():
        if metric not in table.columns:
            raise KeyError(f"no column {metric!r} in table {name!r}")
    tables = {name: _one_language(table, language) for name, table in tables.items()}
    first = next(iter(tables.values()))
    tasks = _tasks(first, tasks)
    for table in tables.values():
        _tasks(table, tasks)
    colours = dict(zip(tables, sns.color_palette("tab10", n_colors=len(tables))))
    fig = Figure(figsize=(4.2 * len(tasks), height))
    axes = fig.subplots(1, len(tasks), sharey=True, squeeze=False)
    for ax, task in zip(axes[0], tasks):
        for name, table in tables.items():
            _draw_source(ax, table[table["task"] == task], name, metric, colours[name])
        _chance_line(ax, first[first["task"] == task], metric)
        _layer_axis(ax, first)
        ax.set_title(_TITLES.get(task, task))
        ax.set_xlabel("layer (0 = embeddings)")
    axes[0][0].set_ylabel(f"probe {_LABELS.get(metric, metric)} ({first['language'].iloc[0]})")
    _legend(fig, axes)
    return fig


def _draw_source(ax, rows: pd.DataFrame, name: str, metric: str, colour) -> None:
    """One table's lines on a panel: pretrained (solid, with a spread band if known) and seed mean (dashed)."""
    base = rows[rows["seed"].isna()].groupby("layer")
    if len(base):
        line = base[metric].mean()
        ax.plot(line.index, line.values, color=colour, lw=2, marker="o", ms=3, label=f"{name}: pretrained")
        spread = f"{metric}_std"
        if spread in rows.columns:
            sd = base[spread].mean()
            ax.fill_between(line.index, line - sd, line + sd, color=colour, alpha=0.15, lw=0,
                            label=f"{name}: ± σ across folds")
    tuned = rows[rows["seed"].notna()]
    if len(tuned):
        line = tuned.groupby("layer")[metric].mean()
        ax.plot(line.index, line.values, color=colour, lw=1.4, ls="--", label=f"{name}: fine-tuned seed mean")


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
