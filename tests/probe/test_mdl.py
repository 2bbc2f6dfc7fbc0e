"""MDL probing (Voita & Titov 2020): the online code's blocks and codelengths against a direct scikit-learn
computation, on hand-built data with known structure, and ``probe_mdl`` on a tiny random model with real
diagnostic pairs (the accuracy probes' pairs, labels, controls and L2 strengths, the vector and result caches)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import torch

from sklearn.linear_model import LogisticRegression
from sklearn.metrics import log_loss

from diagnostics.data import load
from diagnostics.plots import mdl_by_layer
from diagnostics.probe import (ALPHAS, MDL_ALPHA, MDL_COLUMNS, MDL_PORTIONS, block_ends, chance_level, control_labels,
                               label_entropy_bits, mdl_layers, online_codelength, probe_mdl,
                               probe_models, seed_separation, standardise)

from _encoders import CountingEncoder

N_LAYERS = 2


def linear_data(n=1500, d=20, seed=0, flip=0.0):
    """Standardised Gaussian features and labels of a linear teacher (a share ``flip`` of them flipped)."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, d))
    y = (x @ rng.normal(size=d) > 0).astype(int)
    flipped = rng.random(n) < flip
    y[flipped] = 1 - y[flipped]
    return standardise(x)[0], y


# --- blocks ---------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("n", [2, 7, 80, 999, 1000, 10_000, 12_345])
def test_blocks_partition_the_data(n):
    ends = block_ends(n)
    sizes = np.diff(ends, prepend=0)
    assert ends[-1] == n and sizes.sum() == n and (sizes > 0).all()
    assert len(ends) <= len(MDL_PORTIONS)


def test_blocks_are_voita_and_titovs_portions():
    assert block_ends(10_000).tolist() == [10, 20, 40, 80, 160, 320, 625, 1250, 2500, 5000, 10_000]
    assert block_ends(80).tolist() == [1, 2, 5, 10, 20, 40, 80]  # empty early blocks dropped, first one pair
    assert block_ends(100, (50, 100)).tolist() == [50, 100]
    for bad in [(10, 50), (50, 10, 100), (0, 100), ()]:
        with pytest.raises(ValueError, match="portions"):
            block_ends(100, bad)
    with pytest.raises(ValueError, match="at least 2"):
        block_ends(1)


# --- the code -------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("n_classes", [2, 3])
def test_first_block_is_sent_with_the_uniform_code(n_classes):
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=(2000, 5)), rng.integers(0, 2, 2000)
    code = online_codelength(x, y, alpha=1e-2, n_classes=n_classes)
    assert code.first_block_size == 2 == code.block_ends[0]
    assert code.block_codelengths[0] == pytest.approx(2 * math.log2(n_classes))
    assert code.uniform_codelength == pytest.approx(2000 * math.log2(n_classes))
    assert code.online_codelength == pytest.approx(code.block_codelengths.sum())
    assert code.compression == pytest.approx(code.uniform_codelength / code.online_codelength)
    assert len(code.block_codelengths) == len(code.block_ends) == 11
    assert code.n_classes == n_classes
    with pytest.raises(ValueError, match="n_classes"):
        online_codelength(x, y, alpha=1e-2, n_classes=1)
    with pytest.raises(ValueError, match="binary"):
        online_codelength(x, rng.integers(0, 3, 2000), alpha=1e-2)


def test_separable_labels_compress_random_labels_do_not():
    x, y = linear_data()
    separable = online_codelength(x, y, alpha=1e-3, seed=0)
    assert separable.compression > 3
    # later blocks cost fewer bits per pair: the probe learns
    per_pair = separable.block_codelengths[1:] / np.diff(separable.block_ends)
    assert per_pair[-1] < 0.3 < per_pair[0]
    noisy = online_codelength(*linear_data(flip=0.1), alpha=1e-2, seed=0)
    assert 1.2 < noisy.compression < separable.compression / 2
    shuffled = online_codelength(x, np.random.default_rng(5).permutation(y), alpha=max(ALPHAS), seed=0)
    assert 0.9 < shuffled.compression < 1.02  # about the uniform code: nothing to learn
    # a weakly regularised probe overfits the early blocks of random labels: confident mistakes cost more than
    # the uniform code
    assert online_codelength(x, np.random.default_rng(5).permutation(y), alpha=1e-5, seed=0).compression < 0.6
    assert chance_level("compression", 0.5) == pytest.approx(1.0)  # balanced labels: the prior compresses nothing
    assert chance_level("compression", 0.75) == pytest.approx(1 / label_entropy_bits(np.array([0, 1, 1, 1])) * 4)


def test_codelength_equals_a_direct_sklearn_computation():
    x, y = linear_data(n=800, flip=0.1, seed=3)
    alpha, seed = 1e-2, 7
    code = online_codelength(x, y, alpha=alpha, seed=seed)
    order = np.random.default_rng(seed).permutation(len(y))
    xs, ys = x[order], y[order]
    ends = [0, *block_ends(len(y))]
    expected = [ends[1] * 1.0]
    for start, stop in zip(ends[1:-1], ends[2:]):
        seen = ys[:start]
        if np.unique(seen).size < 2:  # no probe on one class: add-one frequencies of the earlier pairs
            p = (np.array([np.sum(seen == c) for c in ys[start:stop]]) + 1) / (start + 2)
            expected.append(-np.log2(p).sum())
            continue
        model = LogisticRegression(solver="liblinear", C=1 / (alpha * start), intercept_scaling=10.0, max_iter=300,
                                   tol=1e-4).fit(xs[:start], seen)
        nats = log_loss(ys[start:stop], model.predict_proba(xs[start:stop]), labels=[0, 1], normalize=False)
        expected.append(nats / math.log(2))
    np.testing.assert_allclose(code.block_codelengths, expected, rtol=1e-9, atol=1e-9)
    assert code.prior_blocks == tuple(i for i in range(1, len(expected)) if np.unique(ys[:ends[i]]).size < 2)
    assert code.prior_blocks  # the first block (one pair) holds one class: the second block uses the frequencies


def test_seed_fixes_the_order_and_the_code():
    x, y = linear_data(n=600, flip=0.15)
    first, again = online_codelength(x, y, alpha=1e-2, seed=3), online_codelength(x, y, alpha=1e-2, seed=3)
    np.testing.assert_array_equal(first.block_codelengths, again.block_codelengths)
    assert first == again
    other = online_codelength(x, y, alpha=1e-2, seed=4)
    assert other.online_codelength != first.online_codelength
    order = np.random.default_rng(3).permutation(len(y))
    given = online_codelength(x[order], y[order], alpha=1e-2)  # seed=None keeps the order given
    np.testing.assert_array_equal(given.block_codelengths, first.block_codelengths)


def test_constant_labels_and_label_entropy():
    x = np.random.default_rng(0).normal(size=(100, 3))
    code = online_codelength(x, np.ones(100, dtype=int), alpha=1e-2)
    assert code.prior_blocks == tuple(range(1, len(code.block_ends)))  # no probe fits one class
    assert code.compression > 10  # the frequencies learn the constant quickly
    assert label_entropy_bits(np.ones(10)) == 0.0
    assert label_entropy_bits(np.array([0, 1, 1, 1])) == pytest.approx(4 * (-(0.25 * math.log2(0.25))
                                                                             - 0.75 * math.log2(0.75)))
    with pytest.raises(ValueError, match="alpha"):
        online_codelength(x, np.arange(100) % 2, alpha=0)


def test_mdl_layers_codes_each_task_with_the_accuracy_probes_controls():
    x, y = linear_data(n=400, d=6)
    rng = np.random.default_rng(2)
    vectors = np.stack([rng.normal(size=x.shape), x, x])  # layer 0 noise; layers 1 and 2 identical
    labels = {"task": y, "other": rng.integers(0, 2, len(y))}
    memo: dict = {}
    table = mdl_layers(vectors, labels, alpha=1e-3, seed=5, memo=memo)
    assert len(table) == 2 * 3 and len(memo) == 2 * 2  # the identical layer was coded once
    row = table[(table["task"] == "task") & (table["layer"] == 1)].iloc[0]
    direct = online_codelength(standardise(x)[0], y, alpha=1e-3, seed=5)
    control = online_codelength(standardise(x)[0], control_labels(y, 6), alpha=1e-3, seed=5)
    assert row["online_codelength"] == pytest.approx(direct.online_codelength)
    assert row["control_codelength"] == pytest.approx(control.online_codelength)
    assert row["mdl_selectivity"] == pytest.approx(control.online_codelength - direct.online_codelength)
    assert row["prior_codelength"] == pytest.approx(label_entropy_bits(y))
    by_layer = table[table["task"] == "task"].set_index("layer")
    assert by_layer.loc[1, "compression"] > 2 * by_layer.loc[0, "compression"]  # the layer that holds the labels
    assert by_layer.loc[1, "mdl_selectivity"] > 100 and abs(by_layer.loc[0, "mdl_selectivity"]) < 50
    pd.testing.assert_series_equal(by_layer.loc[1].drop("layer", errors="ignore"),
                                   by_layer.loc[2].drop("layer", errors="ignore"), check_names=False)
    # per-(task, layer) strengths; a NaN one (an accuracy probe that saw one class) falls back to the strongest
    chosen = mdl_layers(vectors, labels, alpha=lambda task, layer: (float("nan"), 1e-2), seed=5)
    assert (chosen["alpha"] == max(ALPHAS)).all() and (chosen["control_alpha"] == 1e-2).all()


# --- the one-call API on a tiny model --------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    """Two tiny random models, gold-tagged AX-b frames (no annotator) and the accuracy probes' table."""
    from diagnostics.models import tiny_random_model

    torch.set_num_threads(1)
    root = tmp_path_factory.mktemp("mdl")
    models = {"pretrained": tiny_random_model(root / "a", seed=0, num_hidden_layers=N_LAYERS),
              "seed=1": tiny_random_model(root / "b", seed=1, num_hidden_layers=N_LAYERS)}
    frame = load("axb")
    rows = np.random.default_rng(0).permutation(len(frame))
    gold = frame.assign(auto_coarse=frame["coarse"], auto_features=frame["features"])

    def part(a, b):
        return gold.iloc[rows[a:b]].reset_index(drop=True)

    kwargs = dict(tasks="negation,lexical_semantics", cache_dir=root / "cache", train=part(0, 150),
                  test=part(150, 230), selection_frame=part(230, 310), max_train=150,
                  max_selection=80, encoder=CountingEncoder())
    accuracy = probe_models(models, "en", **kwargs)
    return models, kwargs, accuracy


def test_probe_mdl_codes_the_accuracy_probes_pairs_with_their_strengths(setup):
    models, kwargs, accuracy = setup
    encoder = kwargs["encoder"]
    calls = len(encoder.calls)
    table = probe_mdl(models, "en", alpha="probe", **kwargs)
    assert len(encoder.calls) == calls  # cached vectors only: no model runs
    assert list(table.columns) == MDL_COLUMNS and len(table) == 2 * 2 * (N_LAYERS + 1)
    assert (table["n_pairs"] == 150).all() and (table["first_block_size"] == 1).all()
    assert (table["data"] == "train").all() and (table["alpha_source"] == "probe").all()
    keys = ["model", "task", "layer"]
    merged = table.merge(accuracy, on=keys, suffixes=("", "_acc"))
    np.testing.assert_array_equal(merged["alpha"], merged["alpha_acc"].fillna(max(ALPHAS)))
    np.testing.assert_array_equal(merged["control_alpha"], merged["control_alpha_acc"].fillna(max(ALPHAS)))
    np.testing.assert_allclose(merged["positive_rate"], merged["train_positive_rate"])
    np.testing.assert_allclose(table["mdl_selectivity"], table["control_codelength"] - table["online_codelength"])
    np.testing.assert_allclose(table["uniform_codelength"], 150.0)
    assert table.loc[table["model"] == "pretrained", "seed"].isna().all()
    assert (table.loc[table["model"] == "seed=1", "seed"] == 1).all()
    # one row recomputed by hand from the cached vectors: standardised, seeded order, the same control labels
    from diagnostics.probe import cached_sentence_vectors, pair_vectors, task_labels, resolve_task
    from diagnostics.probe._runner import pair_index

    train = kwargs["train"]
    texts: dict[str, int] = {}
    premise, hypothesis = pair_index(train, texts)
    vectors = pair_vectors(cached_sentence_vectors(models["seed=1"], list(texts), kwargs["cache_dir"],
                                                   encoder=encoder), premise, hypothesis)
    y = task_labels(train, resolve_task("negation"), "auto_features")
    row = table[(table["model"] == "seed=1") & (table["task"] == "negation") & (table["layer"] == 2)].iloc[0]
    x = standardise(vectors[2])[0]
    assert row["online_codelength"] == pytest.approx(online_codelength(x, y, alpha=row["alpha"], seed=0)
                                                     .online_codelength)
    assert row["control_codelength"] == pytest.approx(
        online_codelength(x, control_labels(y, 1), alpha=row["control_alpha"], seed=0).online_codelength)
    # the accuracy table given instead of the cached one: the same codes; the identical call is a cache hit
    pd.testing.assert_frame_equal(probe_mdl(models, "en", alpha="probe", accuracy=accuracy, **kwargs), table)
    assert len(list(kwargs["cache_dir"].glob("mdl-*.json"))) == 2
    pd.testing.assert_frame_equal(probe_mdl(models, "en", alpha="probe", **kwargs, reuse_results=False), table)
    with pytest.raises(ValueError, match="no rows for model"):
        probe_mdl(models, "en", alpha="probe", accuracy=accuracy[accuracy["model"] == "pretrained"], **kwargs)


def test_probe_mdl_fixed_strength_gold_labels_and_bad_arguments(setup):
    models, kwargs, accuracy = setup
    default = probe_mdl(models, "en", **kwargs)
    assert (default["alpha"] == MDL_ALPHA).all() and (default["control_alpha"] == MDL_ALPHA).all()
    assert (default["alpha_source"] == "fixed").all()
    fixed = probe_mdl(models, "en", alpha=1e-2, **kwargs)
    assert (fixed["alpha"] == 1e-2).all() and not np.allclose(fixed["online_codelength"], default["online_codelength"])
    gold = probe_mdl(models, "en", data="test", **kwargs)
    assert (gold["n_pairs"] == 80).all() and (gold["data"] == "test").all()
    test_rates = accuracy.set_index(["model", "task", "layer"])["test_positive_rate"]
    np.testing.assert_allclose(gold.set_index(["model", "task", "layer"])["positive_rate"], test_rates)
    with pytest.raises(ValueError, match="data must be"):
        probe_mdl(models, "en", data="validation", **kwargs)
    for bad in (-1.0, "auto", None):
        with pytest.raises(ValueError, match="alpha must be 'probe' or a number"):
            probe_mdl(models, "en", alpha=bad, **kwargs)
    with pytest.raises(TypeError):
        probe_mdl(models, "en", folds=3, **kwargs)  # not an argument of probe_models
    fig = mdl_by_layer(gold)
    assert len(fig.axes) == 2 * 2  # (compression, MDL selectivity) x tasks
    labels = {line.get_label() for line in fig.axes[0].get_lines()}
    assert {"seed 1", "pretrained", "uniform code (no compression)"} <= labels
    assert "label prior only (1 / H)" in labels
    negation = gold[(gold["task"] == "negation") & gold["seed"].isna()]
    prior = [line for line in fig.axes[0].get_lines() if line.get_label() == "label prior only (1 / H)"][0]
    assert prior.get_ydata()[0] == pytest.approx(chance_level("compression", negation["majority"].iloc[0]))
    assert fig.axes[0].get_ylim() != fig.axes[1].get_ylim()  # one scale per panel
    assert "no selectivity" in {line.get_label() for line in fig.axes[2].get_lines()}


def test_seed_separation_puts_metrics_on_one_scale():
    rows = []
    for seed, accuracy, compression in [(None, [0.5, 0.6], [1.1, 1.2]), (0, [0.6, 0.8], [1.5, 1.2]),
                                        (1, [0.7, 0.6], [1.7, 1.2])]:
        for layer in range(2):
            rows.append({"model": f"m{seed}", "seed": seed, "language": "en", "task": "logic", "layer": layer,
                         "accuracy": accuracy[layer], "compression": compression[layer], "majority": 0.55})
    table = pd.DataFrame(rows).astype({"seed": "Int64"})
    out = seed_separation(table, ["accuracy", "compression"]).set_index(["metric", "layer"])
    assert out.loc[("accuracy", 0), "difference"] == pytest.approx(0.15)
    assert out.loc[("accuracy", 0), "separation"] == pytest.approx(0.15 / np.std([0.6, 0.7], ddof=1))
    assert out.loc[("compression", 0), "separation"] == pytest.approx(0.5 / np.std([1.5, 1.7], ddof=1))
    assert np.isnan(out.loc[("compression", 1), "separation"])  # no spread across seeds
    assert (out["n_seeds"] == 2).all() and len(out) == 4
