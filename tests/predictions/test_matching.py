"""Imported rows placed on a dataset's examples by id, by their texts (exact, then punctuation ignored) or by
position, each unplaced row given the reason the import report lists."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from diagnostics import data
from diagnostics.core.errors import UserInputError
from diagnostics.predictions._matching import LOOSE, LOOSE_ID, match_rows
from diagnostics.predictions._text import match_key


@pytest.fixture(scope="module")
def lidirus():
    """A part of LiDiRus that holds a text pair twice (examples 492 and 493)."""
    return data.load("lidirus").iloc[400:600].reset_index(drop=True)


def _rows(**columns):
    frame = pd.DataFrame(columns)
    n = len(frame)
    return frame.assign(prediction="entailment", seed=0, file="f.csv", _line=np.arange(2, n + 2),
                        _implicit_position=False)


def test_by_id_with_texts_checked(lidirus):
    first, second = lidirus.iloc[0], lidirus.iloc[1]
    rows = _rows(id=[first.id, second.id, "no-such-id", first.id],
                 premise=[first.premise, second.premise.replace(".", ""), first.premise, second.premise],
                 hypothesis=[first.hypothesis, second.hypothesis, first.hypothesis, second.hypothesis])
    assert match_rows(rows, lidirus, "lidirus", "auto", lidirus["id"].to_numpy()) == "id"
    assert rows["example_id"].tolist()[:2] == [first.id, second.id]
    assert rows["matched_by"].tolist()[:2] == ["id", LOOSE_ID]  # the texts agree once punctuation is ignored
    assert rows["reason"].tolist()[2:] == ["unknown id", "text differs from the dataset's"]


def test_by_text_in_order_and_with_punctuation_ignored(lidirus):
    keys = pd.Series([match_key(p, h) for p, h in zip(lidirus.premise, lidirus.hypothesis)])
    repeated = keys[keys.duplicated(keep=False)].iloc[0]  # a text pair the dataset holds twice
    ids = lidirus["id"][keys == repeated].tolist()
    premise, hypothesis = repeated.split("\t")
    other = lidirus.iloc[5]
    rows = _rows(premise=[premise, premise, premise, "\u201c" + other.premise.rstrip(".") + "\u201d",
                          "Nothing like it.", other.premise],
                 hypothesis=[hypothesis, hypothesis, hypothesis, other.hypothesis, "Nor this.",
                             "A hypothesis of no example."])
    assert match_rows(rows, lidirus, "lidirus", "auto", lidirus["id"].to_numpy()) == "text"
    assert rows["example_id"].tolist()[:2] == ids[:2] and rows["matched_by"].iat[0] == "text (in order)"
    assert rows["reason"].iat[2] == "duplicate" and len(ids) == 2
    assert other.premise.endswith(".")  # the row lost the period and gained quotes: the second tier places it
    assert (rows["example_id"].iat[3], rows["matched_by"].iat[3]) == (other.id, LOOSE)
    assert rows["reason"].tolist()[4:] == ["no example with these texts"] * 2
    assert rows["detail"].tolist()[4:] == ["neither text found", "premise found, hypothesis differs"]
    # the nearest of the examples that share its premise
    assert rows["closest_id"].iat[5] in set(lidirus.loc[lidirus["premise"] == other.premise, "id"])
    assert pd.isna(rows["closest_id"].iat[4])  # nothing close to "Nothing like it."


def test_by_position_and_what_cannot_be_placed(lidirus):
    order = lidirus["id"].to_numpy()
    rows = _rows(position=[0, 3, 1.5, -1, len(order), 3])
    assert match_rows(rows, lidirus, "lidirus", "position", order) == "position"
    assert rows["example_id"].tolist()[:2] == [order[0], order[3]]
    assert rows["reason"].tolist()[2:] == ["no position", "no position", "position beyond the dataset", "duplicate"]
    assert rows["detail"].iat[5] == f"another row of the run has example {order[3]} (f.csv:3)"


def test_rows_without_a_label_or_of_another_dataset_and_no_way_to_match(lidirus):
    rows = _rows(id=lidirus["id"][:3].tolist(), dataset=["lidirus", "axb", "lidirus"])
    rows["prediction"] = ["entailment", "entailment", None]
    rows["prediction_raw"] = ["entailment", "entailment", "maybe"]
    match_rows(rows, lidirus, "lidirus", "auto", lidirus["id"].to_numpy())
    assert rows["reason"].tolist() == [None, "row of another dataset", "prediction is no label"]
    assert rows["detail"].iat[2] == "value 'maybe' (map it with --label-map)"
    with pytest.raises(UserInputError, match="the files have no example id, no premise and hypothesis"):
        match_rows(_rows(x=[1]), lidirus, "lidirus", "auto", lidirus["id"].to_numpy())
    with pytest.raises(UserInputError, match="match by text: the files have no premise / hypothesis column"):
        match_rows(_rows(id=["0"]), lidirus, "lidirus", "text", lidirus["id"].to_numpy())
