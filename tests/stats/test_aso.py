"""Almost Stochastic Order against deepsig's ``aso`` (a committed table of its outputs), the exact integral against a
Riemann sum written out, and the per-category ASO of two settings against the per-run MCC of ``category_scores``.

The deepsig table (``tests/stats/data/aso_deepsig_reference.json``, made by ``benchmarks/aso_deepsig_reference.py``
with deepsig 1.2.8) holds 25 pairs of score samples with deepsig's ``eps_min``, its point estimate and the spread of
its bootstrap. With ``integration="deepsig"`` (deepsig's Riemann sum) our point estimate equals deepsig's to
rounding, so ``eps_min`` can differ only by the Monte-Carlo error of the two bootstraps (different random streams):
ours runs 20 000 resamples, deepsig's 1000 (2000 for one pair), and the tolerance of each pair is 4 standard
deviations of ``eps_min`` at deepsig's number of resamples (estimated from 20 runs of ours with other seeds, and
widened by the spread of our own 20 000 resamples), plus a floor of 0.005 (:data:`FLOOR`). Measured: max
|delta eps_min| = 0.014 over the 25 pairs (18 of them not clipped to 0 or 1 on both sides), at most 0.76 of a
pair's tolerance. With the default exact integral, the point estimate differs from deepsig's grid sum by up to 0.092
(200 vs 150 scores: a step of 1/200 spans one grid point of 0.005) and eps_min by as much (asserted below 0.1).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _stats_fixtures import synthetic_table

from diagnostics.core.errors import UserInputError
from diagnostics.core.taxonomy import COARSE
from diagnostics.stats import (adjust_pvalues, aso, aso_compare, aso_settings, category_scores, setting_arrays,
                               validate_predictions, violation_ratio)
from diagnostics.stats._aso import run_scores

TABLE = json.loads((Path(__file__).parent / "data" / "aso_deepsig_reference.json").read_text(encoding="utf-8"))
PAIRS = TABLE["pairs"]
N_BOOT_OURS = 20_000
#: Added to each tolerance: where the resamples almost never violate the order, the Monte-Carlo distribution of
#: eps_min is a spike near 0 with rare excursions, whose spread 20 reruns underestimate (1000 reruns of
#: ``seeds10_bonferroni_33`` put deepsig's 0.0127 at our 98.8th percentile, 5 of the 20 reruns' standard deviations
#: above our 20 000-resample value).
FLOOR = 0.005


def _sides(pair) -> tuple[np.ndarray, np.ndarray]:
    return np.array(pair["scores_a"]), np.array(pair["scores_b"])


def _midpoint_ratio(a, b, points: int = 200_000) -> float:
    """The violation ratio as a midpoint Riemann sum of the empirical quantile functions, written out."""
    t = (np.arange(points) + 0.5) / points
    qa = np.sort(a)[np.minimum(np.ceil(len(a) * t).astype(int) - 1, len(a) - 1)]
    qb = np.sort(b)[np.minimum(np.ceil(len(b) * t).astype(int) - 1, len(b) - 1)]
    diff = qb - qa
    total = np.sum(diff ** 2)
    return 0.5 if total == 0 else float(np.sum(diff[diff > 0] ** 2) / total)


def test_the_table_has_enough_varied_pairs():
    assert TABLE["versions"]["deepsig"] == "1.2.8"
    sizes = {(len(p["scores_a"]), len(p["scores_b"])) for p in PAIRS}
    assert len(PAIRS) >= 20 and len(sizes) >= 10
    eps = np.array([p["deepsig"]["eps_min"] for p in PAIRS])
    assert (eps == 0).any() and (eps == 1).any() and ((eps > 0.05) & (eps < 0.95)).sum() >= 5


def test_violation_ratio_with_deepsig_integration_reproduces_deepsig():
    worst = max(abs(violation_ratio(*_sides(p), integration="deepsig") - p["deepsig"]["violation_ratio"])
                for p in PAIRS)
    assert worst < 1e-12


def test_eps_min_agrees_with_deepsig_within_monte_carlo_error():
    deltas, ratios = [], []
    for pair in PAIRS:
        a, b = _sides(pair)
        s, ref = pair["settings"], pair["deepsig"]
        ours = aso(a, b, confidence=ref["level"], n_boot=N_BOOT_OURS, seed=s["seed"], integration="deepsig")
        again = [aso(a, b, confidence=ref["level"], n_boot=s["num_bootstrap_iterations"], seed=k,
                     integration="deepsig") for k in range(100, 120)]
        scale = 4 * np.sqrt(1 + s["num_bootstrap_iterations"] / N_BOOT_OURS)
        tolerance = scale * np.std([r.eps_min for r in again], ddof=1) + FLOOR
        delta = abs(ours.eps_min - ref["eps_min"])
        assert delta <= tolerance, (pair["name"], ours.eps_min, ref["eps_min"], tolerance)
        # the bootstrap spread itself (eps_min = ratio + spread * z before clipping), within its own error
        spread_tolerance = scale * np.std([r.boot_std for r in again], ddof=1) + FLOOR
        assert abs(ours.boot_std - ref["boot_std"]) <= spread_tolerance, pair["name"]
        deltas.append(delta)
        ratios.append(delta / tolerance)
    assert max(deltas) < 0.03 and max(ratios) < 1


def test_exact_integration_stays_near_deepsig_and_equals_a_fine_riemann_sum():
    for pair in PAIRS:
        a, b = _sides(pair)
        exact = violation_ratio(a, b)
        assert exact == pytest.approx(_midpoint_ratio(a, b), abs=1e-4), pair["name"]
        assert abs(exact - pair["deepsig"]["violation_ratio"]) < 0.1, pair["name"]  # deepsig's grid: up to 0.092
        ours = aso(a, b, confidence=pair["deepsig"]["level"], n_boot=5000, seed=pair["settings"]["seed"])
        assert abs(ours.eps_min - pair["deepsig"]["eps_min"]) < 0.1, pair["name"]


def test_num_comparisons_is_bonferroni_on_the_confidence_level():
    pair = next(p for p in PAIRS if p["settings"]["num_comparisons"] == 33)
    a, b = _sides(pair)
    corrected = aso(a, b, num_comparisons=33, seed=3)
    assert corrected.confidence == pytest.approx(1 - 0.05 / 33)
    assert corrected.eps_min == aso(a, b, confidence=1 - 0.05 / 33, seed=3).eps_min
    # deepsig 1.2.8 raised the level to c + (1 - c) / k instead: 0.9515 for 33 comparisons
    assert pair["deepsig"]["level"] == pytest.approx(0.95 + 0.05 / 33)


def test_aso_properties():
    rng = np.random.default_rng(5)
    a, b = rng.normal(0.3, 0.1, 7), rng.normal(0.2, 0.1, 9)
    assert violation_ratio(a, b) + violation_ratio(b, a) == pytest.approx(1.0)
    assert violation_ratio(a, a) == 0.5 and violation_ratio(np.full(4, 0.1), np.full(3, 0.1)) == 0.5
    assert violation_ratio(a + 10, b) == 0.0 and violation_ratio(a, b + 10) == 1.0
    first, second = aso(a, b, seed=11), aso(a, b, seed=11)
    assert first == second and aso(a, b, seed=12).eps_min != first.eps_min
    # eps_min < tau exactly when the p-value is below 1 - confidence; B over A from the same draws
    for tau in (0.2, 0.5, 0.8):
        r = aso(a, b, seed=11, tau=tau)
        assert (r.eps_min < tau) == (r.p_value < 0.05) and (r.eps_min_ba < tau) == (r.p_value_ba < 0.05)
    assert first.eps_min_ba == pytest.approx(min(1.0, max(0.0, 1 - first.violation_ratio + 1.6448536 *
                                                           first.boot_std)), abs=1e-6)
    # rows of a stacked call are the separate calls (the same draws of runs)
    stack_a, stack_b = rng.normal(size=(4, 5)), rng.normal(0.5, 1, size=(4, 8))
    stacked = aso(stack_a, stack_b, seed=2)
    for i in range(4):
        single = aso(stack_a[i], stack_b[i], seed=2)
        assert stacked.eps_min[i] == pytest.approx(single.eps_min, abs=1e-12)
        assert stacked.boot_std[i] == pytest.approx(single.boot_std, abs=1e-12)


@pytest.mark.parametrize("kwargs", [{"confidence": 1.0}, {"tau": 0.0}, {"n_boot": 1}, {"num_comparisons": 0},
                                    {"integration": "grid"}])
def test_aso_refuses_bad_options(kwargs):
    with pytest.raises(ValueError):
        aso([0.1, 0.2], [0.3, 0.4], **kwargs)


def test_aso_refuses_empty_or_non_finite_scores():
    for a, b in (([], [0.1]), ([0.1, np.nan], [0.2]), (np.zeros((2, 3)), np.zeros((3, 3)))):
        with pytest.raises(ValueError):
            aso(a, b)


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    return validate_predictions(synthetic_table("axb", (("base", 0.68), ("extra", 0.74), ("more", 0.8)),
                                                seeds=range(5), seed=4))


def test_aso_compare_uses_the_per_run_mcc_of_category_scores(table):
    frame = aso_compare(table, {"experiment": "base"}, {"experiment": "extra"}, n_boot=400, seed=9, adjust="none")
    scores = category_scores(table, levels=("fine", "overall", "all"))
    wide = scores.pivot_table(index="category", columns=["experiment", "seed"], values="mcc")
    expected = aso(wide.loc[frame["category"], "base"].to_numpy(), wide.loc[frame["category"], "extra"].to_numpy(),
                   n_boot=400, seed=9)
    np.testing.assert_allclose(frame["eps_min"], expected.eps_min, atol=1e-12)
    np.testing.assert_allclose(frame["eps_min_ba"], expected.eps_min_ba, atol=1e-12)
    np.testing.assert_allclose(frame["violation_ratio"], expected.violation_ratio, atol=1e-12)
    assert list(frame["category"][-2:]) == ["All examples", "Overall (mean of fine)"]
    assert (frame["dominant"] == (frame["eps_min"] < 0.5)).all()  # unadjusted: the bound against tau
    assert (frame[["runs_a", "runs_b"]] == 5).all().all()


@pytest.mark.parametrize("adjust", ["holm", "bh"])
def test_aso_compare_adjusts_over_the_categories(table, adjust):
    frame = aso_compare(table, {"experiment": "base"}, {"experiment": "more"}, n_boot=300, tau=0.3, adjust=adjust)
    family = frame["in_family"].to_numpy()
    np.testing.assert_allclose(frame.loc[family, "p_adjusted_ba"],
                               adjust_pvalues(frame.loc[family, "p_value_ba"], adjust), atol=1e-15)
    np.testing.assert_array_equal(frame.loc[~family, "p_adjusted_ba"], frame.loc[~family, "p_value_ba"])
    assert (frame["dominant_ba"] == (frame["p_adjusted_ba"] < 0.05)).all()
    assert frame["dominant_ba"].sum() <= (frame["eps_min_ba"] < 0.3).sum()


def test_aso_settings_gives_both_directions_of_each_pair(table):
    every = aso_settings(table, n_boot=200, seed=1)
    assert len(every) == 6 * 35  # 3 settings: 6 ordered pairs x (33 categories + 2 summary rows)
    pair = aso_compare(table, {"experiment": "base"}, {"experiment": "more"}, n_boot=200, seed=1)
    forward = every[(every["a_experiment"] == "base") & (every["b_experiment"] == "more")]
    back = every[(every["a_experiment"] == "more") & (every["b_experiment"] == "base")]
    np.testing.assert_array_equal(forward["eps_min"], pair["eps_min"])
    np.testing.assert_array_equal(back["eps_min"], pair["eps_min_ba"])
    np.testing.assert_array_equal(back["p_adjusted"], pair["p_adjusted_ba"])
    np.testing.assert_array_equal(back["mean_a"], pair["mean_b"])


def test_aso_compares_settings_on_different_datasets_by_shared_category():
    en = validate_predictions(synthetic_table("axb", (("base", 0.7),), seeds=range(3), seed=1))
    sv = validate_predictions(synthetic_table("swediagnostics", (("base", 0.7),), seeds=range(4), language="sv",
                                              seed=2))
    frame = aso_compare(en, None, None, n_boot=200, predictions_b=sv, by="coarse")
    assert list(frame["category"][:-1]) == list(COARSE)
    assert (frame["runs_a"] == 3).all() and (frame["runs_b"] == 4).all()
    assert {"a_language", "b_language", "a_dataset", "b_dataset"} <= set(frame.columns)


def test_run_scores_match_category_scores(table):
    arr = setting_arrays(table, {"experiment": "extra"}, by="coarse")
    names, scores, n = run_scores(arr, "mcc", "coarse")
    coarse = category_scores(table[table["experiment"] == "extra"], levels=("coarse", "all"))
    wide = coarse.pivot_table(index="category", columns="seed", values="mcc").loc[names]
    np.testing.assert_allclose(scores, wide.to_numpy(), atol=1e-12)
    counts = coarse.drop_duplicates("category").set_index("category").loc[names, "n"]
    np.testing.assert_array_equal(n, counts.to_numpy())


def test_aso_needs_two_runs_per_side(table):
    with pytest.raises(UserInputError, match="at least 2 runs"):
        aso_compare(table[table["seed"] == 0], {"experiment": "base"}, {"experiment": "extra"}, n_boot=50)
    with pytest.raises(UserInputError, match="tau"):
        aso_compare(table, {"experiment": "base"}, {"experiment": "extra"}, tau=1.5)
    with pytest.raises(UserInputError, match="at least 2"):
        aso_settings(table[table["experiment"] == "base"])
