"""The ``trainer`` recipe: Hugging Face ``Trainer``'s defaults, for comparing with runs made by a ``Trainer`` script.

AdamW (no decay on biases and LayerNorm), the learning rate decayed linearly to 0 over ``max_epochs`` epochs from
the first step (``Trainer``'s ``lr_scheduler_type="linear"`` with no warm-up: ``warmup_ratio`` is not read), batches
in a fresh random order each epoch (its ``RandomSampler``), gradient clipping to ``max_grad_norm``, an evaluation
after every epoch (``eval_strategy="epoch"``), no early stopping, and the model of the last epoch
(``load_best_model_at_end`` off).
"""

from __future__ import annotations

import math
from typing import Any

from ._recipes import Recipe


def budget(config, train_size: int, schedule: str | None = None) -> int:
    """Every epoch: ``ceil(train_size / batch_size) * max_epochs``."""
    return math.ceil(train_size / config.batch_size) * config.max_epochs


class TrainerCourse:
    """One run of the ``trainer`` recipe (see the module's text)."""

    def __init__(self, config, model, train_size: int, steps: int):
        self.config, self.steps = config, steps

    def order(self, lengths, generator) -> list:
        from ._batching import batch_order

        return batch_order(lengths, self.config.batch_size, generator, bucketing=False)

    def lr_factor(self, step: int) -> float:
        return max(0.0, (self.steps - step) / max(1, self.steps))

    def due(self, step: int, position: int, batches: int) -> bool:
        return position >= batches or step >= self.steps

    def check(self, score, *, step, epoch, loss, best):
        entry = {"epoch": epoch, "step": step, "train_loss": loss, **{f"validation_{k}": v for k, v in score.items()}}
        return entry, True, step >= self.steps  # the last check's model is the run's

    def state(self) -> dict[str, Any]:
        return {}

    def restore(self, state: dict[str, Any]) -> None:
        pass


RECIPE = Recipe(name="trainer", budget=budget, course=TrainerCourse, optimizer="adamw")
