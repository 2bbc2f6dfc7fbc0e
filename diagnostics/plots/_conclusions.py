"""Which conclusions survive another seed: each category's difference per seed, and whether every seed agrees."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from diagnostics.stats import SETTING_KEYS

HOLDS, DEPENDS = "#1f77b4", "#ff7f0e"


def seed_conclusions_figure(conclusions: pd.DataFrame, *, max_rows: int = 25) -> Figure:
    """Draw seed conclusions: per category (or feature), its difference in each seed's range and the seeds' mean.

    A horizontal line spans the seeds' smallest to largest difference, a dot marks their mean; blue where every
    seed alone draws the seeds' conclusion, orange where it depends on the seed. The grey band is ``±margin``, where
    a difference reads as no clear difference.

    Parameters
    ----------
    conclusions : pandas.DataFrame
        The output of :func:`diagnostics.stats.seed_conclusions`; one panel per setting (and ``source``).
    max_rows : int
        Rows shown per panel at most (the largest differences).

    Returns
    -------
    matplotlib.figure.Figure
        The figure (an empty panel with a note when there is no row).
    """
    item = "feature" if "feature" in conclusions.columns else "category"
    keys = [k for k in (*SETTING_KEYS, "source") if k in conclusions.columns]
    groups = list(conclusions.groupby(keys, sort=False)) if not conclusions.empty else []
    panels = max(len(groups), 1)
    height = max((min(len(g), max_rows) for _, g in groups), default=1)
    fig = Figure(figsize=(6.5 * panels, 0.3 * height + 1.8), layout="constrained")
    axes = fig.subplots(1, panels, squeeze=False)[0]
    if not groups:
        axes[0].text(0.5, 0.5, "no conclusion to draw", ha="center", va="center")
        axes[0].set_axis_off()
        return fig
    for ax, (values, group) in zip(axes, groups):
        group = group.loc[group["effect"].abs().nlargest(max_rows).index].sort_values("effect", ascending=False)
        y = np.arange(len(group))[::-1]
        colors = np.where(group["holds"].to_numpy(dtype=bool), HOLDS, DEPENDS)
        margin = float(group["margin"].iat[0])
        ax.axvspan(-margin, margin, color="#eeeeee", zorder=0)
        ax.axvline(0.0, color="black", linewidth=0.6)
        ax.hlines(y, group["effect_min"], group["effect_max"], colors=colors, linewidth=2.2)
        ax.scatter(group["effect"], y, c=colors, s=22, zorder=3)
        ax.set_yticks(y, [f"{name} ({n}) {k}/{s}" for name, n, k, s in
                          zip(group[item], group["n"], group["seeds_agreeing"], group["n_seeds"])], fontsize=8)
        ax.set_xlabel(f"MCC minus the MCC of {group['reference'].iat[0]} (seeds' range, mean)", fontsize=8)
        values = values if isinstance(values, tuple) else (values,)
        ax.set_title(" / ".join(str(v) for v in values), fontsize=9)
        ax.plot([], [], color=HOLDS, linewidth=2.2, label="every seed concludes the same")
        ax.plot([], [], color=DEPENDS, linewidth=2.2, label="depends on the seed")
        ax.legend(fontsize=7, loc="lower right")
    return fig
