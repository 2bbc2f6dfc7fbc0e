"""Detach and follow: ``sweep run --detach`` submits and returns with the job ids and a record in the experiment
folder; ``sweep status`` adds each run's scheduler side (queued / training / ended) to the store's state;
``sweep wait`` follows the jobs to their end (a line at least every ``WAIT_LINE_S``, one per finished run) and exits
0 only when every run is done; Ctrl-C on it cancels nothing. Fake ``squeue`` on PATH for the scheduler's answers;
submitit's local cluster for one real detached sweep."""

import io
import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from diagnostics.finetune import (ConfigError, DetachedSweep, detached_status, find_detached, load_config, run_dir,
                                  submit_sweeps, wait_detached)
from diagnostics.finetune import _waiting
from diagnostics.finetune._detach import DETACHED_FILE, check_no_live_detached, new_record, write_detached

from _cli import ENV, invoke_cli, run_cli
from _fake_slurm import StampedStream, Timeline, fake_commands
from _sweeps import stub_model_folder, write_config


def _record(tmp_path, states_by_seed, partial=True):
    """A detached SLURM sweep of experiment ``e``: job ``40_k`` trains seed k; run folders with partial files (an
    attempt started), or empty."""
    jobs = []
    for seed in states_by_seed:
        folder = run_dir(tmp_path / "runs", "e", "en", "m", seed)
        folder.mkdir(parents=True)
        if partial:
            (folder / "config.json").write_text("{}")
        jobs.append({"job_id": f"40_{seed}", "runs": [str(folder)], "stdout": "", "stderr": "",
                     "result": str(tmp_path / f"40_{seed}_result.pkl")})
    record = new_record("slurm", str(tmp_path / "logs" / "%j"), jobs, [tmp_path / "runs" / "e"], 5.0)
    write_detached(record)
    return record


def _squeue(bin_dir, lines):
    (bin_dir / "squeue.txt").write_text("\n".join(lines) + "\n")


def test_the_record_is_written_atomically_in_the_experiment_and_found_from_any_level(tmp_path, monkeypatch):
    fake_commands(tmp_path / "bin", monkeypatch)
    record = _record(tmp_path, [0, 1])
    path = tmp_path / "runs" / "e" / DETACHED_FILE
    data = json.loads(path.read_text())
    assert data["cluster"] == "slurm" and [j["job_id"] for j in data["jobs"]] == ["40_0", "40_1"]
    assert data["folder"].endswith("logs/%j") and data["jobs"][0]["runs"] == record.jobs[0]["runs"]
    for where in (tmp_path / "runs", tmp_path / "runs" / "e", run_dir(tmp_path / "runs", "e", "en", "m", 1)):
        assert find_detached(where).job_ids() == (["40_1"] if where.name == "seed=1" else ["40_0", "40_1"])
    assert find_detached(tmp_path) is None or find_detached(tmp_path).job_ids() == ["40_0", "40_1"]
    path.write_text(json.dumps({**data, "version": 99}))
    with pytest.raises(ValueError, match="expected a detached sweep record of version 1, found version 99"):
        find_detached(tmp_path / "runs" / "e")


def test_status_merges_the_schedulers_side_with_the_stores_state(tmp_path, monkeypatch):
    bin_dir = fake_commands(tmp_path / "bin", monkeypatch)
    _record(tmp_path, [0, 1, 2])
    _squeue(bin_dir, ["40_0|PENDING||Priority", "40_1|RUNNING|n3|None"])  # 40_2 left the queue
    table = detached_status(tmp_path / "runs")
    assert table["job"].tolist() == ["40_0", "40_1", "40_2"]
    assert table["scheduler"].tolist() == ["queued", "training", "ended"]
    assert table["job_state"].tolist() == ["PENDING (Priority)", "RUNNING on n3", "GONE"]
    assert table["state"].tolist() == ["interrupted"] * 3  # partial files, nobody holds them
    result = invoke_cli("sweep", "status", tmp_path / "runs" / "e")
    assert result.returncode == 0, result.stderr
    assert "queued" in result.stdout and "PENDING (Priority)" in result.stdout
    assert "detached sweep: 3 slurm job(s) submitted" in result.stdout and "1 queued, 1 training, 1 ended" in \
        result.stdout
    _squeue(bin_dir, [])
    (bin_dir / "squeue").write_text("#!/bin/sh\necho 'Unable to contact slurm controller' >&2\nexit 1\n")
    assert detached_status(tmp_path / "runs")["scheduler"].tolist() == ["unknown"] * 3


def test_wait_follows_until_every_job_ended_with_waiting_lines_and_one_per_finished_run(tmp_path, monkeypatch):
    bin_dir = fake_commands(tmp_path / "bin", monkeypatch)
    record = _record(tmp_path, [0, 1], partial=False)
    runs = [run for job in record.jobs for run in job["runs"]]
    _squeue(bin_dir, ["40_0|PENDING||JobHeldUser", "40_1|RUNNING|n3|None"])

    def held_released():
        _squeue(bin_dir, ["40_0|RUNNING|n3|None", "40_1|COMPLETED|n3|None"])
        (tmp_path / runs[1] / "INTERRUPTED").write_text("SIGTERM\n")

    def squeue_silent():
        (bin_dir / "squeue.txt").unlink()
        (bin_dir / "squeue").write_text("#!/bin/sh\necho 'Unable to contact slurm controller' >&2\nexit 1\n")

    def all_ended():
        fake_commands(tmp_path / "bin", monkeypatch, squeue="40_0|FAILED|n3|NonZeroExitCode\n40_1|COMPLETED|n3|")

    timeline = Timeline({35: held_released, 50: squeue_silent, 80: all_ended})
    monkeypatch.setattr(_waiting, "WAIT_LINE_S", 20)
    stream = io.StringIO()
    table = wait_detached(tmp_path / "runs" / "e", poll_s=5, stream=stream, clock=timeline.clock,
                          sleep=timeline.sleep)
    assert 80 <= timeline.now <= 85  # it ends at the first poll that sees every job ended
    lines = stream.getvalue().splitlines()
    assert lines[0] == ("waiting 20 s: 2 SLURM job(s): PENDING (JobHeldUser: held: release with scontrol release) "
                        "40_0 for 20 s; RUNNING on n3 40_1 for 20 s")
    assert "e en/m/seed=1: interrupted (job 40_1)" in lines
    print("\n".join(lines))
    assert any("squeue has not answered for 15 s" in line for line in lines)
    waiting = [line for line in lines if line.startswith("waiting")]
    assert len(waiting) == 3  # at 20, 40 and 60 s (the poll at 80 s sees the end): never a silent minute
    assert table["scheduler"].tolist() == ["ended", "ended"] and table["job_state"].tolist() == [
        "FAILED (NonZeroExitCode) on n3", "COMPLETED on n3"]
    assert not (bin_dir / "scancelled").exists()


def test_wait_says_its_lines_on_time_while_squeue_hangs(tmp_path, monkeypatch):
    """squeue takes 1.5 s per question (a controller that does not answer): the lines (every 0.3 s, real clock) still
    come on time, since the question runs in a thread of its own; the job's end is seen when an answer comes."""
    bin_dir = fake_commands(tmp_path / "bin", monkeypatch)
    _record(tmp_path, [0])
    _squeue(bin_dir, ["40_0|RUNNING|n3|None"])
    (bin_dir / "squeue").write_text(f"#!/bin/sh\nsleep 1.5\ncat {bin_dir / 'squeue.txt'}\n")
    monkeypatch.setattr(_waiting, "WAIT_LINE_S", 0.3)
    stream, start = StampedStream(), time.monotonic()
    threading.Timer(2.0, _squeue, (bin_dir, ["40_0|COMPLETED|n3|None"])).start()
    table = wait_detached(tmp_path / "runs" / "e", poll_s=0.2, stream=stream)
    times = [at - start for at, _ in stream.lines]
    assert table["scheduler"].tolist() == ["ended"]
    assert time.monotonic() - start < 2.0 + 2 * 1.5 + 1.0  # the first answer after the change ends it
    # a poll waits 0.2 s for its answer, then the lines go on: never the 1.5 s of a question
    assert max(b - a for a, b in zip([0.0, *times], times)) < 0.2 + 0.3 + 0.4, times
    assert any("squeue has not answered" in text for _, text in stream.lines)


def test_wait_exits_1_when_a_run_is_not_done_and_ctrl_c_cancels_nothing(tmp_path, monkeypatch):
    bin_dir = fake_commands(tmp_path / "bin", monkeypatch, squeue="40_0|CANCELLED|n3|")
    _record(tmp_path, [0])
    result = invoke_cli("sweep", "wait", tmp_path / "runs", "--poll-s", "0.1")
    assert result.returncode == 1, result.stderr
    assert "interrupted" in result.stdout and "1 ended" in result.stdout
    # the run's attempt ended before the wait began (partial files, nobody holds them): said once, at the start
    assert result.stderr.count("e en/m/seed=0: interrupted (job 40_0; before this wait began)") == 1

    import diagnostics.finetune

    def ctrl_c(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(diagnostics.finetune, "wait_detached", ctrl_c)  # the name `diagnostics sweep wait` calls
    result = invoke_cli("sweep", "wait", tmp_path / "runs")
    assert result.returncode == 130
    assert "nothing was cancelled, the jobs go on" in result.stderr
    assert not (bin_dir / "scancelled").exists()


def test_no_detached_sweep_is_one_line(tmp_path):
    (tmp_path / "runs").mkdir()
    result = invoke_cli("sweep", "wait", tmp_path / "runs")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"error: {tmp_path / 'runs'}: no detached sweep here (expected .submitit/detached.json in an experiment "
        "folder, written by `diagnostics sweep run --detach`)"]


def test_a_new_detach_is_refused_while_the_previous_ones_jobs_are_queued(tmp_path, monkeypatch):
    bin_dir = fake_commands(tmp_path / "bin", monkeypatch, squeue="40_0|PENDING||Priority")
    _record(tmp_path, [0])
    with pytest.raises(ValueError, match=r"still has 1 job\(s\) in the queue \(40_0\); follow it with "):
        check_no_live_detached([tmp_path / "runs" / "e"])
    _squeue(bin_dir, ["40_0|COMPLETED|n3|"])
    check_no_live_detached([tmp_path / "runs" / "e"])


def test_detach_needs_a_cluster_executor(tmp_path):
    model = stub_model_folder(tmp_path / "model")
    config = write_config(tmp_path, model, languages=["en"], seeds=[0])
    result = run_cli("sweep", "run", config, "--detach", timeout=120)
    assert result.returncode == 2
    assert result.stderr.strip() == ("error: executor: --detach needs the cluster executor submitit, found "
                                     "'inprocess'")
    with pytest.raises(ConfigError, match="found 'debug'"):
        submit_sweeps([load_config(config).with_overrides({"executor": "submitit",
                                                          "executor_options": {"cluster": "debug"}})])
    assert not (tmp_path / "runs" / "s" / DETACHED_FILE).exists()


@pytest.mark.slow
def test_detach_returns_at_once_and_wait_follows_the_jobs_to_the_end(tmp_path, tiny_model_dir):
    """submitit's local cluster: the detached command exits while its job still runs; ``sweep status`` shows the
    job; ``sweep wait`` follows it to the end, says when the run finishes, and exits 0. Slow: the job is a fresh
    process that imports torch and trains a run (about 35 s on 2 cores)."""
    config = write_config(tmp_path, tiny_model_dir, languages=["en"], seeds=[0], train_size=32, max_epochs=1,
                          executor="submitit", executor_options={"cluster": "local", "poll_s": 0.5})
    with open(tmp_path / "out", "w") as out, open(tmp_path / "err", "w") as err:
        # files, not pipes: the local cluster's job inherits them, a pipe would stay open until it ends
        code = subprocess.run([sys.executable, "-m", "diagnostics", "sweep", "run", str(config), "--detach"],
                              env=ENV, stdout=out, stderr=err, timeout=300).returncode
    submitted = SimpleNamespace(stdout=(tmp_path / "out").read_text(), stderr=(tmp_path / "err").read_text())
    assert code == 0, submitted.stderr
    record = find_detached(tmp_path / "runs" / "s")
    assert not Path(record.jobs[0]["result"]).exists()  # the command came back before its job ended
    assert isinstance(record, DetachedSweep) and record.cluster == "local" and len(record.jobs) == 1
    job = record.job_ids()[0]
    assert f"submitted 1 local job(s): {job}" in submitted.stdout
    assert "logging out or Ctrl-C cancels nothing" in submitted.stdout
    assert str(tmp_path / "runs" / "s" / DETACHED_FILE) in submitted.stdout.replace(str(tmp_path.resolve()),
                                                                                    str(tmp_path))
    status = detached_status(tmp_path / "runs" / "s")
    assert status["scheduler"].tolist() in (["training"], ["ended"]) and status["job"].tolist() == [job]
    waited = invoke_cli("sweep", "wait", tmp_path / "runs", "--poll-s", "0.5")
    assert waited.returncode == 0, waited.stdout + waited.stderr
    assert f"s en/tiny/seed=0: done (job {job})" in waited.stderr
    assert "1 done" in waited.stdout and "runs: 1 ended" in waited.stdout
    assert Path(record.jobs[0]["result"]).exists()
    assert submit_sweeps([load_config(config)]) is None  # every run finished: nothing to submit
