"""The predictions table checked against the dataset it names: example ids, gold labels, per-seed example sets.

Every expectation is computed directly (a merge of the table with ``diagnostics.data.load``), not read back from
the code under test: the number of disagreeing rows, which ids disagree, which runs miss which examples.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import matthews_corrcoef

from _stats_fixtures import FLIP, synthetic_table
from diagnostics import data
from diagnostics.core.errors import UserInputError
from diagnostics.data import DataFormatError, DataRef
from diagnostics.stats import (ExampleSetWarning, category_scores, example_set_differences, read_predictions,
                               setting_ci, validate_predictions)
from diagnostics.stats import _categories as categories


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    return synthetic_table("axb", seeds=[0, 1, 2])


def disagreeing(frame: pd.DataFrame, dataset: str) -> pd.DataFrame:
    """Rows whose label differs from ``dataset``'s, by a direct merge on the ids."""
    gold = data.load(dataset)[["id", "label"]].rename(columns={"id": "example_id", "label": "gold"})
    merged = frame.merge(gold.astype(str), on="example_id", how="left")
    return merged[merged["gold"].notna() & (merged["label"] != merged["gold"])]


def reported_count(message: str) -> int:
    return int(re.search(r"found (\d+) of \d+ row\(s\)", message).group(1))


def test_inverted_labels_are_refused_with_their_count(table):
    inverted = table.assign(label=table["label"].map(FLIP))
    with pytest.raises(DataFormatError) as caught:
        validate_predictions(inverted, source="pred.parquet")
    message = str(caught.value)
    assert reported_count(message) == len(disagreeing(inverted, "axb")) == len(table)
    assert message.startswith("pred.parquet:1: expected the gold labels of dataset 'axb'")
    assert "--trust-labels" in message and "\n" not in message
    # the shown examples are real disagreements: (id, table's label, dataset's label)
    gold = data.load("axb").set_index("id")["label"]
    for example_id, ours, theirs in re.findall(r"\(id '([^']+)', table '(\w+)', dataset '(\w+)'\)", message):
        assert theirs == gold[example_id] and ours == FLIP[theirs]


def test_a_few_wrong_labels_are_counted_and_located(table, tmp_path):
    rng = np.random.default_rng(3)
    bad = table.copy()
    wrong = rng.choice(len(bad), size=17, replace=False)
    bad.loc[wrong, "label"] = bad.loc[wrong, "label"].map(FLIP)
    path = tmp_path / "pred.csv"
    bad.to_csv(path, index=False)
    with pytest.raises(DataFormatError) as caught:
        read_predictions(path)
    expected = disagreeing(bad, "axb")
    assert reported_count(str(caught.value)) == len(expected) == 17
    assert str(caught.value).startswith(f"{path}:{int(np.min(wrong)) + 2}:")  # CSV: header is line 1
    shown = re.findall(r"\(id '([^']+)'", str(caught.value))
    assert shown and set(shown) <= set(expected["example_id"])


def test_a_table_naming_the_wrong_dataset_is_refused(table):
    # AX-b's predictions (ids and labels) labelled as LiDiRus: same ids, but not the same gold labels
    mislabelled = table.assign(dataset="lidirus")
    with pytest.raises(DataFormatError, match="gold labels of dataset 'lidirus'") as caught:
        validate_predictions(mislabelled)
    expected = disagreeing(mislabelled, "lidirus")
    assert reported_count(str(caught.value)) == len(expected) > 0
    assert f"({expected['example_id'].nunique()} example(s))" in str(caught.value)


def test_trust_labels_keeps_the_tables_labels(table, tmp_path):
    inverted = table.assign(label=table["label"].map(FLIP))
    checked = validate_predictions(inverted, trust_labels=True)
    pd.testing.assert_frame_equal(checked, validate_predictions(inverted, check_ids=False))
    path = tmp_path / "pred.parquet"
    inverted.to_parquet(path)
    assert len(read_predictions(path, trust_labels=True)) == len(table)
    scores = category_scores(inverted, trust_labels=True, levels=("all",))
    for seed, row in scores.set_index("seed").iterrows():
        run = inverted[inverted["seed"] == seed]
        assert row["mcc"] == pytest.approx(matthews_corrcoef(run["label"], run["prediction"]), abs=1e-12)
    with pytest.raises(DataFormatError, match="gold labels"):
        category_scores(inverted)
    with pytest.raises(DataFormatError, match="example_id"):  # ids are still checked
        validate_predictions(inverted.assign(example_id="x" + inverted["example_id"]), trust_labels=True)


def test_ids_repeated_across_splits():
    rte = data.load("rte")  # every split: ids 0, 1, ... repeat in train, validation and (unlabelled) test
    validation = rte[rte["split"] == "validation"].head(40)
    frame = pd.DataFrame({"experiment": "x", "language": "en", "model": "m", "seed": 0, "dataset": "rte",
                          "example_id": validation["id"].astype(str).to_numpy(),
                          "label": validation["label"].to_numpy(), "prediction": "entailment"})
    assert len(validate_predictions(frame)) == 40  # each row agrees with the validation copy of its id
    labelled = rte[rte["label"].notna()].groupby("id")["label"].agg(set)
    only_one = labelled[labelled.map(len) == 1].index.intersection(frame["example_id"])
    bad = frame.copy()
    first = bad.index[bad["example_id"] == only_one[0]][0]
    bad.loc[first, "label"] = FLIP[bad.loc[first, "label"]]
    with pytest.raises(DataFormatError, match=r"found 1 of 40 row\(s\)"):
        validate_predictions(bad)


def test_the_dataset_is_loaded_once_per_name(table):
    categories._load.cache_clear()
    for _ in range(3):
        validate_predictions(table)
    assert categories._load.cache_info().misses == 1


def _user_diagnostic(path, labels):
    lines = (data.datasets_root() / "superglue_axb" / "AX-b.jsonl").read_text(encoding="utf-8").splitlines()[:6]
    import json

    records = [json.loads(line) | {"label": label} for line, label in zip(lines, labels)]
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_user_datasets_by_mapping_of_references_and_tables(tmp_path):
    labels = ["entailment", "not_entailment"] * 3
    first = _user_diagnostic(tmp_path / "a.jsonl", labels)
    frame = pd.DataFrame({"experiment": "x", "language": "fr", "model": "m", "seed": 0, "dataset": "diagnostic_fr",
                          "example_id": [str(i) for i in range(6)], "label": labels, "prediction": "entailment"})
    assert len(validate_predictions(frame, datasets={"diagnostic_fr": DataRef("diagnostic_fr", "test",
                                                                               str(first))})) == 6
    # another file (other labels) under the same name is another reference: read, not served from the cache
    second = _user_diagnostic(tmp_path / "b.jsonl", [FLIP[x] for x in labels])
    with pytest.raises(DataFormatError, match=r"dataset 'diagnostic_fr', found 6 of 6"):
        validate_predictions(frame, datasets={"diagnostic_fr": DataRef("diagnostic_fr", "test", str(second))})
    own = pd.DataFrame({"id": [str(i) for i in range(6)], "label": labels})
    assert len(validate_predictions(frame, datasets={"diagnostic_fr": own})) == 6
    unbound = frame.assign(dataset="diagnostic_de")
    with pytest.raises(DataFormatError, match="--dataset diagnostic_de=PATH"):
        validate_predictions(unbound)


# -- runs of one experiment, language and model that cover different examples ------------------------------------


def test_runs_on_different_example_sets_are_reported(table):
    part = table[~((table["seed"] == 1) & (table.index % 4 == 0)) & ~((table["seed"] == 2) & (table.index % 4 == 1))]
    counts = part.groupby("seed").size()
    union = part["example_id"].nunique()
    expected = {seed: n for seed, n in counts.items() if n < union}
    assert sorted(expected) == [1, 2]
    found = example_set_differences(part)
    assert dict(zip(found["seed"], found["n_examples"])) == expected and set(found["n_union"]) == {union}
    with pytest.warns(ExampleSetWarning) as caught:
        validate_predictions(part, source="pred.parquet")
    assert len(caught) == 1
    message = str(caught[0].message)
    assert message.startswith("pred.parquet: runs of experiment=rte, language=en, model=mbert")
    assert f"({union} in all; seed=1: {expected[1]}, seed=2: {expected[2]})" in message
    # Multi-Bootstrap needs every run on the same examples: refused as a user error
    with pytest.raises(UserInputError, match="lack predictions"), pytest.warns(ExampleSetWarning):
        setting_ci(validate_predictions(part), {"experiment": "rte"}, n_boot=10)


def test_same_sizes_but_different_examples_and_nested_seeds(table):
    a = table[(table["seed"] == 0) & (table["example_id"] != "5")]
    b = table[(table["seed"] == 1) & (table["example_id"] != "6")]
    found = example_set_differences(pd.concat([a, b]))
    assert found["seed"].tolist() == [0, 1] and set(found["n_examples"]) == {1103} and set(found["n_union"]) == {1104}
    nested = pd.concat([table.assign(pretrain_seed=0), table[table["example_id"] != "9"].assign(pretrain_seed=1)])
    found = example_set_differences(nested)
    assert found[["pretrain_seed", "seed"]].values.tolist() == [[1, 0], [1, 1], [1, 2]]
    with pytest.warns(ExampleSetWarning, match=r"pretrain_seed=1 seed=0: 1103"):
        validate_predictions(nested)


def test_complete_tables_raise_no_warning(table):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        validate_predictions(pd.concat([table, synthetic_table("lidirus", language="ru", seeds=[0, 1])]))
    assert example_set_differences(table).empty
