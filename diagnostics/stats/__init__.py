"""Per-category MCC, seed stability, Multi-Bootstrap and seed agreement over the one predictions table.

Pure numpy / pandas / scipy (no torch). Functional API:

* reading: :func:`read_predictions`, :func:`validate_predictions`
* scores: :func:`category_scores` (MCC per run x fine / coarse category, overall = mean of per-feature MCCs)
* stability: :func:`stability` (mean, std with ddof=1 over seeds), :func:`rs_corr`, :func:`seed_correlations`,
  :func:`cross_language_corr`, :func:`deltas`, :func:`delta_summary`
* Multi-Bootstrap (Sellam et al. 2022): :func:`multibootstrap`, :func:`multibootstrap_pair`,
  :func:`bootstrap_ci`, :func:`compare`, :func:`setting_ci`, :func:`compare_settings`
* agreement: :func:`agreement`, :func:`fleiss_kappa`, :func:`pairwise_agreement`
"""

from .agreement import agreement, binary_agreement, fleiss_kappa, fleiss_kappa_from_counts, pairwise_agreement
from .bootstrap import multibootstrap, multibootstrap_pair, point_estimate
from .categories import category_matrix
from .inference import (SettingArrays, bootstrap_ci, compare, compare_settings, setting_arrays, setting_ci,
                        summarize_samples)
from .mcc import binary_counts, mcc_from_counts
from .scores import ALL, OVERALL, category_scores
from .stability import cross_language_corr, delta_summary, deltas, rs_corr, seed_correlations, stability
from .table import LABELS, REQUIRED, read_predictions, run_keys, validate_predictions

mcc_by_category = category_scores

__all__ = ["ALL", "LABELS", "OVERALL", "REQUIRED", "SettingArrays", "agreement", "binary_agreement",
           "binary_counts", "bootstrap_ci", "category_matrix", "category_scores", "compare", "compare_settings",
           "cross_language_corr", "delta_summary", "deltas", "fleiss_kappa", "fleiss_kappa_from_counts",
           "mcc_by_category", "mcc_from_counts", "multibootstrap", "multibootstrap_pair", "pairwise_agreement",
           "point_estimate", "read_predictions", "rs_corr", "run_keys", "seed_correlations", "setting_arrays",
           "setting_ci", "stability", "summarize_samples", "validate_predictions"]
