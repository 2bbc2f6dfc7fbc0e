"""Seaborn figures used by the notebooks and the HTML report (one private module per stage), and :func:`save`.

matplotlib and seaborn are imported on first use of a figure, not on ``import diagnostics.plots``.
"""

from __future__ import annotations

from diagnostics.core.lazy import lazy_exports

_EXPORTS = {
    "save": "_save",
    **dict.fromkeys(["agreement_figure", "evaluation_detail", "evaluation_scores", "feature_distribution"], "_annotate"),
    **dict.fromkeys(["failure_by_seed", "failure_heatmap"], "_behave"),
    **dict.fromkeys(["comparison_figure", "delta_figure", "write_comparison"], "_compare"),
    "metric_curve": "_curves",
    "category_counts_by_language": "_data",
    **dict.fromkeys(["flipping_figure", "focus"], "_flips"),
    "paper_comparison": "_paper",
    "seed_plan_figure": "_plan",
    **dict.fromkeys(["accuracy_by_layer", "compare_by_layer", "mdl_by_layer", "seed_spread_by_layer"], "_probe"),
    **dict.fromkeys(["category_language_heatmap", "category_seed_heatmap", "category_trajectories", "ci_forest_plot",
                     "delta_heatmap"], "_stats"),
    "feature_slices_figure": "_slices",
    "seed_conclusions_figure": "_conclusions",
    "validation_curves": "_sweep",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
