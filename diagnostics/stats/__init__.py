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
* agreement: :func:`agreement`, :func:`fleiss_kappa`, :func:`pairwise_agreement`
* seed planning: :func:`plan_seeds` (:func:`variance_components` then :func:`simulate_plan`), :class:`SeedPlan`
* against the reference study: :func:`against_paper` (our value beside every number the paper prints),
  :func:`paper_verdict`, :func:`paper_numbers`
* instances: :func:`instance_stability` (per-example flip rate across seeds), :func:`category_instability`,
  :func:`sigma_drivers` (leave-one-example-out change of σ)
"""

from __future__ import annotations

from diagnostics.lazy import lazy_exports

# Imported at once: these two functions share their submodule's name, and importing a submodule binds its name in
# the package, which would hide a lazily exported function of the same name.
from .agreement import agreement  # noqa: F401
from .stability import stability  # noqa: F401

_EXPORTS = {
    "agreement": "agreement", "binary_agreement": "agreement", "fleiss_kappa": "agreement",
    "fleiss_kappa_from_counts": "agreement", "pairwise_agreement": "agreement", "multibootstrap": "bootstrap",
    "multibootstrap_pair": "bootstrap", "point_estimate": "bootstrap", "category_matrix": "categories",
    "bootstrap_ci": "inference", "compare": "inference", "compare_settings": "inference",
    "setting_ci": "inference", "summarize_samples": "inference",
    "category_instability": "instances", "flip_rate": "instances", "instance_stability": "instances",
    "sigma_drivers": "instances", "SettingMatrix": "matrix", "select_rows": "matrix", "select_setting": "matrix",
    "setting_arrays": "matrix", "setting_matrices": "matrix",
    "binary_counts": "mcc", "mcc_from_counts": "mcc", "adjust_pvalues": "multiple", "simultaneous_interval": "multiple",
    "simultaneous_level": "multiple", "SeedPlan": "planner", "plan_seeds": "planner", "simulate_plan": "planner",
    "variance_components": "planner", "ALL": "scores", "OVERALL": "scores", "category_scores": "scores",
    "cross_language_corr": "stability", "delta_summary": "stability", "deltas": "stability",
    "mean_cross_language_corr": "stability", "rs_corr": "stability", "seed_correlations": "stability",
    "stability": "stability", "average_sigma_decrease": "study", "consistent_gains": "study",
    "extra_data_table": "study", "feature_slug": "study", "improvement_correlation": "study",
    "parse_presence_experiment": "study", "presence_experiment": "study", "presence_table": "study",
    "sigma_table": "study", "mcc_sigma_table": "study", "seed_stability_table": "study",
    "display_table": "study", "diagnostic_table": "study", "language_labels": "study",
    "rs_corr_variants": "stability", "LABELS": "table", "REQUIRED": "table", "ExampleSetWarning": "table",
    "example_set_differences": "table", "read_predictions": "table", "run_keys": "table",
    "validate_predictions": "table", "mcc_by_category": "scores",
    "against_paper": "paper", "paper_numbers": "paper", "paper_verdict": "paper",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
