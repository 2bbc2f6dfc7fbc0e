"""The figure of a comparison of two systems (:func:`diagnostics.predictions.compare_tables`) and its files.

:func:`delta_figure` draws the per-category deltas with their intervals (a forest plot);
:func:`write_comparison` writes the table (CSV), that figure (PNG) and the markdown summary as one set.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..core.io_utils import output_folder
from ..core.tables import write_table_to
from ..predictions import Comparison

#: Files :func:`write_comparison` writes.
OUTPUTS = ("comparison.csv", "comparison.png", "summary.md")


def delta_figure(table: pd.DataFrame, names: tuple[str, str] = ("A", "B"), metric: str = "mcc",
                 level: float = 0.95, adjust: str = "holm", alpha: float = 0.05):
    """Draw a forest plot of the per-category deltas with their intervals.

    Parameters
    ----------
    table : pandas.DataFrame
        The table of a :class:`Comparison` (``category, level, n, delta, delta_ci_low, delta_ci_high,
        significant``).
    names : tuple of str
        Names of A and B (the axis reads ``B - A``).
    metric : str
        The metric's name, for the axis.
    level : float
        Confidence level of the intervals, for the title.
    adjust : str
        The adjustment, for the legend.
    alpha : float
        Level of ``significant``, for the legend.

    Returns
    -------
    matplotlib.figure.Figure
        Whole-set rows on top, then the categories in taxonomy order; significant deltas in colour (blue: B
        higher, red: B lower), the others grey; a dashed line at 0.
    """
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

    rows = pd.concat([table[~table["level"].isin(["fine", "coarse"])], table[table["level"].isin(["fine", "coarse"])]])
    n = len(rows)
    fig = Figure(figsize=(7.5, 1.6 + 0.24 * n), layout="constrained")
    ax = fig.add_subplot()
    y = np.arange(n)[::-1]
    colours = np.where(~rows["significant"].to_numpy(dtype=bool), "#9a9a9a",
                       np.where(rows["delta"].to_numpy() > 0, "#1f5fa8", "#b2302b"))
    for yi, row, colour in zip(y, rows.itertuples(index=False), colours):
        ax.plot([row.delta_ci_low, row.delta_ci_high], [yi, yi], color=colour, lw=1.6, solid_capstyle="butt")
        ax.plot([row.delta], [yi], "o", color=colour, ms=4.5)
    ax.axvline(0.0, color="black", lw=0.8, ls="--")
    summary = (~rows["level"].isin(["fine", "coarse"])).sum()
    if 0 < summary < n:
        ax.axhline(n - summary - 0.5, color="#cccccc", lw=0.8)
    ax.set_yticks(y)
    ax.set_yticklabels([f"{c} ({k})" for c, k in zip(rows["category"], rows["n"])], fontsize=7.5)
    ax.set_ylim(-0.7, n - 0.3)
    a, b = names
    ax.set_xlabel(f"delta {metric.upper()} ({b} - {a}), {level:.0%} Multi-Bootstrap interval")
    ax.set_title(f"{b} vs {a} per category", fontsize=10)
    method = {"holm": "Holm", "bh": "BH", "none": "unadjusted"}[adjust]
    fig.legend(handles=[Line2D([], [], color="#1f5fa8", marker="o", label=f"{b} higher ({method} p <= {alpha})"),
                        Line2D([], [], color="#b2302b", marker="o", label=f"{b} lower ({method} p <= {alpha})"),
                        Line2D([], [], color="#9a9a9a", marker="o", label="not significant")],
               fontsize=7, loc="outside lower center", ncol=3, frameon=False)
    ax.grid(axis="x", color="#eeeeee", lw=0.6)
    ax.set_axisbelow(True)
    return fig


def comparison_figure(result: Comparison):
    """Draw the forest plot of a comparison (:func:`delta_figure` with its names, metric, level and adjustment).

    Parameters
    ----------
    result : Comparison
        From :func:`~diagnostics.predictions.compare_tables`.

    Returns
    -------
    matplotlib.figure.Figure
        The figure (not attached to pyplot; save it with ``fig.savefig``).
    """
    return delta_figure(result.table, result.names, result.metric, result.level, result.adjust, result.alpha)


def write_comparison(result: Comparison, out: str | Path) -> dict[str, Path]:
    """Write a comparison as ``comparison.csv``, ``comparison.png`` and ``summary.md``, as one set.

    Parameters
    ----------
    result : Comparison
        From :func:`~diagnostics.predictions.compare_tables`.
    out : str or Path
        The folder (created). The three files replace those of an earlier comparison at once
        (:func:`~diagnostics.core.io_utils.output_folder`); other files in it are kept.

    Returns
    -------
    dict of str to Path
        ``table``, ``figure`` and ``summary`` -> the written files.
    """
    fig = comparison_figure(result)
    with output_folder(out, OUTPUTS) as files:
        with files.file(OUTPUTS[0]) as tmp:
            write_table_to(result.table, tmp, "csv")
        with files.file(OUTPUTS[1]) as tmp:
            fig.savefig(tmp, format="png", dpi=110, bbox_inches="tight")
        with files.file(OUTPUTS[2]) as tmp:
            tmp.write_text(result.summary(), encoding="utf-8")
    return {"table": files.path(OUTPUTS[0]), "figure": files.path(OUTPUTS[1]), "summary": files.path(OUTPUTS[2])}
