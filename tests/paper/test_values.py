"""``diagnostics.paper._values``: our value of each statistic the reference study prints — per-seed and overall
MCCs as sklearn computes them, claims over seeds, σ ranges over languages, counts of the public sets and the probing
statistics — through ``against_paper`` on synthetic predictions, and a few statistics on scores written by hand."""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import matthews_corrcoef

from diagnostics import data
from diagnostics.paper import against_paper
from diagnostics.paper._compare import ANSWER_COLUMNS, RESULT_COLUMNS
from diagnostics.paper._values import STATISTICS
from diagnostics.paper._view import NotRun, StoreView
from diagnostics.probe import STUDY_FEATURES_NAME
from diagnostics.stats import category_scores

from _paper_stores import SECTION_COUNTS, Row, hand_scores, paper_row, probe_rows, six_seed_predictions


@pytest.fixture(scope="module")
def predictions():
    """Six seeds of en (AX-b) and ru (LiDiRus) base runs, each copying the gold label with probability 0.7."""
    return six_seed_predictions()


@pytest.fixture(scope="module")
def scores(predictions):
    """The predictions' category scores (the probing rows need no example draws)."""
    return category_scores(predictions, {"axb": "axb", "lidirus": "lidirus"})


@pytest.fixture(scope="module")
def compared(predictions):
    return against_paper(predictions, dataset={"axb": "axb", "lidirus": "lidirus"}, n_sim=100)


@functools.cache
def _diagnostic(language):
    return data.load("axb" if language == "en" else "lidirus")


def _sklearn_mcc(predictions, language, seed, category):
    dataset = _diagnostic(language)
    ids = set(dataset.loc[dataset["features"].map(lambda f: category in f), "id"].astype(str))
    rows = predictions[(predictions["language"] == language) & (predictions["seed"] == seed)
                       & predictions["example_id"].isin(ids)]
    return matthews_corrcoef(rows["label"], rows["prediction"])


def test_our_values_are_sklearn_mccs(predictions, compared):
    assert list(compared.columns) == RESULT_COLUMNS and len(compared) == sum(SECTION_COUNTS.values())
    assert RESULT_COLUMNS[:len(ANSWER_COLUMNS)] == ANSWER_COLUMNS  # the answer first
    for language, category, seed in (("en", "Conditionals", 0), ("en", "Conditionals", 4), ("ru", "Datives", 0),
                                      ("ru", "Restrictivity", 1), ("en", "Nominalization", 3)):
        row = paper_row(compared, "mcc", language, category, seed)
        per_seed = np.array([_sklearn_mcc(predictions, language, s, category) for s in range(6)])
        assert row["ours"] == pytest.approx(per_seed.mean())  # a single run of the paper among all our seeds
        assert row["sigma"] == pytest.approx(np.std(per_seed, ddof=1))
        assert row["share_below"] == pytest.approx((per_seed < row["paper"]).mean())
        assert row["share_above"] == pytest.approx((per_seed > row["paper"]).mean())
        inside = row["interval_low"] <= row["paper"] <= row["interval_high"]
        assert row["verdict"] == ("inside" if inside else "outside") and row["interval"] == "prediction over seeds"
        assert row["status"] == "compared" and row["n_seeds"] == 6


def test_overall_mcc_is_the_mean_of_the_category_mccs(predictions, compared):
    dataset = data.load("axb")
    categories = sorted({f for features in dataset["features"] for f in features})
    expected = np.mean([[_sklearn_mcc(predictions, "en", s, c) for c in categories] for s in range(6)])
    assert paper_row(compared, "mcc", "en", "overall", 0)["ours"] == pytest.approx(expected)


def test_claims_and_ranges(predictions, compared):
    per_seed = [_sklearn_mcc(predictions, "en", s, "Core args") for s in range(6)]
    claim = paper_row(compared, "all_seeds_positive", "en", "Core args")
    assert claim["ours"] == float(all(m > 0 for m in per_seed))
    assert claim["as_printed"] == (claim["ours"] == 1.0) and claim["verdict"].startswith("no interval: a claim")
    assert claim["verdict"].endswith("ours agrees" if claim["as_printed"] else "ours disagrees")
    sigmas = {lang: np.std([_sklearn_mcc(predictions, lang, s, "Datives") for s in range(6)], ddof=1)
              for lang in ("en", "ru")}
    assert paper_row(compared, "sigma_range_low", "all", "Datives")["ours"] == pytest.approx(min(sigmas.values()))
    high = paper_row(compared, "sigma_range_high", "all", "Datives")
    assert high["ours"] == pytest.approx(max(sigmas.values()))
    assert high["interval"] == "chi-square over seeds" and high["verdict"] in ("inside", "outside")
    assert high["interval_low"] < high["ours"] < high["interval_high"] and 0 < high["chance_outside"] < 1


def test_data_rows_count_the_public_sets(compared):
    assert paper_row(compared, "n_pairs", "en", "overall")["ours"] == 1104
    share = paper_row(compared, "entailment_share", "ru", "overall")
    assert share["ours"] == pytest.approx((data.load("lidirus")["label"] == "entailment").mean())
    assert share["as_printed"]  # 0.42 as printed (0.4167 rounds to it)
    assert share["verdict"] == "no interval: a count; same as printed"
    assert not paper_row(compared, "n_pairs", "en", "Universal")["as_printed"]  # the paper's 14 against the public 18


def test_probing_rows_from_a_probe_table(scores):
    rows = []
    for language, tuned_ls in (("en", 0.70), ("ru", 0.60)):  # fine-tuning helps Lexical Semantics in en, not in ru
        for model, seed in [("pretrained", None)] + [(f"seed={k}", k) for k in range(6)]:
            rows += probe_rows(language, model, seed, "logic", 3, 0.8)  # best in a lower layer
            rows += probe_rows(language, model, seed, "lexical_semantics", 10,
                                0.65 if seed is None else tuned_ls, majority=0.64)
            rows += probe_rows(language, model, seed, "predicate_argument_structure", 11, 0.75)  # 0.15 over chance
    probes = pd.DataFrame(rows).assign(feature_list=STUDY_FEATURES_NAME)
    compared = against_paper(scores, probes=probes, n_sim=20)
    probing = compared[compared["section"] == "§5.4 probing"]
    assert (probing["status"] == "compared").all()
    ours = {(r.statistic, r.language, r.category): r.ours for r in probing.itertuples()}
    assert ours[("design_probe_tasks", "all", "overall")] == 3
    assert ours[("design_probed_finetuned_models", "all", "overall")] == 6
    # every probe's accuracy, by hand: 7 models x 2 languages x 13 layers per task
    by_hand = {"logic": (0.8 + 12 * 0.75) / 13, "predicate_argument_structure": (0.75 + 12 * 0.70) / 13,
               "lexical_semantics": np.mean([(a + 12 * (a - 0.05)) / 13 for a in [0.65, 0.70, 0.70, 0.70, 0.70, 0.70,
                                                                                    0.70, 0.65, 0.6, 0.6, 0.6, 0.6,
                                                                                    0.6, 0.6]])}
    assert ours[("probe_accuracy", "all", "overall")] == pytest.approx(np.mean(list(by_hand.values())))
    assert ours[("best_in_lower_layers", "all", "Logic")] == 1
    # best layer over the majority class: en 0.01 and 6 x 0.06, ru 0.01 and 6 x -0.04 -> 0.01 on average
    assert ours[("near_or_below_chance", "all", "Lexical Semantics")] == 1
    assert ours[("near_or_below_chance", "all", "Predicate-Argument Structure")] == 0  # 0.15 over chance
    assert ours[("finetuning_helps_probe", "en", "Lexical Semantics")] == 1
    assert ours[("finetuning_helps_probe", "ru", "Lexical Semantics")] == 0
    agree = {(r.statistic, r.category): r.as_printed for r in probing.itertuples() if r.language == "all"}
    assert agree[("best_in_lower_layers", "Logic")] and agree[("near_or_below_chance", "Lexical Semantics")]
    assert not agree[("near_or_below_chance", "Predicate-Argument Structure")]
    accuracy = paper_row(probing, "probe_accuracy", "all", "overall")
    assert accuracy["verdict"].startswith("no interval: a probe is one fit") and pd.isna(accuracy["interval_low"])
    # a probe table of another model of the store gives this one no probing row
    other = against_paper(scores, probes=probes.assign(run_model="another"), n_sim=20)
    assert (other.loc[other["section"] == "§5.4 probing", "status"] == "not computed").all()


# --- statistics on scores by hand ---------------------------------------------------------------------------------


def _row(statistic, language, category, experiment="base"):
    return Row(statistic, experiment, None, language, category, None, "value", 0.0)


def test_claims_over_seeds_count_the_signs_of_each_run():
    view = StoreView(hand_scores({("en", "a"): [0.1, -0.2, -0.3], ("en", "b"): [0.1, 0.2, 0.3]}))
    assert STATISTICS["all_seeds_positive"](view, _row("all_seeds_positive", "en", "a"))[0] == 0.0
    positive, sigma = STATISTICS["all_seeds_positive"](view, _row("all_seeds_positive", "en", "b"))
    assert positive == 1.0 and sigma == pytest.approx(0.1)  # σ of 0.1, 0.2, 0.3
    assert STATISTICS["mostly_negative"](view, _row("mostly_negative", "en", "a"))[0] == 1.0  # 2 of 3 below 0
    assert STATISTICS["mostly_negative"](view, _row("mostly_negative", "en", "b"))[0] == 0.0


def test_a_sigma_range_spans_the_languages_sigmas():
    view = StoreView(hand_scores({("en", "Datives"): [0.1, 0.3, 0.5], ("ru", "Datives"): [0.2, 0.2, 0.5]}))
    # σ (ddof 1): en 0.2; ru sqrt((0.01 + 0.01 + 0.04) / 2) = sqrt(0.03)
    assert STATISTICS["sigma_range_low"](view, _row("sigma_range_low", "all", "Datives"))[0] == \
        pytest.approx(0.03 ** 0.5)
    assert STATISTICS["sigma_range_high"](view, _row("sigma_range_high", "all", "Datives"))[0] == pytest.approx(0.2)


def test_a_statistic_across_languages_is_not_run_with_one_language():
    view = StoreView(hand_scores({("en", "a"): [0.1, 0.5], ("en", "b"): [0.4, 0.1]}))
    with pytest.raises(NotRun, match="two languages"):
        STATISTICS["cross_language_corr"](view, _row("cross_language_corr", "all", "overall"))
    with pytest.raises(NotRun, match="no extra-1000 runs"):
        STATISTICS["mcc"](view, _row("mcc", "en", "a", experiment="extra-1000"))
