"""Per-category MCC, seed stability, Multi-Bootstrap and seed agreement over the one predictions table.

Pure numpy / pandas / scipy (no torch). Functional API:

* reading: :func:`read_predictions`, :func:`validate_predictions` (ids and gold labels checked against the
  dataset), :func:`example_set_differences`
* scores: :func:`category_scores` (MCC per run x fine / coarse category, overall = mean of per-feature MCCs)
* stability: :func:`stability` (mean, std with ddof=1 over seeds), :func:`rs_corr`, :func:`seed_correlations`,
  :func:`rs_corr_variants` (collapsed seeds dropped / counted as 0), :func:`cross_language_corr`,
  :func:`mean_cross_language_corr` (from seed means or from one run per language), :func:`deltas`,
  :func:`delta_summary`
* the study's tables: :func:`diagnostic_table` (Table 1 of diagnostic sets), :func:`seed_stability_table`
  (Table 3), :func:`sigma_table`, :func:`mcc_sigma_table` (Table 6), :func:`extra_data_table`,
  :func:`consistent_gains`, :func:`average_sigma_decrease` (Table 4), :func:`improvement_correlation`
  (Fig. 5), :func:`presence_table` (Table 5) with :func:`presence_experiment`,
  :func:`parse_presence_experiment`, :func:`feature_slug`;
  :func:`display_table` and :func:`language_labels` for display headers (σ's ddof, language labels)
* one setting as an examples x runs matrix: :class:`SettingMatrix`, selected by :func:`select_setting` (with its
  categories, in the dataset's order: :func:`setting_arrays`) or all at once by :func:`setting_matrices`
* Multi-Bootstrap (Sellam et al. 2022): :func:`multibootstrap`, :func:`multibootstrap_pair`,
  :func:`bootstrap_ci`, :func:`compare` (arrays, the reference's semantics), :func:`setting_ci`, and
  :func:`compare_settings`, the one comparison of two settings (``alternative=`` two-sided / greater / less,
  ``adjust=`` holm / bh / none)
* Almost Stochastic Order (Dror et al. 2019) over the runs' scores, per category: :func:`aso` (arrays, deepsig's
  ``aso``), :func:`aso_compare` (two settings), :func:`aso_settings` (every pair, deepsig's ``multi_aso``),
  :func:`aso_matrices`, :func:`run_scores`, :func:`violation_ratio`, :class:`ASOResult`
* agreement: :func:`agreement`, :func:`fleiss_kappa`, :func:`pairwise_agreement`
* seed planning: :func:`plan_seeds` (:func:`variance_components` then :func:`simulate_plan`), :class:`SeedPlan`
* instances: :func:`instance_stability` (per-example flip rate across seeds), :func:`category_instability`,
  :func:`sigma_drivers` (leave-one-example-out change of σ)
* slices by feature: :func:`feature_slices` (per feature, MCC / accuracy of the pairs with it against those
  without, σ over seeds, the flipping pairs: :class:`FeatureSlices`) over the features of :func:`feature_matrix`
  (the rule annotator's, or a diagnostic set's own)
* conclusions across seeds: :func:`seed_conclusions` (per category or feature, what the seeds conclude together and
  how many of them alone conclude the same: would the answer survive another seed?)

The reference study's numbers set beside ours (the paper's reproduction) are :mod:`diagnostics.paper`, built on
these.
"""

from __future__ import annotations

from diagnostics.core.lazy import lazy_exports

_EXPORTS = {
    "agreement": "_agreement", "binary_agreement": "_agreement", "fleiss_kappa": "_agreement",
    "fleiss_kappa_from_counts": "_agreement", "pairwise_agreement": "_agreement",
    **dict.fromkeys(["ASOResult", "aso", "aso_compare", "aso_matrices", "aso_settings", "run_scores",
                     "violation_ratio"], "_aso"),
    "multibootstrap": "_bootstrap",
    "multibootstrap_pair": "_bootstrap", "point_estimate": "_bootstrap", "category_matrix": "_categories",
    "bootstrap_ci": "_inference", "compare": "_inference", "compare_settings": "_inference",
    "setting_ci": "_inference", "summarize_samples": "_inference",
    "category_instability": "_instances", "flip_rate": "_instances", "instance_stability": "_instances",
    "sigma_drivers": "_instances", "SettingMatrix": "_matrix", "select_rows": "_matrix", "select_setting": "_matrix",
    "setting_arrays": "_matrix", "setting_matrices": "_matrix",
    "binary_counts": "_mcc", "mcc": "_mcc", "mcc_from_counts": "_mcc", "adjust_pvalues": "_multiple",
    "simultaneous_interval": "_multiple",
    "simultaneous_level": "_multiple", "SeedPlan": "_planner", "plan_seeds": "_planner", "simulate_plan": "_planner",
    "variance_components": "_planner", "ALL": "_scores", "OVERALL": "_scores", "category_scores": "_scores",
    "cross_language_corr": "_stability", "delta_summary": "_stability", "deltas": "_stability",
    "mean_cross_language_corr": "_stability", "rs_corr": "_stability", "seed_correlations": "_stability",
    "stability": "_stability", "average_sigma_decrease": "_study", "consistent_gains": "_study",
    "extra_data_table": "_study", "feature_slug": "_study", "improvement_correlation": "_study",
    "parse_presence_experiment": "_study", "presence_experiment": "_study", "presence_table": "_study",
    "sigma_table": "_study", "mcc_sigma_table": "_study", "seed_stability_table": "_study",
    "display_table": "_study", "diagnostic_table": "_study", "language_labels": "_study",
    "rs_corr_variants": "_stability", "LABELS": "_table", "REQUIRED": "_table", "ExampleSetWarning": "_table",
    "example_set_differences": "_table", "read_predictions": "_table", "run_keys": "_table",
    "validate_predictions": "_table", "mcc_by_category": "_scores",
    # used by the other stages, the notebooks and the docs
    **dict.fromkeys(["dataset_for", "dataset_frame", "dataset_frames"], "_categories"),
    **dict.fromkeys(["ADJUSTMENTS", "ALTERNATIVES", "PAIRINGS"], "_inference"),
    "markdown_table": "_report",
    "ordered_categories": "_study",
    "SETTING_KEYS": "_table",
    "overall_n": "_scores",
    **dict.fromkeys(["FeatureSlices", "feature_matrix", "feature_slices"], "_slices"),
    "seed_conclusions": "_conclusions",
    # what `diagnostics stats` writes and the choices it checks
    **dict.fromkeys(["write_feature_report", "write_report"], "_report"), "RESAMPLE": "_bootstrap",
    **dict.fromkeys(["BY", "EXAMPLES", "SEED_SHAPES"], "_planner"),
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
