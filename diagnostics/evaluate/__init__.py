"""Evaluate NLI classifiers you already have: score them on the diagnostics (or any NLI set) as runs of a run store.

* :func:`evaluate_models` runs sequence classifiers (folders, hub ids, the sweep's checkpoints) on registered sets
  or user files, several models as seeds of one, and stores each as a run (``stats``, ``compare``, the explorer
  and the notebooks read them like trained runs); a finished evaluation is not redone; :func:`read_evaluations`
  reads a store's evaluations back (runs, predictions, the sets scored);
* :func:`head_labels` is the rule that maps a head's ``config.id2label`` onto entailment / not_entailment
  (3-way heads collapse), overridable by a label map; :func:`describe_rule` records it;
* :func:`pick_device` (CUDA, then Apple ``mps``, then the CPU) and :func:`autocast_dtype` (fp32 / bf16 / fp16);
* :func:`slice_by_feature` slices any predictions table with gold labels by the rule annotator's features (each
  pair annotated once, cached) and a diagnostic set's own categories: per feature, MCC / accuracy with and without
  it, σ over seeds, the flipping pairs (:func:`diagnostics.stats.feature_slices` does the scoring).

Importing this package is light (no torch).
"""

from __future__ import annotations

from diagnostics.core.lazy import lazy_exports

_EXPORTS = {
    **dict.fromkeys(["EXPERIMENT", "EvalModel", "Evaluation", "dataset_refs", "evaluate_models", "resolve_models"],
                    "_evaluate"),
    **dict.fromkeys(["DEVICES", "PRECISIONS", "autocast_dtype", "class_logits", "load_classifier_head",
                     "pick_device", "require_classifier"], "_infer"),
    **dict.fromkeys(["describe_rule", "head_labels"], "_labels"),
    **dict.fromkeys(["evaluation_key", "stored_evaluation", "write_evaluation_run"], "_runs"),
    "read_evaluations": "_read",
    **dict.fromkeys(["SOURCES", "default_cache", "feature_categories", "one_split",
                     "slice_by_feature"], "_slicing"),
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
