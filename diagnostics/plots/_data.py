"""Figures about the datasets themselves."""

from __future__ import annotations

import pandas as pd
import seaborn as sns

from matplotlib.figure import Figure

from diagnostics.data import category_counts


def category_counts_by_language(frames: dict[str, pd.DataFrame]):
    """Heat map of rows per fine category (rows) for each diagnostic set (columns), grouped by coarse category.

    Parameters
    ----------
    frames : dict
        Column label (e.g. ``"en (axb)"``) -> a diagnostic DataFrame from :func:`diagnostics.data.load`.

    Returns
    -------
    matplotlib.figure.Figure
    """
    table = pd.concat({label: category_counts(frame).set_index(["coarse", "category"])["n"] for label, frame in frames.items()},
                      axis=1)
    fig = Figure(figsize=(2.0 + 1.3 * len(frames), 10))
    ax = fig.subplots()
    sns.heatmap(table.droplevel(0), annot=True, fmt="d", cmap="Blues", cbar=False, ax=ax)
    for boundary in table.index.get_level_values(0).value_counts(sort=False).cumsum()[:-1]:
        ax.axhline(boundary, color="black", lw=1)
    ax.set_xlabel("")
    ax.set_ylabel("fine-grained category (grouped by coarse)")
    ax.set_title("Rows per diagnostic category")
    fig.tight_layout()
    return fig
