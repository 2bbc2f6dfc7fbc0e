"""Bundled datasets load with the row and category counts stated in their PROVENANCE.md files."""

import pytest

from diagnostics import data
from diagnostics.core.taxonomy import COARSE, FINE

@pytest.mark.parametrize(
    "name, counts",
    [
        ("rte", {"train": 2490, "validation": 277, "test": 3000}),
        ("terra", {"train": 2616, "validation": 307, "test": 3198}),
        ("axb", {"test": 1104}),
        ("axb_superglue", {"test": 1104}),
        ("lidirus", {"test": 1104}),
        ("swediagnostics", {"test": 1104}),
        ("sick", {"train": 4439, "trial": 495, "test": 4906}),
    ],
)
def test_row_counts_match_provenance(name, counts):
    frame = data.load(name)
    assert frame.groupby("split").size().to_dict() == counts
    assert {"id", "premise", "hypothesis", "label", "language", "dataset", "split"} <= set(frame.columns)
    assert not frame.duplicated(["split", "id"]).any()


@pytest.mark.parametrize(
    "name, split, balance",
    [
        ("rte", "train", {"entailment": 1249, "not_entailment": 1241}),
        ("rte", "validation", {"entailment": 146, "not_entailment": 131}),
        ("terra", "train", {"entailment": 1359, "not_entailment": 1257}),
        ("terra", "validation", {"entailment": 153, "not_entailment": 154}),
        ("axb", "test", {"entailment": 460, "not_entailment": 644}),
        ("lidirus", "test", {"entailment": 459, "not_entailment": 645}),
        ("swediagnostics", "test", {"entailment": 460, "not_entailment": 644}),
    ],
)
def test_label_balance_matches_provenance(name, split, balance):
    assert data.load(name, split)["label"].value_counts().to_dict() == balance


def test_three_way_labels_kept():
    assert data.load("axb")["label3"].value_counts().to_dict() == {"entailment": 460, "neutral": 386, "contradiction": 258}
    sick = data.load("sick")
    assert sick["label3"].value_counts().to_dict() == {"neutral": 5595, "entailment": 2821, "contradiction": 1424}
    assert (sick["label"] == "entailment").sum() == 2821


@pytest.mark.parametrize("name", ["rte", "terra"])
def test_unlabelled_test_split_has_missing_labels(name):
    test = data.load(name, "test")
    assert test["label"].isna().all()


def test_every_feature_is_canonical_and_coarse_is_consistent():
    frame = data.load("lidirus")
    for features, coarse in zip(frame["features"], frame["coarse"]):
        assert set(features) <= set(FINE)
        assert set(coarse) <= set(COARSE)
    untagged = frame.index[frame["features"].map(len) == 0].tolist()
    assert untagged == [430, 431]
