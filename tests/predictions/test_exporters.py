"""A predictions table written in other tools' formats: columns (ids or texts, label codes), lm-evaluation-harness
samples, Trainer.predict logits whose softmax is the probability and whose arg-max is the prediction."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy.special import softmax

from diagnostics import data
from diagnostics.core.errors import UserInputError
from diagnostics.predictions import to_columns, to_lm_eval, to_trainer
from diagnostics.stats import validate_predictions

from _stats_fixtures import synthetic_table


@pytest.fixture(scope="module")
def table():
    frame = synthetic_table("lidirus", (("base", 0.75),), seeds=[0, 1], language="ru", seed=0, model="m")
    p = np.random.default_rng(0).uniform(0.0, 0.5, len(frame))
    frame["probability"] = np.where(frame["prediction"] == "entailment", 1.0 - p, p)
    frame.loc[frame.index[:2], ["probability", "prediction"]] = [[0.5, "not_entailment"], [0.5, "entailment"]]  # ties
    return validate_predictions(frame)


def test_columns_with_ids_or_texts_and_a_label_map(table, tmp_path):
    written = pd.read_csv(to_columns(table, tmp_path / "p.csv", label_map="1=entailment,0=not_entailment"))
    assert written.columns.tolist() == ["id", "label", "prediction", "seed", "probability"]  # nothing varies but seed
    assert written["id"].astype(str).tolist() == table["example_id"].tolist()
    assert written["prediction"].tolist() == (table["prediction"] == "entailment").astype(int).tolist()
    texts = pd.read_csv(to_columns(table, tmp_path / "t.csv", text=True, run_column="run", probability=False))
    known = data.load("lidirus").set_index("id")
    assert texts["premise"].tolist() == known.loc[table["example_id"], "premise"].tolist()
    assert "probability" not in texts and texts["run"].tolist() == table["seed"].tolist()
    with pytest.raises(UserInputError, match="no value for not_entailment"):
        to_columns(table, tmp_path / "x.csv", label_map="1=entailment")
    with pytest.raises(ValueError, match="export one dataset at a time"):
        to_columns(pd.concat([table, table.assign(dataset="axb")]), tmp_path / "x.csv")


def test_trainer_logits_give_back_the_probability_and_the_prediction(table, tmp_path):
    paths = to_trainer(table, tmp_path, fmt="npz")
    assert [p.name for p in paths] == ["predictions_seed0.npz", "predictions_seed1.npz"]
    order = data.load("lidirus")["id"].tolist()
    for seed, path in enumerate(paths):
        run = table[table["seed"] == seed].set_index("example_id").loc[order]
        saved = np.load(path)
        logits, label_ids = saved["predictions"], saved["label_ids"]
        np.testing.assert_allclose(softmax(logits, axis=1)[:, 1], run["probability"], atol=1e-12)
        assert (np.where(logits.argmax(axis=1) == 1, "entailment", "not_entailment") == run["prediction"]).all()
        assert (label_ids == (run["label"] == "entailment")).all()
    with pytest.raises(ValueError, match="fmt must be npy, npz or json"):
        to_trainer(table, tmp_path, fmt="csv")
    with pytest.raises(ValueError, match="1103 of 1104 examples"):
        to_trainer(table.iloc[1:], tmp_path)
    with pytest.raises(ValueError, match="has no probability column"):
        to_trainer(table.drop(columns="probability"), tmp_path)


def test_lm_eval_samples_one_file_per_run_in_the_harness_layout(table, tmp_path):
    part = table.groupby("seed").head(100)  # the ties at the top included
    paths = to_lm_eval(part, tmp_path, task="lidirus_tf")
    assert [p.name for p in paths] == ["samples_lidirus_tf_seed0.jsonl", "samples_lidirus_tf_seed1.jsonl"]
    records = [json.loads(line) for line in paths[0].read_text(encoding="utf-8").splitlines()]
    run = part[part["seed"] == 0]
    assert len(records) == len(run)
    for record, row in zip(records, run.itertuples()):
        assert record["doc"]["idx"] == int(row.example_id)
        chosen = [flag for _, flag in record["filtered_resps"]]
        assert chosen == [row.prediction == "entailment", row.prediction != "entailment"]  # " True" comes first
        assert record["acc"] == float(row.prediction == row.label)
    without = to_lm_eval(part.drop(columns="probability"), tmp_path / "gen", with_ids=False)
    first = json.loads(without[0].read_text(encoding="utf-8").splitlines()[0])
    assert "idx" not in first["doc"] and first["resps"] == [[run["prediction"].iat[0]]]
