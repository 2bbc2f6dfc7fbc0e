"""Stability over seeds, RS corr, cross-language correlation, deltas."""

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy.stats import pearsonr

from _stats_fixtures import synthetic_table
from diagnostics.stats import (category_scores, cross_language_corr, delta_summary, deltas, mean_cross_language_corr,
                               rs_corr, rs_corr_variants, seed_correlations, stability)


@pytest.fixture(scope="module")
def scores():
    table = synthetic_table("axb", experiments=(("rte", 0.65), ("rte+sick", 0.75)), seeds=range(5))
    return category_scores(table)


def test_stability_is_mean_and_sample_std_over_seeds(scores):
    stab = stability(scores)
    row = stab[(stab["experiment"] == "rte") & (stab["category"] == "Negation")].iloc[0]
    values = scores[(scores["experiment"] == "rte") & (scores["category"] == "Negation")]["mcc"].to_numpy()
    assert row["n_seeds"] == 5
    assert row["mean"] == pytest.approx(values.mean())
    assert row["std"] == pytest.approx(np.std(values, ddof=1))


def test_seed_correlations_and_rs_corr_equal_scipy_pearsonr(scores):
    fine = scores[(scores["level"] == "fine") & (scores["experiment"] == "rte")]
    vectors = {s: g.set_index("category")["mcc"].sort_index() for s, g in fine.groupby("seed")}
    corr = seed_correlations(scores)
    corr = corr[corr["experiment"] == "rte"].set_index(["seed_a", "seed_b"])["r"]
    pairs = list(itertools.combinations(sorted(vectors), 2))
    expected = [pearsonr(vectors[a], vectors[b]).statistic for a, b in pairs]
    for (a, b), value in zip(pairs, expected):
        assert corr[(a, b)] == pytest.approx(value, abs=1e-12)
        assert corr[(b, a)] == pytest.approx(value, abs=1e-12)
    rs = rs_corr(scores).set_index("experiment")
    assert rs.loc["rte", "rs_corr"] == pytest.approx(np.mean(expected), abs=1e-12)
    assert rs.loc["rte", "n_pairs"] == 10 and rs.loc["rte", "n_categories"] == 33


def test_pairwise_pearson_on_random_vectors_equals_scipy():
    from diagnostics.stats._stability import _pairwise_pearson

    rng = np.random.default_rng(0)
    for _ in range(2000):
        n, k = rng.integers(3, 40), rng.integers(2, 6)
        matrix = rng.normal(size=(n, k)) * rng.random(k) + rng.normal(size=k)
        got = _pairwise_pearson(matrix)
        i, j = rng.choice(k, 2, replace=False)
        assert got[i, j] == pytest.approx(pearsonr(matrix[:, i], matrix[:, j]).statistic, abs=1e-10)


def test_constant_seed_vector_gives_undefined_pairs(scores):
    broken = scores.copy()
    broken.loc[(broken["seed"] == 0) & (broken["experiment"] == "rte"), "mcc"] = 0.0
    rs = rs_corr(broken).set_index("experiment")
    assert rs.loc["rte", "n_undefined"] == 4 and rs.loc["rte", "n_pairs"] == 6
    assert rs.loc["rte", "n_dropped"] == 4 and rs.loc["rte", "n_constant_seeds"] == 1
    assert rs.loc["rte+sick", "n_dropped"] == 0 and rs.loc["rte", "constant"] == "drop"
    # the six defined pairs of seeds 1-4, plus four pairs counted as 0
    defined = rs.loc["rte", "rs_corr"]
    zero = rs_corr(broken, constant="zero").set_index("experiment")
    assert zero.loc["rte", "rs_corr"] == pytest.approx(defined * 6 / 10)
    assert zero.loc["rte", "n_pairs"] == 10 and zero.loc["rte", "n_dropped"] == 0
    assert zero.loc["rte+sick", "rs_corr"] == pytest.approx(rs.loc["rte+sick", "rs_corr"])
    with pytest.raises(ValueError, match=r"seeds \[0\] have a constant per-category mcc vector"):
        rs_corr(broken, constant="error")
    rs_corr(scores, constant="error")  # nothing constant: no error
    with pytest.raises(ValueError, match="constant must be one of"):
        rs_corr(scores, constant="nan")


def test_stability_ddof_is_explicit(scores):
    values = scores[(scores["experiment"] == "rte") & (scores["category"] == "Negation")]["mcc"].to_numpy()
    for ddof in (0, 1):
        stab = stability(scores, ddof=ddof)
        row = stab[(stab["experiment"] == "rte") & (stab["category"] == "Negation")].iloc[0]
        assert row["std"] == pytest.approx(np.std(values, ddof=ddof))
    d0 = deltas(scores, {"experiment": "rte"}, {"experiment": "rte+sick"}, ddof=0)
    d1 = deltas(scores, {"experiment": "rte"}, {"experiment": "rte+sick"})
    np.testing.assert_allclose(d0["std_a"], d1["std_a"] * np.sqrt(4 / 5))  # 5 seeds
    with pytest.raises(ValueError, match="ddof must be an integer >= 0"):
        stability(scores, ddof=-1)


def test_cross_language_corr_equals_pearsonr():
    en = synthetic_table("axb", seeds=range(3), language="en", seed=1)
    ru = synthetic_table("lidirus", seeds=range(3), language="ru", seed=2)
    sc = category_scores(pd.concat([en, ru], ignore_index=True))
    out = cross_language_corr(sc).set_index(["language_a", "language_b"])
    means = stability(sc[sc["level"] == "fine"]).pivot_table(index="category", columns="language", values="mean")
    means = means.dropna()
    assert out.loc[("en", "ru"), "r"] == pytest.approx(pearsonr(means["en"], means["ru"]).statistic, abs=1e-12)
    assert out.loc[("en", "en"), "r"] == 1.0


def test_deltas_and_threshold_shares(scores):
    d = deltas(scores, {"experiment": "rte"}, {"experiment": "rte+sick"})
    stab = stability(scores).set_index(["experiment", "level", "category"])
    row = d[d["category"] == "Negation"].iloc[0]
    assert row["mcc_delta"] == pytest.approx(stab.loc[("rte+sick", "fine", "Negation"), "mean"]
                                             - stab.loc[("rte", "fine", "Negation"), "mean"])
    assert row["sigma_delta"] == pytest.approx(stab.loc[("rte+sick", "fine", "Negation"), "std"]
                                               - stab.loc[("rte", "fine", "Negation"), "std"])
    fine = d[d["level"] == "fine"]
    summary = delta_summary(d)
    assert summary["share_mcc_up"].item() == pytest.approx((fine["mcc_delta"] > 0.1).mean())
    assert summary["share_sigma_down"].item() == pytest.approx((fine["sigma_delta"] < -0.05).mean())
    strict = delta_summary(deltas(scores, {"experiment": "rte"}, {"experiment": "rte+sick"}, mcc_threshold=0.5))
    assert strict["share_mcc_up"].item() <= summary["share_mcc_up"].item()


@pytest.fixture(scope="module")
def multilingual():
    """Two experiments in three languages, each on its own bundled diagnostic set."""
    sets = [("axb", "en"), ("lidirus", "ru"), ("swediagnostics", "sv")]
    return category_scores(pd.concat([synthetic_table(name, experiments=(("rte", 0.6), ("rte+sick", 0.75)),
                                                      seeds=range(4), language=language, seed=i)
                                      for i, (name, language) in enumerate(sets)], ignore_index=True))


def test_mean_cross_language_corr_is_mean_of_pairwise_pearsonr(multilingual):
    out = mean_cross_language_corr(multilingual).set_index("experiment")
    fine = multilingual[multilingual["level"] == "fine"]
    for experiment, group in fine.groupby("experiment"):
        means = group.groupby(["category", "language"])["mcc"].mean().unstack("language").dropna()
        expected = [pearsonr(means[a], means[b]).statistic for a, b in itertools.combinations(means.columns, 2)]
        assert out.loc[experiment, "mean_r"] == pytest.approx(np.mean(expected), abs=1e-12)
        assert out.loc[experiment, "n_pairs"] == len(expected) == 3
        assert out.loc[experiment, "n_languages"] == 3


def test_pooled_threshold_shares_count_language_category_pairs(multilingual):
    d = deltas(multilingual, {"experiment": "rte"}, {"experiment": "rte+sick"}, mcc_threshold=0.25,
               sigma_threshold=-0.02)
    summary = delta_summary(d, pooled=True).set_index("language")
    assert list(summary.index) == ["en", "ru", "sv", "all"]
    assert summary.loc["all", "dataset"] == "all"
    fine = d[d["level"] == "fine"]
    groups = [(language, fine[fine["language"] == language]) for language in ("en", "ru", "sv")] + [("all", fine)]
    for language, rows in groups:
        up = rows["mcc_delta"] > 0.25
        down = rows["sigma_delta"] < -0.02
        assert summary.loc[language, "n_categories"] == len(rows)
        assert summary.loc[language, "share_mcc_up"] == pytest.approx(up.sum() / len(rows))
        assert summary.loc[language, "share_sigma_down"] == pytest.approx(down.sum() / len(rows))
        assert summary.loc[language, "share_both"] == pytest.approx((up & down).sum() / len(rows))
    per_language = delta_summary(d)
    assert per_language.equals(delta_summary(d, pooled=True).iloc[:3].reset_index(drop=True))
    with pytest.raises(ValueError, match="language"):
        delta_summary(d.drop(columns=["language"]), pooled=True)


def test_cross_language_corr_from_one_run_per_language_and_from_seed_means(multilingual):
    both = mean_cross_language_corr(multilingual, basis="both").set_index(["experiment", "basis"])
    assert set(both.index.get_level_values("basis")) == {"one run (seed 0)", "seed mean"}
    fine = multilingual[multilingual["level"] == "fine"]
    for experiment, group in fine.groupby("experiment"):
        runs = group[group["seed"] == 0].pivot(index="category", columns="language", values="mcc").dropna()
        expected = [pearsonr(runs[a], runs[b]).statistic for a, b in itertools.combinations(runs.columns, 2)]
        assert both.loc[(experiment, "one run (seed 0)"), "mean_r"] == pytest.approx(np.mean(expected), abs=1e-12)
        means = group.groupby(["category", "language"])["mcc"].mean().unstack("language").dropna()
        expected = [pearsonr(means[a], means[b]).statistic for a, b in itertools.combinations(means.columns, 2)]
        assert both.loc[(experiment, "seed mean"), "mean_r"] == pytest.approx(np.mean(expected), abs=1e-12)
    one = cross_language_corr(multilingual, basis="one_run", seed=3).set_index(["experiment", "language_a",
                                                                                "language_b"])
    runs = fine[(fine["experiment"] == "rte") & (fine["seed"] == 3)].pivot(index="category", columns="language",
                                                                           values="mcc")
    assert one.loc[("rte", "en", "sv"), "r"] == pytest.approx(pearsonr(runs["en"], runs["sv"]).statistic, abs=1e-12)
    assert set(one["basis"]) == {"one run (seed 3)"}
    with pytest.raises(ValueError, match="basis"):
        cross_language_corr(multilingual, basis="median")


def test_rs_corr_variants_side_by_side(scores):
    table = synthetic_table("axb", experiments=(("rte", 0.65),), seeds=range(4))
    table.loc[table["seed"] == 1, "prediction"] = "entailment"  # a collapsed run
    sc = category_scores(table)
    out = rs_corr_variants(sc).iloc[0]
    vectors = sc[sc["level"] == "fine"].pivot(index="category", columns="seed", values="mcc")
    defined = [pearsonr(vectors[a], vectors[b]).statistic for a, b in itertools.combinations([0, 2, 3], 2)]
    assert out["n_collapsed"] == 1 and out["n_seeds"] == 4 and out["n_pairs"] == 6 and out["n_pairs_drop"] == 3
    assert out["rs_corr_drop"] == pytest.approx(np.mean(defined), abs=1e-12)
    assert out["rs_corr_zero"] == pytest.approx(np.sum(defined) / 6, abs=1e-12)
    assert out["rs_corr_drop"] == pytest.approx(rs_corr(sc, constant="drop")["rs_corr"].item())
    assert out["rs_corr_zero"] == pytest.approx(rs_corr(sc, constant="zero")["rs_corr"].item())
