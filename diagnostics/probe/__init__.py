"""Layer-wise linear probing of pretrained and fine-tuned models.

>>> from diagnostics.probe import probe_gold_cv, probe_models  # doctest: +SKIP
>>> table = probe_models({"pretrained": "embedded-folder", "seed=0": "runs/x/en/m/seed=0"}, "en",
...                      cache_dir="cache/probe", max_train=600, max_test=400)  # doctest: +SKIP
>>> gold = probe_gold_cv({"pretrained": "embedded-folder"}, "en", cache_dir="cache/probe",
...                      max_test=400)  # doctest: +SKIP

``probe_models`` follows the study's protocol by default (Tikhonova et al. 2022, Appendix 8.4): probes trained
on the rule-annotated RTE-style train + validation, L2 strength chosen on the annotated RTE-style test split, no
class weighting, scored on the diagnostic set's gold tags (accuracy, balanced accuracy, macro-F1); the annotator
labels a pair by the presence of the study's 15 features in either sentence (``probe_labels="differs"``: the
rules' pair reading over all their features).
``selection="holdout"`` and ``class_weight="balanced"`` are the alternatives. ``probe_gold_cv`` cross-validates
the same probe on the gold tags alone.

Heavy imports (torch, transformers, scikit-learn) happen on first use.
"""

from __future__ import annotations

from diagnostics.lazy import lazy_exports

_EXPORTS = {
    "probe_models": "runner", "probe_layers": "runner", "layer_summary": "runner", "seed_of": "runner",
    "RESULT_COLUMNS": "runner", "SELECTIONS": "runner", "choose_selection_set": "runner",
    "probe_gold_cv": "gold", "gold_cv_layers": "gold", "cv_probe": "gold", "stratified_folds": "gold",
    "GOLD_CV_COLUMNS": "gold",
    "fit_probe": "linear", "control_labels": "linear", "majority_accuracy": "linear", "standardise": "linear",
    "ALPHAS": "linear", "ProbeFit": "linear", "probe_metrics": "linear", "chance_level": "linear",
    "probe_estimator": "linear",
    "ProbingTask": "tasks", "resolve_task": "tasks", "parse_tasks": "tasks", "task_labels": "tasks",
    "annotated_training_frame": "tasks", "annotated_selection_frame": "tasks", "annotate_frame": "tasks",
    "diagnostic_frame": "tasks", "DEFAULT_TASKS": "tasks", "PROBE_LABELS": "tasks", "STUDY_FEATURES": "tasks",
    "restrict_features": "tasks", "feature_groups": "tasks",
    "encode_sentences": "extract", "load_encoder": "extract", "find_model_folder": "extract", "pool": "extract",
    "pair_vectors": "extract",
    "cached_sentence_vectors": "cache", "VectorCache": "cache", "fingerprint": "cache", "text_hash": "cache",
    "resolve_models": "discover", "discover_runs": "discover",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
