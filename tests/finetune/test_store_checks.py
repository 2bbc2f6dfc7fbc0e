"""The integrity checks of finished runs in ``_store_checks``: ``verify_run`` names each damaged, unreadable, edited
or missing file of a finished run (checkpoint files included, and runs finished before ``DONE`` recorded checksums
still pass what can be checked), ``finished_state`` calls such a run damaged, and ``collect_predictions`` and
``sweep_status`` skip it with a warning. Runs are copies of a real tiny sweep, damaged by hand."""

import json

import pytest

from diagnostics.finetune import collect_predictions, finished_state, run_dir, sweep_status
from diagnostics.finetune._store_checks import verify_run

from _run_stores import copy_store, edit_json, shared_tiny_store, truncate_half


@pytest.fixture(scope="module")
def tiny_store(tmp_path_factory, tiny_model_dir):
    """A real sweep on a tiny random BERT: en + ru x seeds 0, 1, checkpoints kept; one more unfinished run."""
    return shared_tiny_store(tmp_path_factory, tiny_model_dir)


def test_verify_run_catches_truncated_predictions(tiny_store, tmp_path):
    root = copy_store(tiny_store, tmp_path)
    path = run_dir(root, "base", "en", "tiny", 0) / "predictions.parquet"
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    problems = verify_run(path.parent)
    assert len(problems) == 1 and "predictions.parquet is unreadable" in problems[0]


def test_verify_run_catches_an_edited_config(tiny_store, tmp_path):
    root = copy_store(tiny_store, tmp_path)
    path = run_dir(root, "base", "en", "tiny", 1) / "config.json"
    stored = json.loads(path.read_text())
    stored["sweep"]["lr"] = stored["sweep"]["lr"] * 10
    path.write_text(json.dumps(stored))
    problems = verify_run(path.parent)
    assert len(problems) == 1 and "config.json was edited" in problems[0]


def test_verify_run_catches_corrupt_metrics_and_missing_files(tiny_store, tmp_path):
    root = copy_store(tiny_store, tmp_path)
    run = run_dir(root, "base", "ru", "tiny", 0)
    (run / "metrics.json").write_text('{"best": {"validation_mcc": 0.')
    assert [p.split(" (")[0] for p in verify_run(run)] == ["metrics.json is unreadable"]
    (run / "versions.json").unlink()
    assert "DONE but versions.json is missing" in verify_run(run)
    assert verify_run(run_dir(root, "base", "en", "tiny", 7)) == ["not finished (failed)"]


def test_collect_predictions_and_status_skip_corrupt_runs_with_a_warning(tiny_store, tmp_path):
    root = copy_store(tiny_store, tmp_path)
    bad = run_dir(root, "base", "en", "tiny", 0)
    data = (bad / "predictions.parquet").read_bytes()
    (bad / "predictions.parquet").write_bytes(data[:100])
    with pytest.warns(UserWarning, match=r"skipping run .*seed=0.*predictions.parquet is unreadable"):
        table = collect_predictions(root)
    assert sorted(table.groupby(["language", "seed"]).size().index) == [("en", 1), ("ru", 0), ("ru", 1)]
    with pytest.warns(UserWarning, match="corrupt"):
        status = sweep_status(root)
    states = status.set_index(["language", "seed"])["state"].to_dict()
    assert states[("en", 0)] == "corrupt" and states[("en", 1)] == "done" and states[("en", 7)] == "failed"


def test_runs_finished_before_checksums_are_accepted(tiny_store, tmp_path):
    run = run_dir(copy_store(tiny_store, tmp_path), "base", "en", "tiny", 0)
    done = json.loads((run / "DONE").read_text())
    (run / "DONE").write_text(json.dumps({k: v for k, v in done.items() if k != "sha256"}))
    assert verify_run(run) == []
    edit_json("best", {"validation_mcc": 0.99})(run / "metrics.json")  # nothing to compare it with: accepted
    assert verify_run(run) == []
    truncate_half(run / "predictions.parquet")  # what can be verified still is
    assert [p.split(" (")[0] for p in verify_run(run)] == ["predictions.parquet is unreadable"]
    (run / "DONE").write_text("{not json")
    assert any(p.startswith("DONE is unreadable") for p in verify_run(run))


def test_done_covers_every_file_of_the_checkpoint(tiny_store, tmp_path):
    run = run_dir(copy_store(tiny_store, tmp_path), "base", "en", "tiny", 0)
    recorded = json.loads((run / "DONE").read_text())["sha256"]
    assert {"checkpoint/config.json", "checkpoint/model.safetensors"} <= set(recorded)
    assert verify_run(run) == []
    (run / "checkpoint" / "config.json").write_text((run / "checkpoint" / "config.json").read_text() + " ")
    assert [p.split(" (")[0] for p in verify_run(run)] == ["checkpoint/config.json changed after the run finished"]
    (run / "checkpoint" / "stray.safetensors").write_bytes(b"x")  # a file of another attempt mixed in
    assert "DONE records no sha256 for checkpoint/stray.safetensors" in verify_run(run)
    assert finished_state(run)[0] == "damaged"
