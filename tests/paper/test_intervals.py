"""Each paper number placed in an interval over our seeds (examples fixed), on hand-built stores and simulated data
whose answers are known."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as scipy_stats

from diagnostics.paper import against_paper
from diagnostics.paper._draws import Draws, SettingDraws
from diagnostics.paper._intervals import (CHI_SQUARE, DEGENERATE, JACKKNIFE, PREDICTION, T_SEEDS, prediction_interval,
                                          range_tail, row_interval, sigma_interval, t_interval)
from diagnostics.paper._samplers import RUN_VALUES, SAMPLERS
from diagnostics.stats._scores import OVERALL

from _paper_stores import Row, hand_scores, paper_row

#: Simulated stores per coverage check, and how far the coverage may be from 95 % (4 binomial sd at 2,000).
STORES, TOLERANCE = 2000, 0.02


class _View:
    """The little of a StoreView the statistics of simulated stores ask for: one experiment, en and ru."""

    ddof = 1

    def one(self, pattern):
        return "base"

    def languages(self, experiment):
        return ["en", "ru"]


def _stores(rng, n, sd=(0.1, 0.1), profile=None, categories=8) -> Draws:
    """``STORES`` simulated stores of ``n`` normal runs per language (sd per language), categories independent."""
    mean = np.zeros(categories) if profile is None else profile
    return Draws({("base", lang): SettingDraws(mean + rng.normal(0, s, (STORES, n, categories)),
                                               np.broadcast_to(np.arange(n), (STORES, n)),
                                               [f"c{k}" for k in range(categories)])
                  for lang, s in zip(("en", "ru"), sd)})


def _coverage(low, high, truth):
    return np.mean((low <= truth) & (truth <= high)), np.mean(truth < low), np.mean(truth > high)


# --- the formulas against scipy -----------------------------------------------------------------------------------

def test_t_and_chi_square_intervals_are_scipy_s():
    x = np.array([0.1, 0.25, 0.15, 0.2, 0.4, 0.05])
    n, s = len(x), x.std(ddof=1)
    expected = scipy_stats.t.interval(0.95, n - 1, loc=x.mean(), scale=s / np.sqrt(n))
    assert t_interval(x, 0.95) == pytest.approx(expected)
    low, high = sigma_interval(x, 0.95)
    assert (low, high) == pytest.approx((np.sqrt((n - 1) * s ** 2 / scipy_stats.chi2.ppf(0.975, n - 1)),
                                         np.sqrt((n - 1) * s ** 2 / scipy_stats.chi2.ppf(0.025, n - 1))))
    half = scipy_stats.t.ppf(0.975, n - 1) * s * np.sqrt(1 + 1 / n)
    assert prediction_interval(x, 0.95) == pytest.approx((x.mean() - half, x.mean() + half))
    assert np.isnan(prediction_interval([0.2], 0.95)).all() and np.isnan(t_interval([0.2])).all()
    assert range_tail(0.95, 2) == pytest.approx(0.025)
    a = range_tail(0.95, 5)
    assert (1 - a) ** 5 - a ** 5 == pytest.approx(0.95)


# --- coverage over simulated stores, n = 3, 6, 10 seeds -----------------------------------------------------------

@pytest.mark.parametrize("n", [3, 6, 10])
def test_mean_rows_cover_at_their_level(n):
    rng = np.random.default_rng(n)
    one = rng.normal(0.3, 0.1, (STORES, n))
    assert _coverage(*t_interval(one, 0.95), 0.3)[0] == pytest.approx(0.95, abs=TOLERANCE)
    # the mean over languages of seed means (Welch), through the jackknife of the row's statistic: σ 0.1 and 0.3
    draws = _stores(rng, n, sd=(0.1, 0.3))
    found = row_interval(draws, _View(), Row("mean_mcc", "base", None, "all", "c0", None, "value", 0.0), 0.95)
    assert found["interval"] == T_SEEDS
    covered, low_miss, high_miss = _coverage(found["low"], found["high"], 0.0)
    assert covered == pytest.approx(0.95, abs=TOLERANCE)
    assert low_miss == pytest.approx(0.025, abs=0.012) and high_miss == pytest.approx(0.025, abs=0.012)
    # with one language the jackknife interval of a mean is the t-interval exactly
    single = Draws({("base", "en"): draws.get("base", "en")})
    view = _View()
    view.languages = lambda experiment: ["en"]
    found = row_interval(single, view, Row("mean_mcc", "base", None, "en", "c0", None, "value", 0.0), 0.95)
    low, high = t_interval(draws.get("base", "en").column("c0"), 0.95)
    np.testing.assert_allclose(found["low"], low)
    np.testing.assert_allclose(found["high"], high)


@pytest.mark.parametrize("n", [3, 6, 10])
def test_sigma_rows_cover_at_their_level_and_are_not_biased_low(n):
    rng = np.random.default_rng(10 + n)
    covered, low_miss, high_miss = _coverage(*sigma_interval(rng.normal(0, 0.2, (STORES, n)), 0.95), 0.2)
    assert covered == pytest.approx(0.95, abs=TOLERANCE)
    # not biased low: the true σ is missed as often above the interval as below it
    assert low_miss == pytest.approx(0.025, abs=0.012) and high_miss == pytest.approx(0.025, abs=0.012)
    # the σ ranges of Table 6: smallest and largest σ over two languages, equal or far apart
    for sd in ((0.2, 0.2), (0.05, 0.3)):
        draws = _stores(rng, n, sd=sd)
        for statistic, truth in (("sigma_range_low", min(sd)), ("sigma_range_high", max(sd))):
            found = row_interval(draws, _View(), Row(statistic, "base", None, "all", "c0", None, "value", 0.0), 0.95)
            assert found["interval"] == CHI_SQUARE
            # (a smallest σ of equal σs misses high more often than low: the min moves both ends down)
            covered, _, _ = _coverage(found["low"], found["high"], truth)
            assert covered == pytest.approx(0.95, abs=TOLERANCE), (statistic, sd)


@pytest.mark.parametrize("n", [3, 6, 10])
def test_single_run_rows_cover_a_new_run(n):
    rng = np.random.default_rng(20 + n)
    runs = rng.normal(0.3, 0.1, (STORES, n + 1))
    draws = Draws({("base", "en"): SettingDraws(runs[:, :n, None], np.broadcast_to(np.arange(n), (STORES, n)),
                                                ["c0"])})
    found = row_interval(draws, _View(), Row("mcc", "base", None, "en", "c0", 0, "value", 0.0), 0.95)
    assert found["interval"] == PREDICTION
    assert _coverage(found["low"], found["high"], runs[:, n])[0] == pytest.approx(0.95, abs=TOLERANCE)


@pytest.mark.parametrize("n", [3, 6, 10])
def test_correlation_rows_cover(n):
    """Fig. 1's cross-language r of one run per language: every combination of our runs, against a new pair."""
    rng = np.random.default_rng(30 + n)
    profile = rng.normal(0, 0.3, 8)  # what the languages share
    draws, new = _stores(rng, n, (0.15, 0.15), profile), _stores(rng, 1, (0.15, 0.15), profile)
    row = Row("cross_language_corr", "base", None, "all", "overall", 0, "value", 0.3)
    found = row_interval(draws, _View(), row, 0.95)
    assert found["interval"] == PREDICTION and found["runs"].values.shape == (STORES, n * n)
    truth = RUN_VALUES["cross_language_corr"](new, _View(), row).values[:, 0]
    assert _coverage(found["low"], found["high"], truth)[0] == pytest.approx(0.95, abs=TOLERANCE)
    # mean RS corr about all seeds (jackknife t): its coverage, conservative at three seeds (97 % measured)
    row = Row("mean_rs_corr", "base", None, "all", "overall", None, "value", 0.3)
    found = row_interval(draws, _View(), row, 0.95)
    assert found["interval"] == JACKKNIFE
    truth = np.nanmean(SAMPLERS["mean_rs_corr"](_stores(rng, 2, (0.15, 0.15), profile), _View(), row))
    assert 0.93 <= _coverage(found["low"], found["high"], truth)[0] <= 0.985


# --- the store's verdicts -----------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def hand_built():
    scores = hand_scores({("en", "Conditionals"): [0.1, 0.11, 0.15, 0.16, 0.2],
                          ("en", "Negation"): [0.3, 0.1, 0.2, 0.4, 0.0],
                          ("ru", "Conditionals"): [0.2, 0.25, 0.3, 0.2, 0.25],
                          ("ru", "Restrictivity"): [0.0] * 5, ("en", "Restrictivity"): [0.0] * 5,
                          ("ru", "Negation"): [0.1, 0.12, 0.1, 0.3, 0.1]})
    return scores, against_paper(scores, n_sim=300, seed=1)


def test_mean_row_is_the_welch_interval(hand_built):
    scores, frame = hand_built
    found = paper_row(frame, "mean_mcc", "all", "overall")  # base: mean over en and ru of the seed-mean overall MCC
    overall = {lang: scores[(scores["category"] == OVERALL) & (scores["language"] == lang)].sort_values("seed")["mcc"]
               .to_numpy() for lang in ("en", "ru")}
    parts = [overall[lang].var(ddof=1) / len(overall[lang]) / 4 for lang in ("en", "ru")]
    df = sum(parts) ** 2 / sum(p ** 2 / (len(overall[lang]) - 1) for p, lang in zip(parts, ("en", "ru")))
    half = scipy_stats.t.ppf(0.975, df) * np.sqrt(sum(parts))
    estimate = np.mean([overall[lang].mean() for lang in ("en", "ru")])
    assert found["ours"] == pytest.approx(estimate) and found["interval"] == T_SEEDS
    assert (found["interval_low"], found["interval_high"]) == pytest.approx((estimate - half, estimate + half))


def test_equal_seeds_give_a_degenerate_interval_not_a_verdict(hand_built):
    _, frame = hand_built
    low = paper_row(frame, "sigma_range_low", "all", "Restrictivity")  # every seed 0 in both languages
    assert low["verdict"] == DEGENERATE and low["interval_low"] == 0 and low["interval_high"] == 0
    assert low["interval"] == CHI_SQUARE and pd.isna(low["chance_outside"])
    seed_row = paper_row(frame, "mcc", "ru", "Restrictivity", seed=1)
    assert seed_row["verdict"] == DEGENERATE and seed_row["interval_low"] == 0


def test_the_paper_s_seed_index_pairs_with_nothing(hand_built):
    _, frame = hand_built
    between = paper_row(frame, "mcc", "en", "Conditionals", seed=1)  # paper 0.13 between our 2nd and 3rd runs
    assert between["share_below"] == pytest.approx(0.4) and between["share_above"] == pytest.approx(0.6)
    for seed in (4, 5):
        assert paper_row(frame, "mcc", "en", "Conditionals", seed=seed)["interval_low"] == between["interval_low"]
    assert paper_row(frame, "mcc", "en", "Conditionals", seed=0)["verdict"] == "outside"  # 0.6, far above


# --- one row per printed number; the chance figure with its spread ------------------------------------------------
