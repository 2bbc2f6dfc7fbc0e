"""The loop implementation of Multi-Bootstrap, the oracle of the vectorised one: the published algorithm on a case
small enough to follow by hand, and its accuracy and MCC against sklearn."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import accuracy_score, matthews_corrcoef

from diagnostics.stats._reference import accuracy, multibootstrap_loop


def test_accuracy_is_sklearns_and_nan_without_examples():
    rng = np.random.default_rng(0)
    y, p = rng.integers(0, 2, 50), rng.integers(0, 2, 50)
    assert accuracy(y, p) == pytest.approx(accuracy_score(y, p))
    assert np.isnan(accuracy(np.array([]), np.array([])))


def test_each_sample_averages_the_metric_of_the_drawn_seeds_on_the_drawn_examples():
    labels = np.array([1, 0, 1, 0])
    predictions = np.array([[1, 0], [0, 0], [0, 1], [1, 0]])  # seed 0: 2 of 4 right; seed 1: 3 of 4
    draws = [(np.array([0, 1, 2, 3]), np.array([0, 1])),   # everything once: (0.5 + 0.75) / 2
             (np.array([0, 0, 1, 1]), np.array([1, 1])),   # seed 1 twice on examples 0, 1: one right -> 0.5
             (np.array([2, 3, 2, 3]), np.array([0, 0]))]   # seed 0 on examples 2, 3: both wrong -> 0.0
    np.testing.assert_allclose(multibootstrap_loop(predictions, labels, indices=draws), [0.625, 0.5, 0.0])
    categories = np.array([[True, False], [True, True], [False, True], [False, True]])
    by_category = multibootstrap_loop(predictions, labels, indices=draws[:1], categories=categories)
    np.testing.assert_allclose(by_category, [[(1.0 + 0.5) / 2, (1 / 3 + 1.0) / 2]])
    mcc = multibootstrap_loop(predictions, labels, "mcc", indices=draws[:1])
    assert mcc[0] == pytest.approx(np.mean([matthews_corrcoef(labels, predictions[:, k]) for k in (0, 1)]))
    nested = np.stack([predictions, 1 - predictions], axis=2)  # two inner seeds per outer seed, averaged
    np.testing.assert_allclose(multibootstrap_loop(nested, labels, indices=draws[:1]), [0.5])


def test_drawn_by_its_seed_when_no_draws_are_given():
    labels = np.random.default_rng(1).integers(0, 2, 30)
    predictions = np.random.default_rng(2).integers(0, 2, (30, 3))
    first = multibootstrap_loop(predictions, labels, n_boot=20, seed=5)
    assert first.shape == (20,) and np.array_equal(first, multibootstrap_loop(predictions, labels, n_boot=20, seed=5))
    assert not np.array_equal(first, multibootstrap_loop(predictions, labels, n_boot=20, seed=6))
