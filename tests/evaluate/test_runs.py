"""``diagnostics.evaluate._runs``: an evaluation's run folder — the part of its record that decides its predictions
(:func:`evaluation_key`), the record read back from a finished run only, and the one writer that stores an
evaluation as a run of the store, ``DONE`` last."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from diagnostics.evaluate._runs import KEY_FIELDS, evaluation_key, stored_evaluation, write_evaluation_run

RECORD = {"model": "nli", "model_given": "/models/nli", "fingerprint": "abc", "datasets": ("rte_en:test",),
          "label_rule": {"0=entailment": "entailment", "1=not_entailment": "not_entailment"}, "max_length": 128,
          "truncation": "pair", "precision": "fp32", "revision": None}


def _write(path, evaluation=RECORD, rows=3):
    predictions = pd.DataFrame({"example_id": [str(i) for i in range(rows)], "probability": [0.2, 0.7, 0.9][:rows]})
    write_evaluation_run(path, run={"experiment": "evaluated", "seed": 0}, sweep={"model": "nli"},
                         evaluation=evaluation, metrics={"inference_s": 1.5}, predictions=predictions, device="cpu",
                         autocast="none")


def test_the_key_keeps_the_fields_that_decide_the_predictions_as_json_reads_them():
    key = evaluation_key(RECORD)
    assert list(key) == list(KEY_FIELDS)
    assert "model_given" not in key and "revision" not in key  # where the model came from does not decide them
    assert key["datasets"] == ["rte_en:test"]  # a tuple as a stored config.json gives it back
    assert key == evaluation_key(json.loads(json.dumps(RECORD)))
    assert evaluation_key({"fingerprint": "abc"}) == {"fingerprint": "abc"} | dict.fromkeys(KEY_FIELDS[1:])


def test_another_label_rule_or_precision_is_another_key():
    assert evaluation_key(RECORD | {"precision": "bf16"}) != evaluation_key(RECORD)
    assert evaluation_key(RECORD | {"label_rule": {"0=entailment": "not_entailment"}}) != evaluation_key(RECORD)
    assert evaluation_key(RECORD | {"model_given": "elsewhere"}) == evaluation_key(RECORD)


def test_a_written_evaluation_is_a_finished_run_whose_record_reads_back(tmp_path):
    from diagnostics.finetune._store import RUN_FILES

    path = tmp_path / "evaluated" / "en" / "nli" / "seed=0"
    _write(path)
    assert all((path / name).is_file() for name in RUN_FILES)
    config = json.loads((path / "config.json").read_text())
    assert config["run"] == {"experiment": "evaluated", "seed": 0} and config["sweep"] == {"model": "nli"}
    done = json.loads((path / "DONE").read_text())
    assert done["kind"] == "evaluation" and done["rows"] == 3 and set(done["sha256"]) == set(RUN_FILES)
    assert json.loads((path / "versions.json").read_text())["device"] == "cpu"
    assert pd.read_parquet(path / "predictions.parquet")["probability"].tolist() == [0.2, 0.7, 0.9]
    assert evaluation_key(stored_evaluation(path)) == evaluation_key(RECORD)


def test_a_rewrite_replaces_what_an_unfinished_attempt_left(tmp_path):
    path = tmp_path / "seed=0"
    path.mkdir()
    (path / "metrics.json").write_text('{"inference_s": 99}')  # a killed attempt: no DONE
    assert stored_evaluation(path) is None
    _write(path, rows=2)
    assert json.loads((path / "metrics.json").read_text()) == {"inference_s": 1.5}
    assert json.loads((path / "DONE").read_text())["rows"] == 2


@pytest.mark.parametrize("config", [{"run": {}, "sweep": {}}, "not json", {"evaluation": "a string"}])
def test_a_finished_run_without_an_evaluation_record_is_not_an_evaluation(tmp_path, config):
    (tmp_path / "DONE").write_text("{}")
    (tmp_path / "config.json").write_text(config if isinstance(config, str) else json.dumps(config))
    assert stored_evaluation(tmp_path) is None
