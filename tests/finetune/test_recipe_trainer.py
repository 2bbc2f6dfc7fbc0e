"""The ``trainer`` recipe's course in ``_recipe_trainer``: Hugging Face ``Trainer``'s linear decay from the first
step without warm-up, a check at the end of every epoch, every check kept (the last epoch's model), no early
stopping, nothing to save for a resumption."""

import pytest

from diagnostics.finetune import SweepConfig
from diagnostics.finetune._recipe_trainer import RECIPE, TrainerCourse
from diagnostics.finetune._recipes import get_recipe


def test_the_trainer_recipe_decays_linearly_from_the_first_step_without_warm_up():
    config = SweepConfig(recipe="trainer", warmup_ratio=0.3, max_epochs=2, batch_size=4)
    course = get_recipe("trainer").course(config, None, 10, steps=6)
    assert [course.lr_factor(step) for step in range(6)] == pytest.approx([1, 5 / 6, 4 / 6, 3 / 6, 2 / 6, 1 / 6])
    assert get_recipe("trainer").budget(config, 10) == 6  # ceil(10 / 4) steps x 2 epochs


def test_a_check_comes_at_the_end_of_each_epoch_and_at_the_budget():
    course = TrainerCourse(SweepConfig(recipe="trainer"), None, 10, steps=6)
    assert [course.due(step, position, 3) for step, position in ((1, 1), (2, 2), (3, 3), (6, 1))] == \
        [False, False, True, True]


def test_every_check_is_kept_and_only_the_budget_stops_the_run():
    course = TrainerCourse(SweepConfig(recipe="trainer", patience=1), None, 10, steps=6)
    best = {"validation_mcc": 0.9}
    entry, new_best, stop = course.check({"mcc": 0.1}, step=3, epoch=1, loss=0.7, best=best)
    assert entry == {"epoch": 1, "step": 3, "train_loss": 0.7, "validation_mcc": 0.1}
    assert new_best and not stop  # a worse score is kept too, and patience 1 stops nothing
    assert course.check({"mcc": 0.0}, step=6, epoch=2, loss=0.5, best=entry)[1:] == (True, True)
    assert course.state() == {} and RECIPE.optimizer == "adamw"
