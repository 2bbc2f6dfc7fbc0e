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
