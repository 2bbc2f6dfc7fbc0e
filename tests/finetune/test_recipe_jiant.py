"""The ``jiant`` recipe's course in ``_recipe_jiant``: BertAdam's warm-up over ``t_total`` times the plateau decays,
a check every ``val_interval`` steps, the plateau controller's decisions in the history entry, and the plateau state
carried over a resumption. Expected values are worked out by hand from jiant's rules (see ``docs/finetune.md``)."""

import pytest
from torch import nn

from diagnostics.finetune import SweepConfig
from diagnostics.finetune._recipe_jiant import RECIPE, JiantCourse, budget


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(2, 2)
        self.classifier = nn.Linear(2, 2)


def _config(**changes):
    # 20 pairs at batch 4: 5 batches an epoch; a check every 5 steps, at most 2 checks: t_total 10
    values = dict(recipe="jiant", optimizer="bert_adam", batch_size=4, max_epochs=10, val_interval=5, max_vals=2,
                  lr=1e-3, head_lr=1e-2, warmup_ratio=0.1, lr_patience=0, lr_decay_factor=0.5, patience=5,
                  selection_metric="mcc")
    return SweepConfig(**(values | changes))


def _course(**changes):
    return JiantCourse(_config(**changes), Model(), 20, steps=10)


def test_the_budget_is_bert_adams_t_total():
    assert budget(_config(), 20) == 10
    assert budget(_config(max_vals=100), 20) == 50  # ten epochs of 5 steps, a check every 5
    assert RECIPE.optimizer == "bert_adam" and RECIPE.validation_limit(_config(val_data_limit=7)) == 7


def test_the_rate_is_the_warm_up_of_t_total_times_the_decays():
    course = _course()
    # progress x = step / 10, warm-up 0.1: x / 0.1 below it, then (x - 1) / (0.1 - 1)
    assert [course.lr_factor(step) for step in (0, 1, 5, 10)] == pytest.approx([0.0, 1.0, 5 / 9, 0.0])
    course.check({"mcc": 0.5}, step=5, epoch=1, loss=1.0, best=None)
    course.check({"mcc": 0.4}, step=10, epoch=2, loss=1.0, best=None)  # lr_patience 0: a worse check decays
    assert course.decay == 0.5 and course.lr_factor(5) == pytest.approx(0.5 * 5 / 9)


def test_a_check_comes_every_interval_and_at_the_budget():
    course = _course()
    assert [course.due(step, 1, 5) for step in (3, 5, 7, 10)] == [False, True, False, True]


def test_the_base_rate_is_the_encoders_not_the_heads():
    assert _course().controller.lr == 1e-3


def test_the_entry_records_the_controllers_decisions():
    course = _course()
    entry, new_best, stop = course.check({"mcc": 0.5}, step=5, epoch=1, loss=0.9, best=None)
    assert new_best and not stop
    assert entry == {"check": 1, "epoch": 1.0, "step": 5, "train_loss": 0.9, "lr": 1e-3, "lr_decayed": False,
                     "stop": None, "validation_mcc": 0.5}
    entry, new_best, stop = course.check({"mcc": 0.4}, step=10, epoch=2, loss=0.8, best=entry)
    assert not new_best and stop and entry["stop"] == "max_vals"
    assert entry["lr_decayed"] and entry["lr"] == pytest.approx(5e-4)


def test_the_step_budget_stops_a_run_the_controller_would_go_on_with():
    course = JiantCourse(_config(max_vals=100), Model(), 20, steps=5)  # max_steps: 5
    assert course.check({"mcc": 0.5}, step=5, epoch=1, loss=1.0, best=None)[0]["stop"] == "max_steps"


def test_the_plateau_state_survives_a_resumption():
    course = _course(max_vals=10, lr_patience=1)
    for step, score in ((5, 0.5), (10, 0.4), (15, 0.3)):  # 2 checks without improvement: one decay
        course.check({"mcc": score}, step=step, epoch=1, loss=1.0, best=None)
    state = course.state()
    assert state == {"decay": 0.5, "lr": pytest.approx(5e-4), "history": [0.5, 0.4, 0.3], "plateau_best": 0.5,
                     "bad_checks": 0}
    resumed = _course(max_vals=10, lr_patience=1)
    resumed.restore(state)
    assert resumed.state() == state
    for other in (course, resumed):
        entry = other.check({"mcc": 0.2}, step=20, epoch=4, loss=1.0, best=None)[0]
        assert (entry["check"], entry["lr_decayed"]) == (4, False)
    assert resumed.state() == course.state()
