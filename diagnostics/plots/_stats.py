"""Figures of the stability statistics: heat maps (category x seed / language, deltas) and CI forest plots.

Every function takes a tidy frame from :mod:`diagnostics.stats` and returns a matplotlib ``Figure``
(built without pyplot: nothing is shown or saved).
"""

from __future__ import annotations

from matplotlib.figure import Figure
import numpy as np
import pandas as pd
import seaborn as sns

from ..stats import language_labels
from ..stats import ordered_categories as _ordered


def _heatmap(wide: pd.DataFrame, title: str, cmap: str, center: float | None, label: str):
    if wide.empty:
        raise ValueError(f"nothing to plot for {title!r}: the selection is empty")
    wide = wide.loc[_ordered(wide.index)]
    height = max(3.0, 0.28 * len(wide) + 1.5)
    fig = Figure(figsize=(max(4.0, 0.9 * wide.shape[1] + 3.5), height))
    ax = fig.subplots()
    sns.heatmap(wide.astype(float), ax=ax, cmap=cmap, center=center, annot=wide.shape[1] <= 12, fmt=".2f",
                annot_kws={"size": 7}, cbar_kws={"label": label}, linewidths=0.3)
    ax.set_title(title)
    ax.set_ylabel("")
    fig.tight_layout()
    return fig


def _labelled(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with ``language`` replaced by its display label (``"sv (SweDiagnostics)"``)."""
    names = language_labels(frame)
    return frame.assign(language=frame["language"].map(lambda lang: names.get(lang, lang))) if names else frame


def _select(frame: pd.DataFrame, selection: dict | None) -> pd.DataFrame:
    for key, value in (selection or {}).items():
        frame = frame[frame[key].astype(str) == str(value)]
    return frame


def category_seed_heatmap(scores: pd.DataFrame, setting: dict | None = None, level: str = "fine",
                          value: str = "mcc"):
    """Category x seed heat map of per-run scores for one setting.

    Parameters
    ----------
    scores : pandas.DataFrame
        Output of :func:`diagnostics.stats.category_scores`.
    setting : dict, optional
        Column -> value filter selecting one setting (e.g. ``{"experiment": "rte", "language": "en"}``).
    level : {"fine", "coarse"}
    value : str
        ``mcc`` or ``accuracy``.

    Returns
    -------
    matplotlib.figure.Figure
    """
    rows = _select(scores[scores["level"] == level], setting)
    wide = rows.pivot_table(index="category", columns="seed", values=value, aggfunc="mean")
    names = language_labels(rows)
    name = ", ".join(f"{names.get(v, v) if k == 'language' else v}" for k, v in (setting or {}).items()) or "all runs"
    return _heatmap(wide, f"{value.upper()} per {level} category and seed ({name})", "RdBu_r", 0.0, value)


def category_language_heatmap(stability: pd.DataFrame, setting: dict | None = None, level: str = "fine",
                              value: str = "mean", title: str | None = None):
    """Category x language heat map of seed-mean scores, their σ, or one run's scores.

    Parameters
    ----------
    stability : pandas.DataFrame
        Output of :func:`diagnostics.stats.stability` (``value`` ``mean`` or ``std``), or rows of
        :func:`diagnostics.stats.category_scores` for one seed (``value="mcc"``: a single run per language).
    setting : dict, optional
        Filter (e.g. ``{"experiment": "rte", "model": "mbert"}``, or ``{"seed": 0}`` on scores).
    level : {"fine", "coarse"}
    value : {"mean", "std", "mcc"}
    title : str, optional
        Figure title; by default it names the value shown.

    Returns
    -------
    matplotlib.figure.Figure
        Languages scored on a substitute diagnostic set are labelled so (``"sv (SweDiagnostics)"``).
    """
    rows = _labelled(_select(stability[stability["level"] == level], setting))
    wide = rows.pivot_table(index="category", columns="language", values=value, aggfunc="mean")
    cmap, center = ("viridis", None) if value == "std" else ("RdBu_r", 0.0)
    default = {"mean": "Seed-mean MCC", "std": "σ of MCC over seeds"}.get(value, value.upper())
    return _heatmap(wide, title or f"{default} per category and language", cmap, center, value)


def delta_heatmap(deltas: pd.DataFrame, value: str = "mcc_delta", columns: str = "language", level: str = "fine"):
    """Heat map of deltas between two settings, categories x ``columns``.

    Parameters
    ----------
    deltas : pandas.DataFrame
        Output of :func:`diagnostics.stats.deltas`.
    value : {"mcc_delta", "sigma_delta"}
    columns : str
        Column spread horizontally (``language``, ``model``...).
    level : {"fine", "coarse"}

    Returns
    -------
    matplotlib.figure.Figure
    """
    rows = deltas[deltas["level"] == level]
    if "language" in rows.columns:
        rows = _labelled(rows)
    if columns not in rows.columns:
        rows = rows.assign(**{columns: "delta"})
    wide = rows.pivot_table(index="category", columns=columns, values=value, aggfunc="mean")
    return _heatmap(wide, f"{value} per category", "PuOr_r" if value == "sigma_delta" else "RdBu_r", 0.0, value)


def ci_forest_plot(ci: pd.DataFrame, estimate: str = "estimate", low: str = "ci_low", high: str = "ci_high",
                   label: str = "category", hue: str | None = None, reference: float | None = 0.0):
    """Forest plot: one horizontal interval per row of a CI table.

    Parameters
    ----------
    ci : pandas.DataFrame
        Output of :func:`diagnostics.stats.setting_ci` / :func:`bootstrap_ci` (or of :func:`compare_settings` with
        ``estimate="delta", low="delta_ci_low", high="delta_ci_high"``).
    estimate, low, high, label : str
        Column names.
    hue : str, optional
        Column whose values get separate colours and vertical offsets (e.g. ``language``).
    reference : float, optional
        Draw a vertical reference line there (0: no effect).

    Returns
    -------
    matplotlib.figure.Figure
    """
    for column in (estimate, low, high, label):
        if column not in ci.columns:
            raise ValueError(f"column {column!r} not in the CI table (columns: {list(ci.columns)})")
    labels = list(dict.fromkeys(ci[label]))
    groups = [(None, ci)] if hue is None else list(ci.groupby(hue, sort=False))
    fig = Figure(figsize=(7.0, max(2.5, 0.3 * len(labels) + 1.2)))
    ax = fig.subplots()
    palette = sns.color_palette(n_colors=max(1, len(groups)))
    width = 0.7 / max(1, len(groups))
    for i, (name, group) in enumerate(groups):
        y = np.array([labels.index(v) for v in group[label]]) + (i - (len(groups) - 1) / 2) * width
        x = group[estimate].to_numpy(dtype=float)
        err = np.vstack([x - group[low].to_numpy(dtype=float), group[high].to_numpy(dtype=float) - x])
        ax.errorbar(x, y, xerr=err, fmt="o", color=palette[i], capsize=2, markersize=4,
                    label=None if name is None else str(name))
    if reference is not None:
        ax.axvline(reference, color="grey", lw=0.8, ls="--")
    ax.set_yticks(range(len(labels)))
    ax.set_yticklabels(labels)
    ax.invert_yaxis()
    ax.set_xlabel(estimate)
    if hue is not None:
        ax.legend(title=hue, fontsize=8)
    fig.tight_layout()
    return fig


def category_trajectories(scores: pd.DataFrame, before: dict, after: dict, level: str = "fine",
                          labels: tuple[str, str] | None = None):
    """Per-category seed-mean MCC from one setting to another, one panel per language (the study's Fig. 5).

    Parameters
    ----------
    scores : pandas.DataFrame
        Output of :func:`diagnostics.stats.category_scores`.
    before, after : dict
        Column -> value selections of the two settings (e.g. ``{"experiment": "base"}``).
    level : {"fine", "coarse"}
    labels : tuple of str, optional
        x-axis labels of the two settings (default: their selection values).

    Returns
    -------
    matplotlib.figure.Figure
        A line per category joining its two values; the five largest rises are named.
    """
    rows = scores[scores["level"] == level]
    rows = rows.assign(_language=rows["language"].map(language_labels(rows)))
    means = {side: _select(rows, selection).groupby(["_language", "category"])["mcc"].mean()
             for side, selection in (("before", before), ("after", after))}
    wide = pd.DataFrame(means).dropna()
    if wide.empty:
        raise ValueError("nothing to plot: the two selections share no (language, category)")
    languages = sorted(wide.index.get_level_values("_language").unique())
    fig = Figure(figsize=(3.6 * len(languages) + 0.6, 5.0))
    axes = np.atleast_1d(fig.subplots(1, len(languages), sharey=True))
    names = labels or (", ".join(map(str, before.values())), ", ".join(map(str, after.values())))
    for ax, language in zip(axes, languages):
        part = wide.loc[language]
        rise = part["after"] - part["before"]
        for category, row in part.iterrows():
            ax.plot([0, 1], [row["before"], row["after"]], color="tab:green" if rise[category] > 0 else "tab:red",
                    alpha=0.55, linewidth=1.0, marker="o", markersize=2.5)
        for category in rise.nlargest(5).index:
            ax.annotate(category, (1, part.loc[category, "after"]), xytext=(4, 0), textcoords="offset points",
                        fontsize=6.5, va="center")
        ax.set_xticks([0, 1], names)
        ax.set_xlim(-0.15, 1.9)
        ax.axhline(0.0, color="grey", linewidth=0.6, linestyle=":")
        ax.set_title(f"{language}: mean rise {rise.mean():+.3f}")
    axes[0].set_ylabel("seed-mean MCC per category")
    fig.tight_layout()
    return fig
