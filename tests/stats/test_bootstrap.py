"""Multi-Bootstrap: equal to the loop implementation on the same draws, reproducible, nested and paired designs."""

import numpy as np
import pytest
from sklearn.metrics import matthews_corrcoef

from _stats_fixtures import synthetic_table
from diagnostics.stats import multibootstrap, multibootstrap_pair, point_estimate, setting_arrays
from diagnostics.stats._bootstrap import resample_indices
from diagnostics.stats._reference import multibootstrap_loop


def _draws(n_boot, n_examples, n_seeds, seed):
    pairs = []
    for examples, (seeds,) in resample_indices(np.random.default_rng(seed), n_boot, n_examples, (n_seeds,)):
        pairs += list(zip(examples, seeds))
    return pairs


@pytest.fixture(scope="module")
def axb():
    """Real AX-b categories, labels and ids; synthetic predictions of 5 seeds of unequal skill."""
    table = synthetic_table("axb", experiments=(("rte", 0.7),), seeds=range(5))
    return setting_arrays(table, {"experiment": "rte"})


@pytest.mark.parametrize("metric", ["accuracy", "mcc"])
@pytest.mark.parametrize("with_categories", [False, True])
def test_vectorised_equals_loop_on_the_same_draws(axb, metric, with_categories):
    cats = axb.categories if with_categories else None
    # the loop resamples the whole set and takes each category's members: the unstratified design
    fast = multibootstrap(axb.predictions, axb.labels, metric, n_boot=60, seed=3, categories=cats, stratify=False)
    slow = multibootstrap_loop(axb.predictions, axb.labels, metric, categories=cats,
                               indices=_draws(60, len(axb.labels), axb.predictions.shape[1], 3))
    assert fast.shape == ((60, 33) if with_categories else (60,))
    np.testing.assert_allclose(fast, slow, rtol=0, atol=1e-12)


def test_nested_design_resamples_outer_and_averages_inner_seeds():
    rng = np.random.default_rng(5)
    labels = rng.integers(0, 2, 150)
    pred = (rng.random((150, 3, 4)) < 0.3) ^ labels[:, None, None]
    cats = rng.random((150, 4)) < 0.4
    fast = multibootstrap(pred, labels, "mcc", n_boot=50, seed=1, categories=cats, stratify=False)
    slow = multibootstrap_loop(pred.astype(int), labels, "mcc", categories=cats, indices=_draws(50, 150, 3, 1))
    np.testing.assert_allclose(fast, slow, atol=1e-12)


def test_callable_metric_equals_builtin_and_strings_are_accepted(axb):
    cats = axb.categories[:, :3]
    builtin = multibootstrap(axb.predictions, axb.labels, "mcc", n_boot=8, seed=0, categories=cats)
    callable_ = multibootstrap(axb.predictions, axb.labels, matthews_corrcoef, n_boot=8, seed=0, categories=cats)
    np.testing.assert_allclose(builtin, callable_, atol=1e-12)
    words = np.where(axb.predictions == 1, "entailment", "not_entailment")
    gold = np.where(axb.labels == 1, "entailment", "not_entailment")
    np.testing.assert_array_equal(multibootstrap(words, gold, "accuracy", 20, 4),
                                  multibootstrap(axb.predictions, axb.labels, "accuracy", 20, 4))


def test_seeded_and_reproducible(axb):
    a = multibootstrap(axb.predictions, axb.labels, "mcc", 300, seed=11, categories=axb.categories)
    b = multibootstrap(axb.predictions, axb.labels, "mcc", 300, seed=11, categories=axb.categories)
    c = multibootstrap(axb.predictions, axb.labels, "mcc", 300, seed=12, categories=axb.categories)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    # unstratified, every category sees the same resamples: the all-examples column is the same with or without
    # categories
    with_all = multibootstrap(axb.predictions, axb.labels, "mcc", 300, seed=11,
                              categories=np.column_stack([axb.categories, np.ones(len(axb.labels), bool)]),
                              stratify=False)
    np.testing.assert_allclose(with_all[:, -1], multibootstrap(axb.predictions, axb.labels, "mcc", 300, seed=11))
    np.testing.assert_allclose(with_all[:, :-1], multibootstrap(axb.predictions, axb.labels, "mcc", 300, seed=11,
                                                               categories=axb.categories, stratify=False))


def test_point_estimate_is_seed_mean_of_sklearn(axb):
    expected = np.mean([matthews_corrcoef(axb.labels, axb.predictions[:, k]) for k in range(5)])
    assert point_estimate(axb.predictions, axb.labels, "mcc") == pytest.approx(expected, abs=1e-12)


def test_pair_shares_examples_and_paired_shares_seeds(axb):
    other = 1 - axb.predictions
    a, b = multibootstrap_pair(axb.predictions, other, axb.labels, "accuracy", 200, seed=2, paired=True)
    np.testing.assert_allclose(a, multibootstrap(axb.predictions, axb.labels, "accuracy", 200, seed=2))
    np.testing.assert_allclose(a + b, 1.0)  # same examples and same seeds: complementary accuracies
    a2, b2 = multibootstrap_pair(axb.predictions, other, axb.labels, "accuracy", 200, seed=2, paired=False)
    assert not np.allclose(a2 + b2, 1.0)  # independent seed draws
    with pytest.raises(ValueError, match="paired design needs the same seeds"):
        multibootstrap_pair(axb.predictions, other[:, :3], axb.labels, paired=True)


def test_bad_inputs_raise_clear_errors(axb):
    with pytest.raises(ValueError, match="labels must be 1-D with one entry per example"):
        multibootstrap(axb.predictions, axb.labels[:-1])
    with pytest.raises(ValueError, match="metric must be one of"):
        multibootstrap(axb.predictions, axb.labels, "f1")
    with pytest.raises(ValueError, match="must hold 0/1"):
        multibootstrap(axb.predictions * 2, axb.labels)
    with pytest.raises(ValueError, match="categories must be an"):
        multibootstrap(axb.predictions, axb.labels, categories=axb.categories[:10])
    with pytest.raises(ValueError, match="n_boot must be a positive integer"):
        multibootstrap(axb.predictions, axb.labels, n_boot=0)
