"""Faults on a real single-node SLURM (slow, root: ``scripts/slurm_cluster.sh`` without accounting), each on a tiny
sweep: a run signalled as a preemption or a time limit (``scancel --signal=USR2``), or requeued from outside
(``scontrol requeue``), after its first check goes on from that check in its requeued job and ends with the
predictions of the same run never stopped; a detached sweep (``sweep run --detach``) returns at once and ``sweep
status`` / ``sweep wait`` follow its jobs to the end; with slurmctld stopped for three minutes and then its node
drained, the sweep says what it waits for at least once a minute and finishes once both are back; a fused job
cancelled (TERM) or requeued (USR2) marks only the runs it holds, not one another process holds.
Each test keeps slurmctld's and slurmd's lines in its ``slurm-logs/`` folder."""

import json
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import pandas as pd
import pytest

from diagnostics.finetune import collect_predictions, load_config, run_sweep, verify_run
from diagnostics.finetune._slurm import COMMAND_TIMEOUT_S
from diagnostics.finetune._store import run_state
from diagnostics.finetune._waiting import WAIT_LINE_S

from _slurm_cluster import Lines, diagnostics, queue, sweep_cli, sweep_config, wait_for_running
from _slurm_cluster import cluster, daemon_logs, tiny  # noqa: F401 - the fixtures of the real cluster
from _sweeps import KEYS

#: A run long enough to be stopped between its checks: 24 epochs of 4 steps, a check after each, no early stop.
LONG_RUN = dict(languages=["en"], seeds=[0], max_epochs=24, patience=24, dropout=0.1)


def _wait_for(predicate, timeout: float, what: str, every: float = 0.2):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(every)
    raise AssertionError(f"{what} not within {timeout} s; queue: {queue()}")


def _wait_pending(job: str) -> None:
    """Wait until the requeued ``job`` is pending again."""
    _wait_for(lambda: any(j == job and s == "PENDING" for j, s, _ in queue()), 120, f"job {job} pending again")


@pytest.fixture(scope="module")
def never_stopped(tiny, tmp_path_factory):
    """The predictions and metrics of :data:`LONG_RUN` trained in this process without a stop."""
    folder = tmp_path_factory.mktemp("never-stopped")
    config = load_config(sweep_config(folder, tiny, executor_options={"requeue": True}, **LONG_RUN))
    config = config.with_overrides({"executor": "inprocess"})
    assert run_sweep(config)["state"].tolist() == ["done"]
    run = folder / "runs/s/en/tiny/seed=0"
    return collect_predictions(folder / "runs"), json.loads((run / "metrics.json").read_text())


@pytest.mark.slow
@pytest.mark.parametrize("cluster", ["no-accounting"], indirect=True)
@pytest.mark.parametrize("stop", ["scancel --signal=USR2", "scontrol requeue"])
def test_a_run_stopped_after_a_check_goes_on_from_it_in_its_requeued_job(cluster, tiny, tmp_path, never_stopped,
                                                                          stop):
    config = sweep_config(tmp_path, tiny, executor_options={"requeue": True, "lost_job_grace_s": 60}, **LONG_RUN)
    run = tmp_path / "runs/s/en/tiny/seed=0"
    started = time.time()
    sweep = sweep_cli(config, tmp_path)
    lines = Lines(sweep.stdout)
    job = wait_for_running("", run / "resume" / "state.json", timeout=300)  # it has saved its first check
    if stop == "scancel --signal=USR2":  # submitit's warning before the time limit, or a preemption signal
        subprocess.run(["scancel", "--signal=USR2", job], check=True)
    else:  # SIGTERM, KillWait, SIGKILL, back in the queue
        subprocess.run(["scontrol", "requeue", job], check=True)
    stopped = time.time()
    _wait_pending(job)
    assert (run / "INTERRUPTED").exists() and not (run / "DONE").exists()
    assert sweep.wait(timeout=600) == 0, lines.text
    lines.join()
    ended = time.time()

    assert not verify_run(run) and not (run / "INTERRUPTED").exists() and not (run / "resume").exists()
    metrics = json.loads((run / "metrics.json").read_text())
    expected_predictions, expected_metrics = never_stopped
    steps = [check["step"] for check in metrics["history"]]
    assert metrics["resumed_at_step"] in steps[:-1]  # went on from a check before the last, not from scratch
    assert metrics["history"] == expected_metrics["history"] and metrics["best"] == expected_metrics["best"]
    actual = collect_predictions(tmp_path / "runs").sort_values(KEYS).reset_index(drop=True)
    expected = expected_predictions.sort_values(KEYS).reset_index(drop=True)
    pd.testing.assert_frame_equal(actual, expected, check_exact=True)
    log = next((tmp_path / "runs/s/.submitit").glob("*/*_log.err")).read_text()
    assert "DUE TO JOB REQUEUE" in log
    if stop == "scancel --signal=USR2":
        assert "Caught signal SIGUSR2" in log
    print(f"\n[{stop}] job {job} stopped {stopped - started:.1f} s after submission, at step "
          f"{metrics['resumed_at_step']} of {metrics['steps']}; the sweep ended {ended - stopped:.1f} s later")


@pytest.mark.slow
@pytest.mark.parametrize("cluster", ["no-accounting"], indirect=True)
def test_a_detached_sweep_returns_at_once_and_status_and_wait_follow_it_to_the_end(cluster, tiny, tmp_path):
    config = sweep_config(tmp_path, tiny, languages=["en"], seeds=[0, 1])
    runs = tmp_path / "runs"
    t0 = time.time()
    submit = diagnostics("sweep", "run", str(config), "--detach", cwd=tmp_path)
    out, _ = submit.communicate(timeout=300)
    returned = time.time() - t0
    assert submit.returncode == 0, out
    (line,) = [line for line in out.splitlines() if line.startswith("submitted ")]
    jobs = line.split(": ", 1)[1].split()
    assert line.startswith("submitted 2 slurm job(s): ") and len(jobs) == 2
    assert (runs / "s/.submitit/detached.json").is_file()
    listed = {j for j, s, _ in queue() if s in ("PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "COMPLETED")}
    assert set(jobs) <= listed  # the jobs were submitted, and the submitting process has ended

    shown = diagnostics("sweep", "status", str(runs), cwd=tmp_path)
    text, _ = shown.communicate(timeout=120)
    assert shown.returncode == 0, text
    assert all(job in text for job in jobs) and "runs: " in text

    follow = diagnostics("sweep", "wait", str(runs), "--poll-s", "1", cwd=tmp_path)
    lines = Lines(follow.stdout)
    assert follow.wait(timeout=600) == 0, lines.text
    lines.join()
    for seed, job in zip((0, 1), jobs):
        assert lines.first(f"en/tiny/seed={seed}: done")
        assert not verify_run(runs / f"s/en/tiny/seed={seed}")
    final = diagnostics("sweep", "status", str(runs), cwd=tmp_path)
    text, _ = final.communicate(timeout=120)
    assert final.returncode == 0 and "2 done" in text, text
    print(f"\n--detach returned {returned:.1f} s after it started; sweep wait ended {time.time() - t0:.1f} s after it")


def _stop_controller(cluster) -> None:
    pid = int((cluster.folder / "run/slurmctld.pid").read_text().strip())
    os.kill(pid, signal.SIGTERM)
    _wait_for(lambda: not Path(f"/proc/{pid}").exists(), 60, f"slurmctld (pid {pid}) stopped")


def _start_controller() -> None:
    subprocess.run(["slurmctld"], check=True, timeout=60)
    _wait_for(lambda: subprocess.run(["scontrol", "ping"], capture_output=True, text=True, timeout=30,
                                     check=False).stdout.count("UP") > 0, 60, "slurmctld answering")


#: How long the outage test keeps slurmctld stopped.
OUTAGE_S = 180
#: The longest a sweep may go without a waiting line: a minute, and a second for the line to reach the test's reader
#: on a loaded host.
LINE_GAP_S = WAIT_LINE_S + 1


def _waiting_lines(lines: Lines, start: float, end: float) -> list[tuple[float, str]]:
    return [(when, line) for when, line in lines.lines if start <= when <= end and line.startswith("waiting ")]


def _names_drained(line: str, array: str) -> bool:
    """Whether a waiting line says that the array's second task waits for a drained node (squeue's reason)."""
    return f"{array}_1" in line and ("DRAINED" in line or "ReqNodeNotAvail" in line)


def _gaps(times: list[float]) -> list[float]:
    return [b - a for a, b in zip(times, times[1:])]


@pytest.mark.slow
@pytest.mark.parametrize("cluster", ["no-accounting"], indirect=True)
def test_the_sweep_says_what_it_waits_for_through_a_controller_outage_and_a_drained_node_and_then_finishes(
        cluster, tiny, tmp_path):
    # two runs, one task at a time: the second can start only once slurmctld is back and the node resumed
    config = sweep_config(tmp_path, tiny, languages=["en"], seeds=[0, 1],
                          executor_options={"slurm_array_parallelism": 1})
    runs = [tmp_path / f"runs/s/en/tiny/seed={seed}" for seed in (0, 1)]
    node = socket.gethostname().split(".")[0]
    sweep = sweep_cli(config, tmp_path)
    lines = Lines(sweep.stdout)
    job = wait_for_running("_0", runs[0] / "config.json")
    array = job.split("_")[0]
    subprocess.run(["scontrol", "update", f"NodeName={node}", "State=DRAIN", "Reason=maintenance"], check=True)
    try:
        down = time.time()
        _stop_controller(cluster)
        try:
            time.sleep(OUTAGE_S)
            assert sweep.poll() is None, lines.text  # a silent controller ends nothing
        finally:
            _start_controller()
        up = time.time()
        # drained: the second task waits for the node; the sweep says so at least once a minute
        _wait_for(lambda: sum(_names_drained(line, array) for _, line in _waiting_lines(lines, up, time.time())) >= 2,
                  4 * WAIT_LINE_S, "two waiting lines naming the drained node", every=1)
        assert sweep.poll() is None and run_state(runs[1]) == "pending", lines.text
    finally:
        resumed = time.time()
        subprocess.run(["scontrol", "update", f"NodeName={node}", "State=RESUME"], check=False)
    assert sweep.wait(timeout=600) == 0, lines.text
    lines.join()
    ended = time.time()

    waiting = _waiting_lines(lines, 0, resumed)
    during = [(when, line) for when, line in waiting if down <= when <= up]
    before = [when for when, _ in waiting if when < down]
    times = [when for when, _ in waiting if when >= down]
    assert max(_gaps(before[-1:] + times)) <= LINE_GAP_S, waiting  # never a silent minute, down or drained
    assert (before[-1] if before else down) + LINE_GAP_S >= times[0]
    silent = [line for when, line in during if when > down + COMMAND_TIMEOUT_S]
    assert len(silent) >= 2 and all("squeue has not answered for" in line and "controller down or busy?" in line
                                    for line in silent), during
    assert " min " in silent[-1].split("squeue has not answered for ")[1].split("(")[0]  # a minute and more
    drained = [line for _, line in _waiting_lines(lines, up, resumed) if _names_drained(line, array)]
    assert len(drained) >= 2, waiting
    for run in runs:
        assert not verify_run(run)
    assert (runs[1] / "DONE").stat().st_mtime > resumed  # trained once the node was back
    gaps = _gaps(before[-1:] + times)
    print(f"\nslurmctld down {up - down:.0f} s, node drained {resumed - up:.0f} s more: {len(during)} waiting lines "
          f"while down ({len(silent)} naming the silent squeue), longest gap between lines {max(gaps):.1f} s; the "
          f"sweep ended {ended - resumed:.0f} s after the node resumed")


@pytest.mark.slow
@pytest.mark.parametrize("cluster", ["no-accounting"], indirect=True)
@pytest.mark.parametrize("stop", ["scancel (TERM)", "scancel --signal=USR2 (requeue)"])
def test_a_stopped_fused_job_marks_only_the_runs_it_holds(cluster, tiny, tmp_path, stop):
    from diagnostics.finetune._run_lock import RunLock

    # one job of two runs trained together; another process (this one) holds the second run all along
    requeue = "USR2" in stop
    config = sweep_config(tmp_path, tiny, languages=["en"], seeds=[0, 1], fuse=2, max_epochs=400, patience=400,
                          executor_options={"requeue": requeue})
    ours, theirs = (tmp_path / f"runs/s/en/tiny/seed={seed}" for seed in (0, 1))
    theirs.mkdir(parents=True)
    held = RunLock(theirs).acquire()
    before = sorted(path.name for path in theirs.iterdir())
    try:
        sweep = sweep_cli(config, tmp_path)
        lines = Lines(sweep.stdout)
        job = wait_for_running("", ours / "config.json")
        time.sleep(2)  # past the claim of the second run (refused: held here)
        if requeue:  # submitit's warning before the time limit, or a preemption: the job requeues itself
            subprocess.run(["scancel", "--signal=USR2", job], check=True)
            _wait_pending(job)
            assert "requeued" in (ours / "INTERRUPTED").read_text()
            assert run_state(ours) == "interrupted"
            subprocess.run(["scancel", job], check=True)  # the requeued job goes no further here
        else:
            subprocess.run(["scancel", job], check=True)  # SIGTERM, then SIGKILL KillWait later
        assert sweep.wait(timeout=300) == 1
        lines.join()
        if not requeue:
            assert "SIGTERM" in (ours / "INTERRUPTED").read_text()
            assert run_state(ours) == "interrupted"
        assert not (theirs / "INTERRUPTED").exists() and not (theirs / "FAILED").exists()
        assert sorted(path.name for path in theirs.iterdir()) == before  # nothing of the job landed there
        assert held.holds() and run_state(theirs) == "running"  # its lease untouched
    finally:
        held.release()
