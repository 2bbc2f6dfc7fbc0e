"""SLURM for real. Fast: what the sweep reads from ``squeue`` / ``sacct`` (stand-in commands). Slow: a single-node
cluster (``scripts/slurm_cluster.sh``, with and without accounting) running a tiny 4-run sweep: a cancelled job
ends the sweep within the grace period while the others are reported as they finish, a rerun redoes only that run
and leaves the finished ones byte for byte, a job array keeps its parallelism limit, a SIGUSR2 requeues a run that
restarts from scratch, and the time against the same sweep in-process. Each slow test keeps slurmctld's and slurmd's
lines (logged at ``debug``) in its ``slurm-logs/`` folder, their tails printed when it fails."""

import hashlib
import os
import signal
import subprocess
import time

import pytest

from diagnostics.finetune import _slurm as slurm
from diagnostics.finetune import load_config, run_sweep, sweep_status, verify_run
from diagnostics.finetune._slurm import GONE, JobState, job_states, owner_job_ended

from _slurm_cluster import GRACE_S, POLL_S, Lines, QueueSampler, queue, wait_for_running
from _slurm_cluster import cluster, daemon_logs, tiny  # noqa: F401 - the fixtures of the real cluster
from _slurm_cluster import sweep_cli as _cli
from _slurm_cluster import sweep_config as _config


def _fake_commands(tmp_path, monkeypatch, squeue="", sacct=None, squeue_rc=0, squeue_err=""):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "squeue").write_text(f"#!/bin/sh\ncat <<'EOF'\n{squeue}\nEOF\necho '{squeue_err}' >&2\n"
                                    f"exit {squeue_rc}\n")
    sacct_body = "echo 'Slurm accounting storage is disabled' >&2\nexit 1" if sacct is None else \
        f"cat <<'EOF'\n{sacct}\nEOF"
    (bin_dir / "sacct").write_text(f"#!/bin/sh\n{sacct_body}\n")
    for tool in ("squeue", "sacct"):
        (bin_dir / tool).chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}/usr/bin:/bin")
    slurm._cache.clear()


def test_states_come_from_squeue_then_sacct_and_a_job_no_one_lists_is_gone(tmp_path, monkeypatch):
    _fake_commands(tmp_path, monkeypatch, squeue="5_0|RUNNING|vm\n5_1|PENDING|\n6|COMPLETING|vm",
                   sacct="5_2|CANCELLED by 0|vm\n5_2.batch|CANCELLED|vm")
    states = job_states(["5_0", "5_1", "5_2", "5_3", "6"])
    assert states == {"5_0": JobState("RUNNING", "vm"), "5_1": JobState("PENDING", ""),
                      "5_2": JobState("CANCELLED", "vm", "sacct"), "5_3": JobState(GONE, "", "none"),
                      "6": JobState("COMPLETING", "vm")}
    assert [s.ended for s in states.values()] == [False, False, True, True, False]


def test_without_accounting_a_job_squeue_has_forgotten_is_gone(tmp_path, monkeypatch):
    _fake_commands(tmp_path, monkeypatch, squeue_rc=1, squeue_err="slurm_load_jobs error: Invalid job id specified")
    assert job_states(["9"]) == {"9": JobState(GONE, "", "none")}


def test_a_controller_that_does_not_answer_is_no_answer(tmp_path, monkeypatch):
    _fake_commands(tmp_path, monkeypatch, squeue_rc=1, squeue_err="slurm_load_jobs error: Unable to contact slurm "
                                                                   "controller (connect failure)")
    assert job_states(["9"]) is None
    record = {"host": "n2", "slurm": {"job": "9", "restart": 0, "node": "n2", "cluster": ""}}
    assert owner_job_ended(record) is None  # the lock falls back on its heartbeat


def test_a_lock_of_a_job_of_another_cluster_is_not_judged_by_this_one(monkeypatch):
    monkeypatch.setenv("SLURM_JOB_ID", "3")
    monkeypatch.setenv("SLURM_CLUSTER_NAME", "here")
    record = {"host": "n2", "slurm": {"job": "9", "restart": 0, "node": "n2", "cluster": "elsewhere"}}
    assert owner_job_ended(record) is None


# --- a real cluster ------------------------------------------------------------------------------------------------

def _checksums(run_folder):
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(run_folder.iterdir()) if p.is_file()}


@pytest.mark.slow
@pytest.mark.parametrize("cluster", ["accounting", "no-accounting"], indirect=True)
def test_scancel_ends_the_sweep_in_the_grace_period_and_a_rerun_redoes_only_that_run(cluster, tiny, tmp_path):
    config = _config(tmp_path, tiny, progress=True)
    root = tmp_path / "runs" / "s"
    sweep = _cli(config, tmp_path)
    lines = Lines(sweep.stdout)
    job = wait_for_running("_0", root / "en/tiny/seed=0/config.json")  # the first job of the array trains
    cancelled = time.time()
    subprocess.run(["scancel", job], check=True)
    assert sweep.wait(timeout=900) == 1
    lines.join()
    ended = time.time()

    reported, line = lines.first("s en/tiny/seed=0: interrupted: ")
    assert f"SLURM job {job} ended without a result (state CANCELLED" in line and "log " in line
    assert reported - cancelled <= GRACE_S + POLL_S + 30  # no hang: given up within the grace period
    lags = {}
    for run in ("en/tiny/seed=1", "ru/tiny/seed=0", "ru/tiny/seed=1"):  # each reported as it finished
        when, _ = lines.first(f"s {run}: done")
        lags[run] = when - (root / run / "DONE").stat().st_mtime
        assert lags[run] < POLL_S + 5
    print(f"\n[{cluster.accounting and 'accounting' or 'no accounting'}] scancel {job}: reported "
          f"{reported - cancelled:.1f} s later (grace {GRACE_S} s, poll {POLL_S} s); sweep ended "
          f"{ended - cancelled:.1f} s after the scancel; finished runs reported "
          + ", ".join(f"{lag:.1f}" for lag in lags.values()) + " s after their DONE, in the order "
          + " < ".join(run for run, _ in sorted(((r, lines.first(f"s {r}: ")[0]) for r in [*lags, "en/tiny/seed=0"]),
                                                 key=lambda item: item[1])))
    assert "en/tiny/seed=0: interrupted: SLURM job" in lines.text  # the command's summary names the cause
    assert "Bypassing sacct error" not in lines.text and "status may be inaccurate" not in lines.text
    assert ended - cancelled < 600
    status = sweep_status(tmp_path / "runs").set_index(["language", "seed"])["state"].to_dict()
    assert status == {("en", 0): "interrupted", ("en", 1): "done", ("ru", 0): "done", ("ru", 1): "done"}

    finished = {run: _checksums(root / run) for run in ("en/tiny/seed=1", "ru/tiny/seed=0", "ru/tiny/seed=1")}
    again = _cli(config, tmp_path, "--set", "progress=false")
    again_lines = Lines(again.stdout)
    assert again.wait(timeout=900) == 0
    again_lines.join()
    table = [line.split() for _, line in again_lines.lines if line.split()[:1] in (["en"], ["ru"])]
    assert sorted(table) == [["en", "tiny", "0", "done"], ["en", "tiny", "1", "skipped"],
                             ["ru", "tiny", "0", "skipped"], ["ru", "tiny", "1", "skipped"]]
    assert {run: _checksums(root / run) for run in finished} == finished  # sha256 of every file unchanged
    assert not verify_run(root / "en/tiny/seed=0")


@pytest.mark.slow
@pytest.mark.parametrize("cluster", ["accounting"], indirect=True)
def test_a_sweep_through_slurm_against_the_same_sweep_in_process(cluster, tiny, tmp_path):
    config = _config(tmp_path / "slurm", tiny)
    with QueueSampler(every_s=1.0) as sampler:
        t0 = time.perf_counter()
        result = run_sweep(load_config(config))
        through_slurm = time.perf_counter() - t0
    assert result["state"].tolist() == ["done"] * 4, result["error"].tolist()
    assert any(state == "RUNNING" for _, rows in sampler.samples for _, state, _ in rows)  # squeue shows them
    local = load_config(config).with_overrides({"executor": "inprocess", "output_dir": str(tmp_path / "here")})
    t0 = time.perf_counter()
    assert run_sweep(local)["state"].tolist() == ["done"] * 4
    in_process = time.perf_counter() - t0
    print(f"\n4-run tiny sweep: SLURM {through_slurm:.1f} s, in-process {in_process:.1f} s, "
          f"ratio {through_slurm / in_process:.2f}")
    assert run_sweep(load_config(config))["state"].tolist() == ["skipped"] * 4  # a rerun skips finished runs


@pytest.mark.slow
@pytest.mark.parametrize("cluster", ["no-accounting"], indirect=True)
def test_a_job_array_keeps_its_parallelism_limit(cluster, tiny, tmp_path):
    config = _config(tmp_path, tiny, languages=["en"], seeds=[0, 1, 2],
                     executor_options={"slurm_array_parallelism": 1})
    with QueueSampler(every_s=0.3) as sampler:
        result = run_sweep(load_config(config))
    assert result["state"].tolist() == ["done"] * 3, result["error"].tolist()
    ours = [[(job, state, reason) for job, state, reason in rows if "_" in job] for _, rows in sampler.samples]
    assert max(sum(state == "RUNNING" for _, state, _ in rows) for rows in ours) == 1
    # a CPU was free (2 on the node, 1 per task): the array's limit held the others back
    assert any(reason == "JobArrayTaskLimit" for rows in ours for _, state, reason in rows if state == "PENDING")
    assert len({job.split("_")[0] for rows in ours for job, _, _ in rows}) == 1  # one array


def _transitions(sampler: QueueSampler, job: str) -> str:
    """The states ``squeue`` gave ``job`` while ``sampler`` ran, each with the time it was first seen."""
    seen, last = [], None
    for when, rows in sampler.samples:
        state = next(((s, r) for j, s, r in rows if j == job), ("(not listed)", ""))
        if state != last:
            seen.append(f"{time.strftime('%H:%M:%S', time.localtime(when))}.{int(when % 1 * 10)} {' '.join(state)}")
            last = state
    return f"job {job}: " + " -> ".join(seen)


@pytest.mark.slow
@pytest.mark.parametrize("cluster", ["no-accounting"], indirect=True)
def test_sigusr2_requeues_the_job_and_the_run_restarts_from_scratch(cluster, tiny, tmp_path):
    # the default grace: once, under load, squeue said FAILED for over 10 s before the requeued job was pending
    config = _config(tmp_path, tiny, languages=["en"], seeds=[0],
                     executor_options={"requeue": True, "lost_job_grace_s": 60})
    run = tmp_path / "runs/s/en/tiny/seed=0"
    sweep = _cli(config, tmp_path)
    lines = Lines(sweep.stdout)
    with QueueSampler() as sampler:  # the job's states, shown when the test fails
        job = wait_for_running("", run / "config.json")
        subprocess.run(["scancel", "--signal=USR2", job], check=True)  # submitit's signal before the time limit
        deadline = time.time() + 120
        while time.time() < deadline and not any(j == job and s == "PENDING" for j, s, _ in queue()):
            time.sleep(0.2)
        assert (run / "INTERRUPTED").exists() and "requeued" in (run / "INTERRUPTED").read_text(), \
            _transitions(sampler, job)
        # SLURM holds the requeued job back (BeginTime) until the killed incarnation's credential expired
        assert sweep.wait(timeout=600) == 0, lines.text + "\n" + _transitions(sampler, job)
    lines.join()
    assert not verify_run(run) and not (run / "INTERRUPTED").exists()
    log = next((tmp_path / "runs/s/.submitit").glob("*/*_log.err")).read_text()
    assert "Caught signal SIGUSR2" in log and "DUE TO JOB REQUEUE" in log
    deadline = time.time() + 60
    while time.time() < deadline and [s for j, s, _ in queue() if j == job] not in ([], ["COMPLETED"]):
        time.sleep(0.2)
    assert [s for j, s, _ in queue() if j == job] in ([], ["COMPLETED"])  # the requeued job itself ends well
    print("\n" + _transitions(sampler, job))


@pytest.mark.slow
@pytest.mark.parametrize("cluster", ["no-accounting"], indirect=True)
def test_ctrl_c_cancels_the_sweeps_own_jobs_and_no_other(cluster, tiny, tmp_path):
    other = subprocess.run(["sbatch", "--parsable", "--wrap", "sleep 300", "--output", "/dev/null"], check=True,
                           capture_output=True, text=True).stdout.strip()  # someone else's job
    try:
        # runs that train for minutes, so that Ctrl-C lands while they train: on a loaded host the default 2-epoch
        # runs once ended, and the sweep with them, between the check below and the signal
        sweep = _cli(_config(tmp_path, tiny, max_epochs=400, patience=400), tmp_path)
        lines = Lines(sweep.stdout)
        job = wait_for_running("_0", tmp_path / "runs/s/en/tiny/seed=0/config.json")
        sweep.send_signal(signal.SIGINT)
        assert sweep.wait(timeout=60) == 130
        lines.join()
        _, line = lines.first("interrupted: cancelled ")
        array = job.split("_")[0]
        assert f"SLURM job(s) of this sweep: {array}_0 " in line
        deadline = time.time() + 60
        while time.time() < deadline and any(j.startswith(f"{array}_") and s in ("PENDING", "RUNNING", "COMPLETING")
                                             for j, s, _ in queue()):
            time.sleep(0.2)
        states = {j: s for j, s, _ in queue()}
        assert not any(j.startswith(f"{array}_") and s != "CANCELLED" for j, s in states.items() if s != "COMPLETED")
        assert states[other] in ("RUNNING", "PENDING")  # not the sweep's: untouched
        assert sweep_status(tmp_path / "runs")["state"].isin(["interrupted", "pending", "done"]).all()
    finally:
        subprocess.run(["scancel", other], check=False)
