"""What a training loop plans and reports: its step budget, its learning-rate schedule, its counters and history.

Every recipe (``SweepConfig.recipe``, :mod:`._recipes`) is trained by the engine (:mod:`._fused`); each reports
through the counters and history here, and plans its step budget through :func:`total_steps`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable


from ._config import SweepConfig
from ._jiant import VAL_SCHEDULES, resolve_val_interval, step_budget


@dataclass
class LoopCounters:
    """Running totals of a training loop, from which a run's throughput is computed.

    Parameters
    ----------
    step : int
        Optimizer steps taken.
    train_examples : int
        Training examples seen (an example seen in two epochs counts twice).
    train_seconds : float
        Wall time spent in training epochs (validation excluded).
    padded_tokens : int
        Token positions of the training batches, padding included.
    real_tokens : int
        Token positions that are not padding.
    """

    step: int = 0
    train_examples: int = 0
    train_seconds: float = 0.0
    padded_tokens: int = 0
    real_tokens: int = 0


@dataclass
class FitResult:
    """What a finished loop reports: one history entry per validation, the selected entry and the totals.

    Parameters
    ----------
    history : list of dict
        Per validation: ``epoch``, ``step``, ``train_loss`` and the ``validation_*`` scores; the ``jiant`` recipe
        adds ``check``, ``lr`` (the base learning rate after the check), ``lr_decayed`` and ``stop`` (why training
        ended there, else ``None``), and its ``epoch`` is fractional (steps / steps per epoch).
    best : dict or None
        The entry of the selected validation (``None`` only before the first one).
    counters : LoopCounters
        Totals of the loop.
    """

    history: list[dict[str, Any]] = field(default_factory=list)
    best: dict[str, Any] | None = None
    counters: LoopCounters = field(default_factory=LoopCounters)


def total_steps(config: SweepConfig, train_size: int, schedule: str | None = None) -> int:
    """Optimizer steps of a run at most: full epochs of ``batch_size`` (or the jiant recipe's budget), ``max_steps``.

    Parameters
    ----------
    config : SweepConfig
        Supplies ``recipe``, ``batch_size``, ``max_epochs`` and ``max_steps`` (and, for ``jiant``,
        ``val_interval`` and ``max_vals``).
    train_size : int
        Number of training examples.
    schedule : str, optional
        ``jiant`` recipe: the budget under this reading of :data:`diagnostics.finetune.VAL_SCHEDULES` instead of
        the config's own ``val_interval`` and ``max_vals``.

    Returns
    -------
    int
        The number of steps after which training stops at the latest. ``jiant``: the step of the check at which
        ``max_epochs`` or ``max_vals`` ends training (:func:`diagnostics.finetune._jiant.step_budget`, BertAdam's
        ``t_total``); earlier checks may stop it sooner.
    """
    from ._recipes import get_recipe

    steps = get_recipe(config.recipe).budget(config, train_size, schedule)
    return min(steps, config.max_steps) if config.max_steps else steps


def schedule_factor(config: SweepConfig, steps: int) -> Callable[[int], float]:
    """The ``epoch`` recipe's learning-rate multiplier at each step: linear warm-up, then linear decay (or constant).

    Parameters
    ----------
    config : SweepConfig
        Supplies ``scheduler`` (``linear`` or ``constant``) and ``warmup_ratio``.
    steps : int
        The run's total of optimizer steps (see :func:`total_steps`).

    Returns
    -------
    callable
        ``factor(step)``: the multiplier of the base learning rates for the update after ``step`` earlier ones:
        transformers' ``get_linear_schedule_with_warmup`` after the warm-up; during it one step ahead
        (``(step + 1) / warmup``), so that the first update does not have rate 0.
    """
    warmup = int(round(config.warmup_ratio * steps))

    def factor(step: int) -> float:
        if config.scheduler == "constant":
            return min(1.0, (step + 1) / warmup) if warmup else 1.0
        if warmup and step < warmup:
            return (step + 1) / warmup
        return max(0.0, (steps - step) / max(1, steps - warmup))

    return factor


def _jiant_schedule(config: SweepConfig, train_size: int, schedule: str | None = None) -> tuple[int, int, int]:
    """(steps per epoch, steps between checks, BertAdam's ``t_total``) of a ``jiant`` run on ``train_size`` pairs.

    ``schedule`` names a reading of :data:`~diagnostics.finetune._jiant.VAL_SCHEDULES` to use instead of the
    config's ``val_interval`` and ``max_vals``.
    """
    val_interval, max_vals = config.val_interval, config.max_vals
    if schedule is not None:
        reading = VAL_SCHEDULES[schedule]
        val_interval, max_vals = reading.val_interval, reading.max_vals
    batches = max(1, math.ceil(train_size / config.batch_size))
    interval = resolve_val_interval(val_interval, batches)
    return batches, interval, step_budget(batches, config.max_epochs, interval, max_vals)


