"""The study's tables (Tables 4, 5, 6; Fig. 5) against direct pandas / scipy computations on bundled diagnostics."""

import itertools
import re

import numpy as np
import pandas as pd
import pytest
from scipy.stats import pearsonr

from _stats_fixtures import synthetic_table
from diagnostics.stats import (average_sigma_decrease, category_scores, consistent_gains, extra_data_table,
                               feature_slug, improvement_correlation, parse_presence_experiment, presence_experiment,
                               presence_table, sigma_table, stability)
from diagnostics.taxonomy import FINE

SETS = [("axb", "en"), ("lidirus", "ru"), ("swediagnostics", "sv")]
WITHOUT, WITH = {"experiment": "base"}, {"experiment": "extra-100"}


def _scores(experiments, sets=SETS, seeds=range(4)):
    return category_scores(pd.concat([synthetic_table(name, experiments=experiments, seeds=seeds, language=language,
                                                      seed=i) for i, (name, language) in enumerate(sets)],
                                     ignore_index=True))


@pytest.fixture(scope="module")
def scores():
    return _scores((("base", 0.6), ("extra-100", 0.75)))


def _fine(scores, experiment):
    return scores[(scores["level"] == "fine") & (scores["experiment"] == experiment)]


def _seed_mean(scores, experiment):
    """category x language seed-mean MCC."""
    return _fine(scores, experiment).groupby(["category", "language"])["mcc"].mean().unstack("language")


def _seed_sigma(scores, experiment):
    return _fine(scores, experiment).groupby(["category", "language"])["mcc"].std(ddof=1).unstack("language")


def _rs_corr(scores, experiment, language):
    rows = _fine(scores, experiment)
    vectors = rows[rows["language"] == language].pivot(index="category", columns="seed", values="mcc")
    return np.mean([pearsonr(vectors[a], vectors[b]).statistic for a, b in itertools.combinations(vectors, 2)])


def test_sigma_table_is_std_over_seeds_with_language_average(scores):
    table = sigma_table(stability(scores), setting=WITHOUT)
    expected = _seed_sigma(scores, "base")
    assert list(table.columns) == ["en", "ru", "sv", "Average"]
    assert list(table.index.get_level_values("category")) == [c for c in FINE if c in expected.index]
    got = table.droplevel("coarse")
    for language in ("en", "ru", "sv"):
        np.testing.assert_allclose(got[language], expected.loc[got.index, language], rtol=1e-12)
    np.testing.assert_allclose(got["Average"], expected.loc[got.index].mean(axis=1), rtol=1e-12)


def test_extra_data_table_equals_direct_means_and_rs_corr(scores):
    table = extra_data_table(scores, WITHOUT, WITH).set_index("language")
    for language in ("en", "ru", "sv"):
        row = table.loc[language]
        for name, frame in (("mcc", _seed_mean), ("sigma", _seed_sigma)):
            without, with_ = frame(scores, "base")[language].mean(), frame(scores, "extra-100")[language].mean()
            assert row[f"{name}_without"] == pytest.approx(without)
            assert row[f"{name}_with"] == pytest.approx(with_)
            assert row[f"{name}_diff"] == pytest.approx(with_ - without)
        without, with_ = _rs_corr(scores, "base", language), _rs_corr(scores, "extra-100", language)
        assert row["rs_corr_without"] == pytest.approx(without, abs=1e-12)
        assert row["rs_corr_with"] == pytest.approx(with_, abs=1e-12)
        assert row["rs_corr_diff"] == pytest.approx(with_ - without, abs=1e-12)
        assert row["n_categories"] == _seed_mean(scores, "base")[language].notna().sum()


def test_consistent_gains_are_the_categories_rising_in_every_language(scores):
    rise = _seed_mean(scores, "extra-100") - _seed_mean(scores, "base")
    threshold = rise.min(axis=1).median()
    gains = consistent_gains(scores, WITHOUT, WITH, threshold=threshold).droplevel("coarse")
    expected = rise[(rise > threshold).all(axis=1)]
    assert 0 < len(expected) < len(rise)
    assert set(gains.index) == set(expected.index)
    np.testing.assert_allclose(gains.to_numpy(), expected.loc[gains.index, list(gains.columns)].to_numpy())
    assert consistent_gains(scores, WITHOUT, WITH, threshold=rise.max().max()).empty


def test_average_sigma_decrease_per_language_and_pooled(scores):
    decrease = _seed_sigma(scores, "base") - _seed_sigma(scores, "extra-100")
    out = average_sigma_decrease(scores, WITHOUT, WITH).set_index("language")
    assert list(out.index) == ["en", "ru", "sv", "all"]
    for language in ("en", "ru", "sv"):
        assert out.loc[language, "sigma_decrease"] == pytest.approx(decrease[language].mean())
        assert out.loc[language, "n_categories"] == decrease[language].notna().sum()
    pooled = decrease.stack().dropna()
    assert out.loc["all", "sigma_decrease"] == pytest.approx(pooled.mean())
    assert out.loc["all", "n_categories"] == len(pooled)


def test_improvement_correlation_equals_pearsonr(scores):
    rise = _seed_mean(scores, "extra-100") - _seed_mean(scores, "base")
    for a, b in (("en", "ru"), ("ru", "sv")):
        both = rise[[a, b]].dropna()
        expected = pearsonr(both[a], both[b]).statistic
        assert improvement_correlation(scores, WITHOUT, WITH, languages=(a, b)) == pytest.approx(expected, abs=1e-12)
    with pytest.raises(ValueError, match="fr"):
        improvement_correlation(scores, WITHOUT, WITH, languages=("en", "fr"))


def test_feature_slugs_and_presence_names_round_trip():
    for name in FINE:
        assert feature_slug(name) == re.sub(r"[^0-9a-z]", "_", name.lower())
        assert feature_slug(feature_slug(name)) == feature_slug(name)
        for share in (0.25, 0.5, 1.0, 1e-05):
            experiment = presence_experiment(name, share)
            assert experiment == f"presence-{feature_slug(name)}-{share:g}"
            assert parse_presence_experiment(experiment) == (feature_slug(name), share)
    for bad in ("presence-0.25", "presence-negation-", "presence-negation-x", "base", "presence-Negation-0.5"):
        with pytest.raises(ValueError, match="presence"):
            parse_presence_experiment(bad)


@pytest.fixture(scope="module")
def presence_scores():
    experiments = (("base", 0.6), ("presence-negation-0.25", 0.65), ("presence-negation-0.75", 0.75),
                   ("presence-anaphora_coreference-0.5", 0.7))
    return _scores(experiments, sets=SETS[:2], seeds=range(3))


def _presence_expected(scores, experiment, language, category):
    rows = _fine(scores, experiment)
    values = rows[(rows["language"] == language) & (rows["category"] == category)]["mcc"]
    return values.mean(), values.std(ddof=1), _rs_corr(scores, experiment, language)


def test_presence_table_per_language_and_share(presence_scores):
    table = presence_table(presence_scores, "Negation")
    assert table[["language", "share"]].values.tolist() == [["en", 0.25], ["en", 0.75], ["ru", 0.25], ["ru", 0.75]]
    for row in table.itertuples():
        mcc, sigma, rs = _presence_expected(presence_scores, row.experiment, row.language, "Negation")
        assert (row.mcc, row.sigma, row.rs_corr) == pytest.approx((mcc, sigma, rs), abs=1e-12)
        assert row.category == "Negation" and row.n_seeds == 3
    other = presence_table(presence_scores, "anaphora_coreference")
    assert set(other["experiment"]) == {"presence-anaphora_coreference-0.5"}
    assert set(other["category"]) == {"Anaphora/Coreference"}


def test_presence_table_with_explicit_mapping_adds_a_reference(presence_scores):
    mapping = {"base": ("Negation", 0.0), "presence-negation-0.75": ("negation", 0.75),
               "presence-anaphora_coreference-0.5": ("Anaphora/Coreference", 0.5)}
    table = presence_table(presence_scores, "negation", experiments=mapping)
    assert table[["language", "share"]].values.tolist() == [["en", 0.0], ["en", 0.75], ["ru", 0.0], ["ru", 0.75]]
    base = table[(table["experiment"] == "base") & (table["language"] == "ru")].iloc[0]
    expected = _presence_expected(presence_scores, "base", "ru", "Negation")
    assert (base["mcc"], base["sigma"], base["rs_corr"]) == pytest.approx(expected, abs=1e-12)
    with pytest.raises(ValueError, match="Datives"):
        presence_table(presence_scores, "Datives")
