"""Fused training: K runs trained as one computation equal the same runs trained one by one."""

import numpy as np
import pytest
import torch

from diagnostics.finetune._batching import TokenInputs
from diagnostics.finetune import SweepConfig
from diagnostics.finetune._fused import batched_validator, fit_fused
from diagnostics.finetune._modeling import load_classifier

from _oracle import fit, predict_proba, random_pairs, small_bert_folder

SEEDS = [0, 1, 2]
VOCAB = 120


@pytest.fixture(scope="module")
def small_model_dir(tmp_path_factory):
    """A 2-layer random BERT with a small vocabulary (the mechanics only; the optimizer step stays cheap)."""
    return small_bert_folder(tmp_path_factory.mktemp("small") / "bert", VOCAB)


@pytest.fixture(scope="module")
def pairs():
    """Token ids of random pairs of varied length, random labels, and a validation slice."""
    return random_pairs(VOCAB)


def _accuracy(gold, proba):
    pred = (proba >= 0.5).astype(np.int64)
    return {"accuracy": float(np.mean(pred == gold)), "mcc": 0.0}


def _config(**changes):
    values = dict(dropout=0.0, batch_size=4, lr=3e-3, max_epochs=3, patience=5, skip_padding=False,
                  max_grad_norm=0.05, progress=False)  # a small clipping norm: every step clips
    return SweepConfig(**(values | changes))


def _solo(model_dir, pairs, config, seed, validate=None):
    train, gold, val, gold_val = pairs
    model = load_classifier(model_dir, seed=seed, dropout=config.dropout)
    if validate is None:
        def validate():
            return _accuracy(gold_val, predict_proba(model, val, 8, "cpu", None))
    result = fit(model, train, gold, config, seed=seed, validate=validate, device="cpu", amp=None, desc="",
                 show=False)
    return model, result


def _fused(model_dir, pairs, config, validate=None):
    train, gold, val, gold_val = pairs
    models = [load_classifier(model_dir, seed=s, dropout=config.dropout) for s in SEEDS]
    validate = validate or batched_validator(val, gold_val, 8, "cpu", None, _accuracy)
    results = fit_fused(models, train, gold, config, seeds=SEEDS, validate=validate, device="cpu")
    return models, results


def test_fused_runs_equal_solo_runs_without_dropout(small_model_dir, pairs):
    config = _config()
    models, results = _fused(small_model_dir, pairs, config)
    _, _, val, _ = pairs
    for seed, model, result in zip(SEEDS, models, results):
        solo_model, solo_result = _solo(small_model_dir, pairs, config, seed)
        solo_logits = predict_proba(solo_model, val, 8, "cpu", None)
        fused_logits = predict_proba(model, val, 8, "cpu", None)
        np.testing.assert_allclose(fused_logits, solo_logits, atol=1e-5)
        assert np.array_equal(fused_logits >= 0.5, solo_logits >= 0.5)
        assert [h["validation_accuracy"] for h in result.history] == \
            [h["validation_accuracy"] for h in solo_result.history]
        assert result.best["epoch"] == solo_result.best["epoch"]
        for a, b in zip(result.history, solo_result.history):
            assert a["train_loss"] == pytest.approx(b["train_loss"], abs=1e-5)
    # the runs really differ from each other (own heads, own batch orders)
    first, second = (predict_proba(m, val, 8, "cpu", None) for m in models[:2])
    assert np.abs(first - second).max() > 1e-3


def test_a_run_that_stops_leaves_the_group_and_the_others_match_their_solo_runs(small_model_dir, pairs):
    config = _config(max_epochs=4, patience=1)
    # scripted validation accuracy per seed and epoch: seed 1 never improves after epoch 1 and stops after epoch 2
    script = {0: [0.5, 0.6, 0.7, 0.8], 1: [0.5, 0.4, 0.9, 0.9], 2: [0.5, 0.5, 0.5, 0.5]}
    calls = {seed: 0 for seed in SEEDS}

    def scripted(seed):
        value = script[seed][calls[seed]]
        calls[seed] += 1
        return {"accuracy": value, "mcc": 0.0}

    def validate(stack, members):
        assert stack.size == len(members)
        return [scripted(SEEDS[m]) for m in members]

    models, results = _fused(small_model_dir, pairs, config, validate)
    # jiant-free rules of the epoch recipe, written out: patience 1 -> stop after the first epoch without a gain
    assert [len(r.history) for r in results] == [4, 2, 2]
    assert [r.best["epoch"] for r in results] == [4, 1, 1]
    _, _, val, _ = pairs
    for seed, model, result in zip(SEEDS, models, results):
        calls[seed] = 0
        solo_model, solo_result = _solo(small_model_dir, pairs, config, seed, validate=lambda s=seed: scripted(s))
        assert len(solo_result.history) == len(result.history)
        np.testing.assert_allclose(predict_proba(model, val, 8, "cpu", None),
                                   predict_proba(solo_model, val, 8, "cpu", None), atol=1e-5)


@pytest.mark.slow
def test_dropout_on_the_same_group_reproduces_itself(small_model_dir, pairs):
    config = _config(dropout=0.1, max_epochs=2)
    _, _, val, _ = pairs
    torch.manual_seed(123)
    first, _ = _fused(small_model_dir, pairs, config)
    torch.manual_seed(123)
    second, _ = _fused(small_model_dir, pairs, config)
    for a, b in zip(first, second):
        assert np.array_equal(predict_proba(a, val, 8, "cpu", None), predict_proba(b, val, 8, "cpu", None))


def test_jiant_recipe_fused_runs_follow_their_own_plateaus_and_match_their_solo_runs(small_model_dir, pairs):
    config = _config(recipe="jiant", optimizer="bert_adam", adam_eps=1e-6, max_grad_norm=0.5, val_interval=2,
                     max_vals=8, patience=2, lr_patience=0)
    # seed 0 keeps improving; seed 1 never beats its first check (LR decayed at every check, stops on patience);
    # seed 2 stalls once (one decay) and goes on
    script = {0: [0.1 * i for i in range(1, 9)], 1: [0.5] + [0.4] * 7, 2: [0.5, 0.6, 0.6, 0.7, 0.8, 0.9, 1.0, 1.0]}
    calls = dict.fromkeys(SEEDS, 0)

    def scripted(seed):
        calls[seed] += 1
        return {"accuracy": script[seed][calls[seed] - 1], "mcc": 0.0}

    models, results = _fused(small_model_dir, pairs, config, lambda stack, members: [scripted(SEEDS[m])
                                                                                    for m in members])
    stops = [r.history[-1]["stop"] for r in results]
    assert stops[1] == "patience" and len(results[1].history) < len(results[0].history)
    assert any(h["lr_decayed"] for h in results[2].history) and not any(h["lr_decayed"] for h in results[0].history)
    _, _, val, _ = pairs
    for seed, model, result in zip(SEEDS, models, results):
        calls[seed] = 0
        solo_model, solo_result = _solo(small_model_dir, pairs, config, seed, validate=lambda s=seed: scripted(s))
        keys = ("check", "step", "lr", "lr_decayed", "stop")
        assert [tuple(h[k] for k in keys) for h in result.history] == \
            [tuple(h[k] for k in keys) for h in solo_result.history]
        assert result.best["check"] == solo_result.best["check"]
        np.testing.assert_allclose(predict_proba(model, val, 8, "cpu", None),
                                   predict_proba(solo_model, val, 8, "cpu", None), atol=1e-5)


def test_a_sweep_with_fuse_trains_one_job_per_group_and_equals_the_sweep_of_single_runs(tmp_path, tiny_model_dir):
    import json

    from diagnostics.finetune import collect_predictions, load_config, run_sweep

    from _sweeps import sorted_table, write_config

    common = dict(languages=["en"], seeds=[0, 1, 2], dropout=0.0, train_size=32, max_epochs=2)
    single = run_sweep(load_config(write_config(tmp_path / "single", tiny_model_dir, **common)))
    fused = run_sweep(load_config(write_config(tmp_path / "fused", tiny_model_dir, fuse=3, **common)))
    assert single["state"].tolist() == fused["state"].tolist() == ["done"] * 3
    a = sorted_table(collect_predictions(tmp_path / "single" / "runs"))
    b = sorted_table(collect_predictions(tmp_path / "fused" / "runs"))
    np.testing.assert_allclose(b["probability"], a["probability"], atol=1e-5)
    assert (a["prediction"] == b["prediction"]).all()
    for seed in (0, 1, 2):
        metrics = json.loads((tmp_path / "fused" / "runs" / "s" / "en" / "tiny" / f"seed={seed}" / "metrics.json")
                             .read_text())
        assert metrics["fused"]["slots"] == 3 and metrics["fused"]["runs"] == 3
    # the grouping is not part of what a run is: a single-run sweep over the fused store finds every run done
    again = run_sweep(load_config(write_config(tmp_path / "fused", tiny_model_dir, **common)))
    assert again["state"].tolist() == ["skipped"] * 3


@pytest.mark.parametrize("recipe", ["epoch", "jiant"])
@pytest.mark.parametrize("size", [1, pytest.param(8, marks=pytest.mark.slow)])
def test_a_group_of_one_and_of_eight_equal_their_oracle_runs(small_model_dir, pairs, recipe, size):
    """The engine at K = 1 (one run is a group of one) and K = 8 against the plain loop, dropout off, fp32."""
    jiant = dict(recipe="jiant", optimizer="bert_adam", adam_eps=1e-6, val_interval=3, max_vals=4, patience=20)
    config = _config(max_epochs=2, **(jiant if recipe == "jiant" else {}))
    train, gold, val, gold_val = pairs
    seeds = list(range(size))
    models = [load_classifier(small_model_dir, seed=s, dropout=0.0) for s in seeds]
    results = fit_fused(models, train, gold, config, seeds=seeds, device="cpu",
                        validate=batched_validator(val, gold_val, 8, "cpu", None, _accuracy))
    for seed, model, result in zip(seeds, models, results):
        solo_model, solo_result = _solo(small_model_dir, pairs, config, seed)
        np.testing.assert_allclose(predict_proba(model, val, 8, "cpu", None),
                                   predict_proba(solo_model, val, 8, "cpu", None), atol=1e-5)
        assert [h["step"] for h in result.history] == [h["step"] for h in solo_result.history]
        for a, b in zip(result.history, solo_result.history):
            assert a["train_loss"] == pytest.approx(b["train_loss"], abs=1e-5)


@pytest.fixture(scope="module")
def other_pairs():
    """A second data set of another size (its last batch is partial), with its own validation slice."""
    rng = np.random.default_rng(1)
    ids = [list(rng.integers(5, VOCAB, size=int(rng.integers(3, 24)))) for _ in range(22)]
    gold = torch.from_numpy(rng.integers(0, 2, size=len(ids)))
    return TokenInputs(ids, None, 0), gold, TokenInputs(ids[-10:], None, 0), gold[-10:].numpy()


@pytest.mark.parametrize("recipe", ["epoch", "jiant"])
@pytest.mark.parametrize("slots", [1, 3, pytest.param(8, marks=pytest.mark.slow)])  # 8: 10 runs and their oracles
def test_queued_runs_take_freed_slots_and_equal_their_oracle_runs(small_model_dir, pairs, other_pairs, recipe,
                                                                   slots):
    """Runs of two data sets and two budgets queue for K slots; the first run stops early and its slot is refilled.

    Every run equals its own plain single-model run (its data, its validation, its schedule), dropout off, fp32.
    """
    from diagnostics.finetune._fused import EngineRun, RunData, fit_runs

    if recipe == "jiant":
        jiant = dict(recipe="jiant", optimizer="bert_adam", adam_eps=1e-6, val_interval=3, patience=20)
        short, long = _config(max_vals=1, **jiant), _config(max_vals=4, **jiant)
    else:
        short, long = _config(max_epochs=1), _config(max_epochs=3)
    count = slots + 2
    plans = [(seed, short if seed == 0 else long, pairs if seed % 2 == 0 else other_pairs) for seed in range(count)]
    validators = {id(data): batched_validator(data[2], data[3], 8, "cpu", None, _accuracy)
                  for data in (pairs, other_pairs)}
    models, held, most, order = {}, [], [0], []

    def join(seed, config, data):
        models[seed] = load_classifier(small_model_dir, seed=seed, dropout=0.0)
        held.append(seed)
        most[0] = max(most[0], len(held))
        return RunData(models[seed], data[0], data[1], validators[id(data)])

    def finished(index, data, result):
        held.remove(plans[index][0])
        order.append(index)

    runs = [EngineRun(seed, config, lambda s=seed, c=config, d=data: join(s, c, d)) for seed, config, data in plans]
    results = fit_runs(runs, slots=slots, device="cpu", finished=finished)
    assert most[0] == min(slots, count) and sorted(order) == list(range(count)) and order[0] == 0
    for (seed, config, data), result in zip(plans, results):
        solo_model, solo_result = _solo(small_model_dir, data, config, seed)
        val = data[2]
        np.testing.assert_allclose(predict_proba(models[seed], val, 8, "cpu", None),
                                   predict_proba(solo_model, val, 8, "cpu", None), atol=1e-5)
        assert [h["step"] for h in result.history] == [h["step"] for h in solo_result.history]
        assert [h["validation_accuracy"] for h in result.history] == \
            [h["validation_accuracy"] for h in solo_result.history]
        for a, b in zip(result.history, solo_result.history):
            assert a["train_loss"] == pytest.approx(b["train_loss"], abs=1e-5)
    assert len(results[0].history) < len(results[1].history)


def test_runs_of_different_training_keys_refuse_to_share_a_group(small_model_dir, pairs):
    from diagnostics.finetune._fused import EngineRun, RunData, fit_runs

    train, gold, val, gold_val = pairs
    validate = batched_validator(val, gold_val, 8, "cpu", None, _accuracy)
    runs = [EngineRun(seed, _config(batch_size=size), lambda s=seed: RunData(
        load_classifier(small_model_dir, seed=s, dropout=0.0), train, gold, validate))
        for seed, size in ((0, 4), (1, 8))]
    with pytest.raises(ValueError, match="training_key"):
        fit_runs(runs, slots=2, device="cpu")


@pytest.mark.slow
def test_sweeps_of_other_experiments_languages_and_sizes_share_a_job_and_equal_their_single_runs(tmp_path,
                                                                                              tiny_model_dir):
    """Two experiments (other training sizes, languages and seeds) fill one job of 2 slots; slots are refilled."""
    import json

    from diagnostics.finetune import collect_predictions, jobs, load_config, run_sweeps, sweep_runs

    from _sweeps import sorted_table, write_config

    def configs(folder, **extra):
        first = write_config(folder / "a", tiny_model_dir, experiment="a", output_dir=str(folder / "runs"),
                             languages=["en"], seeds=[0, 1, 2], dropout=0.0, train_size=32, max_epochs=2, **extra)
        second = write_config(folder / "b", tiny_model_dir, experiment="b", output_dir=str(folder / "runs"),
                              languages=["ru"], seeds=[3, 4], dropout=0.0, train_size=48, max_epochs=1, **extra)
        return [load_config(first), load_config(second)]

    fused = configs(tmp_path / "fused", fuse=2)
    queue = jobs([(config, spec) for config in fused for spec in sweep_runs(config)])
    assert [len(job) for job in queue] == [5]
    other = configs(tmp_path / "other", fuse=2, batch_size=8)  # another step shape: a job of its own
    assert len(jobs([(c, s) for c in fused[:1] + other[1:] for s in sweep_runs(c)])) == 2
    single = run_sweeps(configs(tmp_path / "single"))
    together = run_sweeps(fused)
    assert single["state"].tolist() == together["state"].tolist() == ["done"] * 5
    a = sorted_table(collect_predictions(tmp_path / "single" / "runs"))
    b = sorted_table(collect_predictions(tmp_path / "fused" / "runs"))
    np.testing.assert_allclose(b["probability"], a["probability"], atol=1e-5)
    metrics = json.loads((tmp_path / "fused" / "runs" / "b" / "ru" / "tiny" / "seed=4" / "metrics.json").read_text())
    assert metrics["fused"]["slots"] == 2 and metrics["fused"]["runs"] == 5


def test_a_job_claims_each_run_as_it_takes_a_slot_and_frees_it_once_stored(tmp_path, tiny_model_dir, monkeypatch):
    """Queued runs stay unlocked (free for other processes): one slot holds one lock at a time; a run locked by a
    live process is reported ``locked`` and the job goes on with the next."""
    import json
    import socket
    import subprocess
    import sys

    from diagnostics.finetune import _train, load_config, sweep_runs

    from _sweeps import write_config

    held, most = set(), [0]

    class CountingLock(_train.RunLock):
        def acquire(self):
            out = super().acquire()
            held.add(self.path)
            most[0] = max(most[0], len(held))
            return out

        def release(self):
            held.discard(self.path)
            super().release()

    monkeypatch.setattr(_train, "RunLock", CountingLock)
    config = load_config(write_config(tmp_path, tiny_model_dir, languages=["en"], seeds=[0, 1, 2], train_size=16,
                                      max_epochs=1))
    specs = sweep_runs(config)
    specs[1].path.mkdir(parents=True)
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        (specs[1].path / "LOCK").write_text(json.dumps({"pid": holder.pid, "host": socket.gethostname()}))
        outcomes = _train.train_group(specs, slots=1, progress=False)
    finally:
        holder.kill()
        holder.wait()
    assert [o["state"] for o in outcomes] == ["done", "locked", "done"]
    assert most[0] == 1 and not held


def test_fuse_auto_jobs_for_a_cluster_are_cut_here_and_sized_on_their_device(tmp_path, tiny_model_dir):
    """A login node without a GPU cannot measure ``auto``: the cluster's jobs hold runs of every experiment and
    language together, and each measures its slots where it lands; in process, ``auto`` is measured here (1 on a
    CPU: one job per run)."""
    from diagnostics.finetune import jobs, load_config, sweep_runs

    from _sweeps import write_config

    config = load_config(write_config(tmp_path, tiny_model_dir, fuse="auto", device="cpu"))
    todo = [(config, spec) for spec in sweep_runs(config)]
    assert [len(job) for job in jobs(todo, "submitit")] == [4]
    assert [len(job) for job in jobs(todo, "inprocess")] == [1, 1, 1, 1]
