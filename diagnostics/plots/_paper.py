"""Figure of a run store against the reference study: the paper's MCCs against ours, and what was found.

Takes the output of :func:`diagnostics.paper.against_paper` and returns a matplotlib ``Figure`` (built
without pyplot: nothing is shown or saved).
"""

from __future__ import annotations

import textwrap

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

#: Order and colours of the bars' parts (and of the points' verdicts).
_OUTCOMES = {"inside": "#4c72b0", "outside": "#dd8452", "as printed": "#55a868", "differs from printed": "#c44e52",
             "no interval": "#8c8c8c", "not run": "#dddddd", "not computed": "#f2f2f2"}
_MCC_STATISTICS = ("mcc", "mean_mcc")


def _outcome(frame: pd.DataFrame) -> pd.Series:
    """One outcome per row: the interval's verdict, the check as printed, or why nothing was compared."""
    printed = frame["as_printed"].astype("boolean")
    out = np.where(frame["verdict"].isin(["inside", "outside"]), frame["verdict"],
                   np.where(printed.isna(), "no interval",
                            np.where(printed.fillna(False), "as printed", "differs from printed")))
    return pd.Series(np.where(frame["status"].isin(["not run", "not computed"]), frame["status"], out),
                     index=frame.index)


def paper_comparison(frame: pd.DataFrame, title: str | None = None) -> Figure:
    """Two panels: each MCC the paper prints against ours with our interval, and per section what was found.

    Parameters
    ----------
    frame : pandas.DataFrame
        Output of :func:`~diagnostics.paper.against_paper`.
    title : str, optional
        Figure title (e.g. the verdict of :func:`~diagnostics.paper.paper_verdict`).

    Returns
    -------
    matplotlib.figure.Figure
        Left: one point per compared per-category or overall MCC (``mcc`` and ``mean_mcc`` rows), paper on x, ours
        on y (for a number printed for one seed: our seed mean) with our interval over seeds as a vertical line
        (prediction interval of one run, or t-interval of the seed mean), coloured by the verdict (the paper's
        number inside or outside that interval, "no interval" also for a degenerate one, every seed equal);
        hollow markers for numbers that are not comparable; the diagonal is
        perfect agreement. Right: per section, how many of the paper's numbers lie inside or outside our
        interval, agree or differ as printed (claims, designs, settings, counts), have no interval, were not run
        or are not about predictions.
    """
    fig = Figure(figsize=(12, 4.8))
    left, right = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1, 1.25]})
    points = frame[(frame["status"] == "compared") & frame["statistic"].isin(_MCC_STATISTICS)]
    if points.empty:
        left.text(0.5, 0.5, "no MCC of the paper has a run here", ha="center", va="center",
                  transform=left.transAxes)
    outcome = _outcome(points)
    comparable = points["comparable"].fillna(False).astype(bool)
    for verdict in ("inside", "outside", "no interval"):
        for good in (True, False):
            part = points[(outcome == verdict) & (comparable == good)]
            if part.empty:
                continue
            colour = _OUTCOMES[verdict]
            spans = part.dropna(subset=["interval_low", "interval_high"])
            # the interval as a line at the paper's x (it is placed around our value, not the paper's)
            left.vlines(spans["paper"], spans["interval_low"], spans["interval_high"], color=colour, alpha=0.5, lw=1)
            left.plot(part["paper"], part["ours"], "o", ms=5, alpha=0.75, color=colour, mec=colour,
                      mfc=colour if good else "none", label=f"{verdict}{'' if good else ' (not comparable)'}")
    left.axline((0, 0), slope=1, color="black", lw=0.8, ls="--")
    left.axhline(0, color="#bbbbbb", lw=0.6)
    left.axvline(0, color="#bbbbbb", lw=0.6)
    left.set(xlim=(-1, 1), ylim=(-1, 1), xlabel="paper (MCC)", ylabel="ours (MCC) with our interval",
             title="per-category and overall MCC")
    if not points.empty:
        left.legend(loc="upper left", fontsize=8)

    counts = pd.crosstab(frame["section"], _outcome(frame)).reindex(columns=list(_OUTCOMES), fill_value=0)
    counts = counts.reindex(list(dict.fromkeys(frame["section"])))
    bottom = np.zeros(len(counts))
    for outcome_name, colour in _OUTCOMES.items():
        right.barh(counts.index, counts[outcome_name], left=bottom, color=colour, edgecolor="#999999", lw=0.4,
                   label=outcome_name)
        bottom += counts[outcome_name].to_numpy()
    right.invert_yaxis()
    right.set(xlabel="numbers the paper prints", title="what was found, per section")
    right.legend(loc="lower right", fontsize=8)
    if title:
        fig.suptitle(textwrap.fill(title, 140), fontsize=10)
    fig.tight_layout()
    return fig
