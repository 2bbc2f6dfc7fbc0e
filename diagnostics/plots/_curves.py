"""Line plots of a metric against a setting (data size, feature share, layer)."""

from __future__ import annotations

import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure


def metric_curve(frame: pd.DataFrame, x: str, y: str, hue: str | None = None, title: str = "", ylabel: str | None = None,
                 reference: float | None = None):
    """Mean of ``y`` against ``x`` with a 95 % interval over the rows of each point (e.g. seeds), per ``hue``.

    Parameters
    ----------
    frame : pandas.DataFrame
        Long table; every row is one observation (one seed).
    x, y : str
        Columns for the axes.
    hue : str, optional
        One line per value of this column.
    title, ylabel : str
    reference : float, optional
        Horizontal reference line (e.g. 0 for MCC).

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig = Figure(figsize=(6.5, 4))
    ax = fig.subplots()
    sns.lineplot(data=frame, x=x, y=y, hue=hue, marker="o", errorbar=("ci", 95), ax=ax)
    if reference is not None:
        ax.axhline(reference, color="grey", lw=0.8, ls="--")
    ax.set_title(title)
    ax.set_ylabel(ylabel or y)
    fig.tight_layout()
    return fig
