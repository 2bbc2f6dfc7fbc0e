"""Feature slices as a figure: per feature, MCC over seeds of the pairs with it against those without it."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ..stats import SETTING_KEYS


def feature_slices_figure(table: pd.DataFrame, *, max_features: int = 33, min_examples: int = 1) -> Figure:
    """Draw feature slices: one row per feature, MCC with the feature and without it (mean ± σ over seeds).

    Parameters
    ----------
    table : pandas.DataFrame
        ``FeatureSlices.table`` (:func:`diagnostics.stats.feature_slices` or
        :func:`diagnostics.evaluate.slice_by_feature`); one panel per setting and ``source``.
    max_features : int
        Features shown per panel at most (those with the most pairs).
    min_examples : int
        Leave out features shown by fewer pairs.

    Returns
    -------
    matplotlib.figure.Figure
        The figure (empty panel with a note when no feature is left).
    """
    keys = [k for k in (*SETTING_KEYS, "source") if k in table.columns]
    kept = table[table["n_with"] >= min_examples] if not table.empty else table
    groups = list(kept.groupby(keys, sort=False)) if not kept.empty else []
    panels = max(len(groups), 1)
    height = max((min(len(g), max_features) for _, g in groups), default=1)
    fig = Figure(figsize=(7.5 * panels, 0.32 * height + 1.6), layout="constrained")
    axes = fig.subplots(1, panels, squeeze=False)[0]
    if not groups:
        axes[0].text(0.5, 0.5, "no feature slice", ha="center", va="center")
        axes[0].set_axis_off()
        return fig
    for ax, (values, group) in zip(axes, groups):
        group = group.nlargest(max_features, "n_with").iloc[::-1]
        y = np.arange(len(group))
        for offset, side, color in ((0.18, "with", "#1f77b4"), (-0.18, "without", "#bbbbbb")):
            sd = group[f"mcc_{side}_sd"].fillna(0.0).to_numpy()
            ax.barh(y + offset, group[f"mcc_{side}"], height=0.34, xerr=sd, color=color, label=f"{side} the feature",
                    error_kw={"elinewidth": 0.8, "capsize": 2})
        ax.set_yticks(y, [f"{name} ({n})" for name, n in zip(group["feature"], group["n_with"])], fontsize=8)
        ax.axvline(0.0, color="black", linewidth=0.6)
        ax.set_xlabel("MCC (mean ± σ over seeds)")
        values = values if isinstance(values, tuple) else (values,)
        ax.set_title(" / ".join(str(v) for v in values), fontsize=9)
        ax.legend(fontsize=7, loc="lower right")
    return fig
