"""What a run actually trains on: the pairs it sees under a step budget, and how many of them are the language's own.

A ``jiant`` run reads its mixture as AllenNLP's ``BucketIterator`` does (:func:`._batching.bucket_batches`): in
input order, in chunks of :data:`CHUNK` pairs, shuffled only within a chunk. Under a budget shorter than an epoch it
therefore sees the *first* pairs of its mixture file, and which pairs come first is the mixture's order
(``train_first``: the language's train set, then the extra English data; ``shuffled``: the whole mixture in one
seeded random order). The ``epoch`` and ``trainer`` recipes shuffle every epoch whole, so for them the order is
immaterial.

:func:`exposure` counts the pairs a run sees and the expected number of them that come from the language's own
train set (RTE / TERRa); :func:`expected_stop` gives the step at which jiant's stopping rules end a run whose
validation score improves until a given check and stays flat after it, using the recipe's own controller.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ._config import MIXTURE_ORDERS
from ._jiant import CHUNK, VAL_SCHEDULES, PlateauController
from ._loop import _jiant_schedule


@dataclass(frozen=True)
class Exposure:
    """The pairs one run sees at most, and the expected share of them from the language's own train set.

    Parameters
    ----------
    steps : int
        Optimizer steps of the budget.
    pairs : int
        Pair visits (a pair seen in two epochs counts twice).
    own_pairs : float
        Expected visits of pairs from the language's own train set.
    """

    steps: int
    pairs: int
    own_pairs: float

    @property
    def own_share(self) -> float:
        """``own_pairs / pairs`` (0 for an empty run)."""
        return self.own_pairs / self.pairs if self.pairs else 0.0


def _first_pairs_own(first: int, own: int, total: int, chunk: int) -> float:
    """Expected own pairs among the first ``first`` pairs read in file order in chunks (shuffled within a chunk)."""
    full = first // chunk * chunk
    seen = min(own, full)
    rest = first - full
    if rest:
        size = min(chunk, total - full)
        own_in_chunk = min(max(own - full, 0), size)
        seen += rest / size * own_in_chunk
    return float(seen)


def exposure(steps: int, batch_size: int, own: int, total: int, order: str, *, in_file_order: bool = True,
             chunk: int = CHUNK) -> Exposure:
    """Count what a run of ``steps`` steps trains on.

    Parameters
    ----------
    steps : int
        The run's steps (its budget, or where it stops).
    batch_size : int
        Pairs per step.
    own : int
        Pairs of the language's own train set in the mixture (RTE / TERRa).
    total : int
        Pairs of the whole mixture.
    order : str
        One of :data:`MIXTURE_ORDERS`.
    in_file_order : bool
        Whether the recipe reads the mixture in file order in chunks (``jiant``); ``False``: every epoch is one
        random order of the whole mixture.
    chunk : int
        Pairs per chunk.

    Returns
    -------
    Exposure
    """
    if order not in MIXTURE_ORDERS:
        raise ValueError(f"unknown mixture order {order!r}; choose one of {', '.join(MIXTURE_ORDERS)}")
    if total <= 0 or steps <= 0:
        return Exposure(max(steps, 0), 0, 0.0)
    batches = math.ceil(total / batch_size)
    epochs, rest = divmod(steps, batches)
    first = min(rest * batch_size, total)
    if order == "train_first" and in_file_order:
        own_rest = _first_pairs_own(first, own, total, chunk)
    else:
        own_rest = first * own / total
    return Exposure(steps, epochs * total + first, epochs * own + own_rest)


def expected_stop(config, train_size: int, schedule: str | None, best_check: int) -> int:
    """The step at which a ``jiant`` run stops when its score rises until ``best_check`` and is flat after it.

    The recipe's own :class:`~._jiant.PlateauController` decides (patience, learning-rate decays to ``min_lr``,
    ``max_vals``, ``max_epochs``); ``max_steps`` caps the result.

    Parameters
    ----------
    config : SweepConfig
        A ``jiant`` sweep (its patience, decay and stop settings).
    train_size : int
        Pairs of the run's mixture.
    schedule : str or None
        A reading of :data:`~._jiant.VAL_SCHEDULES` (``None``: the config's own ``val_interval`` and ``max_vals``).
    best_check : int
        The check (1 = first) with the best score.

    Returns
    -------
    int
        Optimizer steps trained.
    """
    batches, interval, _ = _jiant_schedule(config, train_size, schedule)
    max_vals = config.max_vals if schedule is None else VAL_SCHEDULES[schedule].max_vals
    controller = PlateauController(lr=config.lr, lr_patience=config.lr_patience,
                                   lr_decay_factor=config.lr_decay_factor,
                                   scheduler_threshold=config.scheduler_threshold, patience=config.patience,
                                   min_lr=config.min_lr, max_vals=max_vals, max_epochs=config.max_epochs,
                                   batches_per_epoch=batches)
    check = 0
    while True:
        check += 1
        step = check * interval
        score = min(check, best_check)  # rising by more than any threshold, then flat
        if controller.check(float(score), step).stop is not None:
            break
    return min(step, config.max_steps) if config.max_steps else step
