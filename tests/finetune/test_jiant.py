"""jiant v1's SuperGLUE recipe (``recipe: jiant``): the plateau / stopping rules, clipping, BertAdam, a tiny run.

Expected values are worked out by hand from the rules of jiant's ``trainer.py``, torch's ``ReduceLROnPlateau`` and
pytorch_pretrained_bert 0.6.2's ``BertAdam`` as ``docs/finetune.md`` states them, not taken from the code under test.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import torch

from diagnostics.finetune import ConfigError, SweepConfig, load_config
from diagnostics.finetune._batching import bucket_batches
from diagnostics.finetune._jiant import PlateauController, step_budget, warmup_linear
from diagnostics.finetune._loop import total_steps

from _oracle import BertAdam, _Updater, fit
from _paths import ROOT

CONFIGS = ROOT / "configs"


def controller(**changes) -> PlateauController:
    values = dict(lr=1e-5, lr_patience=1, lr_decay_factor=0.5, scheduler_threshold=1e-4, patience=3, min_lr=1e-7,
                  max_vals=100, max_epochs=1000, batches_per_epoch=10)
    return PlateauController(**(values | changes))


def feed(ctrl: PlateauController, scores: list[float], interval: int = 1) -> list:
    out = []
    for k, score in enumerate(scores, start=1):
        out.append(ctrl.check(score, k * interval))
        if out[-1].stop:
            break
    return out


def test_controller_best_decay_and_patience_follow_jiants_rules():
    # lr_patience 1: decay when the plateau count exceeds 1 (the 2nd check in a row without beating the plateau's
    # best by more than 1e-4); patience 3: stop when the best check is 4 checks old. A tie is not a new best.
    scores = [0.50, 0.60, 0.60, 0.55, 0.58, 0.62, 0.62005, 0.61, 0.61, 0.61, 0.61]
    # check:  1     2     3     4     5     6     7        8     9     10    11
    # best:   new   new   tie   -     -     new   new(+5e-5: a best, but within the threshold: plateau count 1)
    # count:  0     0     1     2->decay 1  0     1        2->decay 1  2->decay 1 (best 7 is 4 checks old: stop)
    results = feed(controller(), scores)
    assert [r.check for r in results if r.new_best] == [1, 2, 6, 7]
    assert [r.check for r in results if r.lr_decayed] == [4, 8, 10]
    assert results[-1].check == 11 and results[-1].stop == "patience"
    assert [r.stop for r in results[:-1]] == [None] * 10
    assert results[-1].lr == pytest.approx(1e-5 / 8)


def test_controller_superglue_bert_settings_stop_at_max_vals():
    # superglue_bert.conf: lr_patience 4, patience 20, max_vals 10. A best at check 1 and nothing better after it:
    # checks 2-6 are five without improvement -> decay at check 6 (count 5 > 4, reset); checks 7-10 count 1-4, no
    # second decay; patience 20 never runs out; check 10 is the last (max_vals).
    results = feed(controller(lr_patience=4, patience=20, max_vals=10), [0.7] + [0.6] * 20)
    assert [r.check for r in results if r.new_best] == [1]
    assert [r.check for r in results if r.lr_decayed] == [6]
    assert len(results) == 10 and results[-1].stop == "max_vals" and results[-1].lr == pytest.approx(5e-6)


def test_controller_min_lr_and_max_epochs():
    # lr_patience 0: every check that does not improve decays. 1e-6 -> 5e-7 (check 2) -> 2.5e-7 (check 3) < 3e-7.
    results = feed(controller(lr=1e-6, lr_patience=0, min_lr=3e-7, patience=50), [0.5] * 10)
    assert [r.check for r in results if r.lr_decayed] == [2, 3] and results[-1].check == 3
    assert results[-1].stop == "min_lr"
    # 10 batches per epoch, max_epochs 2, a check every 15 steps: 1.5 epochs at check 1, 3.0 at check 2 -> stop
    # there (epochs are checked first, before patience / max_vals)
    results = feed(controller(max_epochs=2, max_vals=2), [0.5, 0.6, 0.7], interval=15)
    assert [r.stop for r in results] == [None, "max_epochs"]


def test_step_budget_and_warmup_linear():
    # TERRa: 2616 pairs at batch 4 = 654 batches; val_interval 625, max_epochs 10, max_vals 10:
    # min(ceil(6540 / 625) = 11, 10) = 10 checks -> t_total 6250
    assert step_budget(654, 10, 625, 10) == 6250
    assert step_budget(654, 10, 654, 10) == 6540  # val_interval one epoch: ten checks, ten epochs
    assert step_budget(20, 2, 15, 10) == 45  # ceil(40 / 15) = 3 checks
    # 0.6.2's warmup_linear: x / w below w, then (x - 1) / (w - 1), never below 0
    assert [warmup_linear(x, 0.1) for x in (0.0, 0.05, 0.1, 0.55, 1.0, 1.3)] == pytest.approx(
        [0.0, 0.5, 1.0, 0.5, 0.0, 0.0])


class TwoTensors(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Parameter(torch.zeros(3, dtype=torch.float64))
        self.b = torch.nn.Parameter(torch.zeros(2, dtype=torch.float64))


def test_global_clip_at_5_is_over_all_parameters_together():
    model = TwoTensors()
    ga, gb = torch.tensor([3.0, 0.0, 0.0], dtype=torch.float64), torch.tensor([0.0, 4.5], dtype=torch.float64)
    joint = math.sqrt(3.0 ** 2 + 4.5 ** 2)  # 5.41: above 5, while each tensor (3, 4.5) is below it
    cfg = SweepConfig(recipe="jiant", optimizer="bert_adam", max_grad_norm=5.0)

    class Record:
        """Stands in for the optimizer: keeps the gradients it is handed."""

        def zero_grad(self, set_to_none=True):
            model.a.grad = model.b.grad = None

        def step(self):
            self.seen = (model.a.grad.clone(), model.b.grad.clone())

    record = Record()
    _Updater(model, cfg, record, None, None)((model.a * ga).sum() + (model.b * gb).sum())
    scale = 5.0 / (joint + 1e-6)
    assert torch.allclose(record.seen[0], ga * scale) and torch.allclose(record.seen[1], gb * scale)


def reference_bert_adam(p, grads, *, lr, t_total, warmup, wd, clip, eps=1e-6, b1=0.9, b2=0.999):
    """pytorch_pretrained_bert 0.6.2's BertAdam update, written out with numpy for one tensor."""
    p, m, v = p.copy(), np.zeros_like(p), np.zeros_like(p)
    for step, g in enumerate(grads):
        norm = np.sqrt((g ** 2).sum())
        g = g * min(1.0, clip / (norm + 1e-6))
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        x = step / t_total
        mult = x / warmup if x < warmup else max((x - 1) / (warmup - 1), 0.0)
        p = p - lr * mult * (m / (np.sqrt(v) + eps) + wd * p)
    return p


def test_bert_adam_matches_the_written_out_update():
    start = {"a": np.array([0.5, -1.0, 2.0]), "b": np.array([0.3, 0.1])}
    grads = {"a": [np.array([3.0, -4.0, 0.0]), np.array([0.2, 0.1, -0.3])],  # norm 5: clipped to 1 at step 1
             "b": [np.array([0.1, -0.2]), np.array([-0.3, 0.05])]}
    model = TwoTensors()
    with torch.no_grad():
        model.a.copy_(torch.from_numpy(start["a"]))
        model.b.copy_(torch.from_numpy(start["b"]))
    opt = BertAdam(model.parameters(), 0.1, warmup=0.1, t_total=20, weight_decay=0.01, max_grad_norm=1.0)
    for step in range(2):
        opt.zero_grad()
        model.a.grad = torch.from_numpy(grads["a"][step].copy())
        model.b.grad = torch.from_numpy(grads["b"][step].copy())
        opt.step()
        if step == 0:  # the first update has progress 0: multiplier 0, the weights do not move
            assert np.array_equal(model.a.detach().numpy(), start["a"])
    for name in ("a", "b"):
        expected = reference_bert_adam(start[name], grads[name], lr=0.1, t_total=20, warmup=0.1, wd=0.01, clip=1.0)
        np.testing.assert_allclose(getattr(model, name).detach().numpy(), expected, rtol=1e-12, atol=1e-14)
    # step 2 ran at multiplier 0.5 (progress 1/20 = 0.05 of a 0.1 warm-up): the update is not trivial
    assert not np.allclose(model.b.detach().numpy(), start["b"])


def test_bucket_batches_are_allennlps_order():
    lengths = np.array([5, 50, 7, 30, 12, 9, 41, 3, 22])
    batches = bucket_batches(lengths, 2, torch.Generator().manual_seed(0), padding_noise=0.0)
    # sorted by length: 3 5 7 9 12 22 30 41 50 -> [3,5] [7,9] [12,22] [30,41] [50]; the last two go first
    assert [sorted(lengths[b].tolist()) for b in batches[:2]] == [[50], [30, 41]]
    assert sorted(sorted(lengths[b].tolist()) for b in batches[2:]) == [[3, 5], [7, 9], [12, 22]]
    assert sorted(np.concatenate(batches).tolist()) == list(range(9))
    again = bucket_batches(lengths, 2, torch.Generator().manual_seed(0), padding_noise=0.0)
    assert all(np.array_equal(x, y) for x, y in zip(batches, again))
    # chunks of `chunk` examples are bucketed separately, in input order
    chunked = bucket_batches(lengths, 2, torch.Generator().manual_seed(0), padding_noise=0.0, chunk=4)
    assert set(np.concatenate(chunked[:2]).tolist()) == {0, 1, 2, 3}  # 4 examples = 2 batches


def test_run_hashes_of_runs_made_before_the_jiant_settings_are_unchanged():
    # the hashes of configs/demo.yaml and of a default SweepConfig at the commit before these settings existed
    assert load_config(CONFIGS / "demo.yaml").run_hash() == "4b5bc0273b857422"
    assert SweepConfig().run_hash() == "0be04a566cccc436"
    jiant = SweepConfig(recipe="jiant", optimizer="bert_adam")
    assert jiant.run_hash() != SweepConfig().run_hash()
    assert jiant.with_overrides(["val_interval=100"]).run_hash() != jiant.run_hash()


def test_paper_config_uses_the_jiant_recipe():
    paper = load_config(CONFIGS / "paper.yaml")
    assert (paper.recipe, paper.optimizer, paper.batch_size, paper.lr, paper.max_epochs) == \
        ("jiant", "bert_adam", 4, 1e-5, 10)
    assert (paper.max_grad_norm, paper.min_lr, paper.lr_patience, paper.patience, paper.max_vals) == \
        (5.0, 1e-7, 4, 20, 10)
    assert (paper.adam_eps, paper.warmup_ratio, paper.bert_adam_max_grad_norm) == (1e-6, 0.1, 1.0)
    assert (paper.val_schedule, paper.val_interval, paper.classifier_head, paper.truncation) == \
        ("russiansuperglue", 625, "jiant", "per_sentence")


# TERRa at batch 4: 654 batches an epoch
TERRA = 2616


@pytest.mark.parametrize("reading, checks, stop", [
    # a best at check 1, nothing better after it: ten checks, then max_vals (6,250 steps < 10 epochs of 654)
    ("russiansuperglue", 10, "max_vals"),
    # max_epochs is reached at the 11th check (step 6,875 = 10.5 epochs), before patience (21 checks) runs out
    ("jiant_superglue", 11, "max_epochs"),
    # a check an epoch: the 10th check is at 10 epochs, and epochs are checked first
    ("per_epoch", 10, "max_epochs"),
])
def test_a_run_under_each_reading_stops_where_jiants_rules_say(reading, checks, stop):
    from diagnostics.finetune import VAL_SCHEDULES
    from diagnostics.finetune._jiant import resolve_val_interval

    cfg = load_config(CONFIGS / "paper.yaml", [f"val_schedule={reading}"])  # patience 20, lr_patience 4
    batches = math.ceil(TERRA / 4)
    interval = resolve_val_interval(cfg.val_interval, batches)
    assert (cfg.val_interval, cfg.max_vals) == (VAL_SCHEDULES[reading].val_interval, VAL_SCHEDULES[reading].max_vals)
    control = controller(lr_patience=cfg.lr_patience, patience=cfg.patience, max_vals=cfg.max_vals,
                         max_epochs=cfg.max_epochs, batches_per_epoch=batches)
    results = feed(control, [0.7] + [0.6] * 40, interval=interval)
    assert len(results) == checks and results[-1].stop == stop
    assert checks * interval == total_steps(cfg, TERRA)


def test_schedule_readings_resolve_and_refuse_contradictions():
    base = dict(recipe="jiant", optimizer="bert_adam")
    assert SweepConfig(**base).val_schedule == "per_epoch"  # val_interval null, max_vals 10
    assert SweepConfig(**base, val_interval=625).val_schedule == "russiansuperglue"
    assert SweepConfig(**base, val_interval=100).val_schedule == "custom"
    rsg = SweepConfig(**base, val_schedule="russiansuperglue")
    assert (rsg.val_interval, rsg.max_vals) == (625, 10)
    # an override of what a reading sets names the reading again (here: none of the three)
    assert rsg.with_overrides(["val_interval=100"]).val_schedule == "custom"
    assert rsg.with_overrides(["max_vals=10000"]).val_schedule == "jiant_superglue"
    with pytest.raises(ConfigError, match="val_interval: expected 625 under val_schedule: russiansuperglue"):
        SweepConfig(**base, val_schedule="russiansuperglue", val_interval=1000)
    with pytest.raises(ConfigError, match="val_schedule: expected it unset with recipe: epoch"):
        SweepConfig(val_schedule="per_epoch")
    with pytest.raises(ConfigError, match="classifier_head: expected it unset with recipe: epoch"):
        SweepConfig(classifier_head="jiant")
    with pytest.raises(ConfigError, match="classifier_head: expected transformers with train_top_k_layers"):
        SweepConfig(**base, train_top_k_layers=2)
    assert SweepConfig(**base, classifier_head="transformers", train_top_k_layers=2).truncation == "per_sentence"
    epoch = SweepConfig()
    assert (epoch.val_schedule, epoch.classifier_head, epoch.truncation) == (None, "transformers", "pair")
    # the recipe's own head and truncation follow the recipe when it is overridden
    switched = SweepConfig(**base).with_overrides(["recipe=epoch", "optimizer=adamw"])
    assert (switched.val_schedule, switched.classifier_head, switched.truncation) == (None, "transformers", "pair")


@pytest.mark.parametrize("changes, key, needle", [
    ({"recipe": "jiantt"}, "recipe", "one of epoch, jiant, trainer, found 'jiantt' (did you mean 'jiant'?)"),
    ({"recipe": "jiant"}, "optimizer", "expected bert_adam with recipe: jiant"),
    ({"optimizer": "bert_adam"}, "optimizer", "with recipe: epoch"),
    ({"recipe": "jiant", "optimizer": "bert_adam", "lr_decay_factor": 1.5}, "lr_decay_factor", "a number in (0, 1)"),
    ({"recipe": "jiant", "optimizer": "bert_adam", "lr_patience": -1}, "lr_patience", "an integer >= 0"),
    ({"val_data_limit": 0}, "val_data_limit", "an integer >= 1 (or null for the whole validation set)"),
    ({"val_interval": 625}, "val_interval", "expected it unset with recipe: epoch"),
])
def test_recipe_settings_are_checked(changes, key, needle):
    with pytest.raises(ConfigError) as info:
        SweepConfig(**changes)
    assert info.value.problems[0][0] == key and needle in str(info.value) and "\n" not in str(info.value)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from diagnostics.models import tiny_random_model

    return tiny_random_model(tmp_path_factory.mktemp("tiny") / "model", seed=0, num_hidden_layers=2)


def jiant_config(tmp_path, tiny, **changes) -> SweepConfig:
    values = dict(output_dir=str(tmp_path / "runs"), experiment="j", models=[{"name": "tiny", "path": str(tiny)}],
                  languages=["en"], seeds=[0], train_size=96, max_seq_length=48, batch_size=16, lr=1e-3,
                  recipe="jiant", optimizer="bert_adam", max_grad_norm=5.0, adam_eps=1e-6, val_interval=2,
                  max_vals=4, max_epochs=10, patience=20, lr_patience=4, num_threads=1, progress=False)
    return SweepConfig(**(values | changes))


def test_fit_restores_the_weights_of_the_best_check(tiny):
    """Scripted validation scores: the best is check 2 of 4; the loop ends with check 2's weights loaded."""
    from diagnostics.finetune._batching import TokenInputs
    from diagnostics.finetune._modeling import load_classifier, trainable_state

    rng = np.random.default_rng(0)
    ids = [[0, *rng.integers(5, 1000, size=n).tolist(), 2] for n in rng.integers(4, 30, size=64)]
    train, gold = TokenInputs(ids, None, 1), torch.from_numpy(rng.integers(0, 2, size=64))
    model = load_classifier(tiny, seed=0, dropout=0.1)
    cfg = SweepConfig(recipe="jiant", optimizer="bert_adam", batch_size=16, lr=1e-3, val_interval=1, max_vals=4,
                      max_epochs=10, patience=20, max_seq_length=48)
    scores, snapshots = iter([0.5, 0.9, 0.6, 0.7]), []

    def validate():
        snapshots.append(trainable_state(model))
        value = next(scores)
        return {"accuracy": value, "mcc": value}

    result = fit(model, train, gold, cfg, seed=0, validate=validate, device="cpu", amp=None, desc="t", show=False)
    assert [e["check"] for e in result.history] == [1, 2, 3, 4] and result.best["check"] == 2
    assert [e["step"] for e in result.history] == [1, 2, 3, 4] and result.history[-1]["stop"] == "max_vals"
    final = trainable_state(model)
    assert all(torch.equal(final[k], snapshots[1][k]) for k in final)
    assert not all(torch.equal(final[k], snapshots[3][k]) for k in final)


def test_tiny_run_with_the_jiant_recipe(tmp_path, tiny):
    from diagnostics.finetune._run_spec import RunSpec, spec_dict
    from diagnostics.finetune._train import train_run

    cfg = jiant_config(tmp_path, tiny)
    outcome = train_run(RunSpec(cfg.to_dict(), "en", spec_dict(cfg.models[0]), 0))
    metrics = json.loads((Path(outcome["path"]) / "metrics.json").read_text())
    history = metrics["history"]
    # 96 pairs / 16 = 6 batches per epoch; a check every 2 steps; max_vals 4 -> checks at steps 2, 4, 6, 8
    assert [e["step"] for e in history] == [2, 4, 6, 8] and metrics["steps"] == 8
    assert [e["stop"] for e in history] == [None, None, None, "max_vals"]
    assert history[-1]["epoch"] == pytest.approx(8 / 6) and all(e["lr"] == pytest.approx(1e-3) for e in history)
    values = [e["validation_accuracy"] for e in history]
    assert metrics["best"] == history[values.index(max(values))]
    assert metrics["diagnostics"]["axb"]["categories"] == 33
    recorded = json.loads((Path(outcome["path"]) / "config.json").read_text())["sweep"]
    assert (recorded["val_schedule"], recorded["classifier_head"], recorded["truncation"]) == \
        ("custom", "jiant", "per_sentence")


@pytest.mark.slow
def test_tiny_run_under_the_per_epoch_reading_stops_at_ten_epochs(tmp_path, tiny):
    from diagnostics.finetune._run_spec import RunSpec, spec_dict
    from diagnostics.finetune._train import train_run

    cfg = jiant_config(tmp_path, tiny, val_interval=None, max_vals=10, lr=1e-4)
    assert cfg.val_schedule == "per_epoch"
    outcome = train_run(RunSpec(cfg.to_dict(), "en", spec_dict(cfg.models[0]), 0))
    history = json.loads((Path(outcome["path"]) / "metrics.json").read_text())["history"]
    # 96 pairs / 16 = 6 batches: a check every 6 steps; the 10th check is at 10 epochs, where max_epochs stops it
    # (unless patience or min_lr stop it sooner, which 10 checks with patience 20 and lr_patience 4 cannot)
    assert [e["step"] for e in history] == list(range(6, 61, 6)) and history[-1]["stop"] == "max_epochs"
