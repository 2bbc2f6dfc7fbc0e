"""The study's tables (Tables 1, 3, 4, 5, 6; Fig. 5) against direct pandas / scipy computations on bundled
diagnostics."""

import itertools
import re

import numpy as np
import pandas as pd
import pytest
from scipy.stats import pearsonr

from _stats_fixtures import synthetic_table
from diagnostics import data
from diagnostics.stats import (average_sigma_decrease, category_scores, consistent_gains, diagnostic_table,
                               display_table, extra_data_table, feature_slug, improvement_correlation,
                               mcc_sigma_table, parse_presence_experiment, presence_experiment, presence_table,
                               seed_stability_table, sigma_table, stability)
from diagnostics.core.taxonomy import FINE

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
    # Swedish is scored on SweDiagnostics, not the study's Swedish set: its column says so
    assert list(table.columns) == ["en", "ru", "sv (SweDiagnostics)", "Average"]
    assert table.columns.name == "σ (ddof=1)"
    assert list(table.index.get_level_values("category")) == [c for c in FINE if c in expected.index]
    got = table.droplevel("coarse").rename(columns={"sv (SweDiagnostics)": "sv"})
    for language in ("en", "ru", "sv"):
        np.testing.assert_allclose(got[language], expected.loc[got.index, language], rtol=1e-12)
    np.testing.assert_allclose(got["Average"], expected.loc[got.index].mean(axis=1), rtol=1e-12)
    codes = sigma_table(stability(scores, ddof=0), setting=WITHOUT, labels=False)
    assert list(codes.columns) == ["en", "ru", "sv", "Average"] and codes.columns.name == "σ (ddof=0)"


def test_mcc_sigma_table_puts_seed_mean_mcc_beside_sigma(scores):
    table = mcc_sigma_table(scores, setting=WITHOUT, ddof=0)
    means = _seed_mean(scores, "base")
    sigmas = _fine(scores, "base").groupby(["category", "language"])["mcc"].std(ddof=0).unstack("language")
    assert list(table.columns) == [(lang, q) for lang in ("en", "ru", "sv (SweDiagnostics)", "Average")
                                   for q in ("MCC", "σ (ddof=0)")]
    got = table.droplevel("coarse")
    for language, label in (("en", "en"), ("ru", "ru"), ("sv", "sv (SweDiagnostics)")):
        np.testing.assert_allclose(got[(label, "MCC")], means.loc[got.index, language], rtol=1e-12)
        np.testing.assert_allclose(got[(label, "σ (ddof=0)")], sigmas.loc[got.index, language], rtol=1e-12)
    np.testing.assert_allclose(got[("Average", "MCC")], means.loc[got.index].mean(axis=1), rtol=1e-12)
    np.testing.assert_allclose(got[("Average", "σ (ddof=0)")], sigmas.loc[got.index].mean(axis=1), rtol=1e-12)


def _collapse(predictions, language, seeds, experiment="base"):
    """Runs that predict one class for every pair (a collapsed fine-tuning run)."""
    mask = ((predictions["language"] == language) & predictions["seed"].isin(seeds)
            & (predictions["experiment"] == experiment))
    out = predictions.copy()
    out.loc[mask, "prediction"] = "not_entailment"
    return out


def _rs_variants_direct(scores, experiment, language):
    """RS corr from scipy's pearsonr over every seed pair: undefined pairs left out, and counted as 0."""
    rows = _fine(scores, experiment)
    vectors = rows[rows["language"] == language].pivot(index="category", columns="seed", values="mcc")
    defined, all_pairs = [], []
    for a, b in itertools.combinations(vectors, 2):
        if vectors[a].nunique() == 1 or vectors[b].nunique() == 1:
            all_pairs.append(0.0)
        else:
            r = pearsonr(vectors[a], vectors[b]).statistic
            defined.append(r)
            all_pairs.append(r)
    collapsed = sum(vectors[c].nunique() == 1 for c in vectors)
    return np.mean(defined), np.mean(all_pairs), collapsed


@pytest.fixture(scope="module")
def collapsed_scores():
    table = pd.concat([synthetic_table(name, experiments=(("base", 0.65), ("extra-100", 0.75)), seeds=range(5),
                                       language=language, seed=i) for i, (name, language) in enumerate(SETS[:2])],
                      ignore_index=True)
    # English: one of five seeds collapsed; Russian: two
    return category_scores(_collapse(_collapse(table, "en", [2]), "ru", [0, 3]))


def test_seed_stability_table_means_and_both_rs_corr_readings(collapsed_scores):
    table = seed_stability_table(collapsed_scores, ddof=1).set_index(["experiment", "language"])
    for language, n_collapsed in (("en", 1), ("ru", 2)):
        row = table.loc[("base", language)]
        drop, zero, collapsed = _rs_variants_direct(collapsed_scores, "base", language)
        assert collapsed == n_collapsed == row["n_collapsed"]
        assert row["rs_corr_drop"] == pytest.approx(drop, abs=1e-12)
        assert row["rs_corr_zero"] == pytest.approx(zero, abs=1e-12)
        # 5 seeds, k collapsed: C(5-k, 2) of the 10 pairs are defined
        assert zero == pytest.approx(drop * {1: 6, 2: 3}[n_collapsed] / 10)
        assert row["mcc"] == pytest.approx(_seed_mean(collapsed_scores, "base")[language].mean())
        assert row["sigma"] == pytest.approx(_seed_sigma(collapsed_scores, "base")[language].mean())
        assert row["n_seeds"] == 5
    assert table.loc[("extra-100", "en"), "n_collapsed"] == 0
    assert table.loc[("extra-100", "en"), "rs_corr_zero"] == pytest.approx(table.loc[("extra-100", "en"),
                                                                                      "rs_corr_drop"])
    shown = display_table(seed_stability_table(collapsed_scores, ddof=0))
    assert {"MCC", "σ (ddof=0)", "RS corr (collapsed seeds dropped)", "RS corr (collapsed seeds as 0)",
            "collapsed runs"} <= set(shown.columns)
    population = seed_stability_table(collapsed_scores, ddof=0).set_index(["experiment", "language"])
    sigma0 = _fine(collapsed_scores, "base").groupby(["category", "language"])["mcc"].std(ddof=0).unstack()
    assert population.loc[("base", "ru"), "sigma"] == pytest.approx(sigma0["ru"].mean())


def test_extra_data_table_shows_both_rs_corr_readings_and_collapsed_runs(collapsed_scores):
    table = extra_data_table(collapsed_scores, WITHOUT, WITH).set_index("language")
    for language in ("en", "ru"):
        drop, zero, collapsed = _rs_variants_direct(collapsed_scores, "base", language)
        drop_with, zero_with, _ = _rs_variants_direct(collapsed_scores, "extra-100", language)
        row = table.loc[language]
        assert row["rs_corr_without"] == pytest.approx(drop, abs=1e-12)
        assert row["rs_corr_zero_without"] == pytest.approx(zero, abs=1e-12)
        assert row["rs_corr_zero_with"] == pytest.approx(zero_with, abs=1e-12)
        assert row["rs_corr_zero_diff"] == pytest.approx(zero_with - zero, abs=1e-12)
        assert (row["n_collapsed_without"], row["n_collapsed_with"]) == (collapsed, 0)
    headers = display_table(extra_data_table(collapsed_scores, WITHOUT, WITH, ddof=0)).columns
    assert {"σ without (ddof=0)", "σ with (ddof=0)", "σ with − without (ddof=0)",
            "RS corr without (collapsed seeds as 0)", "collapsed runs without"} <= set(headers)


def test_every_sigma_header_names_its_ddof(scores):
    tables = [display_table(extra_data_table(scores, WITHOUT, WITH)),
              display_table(average_sigma_decrease(scores, WITHOUT, WITH)),
              display_table(seed_stability_table(scores))]
    for table in tables:
        sigma = [c for c in table.columns if "σ" in str(c)]
        assert sigma and all("(ddof=1)" in c for c in sigma), table.columns
        assert "sv (SweDiagnostics)" in set(table["language"]) and "sv" not in set(table["language"])


def test_diagnostic_table_counts_pairs_labels_and_categories(tmp_path):
    diag = tmp_path / "fr_diag.jsonl"
    diag.write_text('{"idx": "0", "label": "not_entailment", "sentence1": "Le chat dort.", '
                    '"sentence2": "Le chat ne dort pas.", "logic": "Negation"}\n'
                    '{"idx": "1", "label": "entailment", "sentence1": "Il pleut et il vente.", '
                    '"sentence2": "Il pleut.", "logic": "Conjunction;Negation"}\n'
                    '{"idx": "2", "label": "not_entailment", "sentence1": "Paul dort.", '
                    '"sentence2": "Marie dort.", "lexical-semantics": "Named entities"}\n', encoding="utf-8")
    fr = data.load("diagnostic_format", path=diag, language="fr")
    sets = [data.load("axb"), data.load("swediagnostics"), fr]
    table = diagnostic_table(sets)
    assert list(table.columns) == ["en", "sv (SweDiagnostics)", "fr"]
    for name, frame in zip(table.columns, sets):
        column = table[name]
        assert column[("pairs", "pairs")] == len(frame)
        assert column[("label share", "entailment")] == pytest.approx((frame["label"] == "entailment").mean())
        counts = frame["features"].explode().value_counts()
        for category in FINE:
            coarse = table.xs(category, level="row").index[0]
            assert column[(coarse, category)] == counts.get(category, 0)
    assert table["fr"].loc[("label share", "not_entailment")] == pytest.approx(2 / 3)
    assert len(table) == 3 + len(FINE)


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
