"""Figure of a run store against the reference study: the paper's MCCs against ours, and what was compared.

Takes the output of :func:`diagnostics.stats.against_paper` and returns a matplotlib ``Figure`` (built
without pyplot: nothing is shown or saved).
"""

from __future__ import annotations

import textwrap

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

#: Order and colours of the bars' parts.
_OUTCOMES = {"agrees": "#4c72b0", "differs": "#dd8452", "undetermined": "#8c8c8c", "not run": "#dddddd",
             "not computed": "#f2f2f2"}
_MCC_STATISTICS = ("mcc", "mean_mcc")


def _outcome(frame: pd.DataFrame) -> pd.Series:
    flag = frame["flag"].astype("boolean")
    out = np.where(flag.fillna(False), "differs", np.where(flag.isna(), "undetermined", "agrees"))
    return pd.Series(np.where(frame["status"] == "compared", out, frame["status"].replace("undefined", "undetermined")),
                     index=frame.index)


def paper_comparison(frame: pd.DataFrame, title: str | None = None) -> Figure:
    """Two panels: each MCC the paper prints against ours with our seed σ, and per section what was compared.

    Parameters
    ----------
    frame : pandas.DataFrame
        Output of :func:`~diagnostics.stats.against_paper`.
    title : str, optional
        Figure title (e.g. the verdict of :func:`~diagnostics.stats.paper_verdict`).

    Returns
    -------
    matplotlib.figure.Figure
        Left: one point per compared per-category or overall MCC (``mcc`` and ``mean_mcc`` rows), paper on x, ours
        on y, with ±σ over our seeds as error bars; hollow markers for numbers that are not comparable; the
        diagonal is perfect agreement. Right: per section, how many of the paper's numbers agree with ours, differ,
        stay undetermined, were not run or are not about predictions.
    """
    fig = Figure(figsize=(12, 4.8))
    left, right = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1, 1.25]})
    points = frame[(frame["status"] == "compared") & frame["statistic"].isin(_MCC_STATISTICS)]
    if points.empty:
        left.text(0.5, 0.5, "no MCC of the paper has a run here", ha="center", va="center",
                  transform=left.transAxes)
    for comparable, style in ((True, {}), (False, {"mfc": "none"})):
        part = points[points["comparable"].fillna(False).astype(bool) == comparable]
        if not part.empty:
            sigma = part["sigma"].fillna(0).to_numpy()
            left.errorbar(part["paper"], part["ours"], yerr=sigma, fmt="o", ms=5, alpha=0.75, capsize=2,
                          label="comparable" if comparable else "not comparable", **style)
    left.axline((0, 0), slope=1, color="black", lw=0.8, ls="--")
    left.axhline(0, color="#bbbbbb", lw=0.6)
    left.axvline(0, color="#bbbbbb", lw=0.6)
    left.set(xlim=(-1, 1), ylim=(-1, 1), xlabel="paper (MCC)", ylabel="ours (MCC, ±σ over seeds)",
             title="per-category and overall MCC")
    if not points.empty:
        left.legend(loc="upper left", fontsize=8)

    counts = pd.crosstab(frame["section"], _outcome(frame)).reindex(columns=list(_OUTCOMES), fill_value=0)
    counts = counts.reindex(list(dict.fromkeys(frame["section"])))
    bottom = np.zeros(len(counts))
    for outcome, colour in _OUTCOMES.items():
        right.barh(counts.index, counts[outcome], left=bottom, color=colour, edgecolor="#999999", lw=0.4,
                   label=outcome)
        bottom += counts[outcome].to_numpy()
    right.invert_yaxis()
    right.set(xlabel="numbers the paper prints", title="what could be compared, per section")
    right.legend(loc="lower right", fontsize=8)
    if title:
        fig.suptitle(textwrap.fill(title, 140), fontsize=10)
    fig.tight_layout()
    return fig
