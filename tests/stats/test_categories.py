"""The categories of a dataset's examples: tables loaded once per reference (again when a user file changes), the
indicator matrix of fine or coarse categories, and which table scores which rows."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from diagnostics import data
from diagnostics.core.taxonomy import COARSE_OF
from diagnostics.data import DataRef
from diagnostics.stats._categories import category_matrix, dataset_for, dataset_frame, dataset_frames


def test_the_indicator_matrix_marks_each_examples_fine_or_coarse_categories():
    axb = data.load("axb")
    names, matrix = category_matrix("axb")
    assert matrix.shape == (len(axb), len(names)) and matrix.any(axis=0).all()  # only categories that occur
    for i in (0, 17, 500):
        assert {n for n, on in zip(names, matrix[i]) if on} == set(axb["features"][i])
    coarse_names, coarse = category_matrix("axb", "coarse")
    assert {n for n, on in zip(coarse_names, coarse[17]) if on} == {COARSE_OF[f] for f in axb["features"][17]}
    sub_names, sub = category_matrix("axb", ids=np.array(["17", "0"]))  # rows in the order of the ids
    assert [{n for n, on in zip(sub_names, row) if on} for row in sub] == [set(axb["features"][i]) for i in (17, 0)]
    with pytest.raises(KeyError, match=r"example ids not in the dataset: \['nope'\]"):
        category_matrix("axb", ids=np.array(["0", "nope"]))


def test_a_user_file_reloads_when_it_changes(tmp_path):
    path = tmp_path / "fr.jsonl"
    record = {"idx": 0, "label": "entailment", "sentence1": "a", "sentence2": "b", "logic": "Negation"}
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    ref = DataRef("diagnostic_format", None, str(path), "fr")
    first = dataset_frame(ref)
    assert first["features"].tolist() == [["Negation"]] and dataset_frame(ref) is first  # read once
    path.write_text(json.dumps({**record, "logic": "Conjunction"}) + "\n" + json.dumps({**record, "idx": 1}) + "\n",
                    encoding="utf-8")
    again = dataset_frame(ref)
    assert again["features"].tolist() == [["Conjunction"], ["Negation"]]
    table = pd.DataFrame({"id": ["x"], "features": [["Negation"]]})
    assert dataset_frame(table) is table
    with pytest.raises(ValueError, match="a dataset table needs an 'id' column"):
        dataset_frame(table.drop(columns="id"))


def test_which_table_scores_which_rows():
    table = pd.DataFrame({"id": ["0"], "features": [["Negation"]]})
    assert dataset_for(None, "axb") == "axb" and dataset_for(table, "axb") is table
    assert dataset_for({"axb": table}, "axb") is table and dataset_for({"axb": table}, "lidirus") == "lidirus"
    predictions = pd.DataFrame({"dataset": ["axb", "lidirus", "axb"]})
    assert dataset_frames(predictions, None) is None
    assert set(dataset_frames(predictions, table)) == {"axb", "lidirus"}
    frames = dataset_frames(predictions, {"axb": table, "lidirus": "lidirus"})
    assert frames["axb"] is table and len(frames["lidirus"]) == 1104
