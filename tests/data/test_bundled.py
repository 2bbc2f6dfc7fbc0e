"""Bundled datasets load with the row and category counts stated in their PROVENANCE.md files."""

import re

import pandas as pd
import pytest

from diagnostics import data
from diagnostics.core.taxonomy import COARSE, FINE
from diagnostics.data import category_counts, compare_diagnostics, dataset_statistics, words

ROOT = data.datasets_root()


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


def _provenance_counts(folder: str) -> dict[str, int]:
    """Parse 'Name 123' pairs from the fine-grained section of a PROVENANCE.md."""
    text = (ROOT / folder / "PROVENANCE.md").read_text(encoding="utf-8")
    section = text.split("## Fine-grained categories")[1].split("\n## ")[0]
    counts = {}
    for line in section.splitlines():
        if ":" not in line:
            continue
        for item in line.split(":", 1)[1].split(","):
            match = re.match(r"\s*(.+?)\s+(\d+)\s*$", item)
            if match:
                counts[match.group(1)] = int(match.group(2))
    return counts


@pytest.mark.parametrize("name, folder", [("axb", "glue_diagnostic"), ("lidirus", "lidirus")])
def test_category_counts_match_provenance(name, folder):
    expected = _provenance_counts(folder)
    assert set(expected) == set(FINE)
    got = category_counts(data.load(name)).set_index("category")["n"].to_dict()
    assert got == expected


def test_diagnostics_share_tags_except_documented_differences():
    axb, axb_sg, lidirus, swe = (data.load(n) for n in ("axb", "axb_superglue", "lidirus", "swediagnostics"))
    assert list(axb["id"]) == [str(i) for i in range(1104)] == list(lidirus["id"]) == list(swe["id"])
    assert (axb["features"] == axb_sg["features"]).all()
    assert (axb["features"] == swe["features"]).all()
    assert (axb["label3"] == swe["label3"]).all()
    differences = compare_diagnostics()
    assert differences[["dataset", "id", "field"]].values.tolist() == [
        ["lidirus", "233", "label"], ["lidirus", "832", "missing categories"]]
    assert differences["reference"].tolist() == ["entailment", ["Redundancy"]]


def test_every_feature_is_canonical_and_coarse_is_consistent():
    frame = data.load("lidirus")
    for features, coarse in zip(frame["features"], frame["coarse"]):
        assert set(features) <= set(FINE)
        assert set(coarse) <= set(COARSE)
    untagged = frame.index[frame["features"].map(len) == 0].tolist()
    assert untagged == [430, 431]


def test_checksum_failure_is_reported(tmp_path, monkeypatch):
    copy = tmp_path / "datasets"
    for spec_folder in ("lidirus",):
        (copy / spec_folder).mkdir(parents=True)
        for f in (ROOT / spec_folder).iterdir():
            (copy / spec_folder / f.name).write_bytes(f.read_bytes())
    target = copy / "lidirus" / "LiDiRus.jsonl"
    target.write_bytes(target.read_bytes().replace("пиццу".encode(), "пиццы".encode(), 1))
    monkeypatch.setenv("DIAGNOSTICS_DATASETS", str(copy))
    with pytest.raises(data.DataFormatError, match="sha256"):
        data.load("lidirus")


def test_manifests_cover_every_bundled_file():
    for spec in data.REGISTRY.values():
        if spec.folder is None:
            continue
        manifest = data.manifest(spec)
        assert {"source", "commit", "license", "files"} <= set(manifest)
        assert set(spec.splits.values()) <= set(manifest["files"])


def test_normalise_quotes_is_opt_in_and_keeps_raw():
    raw = data.load("terra", "train")
    norm = data.load("terra", "train", normalise_quotes=True)
    assert raw["premise"].str.contains('""', regex=False).sum() > 700
    assert not norm["premise"].str.contains('""', regex=False).any()
    assert (norm["premise_raw"] == raw["premise"]).all()
    changed = norm["premise"] != raw["premise"]
    assert changed.sum() == raw["premise"].str.contains('""', regex=False).sum()


def test_available_lists_required_names():
    table = data.available()
    assert {"rte", "terra", "axb", "lidirus", "swediagnostics", "sick", "mnli"} <= set(table["name"])
    assert table.set_index("name").loc["lidirus", "language"] == "ru"


def test_to_hf_gives_dataset_dict():
    dd = data.to_hf("rte")
    assert set(dd) == {"train", "validation", "test"}
    assert dd["validation"].num_rows == 277
    assert dd["train"][0]["label"] in ("entailment", "not_entailment")


def test_user_translation_loads_by_path(tmp_path):
    path = tmp_path / "fr.jsonl"
    path.write_text('{"premise": "Le chat dort.", "hypothesis": "Un animal dort.", "label": "entailment", "idx": 0}\n'
                    '{"premise": "Il pleut.", "hypothesis": "Il ne pleut pas.", "label": "not_entailment", "idx": 1}\n',
                    encoding="utf-8")
    frame = data.load("rte_format", path=path, language="fr")
    assert list(frame["language"]) == ["fr", "fr"] and list(frame["label"]) == ["entailment", "not_entailment"]
    diag = tmp_path / "fr_diag.jsonl"
    diag.write_text('{"idx": "0", "label": "not_entailment", "sentence1": "Le chat dort.", '
                    '"sentence2": "Le chat ne dort pas.", "logic": "Negation"}\n', encoding="utf-8")
    assert data.load("diagnostic_format", path=diag, language="fr")["features"].tolist() == [["Negation"]]


def test_mnli_formats(tmp_path):
    jsonl = tmp_path / "mnli.jsonl"
    jsonl.write_text('{"gold_label": "neutral", "sentence1": "A b.", "sentence2": "C d.", "pairID": "1n", "genre": "fiction"}\n'
                     '{"gold_label": "entailment", "sentence1": "A b.", "sentence2": "A.", "pairID": "1e", "genre": "fiction"}\n',
                     encoding="utf-8")
    frame = data.load("mnli", path=jsonl)
    assert frame["label"].tolist() == ["not_entailment", "entailment"]
    assert frame["label3"].tolist() == ["neutral", "entailment"]
    tsv = tmp_path / "train.tsv"
    tsv.write_text("index\tpromptID\tpairID\tgenre\tsentence1\tsentence2\tgold_label\n"
                   "0\t1\t1c\tgov\tX is.\tX is not.\tcontradiction\n", encoding="utf-8")
    assert data.load("mnli", path=tsv)["label"].tolist() == ["not_entailment"]
    with pytest.raises(FileNotFoundError, match="path="):
        data.load("mnli")


def test_words_are_lower_cased_runs_of_unicode_word_characters():
    assert words("Don't stop-gap, Кошка СИДЕЛА; på 3_rd") == ["don", "t", "stop", "gap", "кошка", "сидела", "på",
                                                               "3_rd"]


def test_dataset_statistics_equal_direct_counts():
    frames = {"rte validation": data.load("rte", "validation"), "lidirus": data.load("lidirus"),
              "swediagnostics": data.load("swediagnostics")}
    table = dataset_statistics(frames)
    assert list(table.index) == list(frames)
    for name, frame in frames.items():
        premise, hypothesis = frame["premise"].str.lower(), frame["hypothesis"].str.lower()
        vocabulary = pd.concat([premise, hypothesis]).str.findall(r"\w+").explode().dropna().nunique()
        mean_words = (premise.str.count(r"\w+") + hypothesis.str.count(r"\w+")).mean()
        row = table.loc[name]
        assert row["size"] == len(frame)
        assert row["vocabulary"] == vocabulary
        assert row["mean_words"] == pytest.approx(mean_words)
        assert row["language"] == frame["language"].iloc[0]
