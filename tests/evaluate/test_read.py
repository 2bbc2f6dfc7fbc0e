"""``diagnostics.evaluate._read`` (``read_evaluations``): a store written by ``diagnostics evaluate`` read back for
the statistics and notebook 12 — which checkpoint became which seed, the label rule applied (as one line), the
predictions, and the sets as they were scored; a store without a finished evaluation is refused."""

from __future__ import annotations

import shutil

import pandas as pd
import pytest

from _nli_heads import PAIRS, classifier, write_pairs

from diagnostics.core.errors import UserInputError
from diagnostics.data import DataRef
from diagnostics.evaluate import evaluate_models, read_evaluations, slice_by_feature
from diagnostics.evaluate._read import _rule_text
from diagnostics.stats import category_scores

KEYS = ["experiment", "language", "model", "seed", "example_id"]


@pytest.mark.slow  # four evaluations and a spaCy pipeline
def test_a_store_reads_back_as_it_was_evaluated(tiny_model_dir, tmp_path):
    pairs = write_pairs(tmp_path / "pairs.jsonl")
    three = [classifier(tiny_model_dir, tmp_path / "ckpt" / f"seed{s}", ["contradiction", "neutral", "entailment"],
                        seed=s) for s in (13, 14)]
    two = classifier(tiny_model_dir, tmp_path / "other", ["not_entailment", "entailment"], seed=3)
    store = tmp_path / "store"
    first = evaluate_models([str(m) for m in three], [f"rte_en={pairs}"], out=store, experiment="a", name="nli",
                            seed_pattern=r"seed(\d+)", progress=False)
    second = evaluate_models([str(two)], [f"rte_en={pairs}"], out=store, experiment="b", progress=False)
    assert first.datasets == {"rte_en": DataRef("rte_en", "test", str(pairs))} == second.datasets

    read = read_evaluations(store)
    runs = read.runs.sort_values(["experiment", "seed"]).reset_index(drop=True)
    assert runs[["experiment", "model", "seed", "state"]].values.tolist() == [
        ["a", "nli", 13, "done"], ["a", "nli", 14, "done"], ["b", "other", 0, "done"]]
    assert runs["model_given"].tolist() == [str(m) for m in three] + [str(two)]
    assert runs.loc[0, "label_rule"] == ("0=contradiction -> not_entailment, 1=neutral -> not_entailment, "
                                         "2=entailment -> entailment")
    assert runs.loc[2, "label_rule"] == "0=not_entailment -> not_entailment, 1=entailment -> entailment"
    assert set(runs["sets"]) == {"rte_en:test"} and (runs["rows"] == len(PAIRS)).all()
    expected = pd.concat([first.predictions, second.predictions]).sort_values(KEYS).reset_index(drop=True)
    pd.testing.assert_frame_equal(read.predictions.sort_values(KEYS).reset_index(drop=True), expected,
                                  check_dtype=False)
    # the user's file comes with the runs: the statistics find it without being told
    assert read.datasets == {"rte_en": DataRef("rte_en", "test", str(pairs))}
    scores = category_scores(read.predictions, read.datasets, levels=("all",))
    assert (scores["n"] == len(PAIRS)).all() and len(scores) == 3
    slices = slice_by_feature(read.predictions[read.predictions["experiment"] == "a"], read.datasets,
                              cache_dir=tmp_path / "annotations")
    assert len(slices.table) and (slices.table["n_with"] + slices.table["n_without"] == len(PAIRS)).all()
    assert (slices.table["n_seeds"] == 2).all()

    only = read_evaluations(store, "b")
    assert only.runs["experiment"].tolist() == ["b"] and len(only.predictions) == len(PAIRS)

    # the same set name from another file in a third experiment: read together they would mix two sets
    moved = shutil.copyfile(pairs, tmp_path / "moved.jsonl")
    evaluate_models([str(two)], [f"rte_en={moved}"], out=store, experiment="c", progress=False)
    with pytest.raises(UserInputError, match="rte_en was scored as"):
        read_evaluations(store)
    assert read_evaluations(store, ["c"]).datasets["rte_en"].path == str(moved)


def test_a_store_without_evaluations_names_the_command_that_makes_one(tmp_path):
    with pytest.raises(UserInputError, match="holds no finished evaluation.*diagnostics evaluate"):
        read_evaluations(tmp_path / "nothing")
    (tmp_path / "store" / "a" / "en" / "m" / "seed=0").mkdir(parents=True)  # a run that never finished
    with pytest.raises(UserInputError, match=r"no finished evaluation \(experiments a\)"):
        read_evaluations(tmp_path / "store", "a")


def test_a_finished_trained_run_of_the_store_is_not_read_as_an_evaluation(tmp_path):
    run = tmp_path / "store" / "trained" / "en" / "m" / "seed=0"
    run.mkdir(parents=True)
    (run / "config.json").write_text('{"run": {}, "sweep": {}}')  # finished, but no evaluation record
    (run / "DONE").write_text("{}")
    with pytest.raises(UserInputError, match="holds no finished evaluation"):
        read_evaluations(tmp_path / "store")


def test_the_recorded_label_rule_reads_as_one_line():
    assert _rule_text({"0=LABEL_0": "not_entailment", "1=LABEL_1": "entailment"}) == \
        "0=LABEL_0 -> not_entailment, 1=LABEL_1 -> entailment"
    assert _rule_text("written by hand") == "written by hand"
