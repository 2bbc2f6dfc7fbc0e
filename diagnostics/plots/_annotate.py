"""Figures about rule-based feature annotation."""

from __future__ import annotations

import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure


def feature_distribution(table: pd.DataFrame, *, title: str = "Share of pairs per diagnostic feature") -> Figure:
    """Heat map of the share of pairs showing each feature (rows) per dataset (columns), as percentages.

    Parameters
    ----------
    table : pandas.DataFrame
        Output of :func:`diagnostics.annotate.feature_distribution` (features x datasets, shares in 0..1).
    title : str
        Axes title.

    Returns
    -------
    matplotlib.figure.Figure
    """
    if table.empty:
        raise ValueError("feature_distribution: empty table (no features or no datasets)")
    fig = Figure(figsize=(2.5 + 1.2 * table.shape[1], 0.32 * table.shape[0] + 1.5))
    ax = fig.subplots()
    sns.heatmap(100 * table.astype(float), annot=True, fmt=".1f", cmap="Blues", cbar=False, ax=ax)
    pairs = table.attrs.get("pairs", {})
    ax.set_xticklabels([f"{c}\n(n={pairs[c]})" if c in pairs else str(c) for c in table.columns], rotation=0)
    ax.set_xlabel("")
    ax.set_ylabel("")
    ax.set_title(title + " (%)")
    fig.tight_layout()
    return fig


def evaluation_scores(tables: dict[str, pd.DataFrame]) -> Figure:
    """Heat map of per-feature F1 of the rules (rows) per language (columns), macro row last.

    Parameters
    ----------
    tables : dict
        Language label -> output of :func:`diagnostics.annotate.evaluate` (its last row the macro average).

    Returns
    -------
    matplotlib.figure.Figure
        The figure (features x languages, F1 in 0..1).
    """
    f1 = pd.concat({lang: t.set_index("feature")["f1"] for lang, t in tables.items()}, axis=1)
    fig = Figure(figsize=(2.5 + 1.0 * f1.shape[1], 0.32 * f1.shape[0] + 1.5))
    ax = fig.subplots()
    sns.heatmap(f1.astype(float), annot=True, fmt=".2f", cmap="viridis", vmin=0, vmax=1, cbar=False, ax=ax)
    ax.axhline(f1.shape[0] - 1, color="white", lw=2)
    ax.set_ylabel("")
    ax.set_title("Rule annotator F1 against gold diagnostic tags")
    fig.tight_layout()
    return fig


def evaluation_detail(table: pd.DataFrame, *, lang: str) -> Figure:
    """Heat map of one language's per-feature precision, recall and F1 against gold tags, with each feature's support.

    Parameters
    ----------
    table : pandas.DataFrame
        Output of :func:`diagnostics.annotate.evaluate` (its last row the macro average).
    lang : str
        The language, for the title.

    Returns
    -------
    matplotlib.figure.Figure
    """
    scores = table.set_index("feature")[["precision", "recall", "f1"]].astype(float)
    scores.index = [f"{f} (n={int(n)})" if f != "macro" else f for f, n in zip(scores.index, table["support"])]
    fig = Figure(figsize=(6.5, 0.32 * scores.shape[0] + 1.5))
    ax = fig.subplots()
    sns.heatmap(scores, annot=True, fmt=".2f", cmap="viridis", vmin=0, vmax=1, cbar=False, ax=ax)
    ax.axhline(scores.shape[0] - 1, color="white", lw=2)
    ax.set_ylabel("")
    ax.set_title(f"Rule annotator ({lang}) against gold diagnostic tags")
    fig.tight_layout()
    return fig


def agreement_figure(table: pd.DataFrame, *, lang: str, reference: str = "en") -> Figure:
    """Per feature, the agreement of ``lang``'s rules with ``reference``'s on parallel pairs, beside real precision.

    Left: agreement precision (the new rules' detections the reference rules confirm) and recall per feature,
    with the gold precision where the new language has gold tags. Right: agreement precision against gold
    precision, one point per feature (how far agreement tracks the real thing).

    Parameters
    ----------
    table : pandas.DataFrame
        Output of :func:`diagnostics.annotate.agreement` (its ``macro`` row is left out).
    lang, reference : str
        The two languages, for the titles.

    Returns
    -------
    matplotlib.figure.Figure
    """
    rows = table[table["feature"] != "macro"]
    if rows.empty:
        raise ValueError("agreement_figure: no feature rows")
    columns = {"agreement_precision": "agreement precision", "agreement_recall": "agreement recall",
               "gold_precision": "gold precision"}
    long = rows.melt(id_vars="feature", value_vars=[c for c in columns if rows[c].notna().any()],
                     var_name="score", value_name="value").replace({"score": columns})
    with_gold = rows["gold_precision"].notna().any()
    fig = Figure(figsize=(11 if with_gold else 7, 0.3 * len(rows) + 1.8))
    axes = fig.subplots(1, 2, width_ratios=[2, 1]) if with_gold else [fig.subplots()]
    sns.barplot(data=long, y="feature", x="value", hue="score", ax=axes[0], orient="h")
    axes[0].set_xlim(0, 1)
    axes[0].set_xlabel("share")
    axes[0].set_ylabel("")
    axes[0].set_title(f"{lang} rules against {reference} rules on the aligned pairs")
    axes[0].legend(loc="upper center", bbox_to_anchor=(0.5, -0.45 / fig.get_figheight()), ncol=3,
                   fontsize="small", frameon=False)
    if with_gold:
        ax = axes[1]
        points = rows.dropna(subset=["agreement_precision", "gold_precision"])
        ax.scatter(points["agreement_precision"], points["gold_precision"], s=18)
        for point in points.itertuples():
            ax.annotate(point.feature, (point.agreement_precision, point.gold_precision), fontsize=6,
                        xytext=(2, 2), textcoords="offset points")
        ax.plot([0, 1], [0, 1], color="grey", lw=0.8, ls="--")
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_xlabel("agreement precision")
        ax.set_ylabel(f"gold precision ({lang})")
        ax.set_title("does agreement track precision?")
    fig.tight_layout()
    return fig
