"""Inference from Multi-Bootstrap samples: intervals and comparisons of settings, a real improvement found and a null
one not, intervals that cover the true mean."""

import numpy as np
import pytest
from scipy.special import expit

from _stats_fixtures import synthetic_table
from diagnostics.stats import bootstrap_ci, category_matrix, compare, compare_settings, setting_ci


def test_compare_detects_a_real_improvement_and_not_a_null_one():
    table = synthetic_table("axb", experiments=(("base", 0.62), ("better", 0.75), ("same", 0.62)), seeds=range(4))
    up = compare_settings(table, {"experiment": "base"}, {"experiment": "better"}, by=None, n_boot=400)
    assert up["p_value"].item() < 0.01 and up["delta_ci_low"].item() > 0
    null = compare_settings(table, {"experiment": "base"}, {"experiment": "same"}, by=None, n_boot=400,
                            paired=False)
    assert null["delta_ci_low"].item() < 0 < null["delta_ci_high"].item()
    assert 0.01 < null["p_value"].item() < 0.99
    per_cat = compare_settings(table, {"experiment": "base"}, {"experiment": "better"}, n_boot=200)
    assert len(per_cat) == 33 + 2 and per_cat["category"].iloc[-1].startswith("Overall")


def test_setting_ci_rows_and_threshold():
    table = synthetic_table("axb", seeds=range(3))
    ci = setting_ci(table, {"experiment": "rte"}, n_boot=200, threshold=0.0)
    assert len(ci) == 35 and (ci["ci_low"] <= ci["ci_high"]).all()
    assert (ci["p_threshold"] > 0.95).sum() > 25  # synthetic runs are far better than chance
    names, _ = category_matrix("axb")
    assert list(ci["category"][:33]) == names


def _true_accuracy(intercept, sd_example, sd_seed):
    nodes, weights = np.polynomial.hermite_e.hermegauss(80)
    weights = weights / weights.sum()
    grid = expit(intercept + sd_example * nodes[:, None] + sd_seed * nodes[None, :])
    return float(np.sum(weights[:, None] * weights[None, :] * grid))


def _coverage(n_examples, n_seeds, reps, n_boot, sd_example=1.5, sd_seed=0.3, intercept=1.0, seed=0):
    """Share of 95% CIs covering the population mean accuracy in a crossed example x seed model."""
    theta = _true_accuracy(intercept, sd_example, sd_seed)
    rng = np.random.default_rng(seed)
    hits = 0
    for rep in range(reps):
        difficulty = rng.normal(0, sd_example, n_examples)
        skill = rng.normal(0, sd_seed, n_seeds)
        correct = rng.random((n_examples, n_seeds)) < expit(intercept + difficulty[:, None] + skill[None, :])
        ci = bootstrap_ci(correct.astype(np.int8), np.ones(n_examples, np.int8), "accuracy", n_boot, seed=rep)
        hits += ci["ci_low"].item() <= theta <= ci["ci_high"].item()
    return hits / reps


@pytest.mark.slow
def test_ci_coverage_of_the_true_mean():
    """Population: example difficulty and seed skill both random; the CI must cover the mean 93-97% of the time."""
    assert 0.93 <= _coverage(n_examples=400, n_seeds=10, reps=1000, n_boot=400) <= 0.97


@pytest.mark.slow
def test_ci_coverage_axb_size():
    assert 0.93 <= _coverage(n_examples=1104, n_seeds=10, reps=2000, n_boot=1000, seed=1) <= 0.97


def test_compare_on_arrays_threshold_probability():
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 2, 500)
    a = ((rng.random((500, 4)) < 0.35) ^ labels[:, None]).astype(int)
    b = ((rng.random((500, 4)) < 0.20) ^ labels[:, None]).astype(int)
    out = compare(a, b, labels, "accuracy", 300, 0, threshold=0.5)
    assert out["p_threshold"].item() == 0.0  # delta is ~0.15, never above 0.5
    assert out["delta"].item() == pytest.approx(np.mean(b == labels[:, None]) - np.mean(a == labels[:, None]))
