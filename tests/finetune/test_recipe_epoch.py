"""The ``epoch`` recipe's course in ``_recipe_epoch``: full epochs as the step budget, a check after each epoch,
early stopping after ``patience`` checks without a better selection metric (or at ``max_epochs`` or the budget),
and the count of checks without improvement carried over a resumption."""

from diagnostics.finetune import SweepConfig
from diagnostics.finetune._loop import schedule_factor
from diagnostics.finetune._recipe_epoch import RECIPE, EpochCourse, budget


def _course(steps=100, **changes):
    config = SweepConfig(**({"patience": 2, "max_epochs": 10, "selection_metric": "mcc"} | changes))
    return EpochCourse(config, None, 40, steps)


def test_the_budget_is_full_epochs_of_the_batch_size():
    assert budget(SweepConfig(batch_size=16, max_epochs=3), 40) == 9  # ceil(40 / 16) = 3 batches an epoch
    assert RECIPE.budget is budget and RECIPE.optimizer == "adamw"


def test_the_learning_rate_follows_the_warm_up_and_decay_schedule():
    config = SweepConfig(warmup_ratio=0.1)
    course = EpochCourse(config, None, 40, 30)
    assert [course.lr_factor(k) for k in range(30)] == [schedule_factor(config, 30)(k) for k in range(30)]


def test_a_check_comes_after_the_last_batch_of_an_epoch_or_at_the_budget():
    course = _course(steps=7)
    assert [course.due(step, position, 3) for step, position in ((2, 2), (3, 3), (7, 1))] == [False, True, True]


def _checks(course, scores, metric="mcc"):
    best, out = None, []
    for epoch, score in enumerate(scores, start=1):
        entry, new_best, stop = course.check({metric: score}, step=epoch * 3, epoch=epoch, loss=1.0, best=best)
        best = entry if new_best else best
        out.append((new_best, stop))
        if stop:
            break
    return out


def test_patience_counts_checks_without_a_better_score_and_a_tie_is_not_better():
    # patience 2: the 2nd check in a row without beating the best stops the run
    assert _checks(_course(), [0.5, 0.6, 0.6, 0.7, 0.65, 0.7]) == [
        (True, False), (True, False), (False, False), (True, False), (False, False), (False, True)]


def test_max_epochs_and_the_step_budget_stop_the_run():
    assert _checks(_course(max_epochs=2, patience=5), [0.1, 0.2, 0.3]) == [(True, False), (True, True)]
    assert _checks(_course(steps=6, patience=5), [0.1, 0.2, 0.3]) == [(True, False), (True, True)]


def test_the_checks_without_improvement_survive_a_resumption():
    course = _course()
    _checks(course, [0.5, 0.4])
    assert course.state() == {"bad_epochs": 1}
    resumed = _course()
    resumed.restore(course.state())
    best = {"epoch": 1, "step": 3, "train_loss": 1.0, "validation_mcc": 0.5}
    assert resumed.check({"mcc": 0.3}, step=9, epoch=3, loss=1.0, best=best)[1:] == (False, True)


def test_the_entry_names_each_score_as_a_validation_score():
    entry, new_best, _ = _course().check({"mcc": 0.2, "accuracy": 0.6}, step=3, epoch=1, loss=0.5, best=None)
    assert entry == {"epoch": 1, "step": 3, "train_loss": 0.5, "validation_mcc": 0.2, "validation_accuracy": 0.6}
    assert new_best
