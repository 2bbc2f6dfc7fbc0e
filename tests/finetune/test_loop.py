"""What a training loop plans in ``_loop``: the step budget of each recipe (:func:`total_steps`, the jiant recipe's
under each reading of its validation schedule, capped by ``max_steps``) and the ``epoch`` recipe's learning-rate
multiplier (:func:`schedule_factor`), checked by hand and against transformers' linear schedule after warm-up.

The jiant budgets are worked out by hand from jiant's ``trainer.py`` rules as ``docs/finetune.md`` states them.
"""

import math

import pytest

from diagnostics.finetune import SweepConfig
from diagnostics.finetune._loop import _jiant_schedule, schedule_factor, total_steps

# TERRa alone, and TERRa + the study's largest MNLI sample, at batch 4: 654 and 94,154 batches an epoch
TERRA, TERRA_MNLI = 2616, 2616 + 374_000


def test_total_steps_of_the_jiant_recipe():
    cfg = SweepConfig(recipe="jiant", optimizer="bert_adam", batch_size=4, max_epochs=10, max_vals=10,
                      val_interval=625)
    assert total_steps(cfg, 2616) == 6250
    assert total_steps(cfg, 2616 + 374_000) == 6250  # a fixed interval stops every mixture after 25,000 pairs
    per_epoch = cfg.with_overrides(["val_interval=null"])
    assert total_steps(per_epoch, 2616) == 6540 and total_steps(per_epoch, 376_616) == 94_154 * 10
    assert total_steps(per_epoch.with_overrides(["max_steps=100"]), 2616) == 100

@pytest.mark.parametrize("reading, alone, mixture", [
    # 625 steps, at most 10 checks: 6,250 steps whatever the mixture
    ("russiansuperglue", 6250, 6250),
    # 625 steps, 10,000 checks: ten epochs, checked at the next multiple of 625 (ceil(6540 / 625) = 11 checks)
    ("jiant_superglue", 11 * 625, math.ceil(941_540 / 625) * 625),
    # one check an epoch, ten checks: ten epochs
    ("per_epoch", 6540, 941_540),
])
def test_each_schedule_reading_sets_the_step_budget(reading, alone, mixture):
    cfg = SweepConfig(recipe="jiant", optimizer="bert_adam", batch_size=4, max_epochs=10, val_schedule=reading)
    assert (total_steps(cfg, TERRA), total_steps(cfg, TERRA_MNLI)) == (alone, mixture)
    # the plan prices any reading from any config of the recipe
    other = SweepConfig(recipe="jiant", optimizer="bert_adam", batch_size=4, max_epochs=10, val_schedule="custom",
                        val_interval=7, max_vals=3)
    assert total_steps(other, TERRA_MNLI, reading) == mixture

def test_the_epoch_and_trainer_budgets_are_full_epochs_capped_by_max_steps():
    assert total_steps(SweepConfig(batch_size=4, max_epochs=3), 10) == 9  # ceil(10 / 4) = 3 batches an epoch
    assert total_steps(SweepConfig(batch_size=4, max_epochs=3, max_steps=5), 10) == 5
    assert total_steps(SweepConfig(recipe="trainer", batch_size=5, max_epochs=2), 10) == 4


def test_the_jiant_schedule_is_batches_interval_and_t_total():
    config = SweepConfig(recipe="jiant", optimizer="bert_adam", batch_size=4, max_epochs=10, val_interval=625)
    assert _jiant_schedule(config, TERRA) == (654, 625, 6250)
    assert _jiant_schedule(config, 1) == (1, 625, 625)  # a batch at least; ten epochs end at the first check


def test_linear_schedule_warms_up_then_decays_to_zero_at_the_last_step():
    factor = schedule_factor(SweepConfig(warmup_ratio=0.25, scheduler="linear"), 8)  # 2 warm-up steps
    # the update after k earlier ones: (k + 1) / 2 while warming up, then (8 - k) / (8 - 2)
    assert [factor(k) for k in range(9)] == pytest.approx([0.5, 1.0, 1.0, 5 / 6, 4 / 6, 3 / 6, 2 / 6, 1 / 6, 0.0])
    assert factor(12) == 0.0


def test_after_warm_up_the_linear_schedule_is_transformers():
    import torch
    from transformers import get_linear_schedule_with_warmup

    steps, warmup = 50, 5
    optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1.0)
    reference = get_linear_schedule_with_warmup(optimizer, warmup, steps).lr_lambdas[0]
    factor = schedule_factor(SweepConfig(warmup_ratio=warmup / steps), steps)
    assert [factor(k) for k in range(warmup, steps + 1)] == pytest.approx(
        [reference(k) for k in range(warmup, steps + 1)])


def test_constant_schedule_warms_up_then_stays_at_one():
    factor = schedule_factor(SweepConfig(warmup_ratio=0.3, scheduler="constant"), 10)  # 3 warm-up steps
    assert [factor(k) for k in range(5)] == pytest.approx([1 / 3, 2 / 3, 1.0, 1.0, 1.0]) and factor(100) == 1.0
    assert schedule_factor(SweepConfig(warmup_ratio=0.0, scheduler="constant"), 10)(0) == 1.0
