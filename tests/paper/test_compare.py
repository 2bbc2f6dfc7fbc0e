"""A run store's numbers beside the reference study's: the rows the store cannot give, and which of its runs are
comparable with the study's (our value of each statistic is tested in test_values.py)."""

from __future__ import annotations

import pandas as pd
import pytest

from diagnostics.core.io_utils import write_json_atomic
from diagnostics.finetune import SweepConfig, list_runs, run_dir
from diagnostics.paper import against_paper, paper_verdict
from diagnostics.paper._settings import probe_reason, run_settings
from diagnostics.probe import STUDY_FEATURES_NAME
from diagnostics.stats import category_scores

from _paper_stores import STUDY_RUN, paper_row, probe_rows, six_seed_predictions


# --- against_paper on synthetic predictions ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def predictions():
    """Six seeds of en (AX-b) and ru (LiDiRus) base runs, each copying the gold label with probability 0.7."""
    return six_seed_predictions()


@pytest.fixture(scope="module")
def scores(predictions):
    """The predictions' category scores: the comparability tests need no example draws."""
    return category_scores(predictions, {"axb": "axb", "lidirus": "lidirus"})


@pytest.fixture(scope="module")
def compared(predictions):
    return against_paper(predictions, dataset={"axb": "axb", "lidirus": "lidirus"}, n_sim=100)


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
                rows += probe_rows(language, model, seed, task, 3, 0.7)
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
