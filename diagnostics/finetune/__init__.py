"""Seed-sweep fine-tuning: config, training mixtures, training loop, run store, executors.

Importing this package is light (no torch); the heavy modules import torch themselves.

>>> from diagnostics.finetune import SweepConfig
>>> SweepConfig().lr
1e-05
"""

from diagnostics.lazy import lazy_exports

_EXPORTS = {
    **dict.fromkeys(["DataRef", "ExtraData", "ModelSpec", "Presence", "SweepConfig", "load_config"], "config"),
    **dict.fromkeys(["RunLockedError", "collect_predictions", "run_dir", "sweep_status"], "store"),
    # the training entry points import torch
    "run_sweep": "sweep", "run_sweeps": "sweep", "train_run": "train",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
