"""jiant v1's SuperGLUE training recipe, the one the reference study ran: BertAdam, its warm-up, the plateau rules.

Small pieces, each a function of a few numbers, so that many runs can be stepped together:

* :func:`warmup_linear` and :func:`step_budget`: BertAdam's learning-rate multiplier (pytorch_pretrained_bert 0.6.2,
  ``WarmupLinearSchedule``) and the ``t_total`` jiant's ``trainer.py`` gives it;
* BertAdam's update (Adam without bias correction, epsilon outside the square root, weight decay added to the
  update, each tensor's gradient clipped to its own norm first) is the engine's
  (:class:`diagnostics.finetune._stacked_optim.StackedBertAdam`);
* :class:`PlateauController`: takes the validation scores one by one and says whether the check is a new best,
  whether the learning rate is decayed (torch's ``ReduceLROnPlateau`` as jiant configured it: mode max, absolute
  threshold) and whether training stops (jiant's ``_check_history`` and ``_check_stop``).

Where each rule comes from (file by file) is written out in ``docs/finetune.md``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

#: Examples AllenNLP's ``BucketIterator`` reads at a time for jiant v1 (its ``max_instances_in_memory``).
CHUNK = 10_000
#: torch's ReduceLROnPlateau skips a decay smaller than this (its ``eps``).
_DECAY_EPS = 1e-8


def warmup_linear(progress: float, warmup: float) -> float:
    """Compute BertAdam's ``warmup_linear`` multiplier: a rise over ``warmup``, then a fall to 0 at ``progress`` 1.

    ``progress`` is the updates already taken over ``t_total`` (BertAdam reads its step count before incrementing it,
    so the first update has progress 0 and a multiplier of 0); ``warmup`` is the share of ``t_total`` spent warming
    up, in [0, 1). The value is ``progress / warmup`` while ``progress < warmup``, else
    ``max((progress - 1) / (warmup - 1), 0)``.
    """
    if progress < warmup:
        return progress / warmup
    return max((progress - 1.0) / (warmup - 1.0), 0.0)


def step_budget(batches_per_epoch: int, max_epochs: int, val_interval: int, max_vals: int) -> int:
    """The ``t_total`` of jiant's trainer: the check at which ``max_epochs`` or ``max_vals`` ends training, in steps.

    ``max_epochs`` is checked at validations only, so training runs on to the next check:
    ``min(ceil(batches_per_epoch * max_epochs / val_interval), max_vals) * val_interval``.
    """
    return min(math.ceil(batches_per_epoch * max_epochs / val_interval), max_vals) * val_interval


@dataclass(frozen=True)
class ValSchedule:
    """One reading of how often jiant validated the study's runs and how many checks it allowed.

    Parameters
    ----------
    name : str
        The reading's name (the ``val_schedule`` setting).
    val_interval : int or None
        Optimizer steps between checks (``None``: one epoch of the run's own training mixture).
    max_vals : int
        Most checks.
    source : str
        Where the two numbers come from (repository, file, line).
    """

    name: str
    val_interval: int | None
    max_vals: int
    source: str


#: The three readings of the study's validation schedule. The paper prints none of these numbers; they differ only
#: for runs longer than ten checks of 625 steps, i.e. the MNLI mixtures (RTE / TERRa alone are ~625 steps an epoch,
#: so ten checks are ten epochs under all three). ``docs/finetune.md`` says why ``russiansuperglue`` is the default.
VAL_SCHEDULES = {
    "russiansuperglue": ValSchedule(
        "russiansuperglue", 625, 10,
        "RussianNLP/RussianSuperGLUE at c9167eb: jiant-russian/scripts/russian-superglue-baselines.sh lines 33-35, "
        "terra(), `val_interval = 625`; jiant-russian/jiant/config/superglue_bert.conf line 35, `max_vals = 10` "
        "(the folder is jiant-russian-v2/ from 6fc9547 on: jiant/config/superglue_bert.conf line 35)"),
    "jiant_superglue": ValSchedule(
        "jiant_superglue", 625, 10000,
        "nyu-mll/jiant v1: scripts/superglue-baselines.sh, function rte(), `val_interval = 625`; "
        "jiant/config/superglue_bert.conf line 32, `max_vals = 10000`"),
    "per_epoch": ValSchedule(
        "per_epoch", None, 10,
        "no jiant config: one check per epoch of the run's own mixture, ten checks (max_vals of "
        "RussianSuperGLUE's jiant-russian/jiant/config/superglue_bert.conf line 35 at c9167eb)"),
}
#: ``val_schedule: custom`` keeps ``val_interval`` and ``max_vals`` as set.
CUSTOM_SCHEDULE = "custom"


def schedule_name(val_interval: int | None, max_vals: int) -> str:
    """Name the reading that ``val_interval`` and ``max_vals`` are (``"custom"`` when none is)."""
    for schedule in VAL_SCHEDULES.values():
        if (schedule.val_interval, schedule.max_vals) == (val_interval, max_vals):
            return schedule.name
    return CUSTOM_SCHEDULE


def resolve_val_interval(val_interval: int | None, batches_per_epoch: int) -> int:
    """Return the steps between validation checks: the setting, or one epoch's batches when it is ``None``."""
    return int(val_interval) if val_interval else max(1, batches_per_epoch)


@dataclass
class CheckResult:
    """What one validation check decides.

    Parameters
    ----------
    check : int
        The check's number (1 = first).
    new_best : bool
        The score beats every earlier one (a tie does not): this check's weights are the ones kept.
    lr_decayed : bool
        The learning rate was multiplied by the decay factor at this check.
    lr : float
        The learning rate after this check.
    stop : str or None
        Why training stops here (``max_epochs``, ``min_lr``, ``patience``, ``max_vals``; the first that applies in
        jiant's order), else ``None``.
    """

    check: int
    new_best: bool
    lr_decayed: bool
    lr: float
    stop: str | None


@dataclass
class PlateauController:
    """The validation-time rules of jiant v1 for one run, fed one score per check.

    Parameters
    ----------
    lr : float
        Starting base learning rate (of the first parameter group, the one jiant compares with ``min_lr``).
    lr_patience : int
        Checks without improvement tolerated before a decay (decay at the ``lr_patience + 1``-th).
    lr_decay_factor : float
        Multiplier of a decay.
    scheduler_threshold : float
        An improvement must exceed the plateau's best by more than this (absolute) to reset its count.
    patience : int
        Training stops when the best check is ``patience + 1`` checks old.
    min_lr : float
        Training stops when the learning rate falls below this.
    max_vals : int
        Most checks.
    max_epochs : int
        Training stops at the first check after ``max_epochs`` epochs.
    batches_per_epoch : int
        Steps of one epoch.
    history : list of float
        Scores seen so far.
    plateau_best : float
        Best score of the plateau rule (a new one must beat it by more than ``scheduler_threshold``).
    bad_checks : int
        Checks since the plateau rule last saw an improvement.
    """

    lr: float
    lr_patience: int
    lr_decay_factor: float
    scheduler_threshold: float
    patience: int
    min_lr: float
    max_vals: int
    max_epochs: int
    batches_per_epoch: int
    history: list[float] = field(default_factory=list)
    plateau_best: float = -math.inf
    bad_checks: int = 0

    def check(self, score: float, step: int) -> CheckResult:
        """Record the score of the check made after ``step`` optimizer steps and decide.

        ``score`` is the selection metric (higher is better).
        """
        self.history.append(float(score))
        best_index = self.history.index(max(self.history))
        new_best = best_index == len(self.history) - 1
        out_of_patience = len(self.history) - 1 - best_index >= self.patience + 1
        if score > self.plateau_best + self.scheduler_threshold:
            self.plateau_best, self.bad_checks = float(score), 0
        else:
            self.bad_checks += 1
        decayed = False
        if self.bad_checks > self.lr_patience:
            lower = self.lr * self.lr_decay_factor
            if self.lr - lower > _DECAY_EPS:
                self.lr, decayed = lower, True
            self.bad_checks = 0
        stop = None
        if step / self.batches_per_epoch >= self.max_epochs:
            stop = "max_epochs"
        elif self.lr < self.min_lr:
            stop = "min_lr"
        elif out_of_patience:
            stop = "patience"
        elif len(self.history) >= self.max_vals:
            stop = "max_vals"
        return CheckResult(len(self.history), new_best, decayed, self.lr, stop)
