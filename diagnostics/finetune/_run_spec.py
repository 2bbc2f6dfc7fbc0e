"""The coordinates of one run, as the planner makes them and the executors send them to workers (no torch here)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from . import _store as store
from ._config import ModelSpec, SweepConfig


@dataclass
class RunSpec:
    """Coordinates of one run (picklable: sent to pool / SLURM / Ray workers).

    Parameters
    ----------
    config : dict
        The sweep configuration as a plain dict (see :meth:`SweepConfig.to_dict`).
    language : str
        Language of the run.
    model : dict
        The model as a plain dict (see :func:`spec_dict`).
    seed : int
        Fine-tuning seed.
    """

    config: dict[str, Any]
    language: str
    model: dict[str, Any]
    seed: int

    @property
    def sweep(self) -> SweepConfig:
        """The sweep configuration, rebuilt from :attr:`config`."""
        return SweepConfig.from_dict(self.config)

    @property
    def model_spec(self) -> ModelSpec:
        """The model of the run, rebuilt from :attr:`model`."""
        return ModelSpec(**self.model)

    @property
    def path(self) -> Path:
        """The run's folder in the run store."""
        cfg = self.config
        return store.run_dir(cfg["output_dir"], cfg["experiment"], self.language, self.model_spec.slug, self.seed)

    def describe(self) -> str:
        """Name the run for progress bars and logs: ``<language>/<model slug>/seed=<seed>``."""
        return f"{self.language}/{self.model_spec.slug}/seed={self.seed}"


def spec_dict(model: ModelSpec) -> dict[str, Any]:
    """Turn a ModelSpec into a plain dict of its fields (for :class:`RunSpec`)."""
    return asdict(model)
