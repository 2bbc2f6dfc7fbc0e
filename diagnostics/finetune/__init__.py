"""Seed-sweep fine-tuning: config, training mixtures, training loop, run store, executors.

Importing this package is light (no torch); the heavy modules import torch themselves.

>>> from diagnostics.finetune import SweepConfig
>>> SweepConfig().lr
1e-05
"""

from diagnostics.core.lazy import lazy_exports

_EXPORTS = {
    **dict.fromkeys(["DataRef", "ExtraData", "ModelSpec", "Presence", "SweepConfig", "load_config"], "_config"),
    **dict.fromkeys(["RunLockLost", "RunLockedError", "RunStoreError"], "_run_lock"), "run_dir": "_store",
    # runs made without training (evaluations) are written under a lease too
    "owned_run": "_train", "RunWriter": "_run_writer", **dict.fromkeys(["RUN_CONFIG", "library_versions"], "_store"),
    **dict.fromkeys(["collect_predictions", "finished_state", "sweep_status", "verify_run"], "_store_checks"),
    # the training entry points import torch
    "run_sweep": "_sweep", "run_sweeps": "_sweep", "train_run": "_train",
    # detached sweeps: submit, then follow from any shell
    "submit_sweeps": "_sweep",
    **dict.fromkeys(["DetachedSweep", "detached_status", "find_detached", "wait_detached"], "_detach"),
    # what `diagnostics sweep` prints and refuses
    **dict.fromkeys(["describe_record", "detached_lines"], "_detach"),
    **dict.fromkeys(["PROBLEM_STATES", "SettingsConflictError"], "_sweep"),
    # used by the other stages, the notebooks and the docs
    **dict.fromkeys(["ConfigError", "LANGUAGE_DEFAULTS"], "_config"),
    **dict.fromkeys(["DIAGNOSTIC_CATEGORY", "LANGUAGE_DATA_KEYS", "PRESENCE_WITHIN"], "_config_values"),
    **dict.fromkeys(["group_jobs", "training_key"], "_grouping"),
    "total_steps": "_loop",
    # what a run trains on under a budget, and where jiant's rules stop it
    **dict.fromkeys(["Exposure", "expected_stop", "exposure"], "_exposure"), "MIXTURE_ORDERS": "_config",
    **dict.fromkeys(["VAL_SCHEDULES", "ValSchedule"], "_jiant"),
    **dict.fromkeys(["extra_ref", "labelled", "subset", "training_mixture"], "_mixtures"),
    **dict.fromkeys(["input_problems", "locate_model", "model_problems"], "_preflight"),
    **dict.fromkeys(["Run", "is_done", "list_runs", "run_coordinates", "run_folder", "seed_of_folder"], "_store"),
    **dict.fromkeys(["check_compatible", "jobs", "run_states", "settings_conflict", "sweep_runs"], "_sweep"),
    **dict.fromkeys(["job_slots", "resolve_model_path"], "_train"),
    # what `diagnostics evaluate` reuses: the sweep's tokenisation, evaluation batches and predictions table
    **dict.fromkeys(["encode_pairs", "length_sorted_batches"], "_batching"), "prediction_table": "_predict",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
