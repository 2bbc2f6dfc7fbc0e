"""The pipeline's inputs: --data keys and files, overrides, the record in pipeline.json read back."""

from __future__ import annotations

import json

import pytest


def test_the_diagnostic_key_has_one_spelling_and_old_records_still_read(tmp_path):
    from diagnostics.finetune import LANGUAGE_DATA_KEYS
    from diagnostics.pipeline._inputs import LANGUAGE_KEYS, check_data_key, load_inputs

    assert LANGUAGE_KEYS is LANGUAGE_DATA_KEYS and "diagnostics" in LANGUAGE_KEYS
    check_data_key("fr.diagnostics")
    with pytest.raises(ValueError, match=r"did you mean 'fr.diagnostics'"):
        check_data_key("fr.diagnostic")
    (tmp_path / "pipeline.json").write_text(json.dumps({"data": {"fr.diagnostic": "d.jsonl"}, "overrides": []}))
    assert load_inputs(tmp_path).language_files("fr") == {"diagnostics": "d.jsonl"}


def test_data_items_parse_to_keys_and_paths_and_bad_ones_are_named():
    from diagnostics.core.errors import UserInputError
    from diagnostics.pipeline._inputs import data_keys, parse_data

    assert parse_data([" mnli = /data/train.tsv", "fr.train=fr/a.jsonl", "fr.train=fr/b.jsonl"]) == \
        {"mnli": "/data/train.tsv", "fr.train": "fr/b.jsonl"}  # stripped; the later item wins
    assert {"mnli", "fr.train", "fr.validation", "fr.diagnostics"} <= set(data_keys())
    for item in ("mnli", "=x", "mnli= "):
        with pytest.raises(UserInputError, match=rf"--data {item}: expected KEY=PATH"):
            parse_data([item])
    with pytest.raises(UserInputError, match="fr.trian"):
        parse_data(["fr.trian=x"])


def test_inputs_merge_resolve_split_and_round_trip_through_pipeline_json(tmp_path, monkeypatch):
    from diagnostics.pipeline._inputs import PipelineInputs, load_inputs, load_substitutions
    from diagnostics.pipeline._scales import ScaleSpec

    config = PipelineInputs.from_mapping({"data": {"fr.train": "fr/train.jsonl", "mnli": "m.tsv"},
                                          "set": {"n_boot": 50, "lr": 2e-5}}, "pipeline.yaml",
                                         origins={"n_boot": "pipeline.yaml:4"})
    assert config.overrides == ["n_boot=50", "lr=2e-05"] and config.where("n_boot=50") == "pipeline.yaml:4"
    line = PipelineInputs({"fr.diagnostics": "fr/d.jsonl", "mnli": "other.tsv"}, ["n_boot=60"])
    both = config.merged(line)
    assert both.data == {"fr.train": "fr/train.jsonl", "mnli": "other.tsv", "fr.diagnostics": "fr/d.jsonl"}
    assert both.overrides == ["n_boot=50", "lr=2e-05", "n_boot=60"] and both.where("n_boot=60") == "--set n_boot=60"
    assert both.languages() == ["fr"]
    assert both.language_files("fr") == {"train": "fr/train.jsonl", "diagnostics": "fr/d.jsonl"}
    assert both.spec_overrides(ScaleSpec()) == {"n_boot": 60} and both.sweep_overrides(ScaleSpec()) == ["lr=2e-05"]
    monkeypatch.chdir(tmp_path)
    resolved = both.resolved()
    assert resolved.data["mnli"] == str(tmp_path / "other.tsv") and both.data["mnli"] == "other.tsv"
    substitutes = {"sv": [{"dataset": "swediagnostics", "role": "diagnostic"}]}
    resolved.save(tmp_path / "runs", substitutes)
    assert load_inputs(tmp_path / "runs") == resolved and load_substitutions(tmp_path / "runs") == substitutes
    assert load_inputs(tmp_path / "none") is None and load_substitutions(tmp_path / "none") == {}
    assert PipelineInputs(**resolved.to_dict()) == resolved
