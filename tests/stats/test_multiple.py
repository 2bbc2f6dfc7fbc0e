"""Multiple comparisons: adjusted p-values against statsmodels, family-wise error on null data, simultaneous band."""

import gc

import numpy as np
import pytest
from scipy.stats import norm
from statsmodels.stats.multitest import multipletests

from diagnostics.stats import adjust_pvalues, compare, simultaneous_interval, simultaneous_level

STATSMODELS = {"holm": "holm", "bh": "fdr_bh"}


def _random_pvalues(rng, m):
    kind = rng.integers(0, 4)
    if kind == 0:
        return rng.random(m)
    if kind == 1:
        return rng.random(m) ** 4  # many small p-values
    if kind == 2:
        return np.round(rng.random(m), 1)  # ties
    return rng.choice([0.0, 0.001, 0.05, 1.0], m)  # the bounds, and bootstrap-like floors


@pytest.fixture
def no_gc_collect(monkeypatch):
    """statsmodels' Holm path runs a full garbage collection per call (0.1 s here); not needed for its values."""
    monkeypatch.setattr(gc, "collect", lambda *args: 0)


@pytest.mark.parametrize("method", ["holm", "bh"])
def test_adjust_pvalues_equals_statsmodels_on_random_inputs(method, no_gc_collect):
    rng = np.random.default_rng(0)
    for _ in range(400):
        p = _random_pvalues(rng, int(rng.integers(1, 80)))
        expected = multipletests(p, method=STATSMODELS[method])[1]
        np.testing.assert_allclose(adjust_pvalues(p, method), expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize("method", ["holm", "bh"])
def test_adjust_pvalues_edge_inputs(method, no_gc_collect):
    sm = STATSMODELS[method]
    assert adjust_pvalues([], method).shape == (0,)
    assert adjust_pvalues([0.03], method).tolist() == [0.03]
    np.testing.assert_array_equal(adjust_pvalues(np.ones(5), method), np.ones(5))
    np.testing.assert_array_equal(adjust_pvalues(np.zeros(4), method), np.zeros(4))
    # NaN: not a test; the others are adjusted as a family of the non-NaN ones
    p = np.array([0.01, np.nan, 0.04, 0.2, np.nan, 0.001])
    out = adjust_pvalues(p, method)
    assert np.isnan(out[[1, 4]]).all()
    np.testing.assert_allclose(out[~np.isnan(p)], multipletests(p[~np.isnan(p)], method=sm)[1], atol=1e-12)
    assert np.isnan(adjust_pvalues([np.nan, np.nan], method)).all()
    # any shape: one family, the shape kept; the input is not modified
    grid = np.random.default_rng(1).random((3, 4))
    copy = grid.copy()
    np.testing.assert_allclose(adjust_pvalues(grid, method).ravel(), multipletests(grid.ravel(), method=sm)[1])
    np.testing.assert_array_equal(grid, copy)
    with pytest.raises(ValueError, match="method must be one of"):
        adjust_pvalues([0.1], "bonferroni")
    with pytest.raises(ValueError, match=r"p-values must lie in \[0, 1\]"):
        adjust_pvalues([0.1, 1.5], method)


def test_holm_controls_the_familywise_error_on_null_pvalues():
    """33 true nulls per family (independent, then equicorrelated): raw tests err in most families, Holm in <= 5 %."""
    rng = np.random.default_rng(2)
    reps, m, alpha = 3000, 33, 0.05
    slack = 3 * np.sqrt(alpha * (1 - alpha) / reps)  # Monte Carlo error
    for rho in (0.0, 0.6):
        z = np.sqrt(rho) * rng.normal(size=(reps, 1)) + np.sqrt(1 - rho) * rng.normal(size=(reps, m))
        p = norm.sf(z)
        holm = np.array([adjust_pvalues(row, "holm") for row in p])
        bh = np.array([adjust_pvalues(row, "bh") for row in p])
        assert (holm <= alpha).any(axis=1).mean() <= alpha + slack
        assert (bh <= alpha).any(axis=1).mean() <= alpha + slack  # all null: FDR = FWER
        if rho == 0:
            assert (p <= alpha).any(axis=1).mean() == pytest.approx(1 - (1 - alpha) ** m, abs=0.03)  # ~0.82


def _null_families(reps, n_boot, size=30, seeds=4, categories=33, seed=0):
    """Family-wise error of raw, Holm, BH and simultaneous-band decisions of `compare` on null data."""
    n = categories * size
    cats = np.zeros((n, categories), dtype=bool)
    cats[np.arange(n), np.arange(n) // size] = True
    rng = np.random.default_rng(seed)
    errors = {"raw": 0, "holm": 0, "bh": 0, "band": 0}
    for rep in range(reps):
        labels = rng.integers(0, 2, n)
        difficulty = rng.normal(0, 1, n)

        def runs():  # both settings come from the same population of seeds: every category is a true null
            skill = rng.normal(1.0, 0.5, seeds)
            correct = rng.random((n, seeds)) < 1 / (1 + np.exp(-(skill[None] + difficulty[:, None])))
            return np.where(correct, labels[:, None], 1 - labels[:, None])

        out = compare(runs(), runs(), labels, "accuracy", n_boot, seed=rep, categories=cats, paired=False)
        errors["raw"] += (out["p_value"] <= 0.05).any()
        errors["holm"] += (out["p_holm"] <= 0.05).any()
        errors["bh"] += (out["p_bh"] <= 0.05).any()
        errors["band"] += ((out["delta_simul_low"] > 0) | (out["delta_simul_high"] < 0)).any()
    return {k: v / reps for k, v in errors.items()}


@pytest.mark.slow
def test_multibootstrap_comparisons_on_null_categories():
    """33 null categories, the default design: raw decisions err often, Holm / BH / the band rarely."""
    rates = _null_families(reps=300, n_boot=1000)
    assert rates["raw"] > 0.15
    slack = 3 * np.sqrt(0.05 * 0.95 / 300)
    assert rates["holm"] <= 0.05 + slack and rates["bh"] <= 0.05 + slack and rates["band"] <= 0.05 + slack


def test_p_holm_and_p_bh_of_compare_adjust_the_category_rows():
    rng = np.random.default_rng(3)
    labels = rng.integers(0, 2, 400)
    cats = rng.random((400, 6)) < 0.3
    a = ((rng.random((400, 3)) < 0.3) ^ labels[:, None]).astype(int)
    b = ((rng.random((400, 3)) < 0.3 - 0.15 * cats[:, :1]) ^ labels[:, None]).astype(int)  # better in category 0
    out = compare(a, b, labels, "accuracy", 600, 0, cats, overall=True)
    family = out[out["in_family"]]
    assert len(family) == 6 and out["category"].iat[-1].startswith("Overall") and not out["in_family"].iat[-1]
    np.testing.assert_allclose(family["p_holm"], adjust_pvalues(family["p_value"], "holm"))
    np.testing.assert_allclose(family["p_bh"], adjust_pvalues(family["p_value"], "bh"))
    assert (family["p_value"] <= family["p_bh"]).all() and (family["p_bh"] <= family["p_holm"] + 1e-15).all()
    assert (family["delta_simul_low"] <= family["delta_ci_low"]).all()
    assert (family["delta_simul_high"] >= family["delta_ci_high"]).all()
    last = out.iloc[-1]  # a family of one: adjusted = raw
    assert (last.p_holm, last.p_bh, last.delta_simul_low, last.delta_simul_high) == \
        (last.p_value, last.p_value, last.delta_ci_low, last.delta_ci_high)
    assert family["p_holm"].iat[0] <= 0.05  # the real improvement survives the correction (at best 6 / 600)


def _correlated(rng, n, m, rho, skew=True):
    z = np.sqrt(rho) * rng.normal(size=(n, 1)) + np.sqrt(1 - rho) * rng.normal(size=(n, m))
    scales = np.linspace(0.5, 3, m)
    out = z * scales
    if skew:
        out[:, ::3] = np.exp(z[:, ::3] / 2)  # skewed columns, as small-category MCCs are
    return out


@pytest.mark.parametrize("rho", [0.0, 0.5, 0.9])
def test_simultaneous_band_covers_fresh_draws_jointly(rho):
    """The band from 4000 draws covers all 33 coordinates of fresh draws of the same distribution ~95 % of the time."""
    rng = np.random.default_rng(int(rho * 10))
    samples = _correlated(rng, 4000, 33, rho)
    low, high, lam = simultaneous_interval(samples, 0.95)
    inside = ((samples >= low) & (samples <= high)).all(axis=1).mean()
    assert 0.95 <= inside <= 0.96  # in sample: calibrated to the level (rows tie on their level: a little above)
    fresh = _correlated(rng, 50_000, 33, rho)
    assert ((fresh >= low) & (fresh <= high)).all(axis=1).mean() == pytest.approx(0.95, abs=0.012)
    marginal = np.quantile(samples, [0.025, 0.975], axis=0)
    assert (low <= marginal[0]).all() and (high >= marginal[1]).all()
    assert 0.95 < lam <= 1 - 0.05 / 33 + 0.002  # between the marginal level and Bonferroni's


def test_simultaneous_level_of_independent_columns_is_sidak():
    samples = np.random.default_rng(5).normal(size=(40_000, 33))
    assert simultaneous_level(samples, 0.95) == pytest.approx(0.95 ** (1 / 33), abs=4e-4)
    # dependence narrows the band: identical columns need only the marginal level
    same = np.repeat(samples[:, :1], 33, axis=1)
    assert simultaneous_level(same, 0.95) == pytest.approx(0.95, abs=1e-3)


def test_simultaneous_band_with_ties_nan_and_constant_columns():
    rng = np.random.default_rng(6)
    samples = np.column_stack([np.round(rng.normal(size=2000), 1), np.full(2000, 0.3), rng.normal(size=2000),
                               np.full(2000, np.nan)])
    samples[::10, 2] = np.nan  # an undefined sample never constrains the band
    low, high, _ = simultaneous_interval(samples, 0.9)
    assert low[1] == high[1] == 0.3 and np.isnan(low[3]) and np.isnan(high[3])
    covered = ((samples[:, :3] >= low[:3]) & (samples[:, :3] <= high[:3])) | np.isnan(samples[:, :3])
    assert covered.all(axis=1).mean() >= 0.9
    with pytest.raises(ValueError, match="level must be in"):
        simultaneous_interval(samples, 1.0)
