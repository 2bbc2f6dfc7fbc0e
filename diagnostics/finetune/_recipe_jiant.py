"""The ``jiant`` recipe: jiant v1's SuperGLUE trainer as the reference study ran it (:mod:`._jiant`).

BertAdam (no bias correction, per-tensor clip, decay on every parameter) at a base rate decayed on plateaus times
its linear warm-up over the step budget ``t_total``; AllenNLP's length buckets; a check every ``val_interval`` steps
on the first ``val_data_limit`` validation pairs; the plateau controller decides decays and stops (patience and
``max_vals`` counted in checks, ``min_lr``, ``max_epochs``); the best check's weights.
"""

from __future__ import annotations

from typing import Any

from ._jiant import PlateauController, warmup_linear
from ._loop import _jiant_schedule
from ._recipes import Recipe


def budget(config, train_size: int, schedule: str | None = None) -> int:
    """BertAdam's ``t_total``: the step of the check at which ``max_epochs`` or ``max_vals`` ends training."""
    return _jiant_schedule(config, train_size, schedule)[2]


class JiantCourse:
    """One run of the ``jiant`` recipe (see the module's text)."""

    def __init__(self, config, model, train_size: int, steps: int):
        from ._modeling import parameter_groups

        self.config, self.steps = config, steps
        batches, self.interval, self.t_total = _jiant_schedule(config, train_size)
        self.batches_per_epoch, self.decay = batches, 1.0
        base_lr = parameter_groups(model, config.lr, config.head_lr, config.weight_decay, decay_all=True)[0]["lr"]
        self.controller = PlateauController(
            lr=base_lr, lr_patience=config.lr_patience, lr_decay_factor=config.lr_decay_factor,
            scheduler_threshold=config.scheduler_threshold, patience=config.patience, min_lr=config.min_lr,
            max_vals=config.max_vals, max_epochs=config.max_epochs, batches_per_epoch=batches)

    def order(self, lengths, generator) -> list:
        from ._batching import bucket_batches

        return bucket_batches(lengths, self.config.batch_size, generator)

    def lr_factor(self, step: int) -> float:
        warm = warmup_linear(step / self.t_total, self.config.warmup_ratio) if self.t_total > 0 else 1.0
        return self.decay * warm

    def due(self, step: int, position: int, batches: int) -> bool:
        return step % self.interval == 0 or step >= self.steps

    def check(self, score, *, step, epoch, loss, best):
        config = self.config
        decision = self.controller.check(score[config.selection_metric], step)
        if decision.lr_decayed:
            self.decay *= config.lr_decay_factor
        stop = decision.stop or ("max_steps" if step >= self.steps else None)
        entry = {"check": decision.check, "epoch": step / self.batches_per_epoch, "step": step, "train_loss": loss,
                 "lr": decision.lr, "lr_decayed": decision.lr_decayed, "stop": stop,
                 **{f"validation_{k}": v for k, v in score.items()}}
        return entry, decision.new_best, stop is not None

    def state(self) -> dict[str, Any]:
        controller = self.controller
        return {"decay": self.decay, "lr": controller.lr, "history": controller.history,
                "plateau_best": controller.plateau_best, "bad_checks": controller.bad_checks}

    def restore(self, state: dict[str, Any]) -> None:
        self.decay = state["decay"]
        self.controller.lr, self.controller.history = state["lr"], list(state["history"])
        self.controller.plateau_best, self.controller.bad_checks = state["plateau_best"], state["bad_checks"]


RECIPE = Recipe(name="jiant", budget=budget, course=JiantCourse, optimizer="bert_adam",
                validation_limit=lambda config: config.val_data_limit)
