"""Who writes into a run: a job that loses one run's lease ends that run alone and writes nothing more into it,
read errors of a finished run are not damage, a newer ``DONE`` is refused and never deleted, and Ctrl+C leaves
``INTERRUPTED``."""

import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

import pandas as pd
import pytest

from diagnostics.finetune import finished_state, load_config, run_sweep, verify_run
from diagnostics.finetune import _run_lock as run_lock
from diagnostics.finetune._run_lock import LEASE_FOLDER, lease_head
from diagnostics.finetune._store import run_state

from _paths import ROOT
from _sweeps import write_config


@pytest.fixture(autouse=True)
def short_heartbeat(monkeypatch):
    monkeypatch.setenv(run_lock.HEARTBEAT_VARIABLE, "0.05")


@pytest.fixture(scope="module")
def finished(tiny_model_dir, tmp_path_factory):
    """A finished one-run sweep that kept its checkpoint."""
    folder = tmp_path_factory.mktemp("finished")
    config = write_config(folder, tiny_model_dir, languages=["en"], seeds=[0], train_size=32, max_epochs=1,
                          save_checkpoint=True)
    assert run_sweep(load_config(config))["state"].tolist() == ["done"]
    return folder


def _copy(finished, tmp_path):
    shutil.copytree(finished, tmp_path / "store")
    config = tmp_path / "store" / "sweep.yaml"
    config.write_text(config.read_text().replace(str(finished), str(tmp_path / "store")))
    return config, tmp_path / "store" / "runs" / "s" / "en" / "tiny" / "seed=0"


def test_a_lost_lease_ends_that_run_alone_and_the_job_writes_nothing_more_into_it(tmp_path, tiny_model_dir):
    """Three runs trained as one job; another host takes the middle run's lease over as it starts: that run ends
    ``lost`` (the sweep's table says to whom), the other two finish, and nothing of this job lands in the run."""
    config = load_config(write_config(tmp_path, tiny_model_dir, languages=["en"], seeds=[0, 1, 2], train_size=32,
                                      max_epochs=2, fuse=3))
    target = tmp_path / "runs" / "s" / "en" / "tiny" / "seed=1"
    stolen = {"token": 2, "pid": 4242, "host": "node-b", "heartbeat_s": 30, "claimed": "2026-01-01T10:00:00"}

    def take_over():
        deadline = time.time() + 120
        while not (target / "config.json").exists() and time.time() < deadline:
            time.sleep(0.005)
        (target / LEASE_FOLDER / "2").write_text(json.dumps(stolen))

    thief = threading.Thread(target=take_over)
    thief.start()
    result = run_sweep(config)
    thief.join()
    states = result.set_index("seed")["state"].to_dict()
    assert states == {0: "done", 1: "lost", 2: "done"}
    error = result.set_index("seed").loc[1, "error"]
    assert "lost to pid 4242 on node-b at 2026-01-01T10:00:00" in error and "\n" not in error
    assert not (target / "DONE").exists() and not (target / "metrics.json").exists()
    assert not (target / "FAILED").exists() and not (target / ".staging").exists()
    assert lease_head(target) == (2, stolen, False)  # the new owner's lease stands
    for seed in (0, 2):
        assert verify_run(tmp_path / "runs" / "s" / "en" / "tiny" / f"seed={seed}") == []


def test_an_unreadable_finished_run_is_left_alone(finished, tmp_path, monkeypatch):
    """EIO / EACCES / ESTALE on a flaky mount say nothing about a file's content: the sweep warns, naming the file
    and the error, and neither withdraws the run nor trains it again."""
    config, run = _copy(finished, tmp_path)
    done = (run / "DONE").read_bytes()
    real = pd.read_parquet

    def flaky(path, *args, **kwargs):
        if str(path).endswith("predictions.parquet"):
            raise OSError(errno.EIO, "Input/output error", str(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(pd, "read_parquet", flaky)
    state, problems = finished_state(run)
    assert state == "unreadable" and problems == [
        "predictions.parquet could not be read (EIO: Input/output error); not judged damaged, left as it is"]
    with pytest.warns(UserWarning, match="left alone: predictions.parquet could not be read"):
        result = run_sweep(load_config(config))
    assert result["state"].tolist() == ["skipped"]
    assert (run / "DONE").read_bytes() == done


def test_a_done_record_of_a_newer_version_is_refused_not_deleted(finished, tmp_path):
    config, run = _copy(finished, tmp_path)
    record = json.loads((run / "DONE").read_text()) | {"format": 99}
    (run / "DONE").write_text(json.dumps(record))
    before = {p.name: p.stat().st_mtime_ns for p in run.iterdir()}
    result = run_sweep(load_config(config))
    assert result["state"].tolist() == ["failed"]
    assert "newer version" in result["error"].iat[0] and "format 99" in result["error"].iat[0]
    assert {p.name: p.stat().st_mtime_ns for p in run.iterdir()} == before


def test_ctrl_c_leaves_interrupted_not_failed_and_a_rerun_finishes(tmp_path, tiny_model_dir):
    # 500 epochs without an early stop (minutes of training): still training when the signal comes, on any host
    config = write_config(tmp_path, tiny_model_dir, languages=["en"], seeds=[0], train_size=128, max_epochs=500,
                          patience=100)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "diagnostics", "sweep", "run", str(config)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    run = tmp_path / "runs" / "s" / "en" / "tiny" / "seed=0"
    deadline = time.time() + 120
    while not (run / "versions.json").exists() and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode != 0, (out[-2000:], err[-2000:], sorted(path.name for path in run.iterdir()))
    assert "SIGINT" in (run / "INTERRUPTED").read_text() and not (run / "FAILED").exists(), err[-2000:]
    assert run_state(run) == "interrupted"
    config.write_text(config.read_text().replace("max_epochs: 500", "max_epochs: 1"))
    assert run_sweep(load_config(config))["state"].tolist() == ["done"]
    assert verify_run(run) == [] and not (run / "INTERRUPTED").exists()


def test_an_exit_while_training_leaves_interrupted_not_failed(tmp_path, tiny_model_dir, monkeypatch):
    """submitit ends a job that requeued itself with ``SystemExit``: its runs read ``interrupted``, no ``FAILED``."""
    from diagnostics.finetune import _train

    def exit_at_the_first_check(*args, **kwargs):
        raise SystemExit(-1)

    monkeypatch.setattr(_train, "save_resume", exit_at_the_first_check)
    config = load_config(write_config(tmp_path, tiny_model_dir, languages=["en"], seeds=[0], train_size=32,
                                      max_epochs=2, executor_options={"requeue": True}))
    with pytest.raises(SystemExit):
        run_sweep(config)
    run = tmp_path / "runs" / "s" / "en" / "tiny" / "seed=0"
    assert "SystemExit -1" in (run / "INTERRUPTED").read_text() and not (run / "FAILED").exists()
    assert run_state(run) == "interrupted"
