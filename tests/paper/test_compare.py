"""A run store's numbers beside the reference study's, and which of its runs are comparable with the study's."""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import matthews_corrcoef

from diagnostics import data
from diagnostics.core.io_utils import write_json_atomic
from diagnostics.finetune import SweepConfig, list_runs, run_dir
from diagnostics.paper import against_paper, paper_verdict
from diagnostics.paper._compare import ANSWER_COLUMNS, RESULT_COLUMNS
from diagnostics.paper._settings import probe_reason, run_settings
from diagnostics.probe import STUDY_FEATURES_NAME
from diagnostics.stats import category_scores

from _paper_stores import SECTION_COUNTS, STUDY_RUN, paper_row
from _stats_fixtures import synthetic_table



# --- the data file -------------------------------------------------------------------------------------------------

# --- against_paper on synthetic predictions ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def predictions():
    """Six seeds of en (AX-b) and ru (LiDiRus) base runs, each copying the gold label with probability 0.7."""
    return pd.concat([synthetic_table("axb", (("base", 0.7),), range(6), "en", seed=1, model="m"),
                      synthetic_table("lidirus", (("base", 0.7),), range(6), "ru", seed=2, model="m")],
                     ignore_index=True)


@functools.cache
def _diagnostic(language):
    return data.load("axb" if language == "en" else "lidirus")


def _sklearn_mcc(predictions, language, seed, category):
    dataset = _diagnostic(language)
    ids = set(dataset.loc[dataset["features"].map(lambda f: category in f), "id"].astype(str))
    rows = predictions[(predictions["language"] == language) & (predictions["seed"] == seed)
                       & predictions["example_id"].isin(ids)]
    return matthews_corrcoef(rows["label"], rows["prediction"])


@pytest.fixture(scope="module")
def scores(predictions):
    """The predictions' category scores: the comparability tests need no example draws."""
    return category_scores(predictions, {"axb": "axb", "lidirus": "lidirus"})


@pytest.fixture(scope="module")
def compared(predictions):
    return against_paper(predictions, dataset={"axb": "axb", "lidirus": "lidirus"}, n_sim=100)


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


def test_rows_the_store_cannot_give(compared, scores):
    assert (compared.loc[compared["language"].isin(["fr", "de", "sv"]), "status"] == "not run").all()
    extra = compared[compared["experiment"] == "extra-374000"]
    assert (extra["status"] == "not run").all()
    assert extra["verdict"].str.startswith("no interval: not run here (no extra-374000 runs").all()
    probing = compared[compared["section"] == "§5.4 probing"]
    assert (probing["status"] == "not computed").all() and probing["ours"].isna().all()
    not_compared = compared[compared["status"] != "compared"]
    assert not_compared["comparable"].isna().all() and not_compared["why_not_comparable"].isna().all()
    assert not_compared["interval_low"].isna().all()
    # from scores instead of predictions: the label shares need the predictions; the intervals are the same
    from_scores = against_paper(scores, n_sim=20)
    assert paper_row(from_scores, "entailment_share", "en", "overall")["status"] == "not computed"
    assert paper_row(from_scores, "mcc", "en", "Conditionals", 0)["ours"] == \
        paper_row(compared, "mcc", "en", "Conditionals", 0)["ours"]
    low = ["interval_low", "interval_high", "verdict"]  # examples are fixed: the scores give the same intervals
    assert paper_row(from_scores, "sigma_range_low", "all", "Datives")[low].tolist() == \
        paper_row(compared, "sigma_range_low", "all", "Datives")[low].tolist()


def _probe_rows(language, model, seed, task, best_layer, best, majority=0.6):
    """13 layers of one probe: accuracy ``best`` at ``best_layer``, 0.05 lower elsewhere."""
    return [{"language": language, "model": model, "seed": seed, "task": task, "layer": layer, "majority": majority,
             "accuracy": best if layer == best_layer else best - 0.05} for layer in range(13)]


def test_probing_rows_from_a_probe_table(scores):
    rows = []
    for language, tuned_ls in (("en", 0.70), ("ru", 0.60)):  # fine-tuning helps Lexical Semantics in en, not in ru
        for model, seed in [("pretrained", None)] + [(f"seed={k}", k) for k in range(6)]:
            rows += _probe_rows(language, model, seed, "logic", 3, 0.8)  # best in a lower layer
            rows += _probe_rows(language, model, seed, "lexical_semantics", 10,
                                0.65 if seed is None else tuned_ls, majority=0.64)
            rows += _probe_rows(language, model, seed, "predicate_argument_structure", 11, 0.75)  # 0.15 over chance
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


# --- comparability from the run store's configs --------------------------------------------------------------------

def _store(tmp_path, table, model, recorded=None, **sweep):
    """Write each run's config.json where and as the run store writes it; return the configs read back.

    ``recorded`` holds the sweep's ``val_schedule`` and ``classifier_head``; without it the configs lack them, as
    those of a store written before they were recorded.
    """
    config = SweepConfig(models=[model], **{k: v for k, v in sweep.items() if k != "recipe"}).to_dict()
    if "recipe" in sweep:
        config["recipe"] = sweep["recipe"]
    for key in STUDY_RUN:
        config.pop(key, None)
    config.update(recorded or {})
    for (experiment, language, seed), _ in table.groupby(["experiment", "language", "seed"]):
        path = run_dir(tmp_path, experiment, language, model, seed)
        path.mkdir(parents=True)
        write_json_atomic(path / "config.json", {
            "run": {"experiment": experiment, "language": language, "model": model, "seed": int(seed),
                    "pretrain_seed": None, "run_hash": "0" * 16},
            "sweep": {**config, "experiment": experiment, "languages": [language]}})
    return [run.config() for run in list_runs(tmp_path)]


def _mbert_store(tmp_path, table, recorded=STUDY_RUN):
    table = table.assign(model="bert-base-multilingual-cased")
    return table, _store(tmp_path, table, "bert-base-multilingual-cased", recorded, batch_size=4, lr=1e-5,
                         recipe="jiant")


def test_embedded_model_with_the_demo_recipe_is_not_comparable(tmp_path, scores):
    table = scores.assign(model="embedded")
    configs = _store(tmp_path, table, "embedded", batch_size=16, lr=1e-4, train_top_k_layers=2)
    result = against_paper(table, configs, n_sim=20)
    reasons = "embedded model, demo recipe, classifier head not recorded"  # no jiant schedule to read
    assert paper_verdict(result) == f"not comparable: {reasons}"
    compared = result[result["status"] == "compared"]
    assert not compared["comparable"].any() and (compared["why_not_comparable"] == reasons).all()
    assert run_settings(configs)["n_seeds"].tolist() == [6, 6]
    assert result["val_schedule"].isna().all()


def test_mbert_with_the_jiant_recipe_is_comparable(tmp_path, scores):
    table, configs = _mbert_store(tmp_path, scores)
    result = against_paper(table, configs, n_sim=20)
    compared = result[result["status"] == "compared"]
    assert compared["comparable"].all() and compared["why_not_comparable"].isna().all()
    verdict = paper_verdict(result)
    assert verdict.startswith(f"comparable: {len(compared)} numbers")
    placed = compared[compared["verdict"].isin(["inside", "outside"])]
    assert f"{(placed['verdict'] == 'outside').sum()} of {len(placed)} lie outside our 95% interval" in verdict
    setting = paper_row(result, "setting_batch_size", "all", "overall")
    assert setting["ours"] == 4 and setting["as_printed"]
    assert (compared["val_schedule"] == "russiansuperglue").all()
    assert (compared["mixture_order"] == "train_first").all()  # the default order, as each config records it


@pytest.mark.parametrize(("recorded", "reasons"), [
    ({}, "classifier head not recorded"),
    ({"val_schedule": "russiansuperglue", "classifier_head": "transformers"},
     "transformers classifier head instead of jiant's"),
])
def test_the_head_must_be_jiant_s(tmp_path, scores, recorded, reasons):
    table, configs = _mbert_store(tmp_path, scores, recorded)
    result = against_paper(table, configs, n_sim=20)
    assert paper_verdict(result) == f"not comparable: {reasons}"
    compared = result[result["status"] == "compared"]
    assert (compared["why_not_comparable"] == reasons).all()
    assert compared["val_schedule"].isna().all() if not recorded else \
        (compared["val_schedule"] == recorded["val_schedule"]).all()


@pytest.mark.parametrize("recorded", [{"val_schedule": "per_epoch", "classifier_head": "jiant"},
                                      {"val_schedule": "jiant_superglue", "mixture_order": "shuffled",
                                       "classifier_head": "jiant"}])
def test_what_the_paper_leaves_open_is_named_per_row_not_refused(tmp_path, scores, recorded):
    table, configs = _mbert_store(tmp_path, scores, recorded)
    result = against_paper(table, configs, n_sim=20)
    compared = result[result["status"] == "compared"]
    assert compared["comparable"].all() and paper_verdict(result).startswith("comparable:")
    assert (compared["val_schedule"] == recorded["val_schedule"]).all()
    assert (compared["mixture_order"] == recorded.get("mixture_order", "train_first")).all()


def _probe_table(feature_list=STUDY_FEATURES_NAME):
    rows = []
    for language in ("en", "ru"):
        for model, seed in [("pretrained", None)] + [(f"seed={k}", k) for k in range(6)]:
            for task in ("logic", "lexical_semantics", "predicate_argument_structure"):
                rows += _probe_rows(language, model, seed, task, 3, 0.7)
    table = pd.DataFrame(rows)
    return table if feature_list is None else table.assign(feature_list=feature_list)


@pytest.mark.parametrize("feature_list", [STUDY_FEATURES_NAME, "fifteen-features", None])
def test_probing_rows_need_the_study_s_feature_list(tmp_path, scores, feature_list):
    table, configs = _mbert_store(tmp_path, scores)
    result = against_paper(table, configs, probes=_probe_table(feature_list), n_sim=20)
    probing = result[(result["section"] == "§5.4 probing") & (result["status"] == "compared")]
    assert len(probing) == 8
    if feature_list == STUDY_FEATURES_NAME:
        assert probing["comparable"].all() and probing["why_not_comparable"].isna().all()
    else:  # another list, or results written before the list was recorded
        assert not probing["comparable"].any()
        assert (probing["why_not_comparable"] == "probing feature list not the study's").all()
    others = result[(result["section"] != "§5.4 probing") & (result["status"] == "compared")]
    assert others["comparable"].all()
    assert probe_reason(None) is None


def test_missing_recipe_key_reads_as_epoch(tmp_path, scores):
    table, configs = _mbert_store(tmp_path, scores)
    for config in configs:
        config["sweep"].pop("recipe", None)
    assert run_settings(configs)["recipe"].eq("epoch").all()
    assert paper_verdict(against_paper(table, configs, n_sim=20)) == "not comparable: epoch recipe"
