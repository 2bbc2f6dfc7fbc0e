"""The ``epoch`` recipe: AdamW, linear warm-up and decay, a check after every epoch, early stopping on the selection
metric, the best check's weights.

Batches come in a fresh random order each epoch (grouped by length with ``length_bucketing``); the learning rate
follows :func:`~._loop.schedule_factor`; training stops after ``patience`` checks without a better
``selection_metric``, at ``max_epochs`` or at the step budget.
"""

from __future__ import annotations

import math
from typing import Any

from ._loop import schedule_factor
from ._recipes import Recipe


def budget(config, train_size: int, schedule: str | None = None) -> int:
    """Full epochs of ``batch_size``: ``ceil(train_size / batch_size) * max_epochs``."""
    return math.ceil(train_size / config.batch_size) * config.max_epochs


class EpochCourse:
    """One run of the ``epoch`` recipe (see the module's text)."""

    def __init__(self, config, model, train_size: int, steps: int):
        self.config, self.steps = config, steps
        self.factor = schedule_factor(config, steps)
        self.bad_epochs = 0

    def order(self, lengths, generator) -> list:
        from ._batching import batch_order

        return batch_order(lengths, self.config.batch_size, generator, bucketing=self.config.length_bucketing)

    def lr_factor(self, step: int) -> float:
        return self.factor(step)

    def due(self, step: int, position: int, batches: int) -> bool:
        return position >= batches or step >= self.steps

    def check(self, score, *, step, epoch, loss, best):
        config = self.config
        entry = {"epoch": epoch, "step": step, "train_loss": loss, **{f"validation_{k}": v for k, v in score.items()}}
        new_best = best is None or score[config.selection_metric] > best[f"validation_{config.selection_metric}"]
        self.bad_epochs = 0 if new_best else self.bad_epochs + 1
        stop = self.bad_epochs >= config.patience or step >= self.steps or epoch >= config.max_epochs
        return entry, new_best, stop

    def state(self) -> dict[str, Any]:
        return {"bad_epochs": self.bad_epochs}

    def restore(self, state: dict[str, Any]) -> None:
        self.bad_epochs = state["bad_epochs"]


RECIPE = Recipe(name="epoch", budget=budget, course=EpochCourse, optimizer="adamw")
