"""A seed plan as a figure: the simulated CI half-width (or power) against the number of seeds, per unit."""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure

from ..stats import SETTING_KEYS

#: Units drawn with a legend entry each; more units share one colour ramp and no legend.
_LEGEND_UNITS = 12


def seed_plan_figure(curve: pd.DataFrame, target: float | None = None) -> Figure:
    """Draw a seed plan: per setting (and example scale) one panel, one line per unit (category) over the seeds.

    Parameters
    ----------
    curve : pandas.DataFrame
        ``SeedPlan.curve`` (:func:`diagnostics.stats.plan_seeds`): setting keys, ``category, example_scale,
        n_seeds, metric, quantity, value``.
    target : float, optional
        The plan's target (half-width or power), drawn as a dashed horizontal line.

    Returns
    -------
    matplotlib.figure.Figure
        One panel per setting x example scale; each unit's line carries the unit's name as its label.

    Raises
    ------
    ValueError
        For an empty curve.
    """
    if curve.empty:
        raise ValueError("nothing to plot: the seed plan's curve is empty")
    keys = [k for k in SETTING_KEYS if k in curve.columns]
    scales = curve["example_scale"].nunique() > 1
    groups = list(curve.groupby([*keys, "example_scale"], sort=False))
    metric, quantity = curve["metric"].iat[0], curve["quantity"].iat[0]
    ylabel = ("power" if metric == "power" else
              f"CI half-width of the {'seed σ' if quantity == 'sigma' else 'mean MCC'}")
    columns = min(len(groups), 3)
    rows = -(-len(groups) // columns)
    fig = Figure(figsize=(5.2 * columns, 3.8 * rows), layout="constrained")
    axes = fig.subplots(rows, columns, squeeze=False).ravel()
    for ax, (values, group) in zip(axes, groups):
        units = list(dict.fromkeys(group["category"]))
        colours = _colours(len(units))
        for unit, colour in zip(units, colours):
            line = group[group["category"] == unit].sort_values("n_seeds")
            ax.plot(line["n_seeds"], line["value"], color=colour, linewidth=1.0 if len(units) > 1 else 1.6,
                    label=str(unit))
        if target is not None:
            ax.axhline(target, color="black", linestyle="--", linewidth=0.8, label="_target")
        name = " / ".join(str(v) for v in values[:len(keys)])
        ax.set_title(name + (f", examples ×{values[-1]:g}" if scales else ""), fontsize=9)
        ax.set_xlabel("seeds")
        ax.set_ylabel(ylabel)
        if len(units) <= _LEGEND_UNITS:
            ax.legend(fontsize=7, loc="best")
    for ax in axes[len(groups):]:
        ax.set_axis_off()
    fig.suptitle("Seeds needed: simulated " + ("power" if metric == "power" else "interval half-width")
                 + (f" (target {target:g})" if target is not None else ""))
    return fig


def _colours(n: int) -> list:
    from matplotlib import colormaps

    ramp = colormaps["viridis"]
    return [ramp(i / max(n - 1, 1)) for i in range(n)]
