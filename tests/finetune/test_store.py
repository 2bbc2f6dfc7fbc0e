"""Run store: locks (live refused, stale taken over), run states, status command, collection, listing runs,
coordinates and model folders (the integrity
checks of finished runs are in test_store_checks.py)."""

import json
import os
import socket
import subprocess
import sys

import pandas as pd
import pytest
from typer.testing import CliRunner

from diagnostics.cli import app
from diagnostics.finetune import RunLockedError, SweepConfig, collect_predictions, run_dir, sweep_status
from diagnostics.finetune._run_lock import RunLock
from diagnostics.finetune._store import PREDICTION_COLUMNS, Run, list_runs, mark_done, run_coordinates, run_state
from diagnostics.finetune._store_checks import verify_run

from _paths import ROOT
from _run_stores import shared_tiny_store


def _write_lock(folder, pid):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "LOCK").write_text(json.dumps({"pid": pid, "host": socket.gethostname()}))


@pytest.fixture()
def live_pid():
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    yield proc.pid
    proc.kill()
    proc.wait()


def dead_pid():
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_live_lock_is_refused_with_the_owner(tmp_path, live_pid):
    folder = run_dir(tmp_path, "e", "en", "m", 0)
    _write_lock(folder, live_pid)
    with pytest.raises(RunLockedError, match=f"pid {live_pid}"):
        RunLock(folder).acquire()
    assert run_state(folder) == "running"


def test_stale_lock_of_a_dead_process_is_taken_over(tmp_path):
    folder = run_dir(tmp_path, "e", "en", "m", 0)
    pid = dead_pid()
    _write_lock(folder, pid)
    (folder / "config.json").write_text("{}")
    assert run_state(folder) == "interrupted"
    with RunLock(folder):
        assert json.loads((folder / "LOCK").read_text())["pid"] == os.getpid()
    assert not (folder / "LOCK").exists()


def test_states_and_status_command(tmp_path, live_pid):
    root = tmp_path / "runs"
    done = run_dir(root, "e", "en", "m", 0)
    done.mkdir(parents=True)
    sweep = SweepConfig().to_dict()
    (done / "config.json").write_text(json.dumps({"run": {"experiment": "e", "language": "en", "model": "m",
                                                          "run_hash": SweepConfig().run_hash()}, "sweep": sweep}))
    (done / "versions.json").write_text("{}")
    (done / "metrics.json").write_text(json.dumps({"selection_metric": "mcc", "best": {"validation_mcc": 0.25},
                                                   "resources": {"total_s": 90.0}}))
    table = pd.DataFrame({c: ["x"] for c in PREDICTION_COLUMNS}).assign(seed=0, probability=0.4)
    table.to_parquet(done / "predictions.parquet")
    mark_done(done, {})
    running = run_dir(root, "e", "en", "m", 1)
    _write_lock(running, live_pid)
    failed = run_dir(root, "e", "ru", "m", 0)
    failed.mkdir(parents=True)
    (failed / "FAILED").write_text("Traceback ...")
    states = sweep_status(root).set_index(["language", "seed"])["state"].to_dict()
    assert states == {("en", 0): "done", ("en", 1): "running", ("ru", 0): "failed"}

    result = CliRunner().invoke(app, ["sweep", "status", str(root)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert any(" en " in f" {line} " and "done" in line and "0.25" in line and "1.5" in line for line in lines)
    assert "1 done" in result.output and "1 running" in result.output and "1 failed" in result.output

    collected = collect_predictions(root)  # only finished runs
    assert len(collected) == 1 and list(collected.columns) == PREDICTION_COLUMNS


def test_status_of_missing_folder_is_an_error(tmp_path):
    result = CliRunner().invoke(app, ["sweep", "status", str(tmp_path / "nope")])
    assert result.exit_code == 2 and "does not exist" in result.output


def test_versions_record_the_code_and_status_shows_its_commit(tmp_path, tiny_model_dir):
    import importlib.metadata
    import re
    import shutil

    from diagnostics.finetune import SweepConfig
    from diagnostics.finetune._run_spec import RunSpec, spec_dict
    from diagnostics.finetune._train import train_run

    cfg = SweepConfig(output_dir=str(tmp_path / "runs"), experiment="e", languages=["en"], seeds=[0],
                      models=[{"name": "tiny", "path": str(tiny_model_dir)}], train_size=32, max_seq_length=32,
                      batch_size=16, max_epochs=1, max_steps=1, eval_batch_size=128, warmup_ratio=0.0,
                      num_threads=1, progress=False)
    spec = RunSpec(cfg.to_dict(), "en", spec_dict(cfg.models[0]), 0)
    assert train_run(spec)["state"] == "done"
    code = json.loads((spec.path / "versions.json").read_text())["code"]
    assert code["version"] == importlib.metadata.version("nli-diagnostics")
    in_checkout = (ROOT / ".git").exists()
    if in_checkout:
        assert re.fullmatch(r"[0-9a-f]{40}", code["commit"]) and isinstance(code["dirty"], bool)
        short = code["commit"][:7]
        result = CliRunner().invoke(app, ["sweep", "status", str(tmp_path / "runs")])
        assert result.exit_code == 0, result.output
        assert "code_commit" in result.output.splitlines()[0] and short in result.output
        assert "different commits" not in result.output

    # a second finished run made by another commit: the listing says so (runs are still reused by run_hash)
    other = spec.path.parent / "seed=1"
    shutil.copytree(spec.path, other)
    versions = json.loads((other / "versions.json").read_text())
    versions["code"] = {"version": code["version"], "commit": "f" * 40, "dirty": False}
    (other / "versions.json").write_text(json.dumps(versions))
    mark_done(other, json.loads((other / "DONE").read_text()))  # finished so: its checksums match its files
    assert sweep_status(tmp_path / "runs").set_index("seed")["code_commit"][1] == "fffffff"
    result = CliRunner().invoke(app, ["sweep", "status", str(tmp_path / "runs")])
    assert result.exit_code == 0, result.output
    assert "fffffff" in result.output
    if in_checkout:
        assert "made by 2 different commits" in result.output and "run_hash" in result.output


@pytest.fixture(scope="module")
def tiny_store(tmp_path_factory, tiny_model_dir):
    """A real sweep on a tiny random BERT: en + ru x seeds 0, 1, checkpoints kept; one more unfinished run."""
    return shared_tiny_store(tmp_path_factory, tiny_model_dir)


def test_list_runs_filters_by_coordinates_and_state(tiny_store):
    runs = list_runs(tiny_store)
    assert [(r.language, r.seed, r.state) for r in runs] == [("en", 0, "done"), ("en", 1, "done"),
                                                             ("en", 7, "failed"), ("ru", 0, "done"),
                                                             ("ru", 1, "done")]
    assert all(r.experiment == "base" and r.model == "tiny" for r in runs)
    assert [r.seed for r in list_runs(tiny_store, language="en", state="done")] == [0, 1]
    assert [r.seed for r in list_runs(tiny_store, state=["failed", "running"])] == [7]
    assert list_runs(tiny_store, experiment="other") == [] and list_runs(tiny_store, model="big") == []
    assert [r.language for r in list_runs(tiny_store / "base" / "ru")] == ["ru", "ru"]
    assert list_runs(tiny_store / "base" / "ru" / "tiny" / "seed=1") == [Run.at(tiny_store / "base/ru/tiny/seed=1")]
    assert list_runs(tiny_store / "missing") == []


def test_run_reads_its_files_and_model_folder(tiny_store):
    run = list_runs(tiny_store, language="ru", state="done")[0]
    assert run.model_folder() == run.path / "checkpoint"
    assert (run.model_folder() / "config.json").is_file()
    assert run.config()["run"]["seed"] == 0 and run.config()["sweep"]["save_checkpoint"] is True
    assert "best" in run.metrics() and "code" in run.versions()
    table = run.predictions()
    assert set(table["dataset"]) == {"lidirus"} and set(table["seed"]) == {0}
    assert verify_run(run.path) == []
    failed = list_runs(tiny_store, state="failed")[0]
    with pytest.raises(FileNotFoundError, match="save_checkpoint: true"):
        failed.model_folder()


def test_run_coordinates_of_a_run_and_of_its_checkpoint(tiny_store):
    run = run_dir(tiny_store, "base", "en", "tiny", 1)
    expected = {"experiment": "base", "language": "en", "model": "tiny", "seed": 1}
    assert run_coordinates(run) == expected
    assert run_coordinates(run / "checkpoint") == expected
    assert run_coordinates(run / "checkpoint" / "model.safetensors") == expected
    with pytest.raises(ValueError, match="not in a run folder"):
        run_coordinates(tiny_store / "base" / "en")
