"""Layer-wise linear probing of pretrained and fine-tuned models.

>>> from diagnostics.probe import probe_gold_cv, probe_models  # doctest: +SKIP
>>> table = probe_models({"pretrained": "embedded-folder", "seed=0": "runs/x/en/m/seed=0"}, "en",
...                      cache_dir="cache/probe", max_train=600, max_test=400)  # doctest: +SKIP
>>> gold = probe_gold_cv({"pretrained": "embedded-folder"}, "en", cache_dir="cache/probe",
...                      max_test=400)  # doctest: +SKIP

``probe_models`` follows the study's protocol by default (Tikhonova et al. 2022, Appendix 8.4): probes trained
on the rule-annotated RTE-style train + validation, L2 strength chosen on the annotated RTE-style test split, no
class weighting, scored on the diagnostic set's gold tags (accuracy, balanced accuracy, macro-F1); the annotator
labels a pair by the presence of the study's 15 features in either sentence (``STUDY_FEATURES``: the twelve its
§5.4 names and three read off morphosyntactic tags; ``probe_labels="differs"``: the rules' pair reading over all
their features). The results' ``feature_list`` column names the list (``STUDY_FEATURES_NAME``, ``"differs"``,
``"custom"``).
``selection="holdout"`` and ``class_weight="balanced"`` are the alternatives. ``probe_gold_cv`` cross-validates
the same probe on the gold tags alone.

Heavy imports (torch, transformers, scikit-learn) happen on first use.
"""

from __future__ import annotations

from diagnostics.core.lazy import lazy_exports

_EXPORTS = {
    "probe_models": "_runner", "probe_layers": "_runner", "layer_summary": "_runner", "seed_of": "_runner",
    "seed_separation": "_runner",
    "RESULT_COLUMNS": "_runner", "SELECTIONS": "_runner", "choose_selection_set": "_runner",
    "probe_gold_cv": "_gold", "gold_cv_layers": "_gold", "cv_probe": "_gold", "stratified_folds": "_gold",
    "GOLD_CV_COLUMNS": "_gold",
    "fit_probe": "_linear", "control_labels": "_linear", "majority_accuracy": "_linear", "standardise": "_linear",
    "ALPHAS": "_linear", "ProbeFit": "_linear", "probe_metrics": "_linear", "chance_level": "_linear",
    "probe_estimator": "_linear",
    "ProbingTask": "_tasks", "resolve_task": "_tasks", "parse_tasks": "_tasks", "task_labels": "_tasks",
    "annotated_training_frame": "_tasks", "annotated_selection_frame": "_tasks", "annotate_frame": "_tasks",
    "diagnostic_frame": "_tasks", "DEFAULT_TASKS": "_tasks", "PROBE_LABELS": "_tasks", "STUDY_FEATURES": "_tasks",
    "STUDY_FEATURES_NAME": "_tasks", "feature_list_name": "_tasks",
    "restrict_features": "_tasks", "feature_groups": "_tasks",
    "encode_sentences": "_extract", "load_encoder": "_extract", "find_model_folder": "_extract", "pool": "_extract",
    "pair_vectors": "_extract",
    "cached_sentence_vectors": "_cache", "VectorCache": "_cache", "fingerprint": "_cache", "text_hash": "_cache",
    "CACHE_DTYPES": "_cache",
    "resolve_models": "_discover", "discover_runs": "_discover",
    "probe_mdl": "_mdl", "mdl_layers": "_mdl", "online_codelength": "_mdl", "block_ends": "_mdl",
    "label_entropy_bits": "_mdl", "OnlineCode": "_mdl", "MDL_PORTIONS": "_mdl", "MDL_COLUMNS": "_mdl",
    "MDL_DATA": "_mdl", "MDL_ALPHA": "_mdl",
    # used by the other stages, the notebooks and the docs
    **dict.fromkeys(["DIAGNOSTIC_SETS", "TRAIN_SETS", "subsample"], "_tasks"),
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
