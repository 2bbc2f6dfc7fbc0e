"""The registry: names, checksums against the manifests, user files in a registered format."""

import pytest

from diagnostics import data


def test_checksum_failure_is_reported(tmp_path, monkeypatch):
    copy = tmp_path / "datasets"
    for spec_folder in ("lidirus",):
        (copy / spec_folder).mkdir(parents=True)
        for f in (data.datasets_root() / spec_folder).iterdir():
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


def test_available_lists_required_names():
    table = data.available()
    assert {"rte", "terra", "axb", "lidirus", "swediagnostics", "sick", "mnli"} <= set(table["name"])
    assert table.set_index("name").loc["lidirus", "language"] == "ru"


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
