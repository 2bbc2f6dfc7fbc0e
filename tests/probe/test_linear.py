"""Linear probes: control tasks, alpha selection, class weights, baselines and metrics against sklearn."""

from __future__ import annotations

import numpy as np
import pytest

from diagnostics.probe._linear import (ALPHAS, chance_level, control_labels, fit_probe, held_out_split,
                                      majority_accuracy, probe_metrics, standardise)


def test_control_labels_keep_the_label_distribution_and_are_seeded():
    labels = np.array([1] * 30 + [0] * 70)
    shuffled = control_labels(labels, seed=5)
    assert np.array_equal(np.sort(shuffled), np.sort(labels))
    assert not np.array_equal(shuffled, labels)
    assert np.array_equal(shuffled, control_labels(labels, seed=5))
    assert not np.array_equal(shuffled, control_labels(labels, seed=6))


def test_alpha_is_chosen_on_held_out_data_with_the_holdout_protocol():
    rng = np.random.default_rng(2)
    n, d = 150, 40
    y = (rng.random(n + 300) < 0.5).astype(int)
    x = rng.standard_normal((n + 300, d))
    x[:, :8] += 0.35 * (2 * y[:, None] - 1)  # weak signal spread over several dimensions
    x_train, x_test = standardise(x[:n], x[n:])
    fit = fit_probe(x_train, y[:n], x_test, y[n:], seed=0)
    singles = {a: fit_probe(x_train, y[:n], x_test, y[n:], seed=0, alphas=(a,)) for a in ALPHAS}
    best_held = max(s.selection_accuracy for s in singles.values())
    assert fit.selection_accuracy == pytest.approx(best_held)
    # the strongest alpha among the best held-out scores wins
    assert fit.alpha == max(a for a, s in singles.items() if s.selection_accuracy == pytest.approx(best_held))
    assert fit.accuracy == pytest.approx(singles[fit.alpha].accuracy)
    assert len({round(s.selection_accuracy, 6) for s in singles.values()}) > 1  # the grid matters here
    assert fit.accuracy > 0.7


def test_single_class_training_predicts_that_class():
    x = np.random.default_rng(0).standard_normal((50, 4))
    fit = fit_probe(x[:30], np.ones(30, int), x[30:], np.array([1] * 15 + [0] * 5))
    assert fit.accuracy == pytest.approx(0.75)
    assert np.isnan(fit.alpha)


def test_majority_and_split_helpers():
    assert majority_accuracy(np.array([0, 0, 1])) == pytest.approx(2 / 3)
    fit_idx, held_idx = held_out_split(10, 0.2, seed=0)
    assert len(held_idx) == 2 and sorted(np.concatenate([fit_idx, held_idx]).tolist()) == list(range(10))
    with pytest.raises(ValueError):
        held_out_split(10, 1.5, seed=0)


def test_balanced_class_weight_removes_the_training_prior():
    # annotator-labelled training pairs are mostly positive, the gold test set mostly negative
    rng = np.random.default_rng(4)
    y_train = (rng.random(400) < 0.8).astype(int)
    y_test = (rng.random(400) < 0.3).astype(int)
    y = np.concatenate([y_train, y_test])
    x = rng.standard_normal((800, 10))
    x[:, 0] += 0.6 * (2 * y - 1)
    x_train, x_test = standardise(x[:400], x[400:])
    balanced = fit_probe(x_train, y_train, x_test, y_test, class_weight="balanced")
    prior = fit_probe(x_train, y_train, x_test, y_test)  # the study's default: no class weighting
    assert balanced.accuracy > prior.accuracy + 0.1
    # balanced accuracy does not reward the inherited prior: the unweighted probe mostly predicts the positive
    # class, which is the minority of the test set
    assert prior.predictions.mean() > 0.5 and prior.balanced_accuracy < balanced.balanced_accuracy


def test_probe_metrics_and_chance_levels_agree_with_sklearn():
    from sklearn.metrics import accuracy_score, balanced_accuracy_score, f1_score

    rng = np.random.default_rng(7)
    y_true = (rng.random(200) < 0.3).astype(int)
    for y_pred in [(rng.random(200) < 0.5).astype(int), np.zeros(200, int)]:
        metrics = probe_metrics(y_true, y_pred)
        assert metrics["accuracy"] == pytest.approx(accuracy_score(y_true, y_pred))
        assert metrics["balanced_accuracy"] == pytest.approx(balanced_accuracy_score(y_true, y_pred))
        assert metrics["macro_f1"] == pytest.approx(f1_score(y_true, y_pred, average="macro", zero_division=0))
    # the chance levels are what predicting the majority class scores
    constant = probe_metrics(y_true, np.zeros(200, int))
    majority = majority_accuracy(y_true)
    for metric in ("accuracy", "balanced_accuracy", "macro_f1"):
        assert chance_level(metric, majority) == pytest.approx(constant[metric])
    assert chance_level("selectivity", majority) == 0.0 and np.isnan(chance_level("alpha", majority))
    assert np.isnan(probe_metrics(np.array([], int), np.array([], int))["balanced_accuracy"])
