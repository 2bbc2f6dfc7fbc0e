"""Going on from the last check: a run stopped after a check (``executor_options.requeue``) and trained again takes
up its saved state and ends with the predictions of a run never stopped — exactly alone on the CPU with dropout on,
within float rounding in a fused job without dropout — for both recipes; ``resume/`` is gone once the run is done."""

import json

import numpy as np
import pandas as pd
import pytest

from diagnostics.finetune import _train, collect_predictions, load_config, run_sweep, verify_run

from _sweeps import KEYS, write_config


class Stop(KeyboardInterrupt):
    """The process "dies" right after a save (as a preempted job would at its next instant)."""


def _stop_after(monkeypatch, saves: int):
    """Make the ``saves``-th state save of the process raise :class:`Stop` once it is written."""
    real, count = _train.save_resume, [0]

    def save(*args, **kwargs):
        real(*args, **kwargs)
        count[0] += 1
        if count[0] == saves:
            raise Stop

    monkeypatch.setattr(_train, "save_resume", save)
    return count


def _interrupted_then_resumed(tmp_path, tiny_model_dir, monkeypatch, saves, **settings):
    config = load_config(write_config(tmp_path / "stopped", tiny_model_dir, **settings))
    _stop_after(monkeypatch, saves)
    with pytest.raises(Stop):
        run_sweep(config)
    monkeypatch.undo()
    runs = sorted((tmp_path / "stopped" / "runs").glob("s/en/tiny/seed=*"))
    assert any((run / "resume" / "state.json").is_file() for run in runs)
    assert all(not (run / "DONE").exists() for run in runs)
    result = run_sweep(config)
    assert set(result["state"]) == {"done"}
    for run in runs:
        assert not (run / "resume").exists() and verify_run(run) == []
    return runs


def _reference(tmp_path, tiny_model_dir, **settings):
    config = load_config(write_config(tmp_path / "reference", tiny_model_dir, **settings))
    assert set(run_sweep(config)["state"]) == {"done"}
    return tmp_path / "reference" / "runs"


def _history(run):
    metrics = json.loads((run / "metrics.json").read_text())
    return metrics, metrics["history"]


@pytest.mark.parametrize("recipe", ["epoch", pytest.param("jiant", marks=pytest.mark.slow)])
def test_a_run_stopped_after_a_check_goes_on_from_it_and_equals_the_run_never_stopped(tmp_path, tiny_model_dir,
                                                                                       monkeypatch, recipe):
    settings = dict(languages=["en"], seeds=[3], train_size=48, max_epochs=3, dropout=0.1,
                    executor_options={"requeue": True})
    if recipe == "jiant":
        settings |= dict(recipe="jiant", optimizer="bert_adam", val_interval=2, max_vals=6, patience=20,
                         lr_patience=1, max_grad_norm=5.0)
    reference = _reference(tmp_path, tiny_model_dir, **settings)
    (run,) = _interrupted_then_resumed(tmp_path, tiny_model_dir, monkeypatch, saves=1, **settings)
    expected = collect_predictions(reference).sort_values(KEYS).reset_index(drop=True)
    actual = collect_predictions(run.parent).sort_values(KEYS).reset_index(drop=True)
    pd.testing.assert_frame_equal(actual, expected, check_exact=True)  # identical: same weights, moments, batches
    # and dropout draws
    metrics, history = _history(run)
    reference_metrics, reference_history = _history(reference / "s" / "en" / "tiny" / "seed=3")
    assert metrics["resumed_at_step"] == history[0]["step"]  # went on from its first check
    # every check after it equal to the last bit: its training losses (dropout on) included
    assert history == reference_history and len(history) > 1
    assert metrics["best"] == reference_metrics["best"] and metrics["steps"] == reference_metrics["steps"]


@pytest.mark.slow  # two sweeps of two fused runs; the solo runs' exact resumption stays in the default suite
def test_fused_runs_resume_in_their_group_within_float_rounding(tmp_path, tiny_model_dir, monkeypatch):
    settings = dict(languages=["en"], seeds=[0, 1], train_size=48, max_epochs=3, dropout=0.0, fuse=2,
                    executor_options={"requeue": True})
    reference = _reference(tmp_path, tiny_model_dir, **settings)
    runs = _interrupted_then_resumed(tmp_path, tiny_model_dir, monkeypatch, saves=3, **settings)
    expected = collect_predictions(reference).sort_values(KEYS).reset_index(drop=True)
    actual = collect_predictions(runs[0].parent).sort_values(KEYS).reset_index(drop=True)
    pd.testing.assert_frame_equal(actual.drop(columns="probability"), expected.drop(columns="probability"))
    np.testing.assert_allclose(actual["probability"], expected["probability"], atol=1e-6)


def test_a_state_saved_by_other_settings_is_not_taken(tmp_path, tiny_model_dir, monkeypatch):
    settings = dict(languages=["en"], seeds=[0], train_size=32, max_epochs=2, executor_options={"requeue": True})
    config = load_config(write_config(tmp_path, tiny_model_dir, **settings))
    _stop_after(monkeypatch, 1)
    with pytest.raises(Stop):
        run_sweep(config)
    monkeypatch.undo()
    other = load_config(write_config(tmp_path, tiny_model_dir, **(settings | {"lr": 5e-4})))
    assert run_sweep(other)["state"].tolist() == ["done"]
    metrics = json.loads((tmp_path / "runs" / "s" / "en" / "tiny" / "seed=0" / "metrics.json").read_text())
    assert metrics["resumed_at_step"] is None


class _NoTensors:
    """Stands in for the stack and the optimizer: the run's own state is what is saved and restored here."""

    def state_of(self, position):
        return {}

    def slot_state(self, position):
        return {}


@pytest.mark.parametrize("key", ["course", "plan"])
def test_a_saved_state_is_restored_under_the_current_key_and_under_the_old_key_plan(key):
    """Resume files written before the recipes' courses were named so keep the plateau state under ``"plan"``."""
    import torch

    from diagnostics.finetune import SweepConfig
    from diagnostics.finetune._batching import TokenInputs
    from diagnostics.finetune._fused import EngineRun, RunData, _Run

    config = SweepConfig(recipe="jiant", optimizer="bert_adam", batch_size=2, max_epochs=10, val_interval=2,
                         max_vals=10, lr_patience=0, selection_metric="mcc")
    train, gold = TokenInputs([[5, 6], [7, 8, 9], [5], [6, 7]], None, 0), torch.tensor([0, 1, 0, 1])

    def run(resume=None):
        data = RunData(torch.nn.Linear(2, 2), train, gold, lambda stack, members: [], resume)
        return _Run(0, EngineRun(0, config, lambda: data), data)

    first = run()
    for step, score in ((2, 0.5), (4, 0.3)):  # the second check decays the rate (lr_patience 0)
        first.result.counters.step = step
        first.check({"mcc": score}, lambda: {})
    first.next_batch()
    saved = first.resume_state(_NoTensors(), _NoTensors(), 0)
    assert "course" in saved["meta"] and "plan" not in saved["meta"]
    meta = {k: v for k, v in saved["meta"].items() if k != "course"} | {key: saved["meta"]["course"]}
    resumed = run({"tensors": saved["tensors"], "meta": meta})
    assert resumed.course.state() == first.course.state() and resumed.course.decay == 0.5
    assert (resumed.step, resumed.position, resumed.result.history) == (4, 1, first.result.history)
