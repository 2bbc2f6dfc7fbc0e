"""The predictions table of ``_predict``: one row per example with the run's columns, the prediction entailment
from a probability of 0.5 up, the probability kept as given, and the optional ``pretrain_seed`` column."""

import numpy as np
import pandas as pd

from diagnostics.finetune._predict import SetPredictions, prediction_table

RUN = {"experiment": "e", "language": "en", "model": "tiny", "seed": 3}


def test_one_row_per_example_with_the_runs_columns_first():
    frame = pd.DataFrame({"id": [7, 8, 9], "label": ["entailment", "not_entailment", "not_entailment"]})
    proba = np.array([0.5, 0.49, 0.9])
    table = prediction_table(RUN, "lidirus", frame, proba)
    assert list(table.columns) == ["experiment", "language", "model", "seed", "dataset", "example_id", "label",
                                   "prediction", "probability"]
    assert table["seed"].tolist() == [3, 3, 3] and set(table["dataset"]) == {"lidirus"}
    assert table["example_id"].tolist() == ["7", "8", "9"]  # ids are strings whatever the set's id type
    assert table["prediction"].tolist() == ["entailment", "not_entailment", "entailment"]
    assert table["probability"].tolist() == [0.5, 0.49, 0.9]
    assert table["label"].tolist() == ["entailment", "not_entailment", "not_entailment"]


def test_a_pretrain_seed_is_the_last_column_only_when_given():
    frame = pd.DataFrame({"id": ["a"], "label": ["entailment"]})
    assert "pretrain_seed" not in prediction_table(RUN, "axb", frame, np.array([0.2]))
    table = prediction_table(RUN, "axb", frame, np.array([0.2]), pretrain_seed=0)
    assert table.columns[-1] == "pretrain_seed" and table["pretrain_seed"].tolist() == [0]


def test_set_predictions_start_empty_and_unshared():
    a, b = SetPredictions(), SetPredictions()
    a.tables.append(pd.DataFrame())
    assert b.tables == [] and (b.records, b.seconds, b.categories) == (0, 0.0, {})
