"""Training recipes: what a run's loop does around the engine's step, one module per recipe, picked by ``recipe:``.

A recipe owns its step budget, its batch order, its learning-rate factor, when it validates, what a check decides
(record, best weights, stop) and its optimizer; the engine (:mod:`._fused`) calls it for every run instead of
branching on the recipe's name. Each recipe is a :class:`Recipe` in a module of its own, registered here by name in
:data:`RECIPE_MODULES` (this module imports nothing heavy, so the settings can list the names without torch):

* ``epoch`` (:mod:`._recipe_epoch`): AdamW, linear warm-up and decay, a check per epoch, early stopping, the best
  check's weights;
* ``jiant`` (:mod:`._recipe_jiant`): jiant v1's SuperGLUE trainer as the reference study ran it;
* ``trainer`` (:mod:`._recipe_trainer`): Hugging Face ``Trainer``'s defaults: AdamW, linear decay without warm-up,
  a check per epoch, no early stopping, the last epoch's weights.

A new recipe is one module defining ``RECIPE`` plus one line in :data:`RECIPE_MODULES`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

#: Recipe name -> the module that defines it (as ``RECIPE``).
RECIPE_MODULES: dict[str, str] = {
    "epoch": "diagnostics.finetune._recipe_epoch",
    "jiant": "diagnostics.finetune._recipe_jiant",
    "trainer": "diagnostics.finetune._recipe_trainer",
}
#: The names ``recipe:`` accepts.
RECIPE_NAMES = tuple(RECIPE_MODULES)


class RunCourse(Protocol):
    """The course of one run under a recipe: what it keeps between its steps and decides at each (its batch order, its
    rates, when it validates, what a check decides); made by :attr:`Recipe.course` when the run takes a slot."""

    #: The run's step budget (:attr:`Recipe.budget`, capped by ``max_steps``).
    steps: int

    def order(self, lengths, generator) -> list:
        """The batches of a new epoch (arrays of example indices), drawn from the run's ``generator``."""

    def lr_factor(self, step: int) -> float:
        """The multiplier of the base learning rates for the update after ``step`` earlier ones."""

    def due(self, step: int, position: int, batches: int) -> bool:
        """Whether the run validates after ``step`` steps, ``position`` batches into an epoch of ``batches``."""

    def check(self, score: dict[str, float], *, step: int, epoch: int, loss: float | None,
              best: dict[str, Any] | None) -> tuple[dict[str, Any], bool, bool]:
        """Record a validation: ``(history entry, whether it is the new best, whether the run stops here)``."""

    def state(self) -> dict[str, Any]:
        """What the course needs to go on in another process (JSON), for :meth:`restore`."""

    def restore(self, state: dict[str, Any]) -> None:
        """Take up a :meth:`state`."""


@dataclass(frozen=True)
class Recipe:
    """One training recipe.

    Parameters
    ----------
    name : str
        What ``recipe:`` says.
    budget : callable
        ``budget(config, train_size, schedule)``: the run's steps at most before ``max_steps`` (``schedule``: a
        reading of the ``jiant`` recipe's validation schedule, else ``None``).
    course : callable
        ``course(config, model, train_size, steps) -> RunCourse`` for a run joining a group.
    optimizer : str
        The optimizer the recipe runs: ``"adamw"`` or ``"bert_adam"``; a sweep config under this recipe must name
        it in ``optimizer:``, which the engine reads.
    validation_limit : callable, optional
        ``validation_limit(config)``: how many validation pairs a check scores (``None``: all).
    """

    name: str
    budget: Callable[..., int]
    course: Callable[..., RunCourse]
    optimizer: str
    validation_limit: Callable[[Any], int | None] = lambda config: None


def get_recipe(name: str) -> Recipe:
    """The recipe registered as ``name`` (its module imported on first use).

    Parameters
    ----------
    name : str
        One of :data:`RECIPE_NAMES`.

    Returns
    -------
    Recipe
        The module's ``RECIPE``.

    Raises
    ------
    ValueError
        For a name no module is registered for.
    """
    try:
        module = RECIPE_MODULES[name]
    except KeyError:
        raise ValueError(f"unknown recipe {name!r}; choose one of {', '.join(RECIPE_MODULES)}") from None
    return importlib.import_module(module).RECIPE
