"""The run lock on a shared file system: the owner's record and heartbeat, takeover of another host's lock when its
heartbeat is stale or its SLURM job has ended, and two processes posing as two hosts never training one run."""

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time

import pytest

from diagnostics.finetune import RunLockedError, run_dir
from diagnostics.finetune import _run_lock as run_lock
from diagnostics.finetune import _slurm as slurm
from diagnostics.finetune._run_lock import RunLock, lock_held
from diagnostics.finetune._store import run_state

from _paths import ROOT


@pytest.fixture(autouse=True)
def short_bounds(monkeypatch):
    """Heartbeats every 0.1 s, another host's lock stale after 1 s, no SLURM job around."""
    monkeypatch.setenv(run_lock.HEARTBEAT_VARIABLE, "0.1")
    monkeypatch.setenv(run_lock.STALE_VARIABLE, "1")
    monkeypatch.setattr(run_lock, "TAKEOVER_SETTLE_S", 0.05)
    for name in ("SLURM_JOB_ID", "SLURM_ARRAY_JOB_ID", "SLURM_ARRAY_TASK_ID", "SLURM_RESTART_COUNT"):
        monkeypatch.delenv(name, raising=False)
    slurm._cache.clear()


def _foreign_lock(folder, age_s, **extra):
    """A ``LOCK`` written by a process on another host, last touched ``age_s`` seconds ago."""
    folder.mkdir(parents=True, exist_ok=True)
    record = {"pid": 4242, "host": "other-node", "flock": True, "heartbeat_s": 0.1, "token": "t", **extra}
    (folder / "LOCK").write_text(json.dumps(record))
    then = time.time() - age_s
    os.utime(folder / "LOCK", (then, then))
    (folder / "config.json").write_text("{}")  # a partial run


def _fake_slurm(tmp_path, monkeypatch, squeue_lines):
    """Put ``squeue`` / ``sacct`` on PATH that list ``squeue_lines`` (``id|STATE|nodes``) and know nothing else."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    body = "\n".join(squeue_lines)
    (bin_dir / "squeue").write_text(f"#!/bin/sh\ncat <<'EOF'\n{body}\nEOF\n")
    (bin_dir / "sacct").write_text("#!/bin/sh\necho 'Slurm accounting storage is disabled' >&2\nexit 1\n")
    for tool in ("squeue", "sacct"):
        (bin_dir / tool).chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")


def test_the_lock_names_its_owner_and_its_heartbeat_touches_it(tmp_path):
    folder = run_dir(tmp_path, "e", "en", "m", 0)
    with RunLock(folder) as lock:
        record = json.loads((folder / "LOCK").read_text())
        assert record["pid"] == os.getpid() and record["host"] == socket.gethostname()
        assert record["heartbeat_s"] == 0.1 and record["flock"] is True and "slurm" not in record
        first = (folder / "LOCK").stat().st_mtime
        time.sleep(0.5)
        assert (folder / "LOCK").stat().st_mtime > first  # touched while held
        assert lock.lost is None and run_state(folder) == "running"
    assert not (folder / "LOCK").exists()
    time.sleep(0.3)  # the heartbeat thread has stopped: it does not bring the file back
    assert not (folder / "LOCK").exists()


def test_inside_a_slurm_job_the_lock_names_the_job(tmp_path, monkeypatch):
    monkeypatch.setenv("SLURM_JOB_ID", "31")
    monkeypatch.setenv("SLURM_ARRAY_JOB_ID", "30")
    monkeypatch.setenv("SLURM_ARRAY_TASK_ID", "1")
    monkeypatch.setenv("SLURM_RESTART_COUNT", "2")
    monkeypatch.setenv("SLURMD_NODENAME", "node7")
    folder = run_dir(tmp_path, "e", "en", "m", 0)
    with RunLock(folder):
        record = json.loads((folder / "LOCK").read_text())
    assert record["slurm"] == {"job": "30_1", "restart": 2, "node": "node7",
                               "cluster": os.environ.get("SLURM_CLUSTER_NAME", "")}


def test_another_hosts_lock_is_taken_over_once_its_heartbeat_is_stale_and_not_before(tmp_path):
    folder = run_dir(tmp_path, "e", "en", "m", 0)
    _foreign_lock(folder, age_s=0.2)  # touched 0.2 s ago: alive
    with pytest.raises(RunLockedError, match=r"other-node.*older than 1 s"):
        RunLock(folder).acquire()
    assert lock_held(folder) and run_state(folder) == "running"

    _foreign_lock(folder, age_s=1.5)  # no heartbeat for longer than the bound: its host is gone
    assert not lock_held(folder) and run_state(folder) == "interrupted"
    with RunLock(folder):
        assert json.loads((folder / "LOCK").read_text())["pid"] == os.getpid()
    assert not (folder / "LOCK").exists()


def test_a_lock_without_heartbeat_from_another_host_is_honoured(tmp_path):
    """Written by a version without heartbeats: nothing tells that its owner died."""
    folder = run_dir(tmp_path, "e", "en", "m", 0)
    _foreign_lock(folder, age_s=3600)
    record = json.loads((folder / "LOCK").read_text())
    del record["heartbeat_s"]
    (folder / "LOCK").write_text(json.dumps(record))
    with pytest.raises(RunLockedError):
        RunLock(folder).acquire()


def test_a_fresh_lock_whose_slurm_job_has_ended_is_taken_over_at_once(tmp_path, monkeypatch):
    _fake_slurm(tmp_path, monkeypatch, ["77|CANCELLED|other-node"])
    folder = run_dir(tmp_path, "e", "en", "m", 0)
    _foreign_lock(folder, age_s=0.0, slurm={"job": "77", "restart": 0, "node": "other-node", "cluster": ""})
    assert run_state(folder) == "interrupted"
    with RunLock(folder):
        pass


def test_slurm_outranks_the_heartbeat_a_running_job_keeps_its_lock(tmp_path, monkeypatch):
    """A suspended job's heartbeat stops, but SLURM says it still runs on its node."""
    _fake_slurm(tmp_path, monkeypatch, ["78|SUSPENDED|other-node"])
    folder = run_dir(tmp_path, "e", "en", "m", 0)
    _foreign_lock(folder, age_s=60, slurm={"job": "78", "restart": 0, "node": "other-node", "cluster": ""})
    with pytest.raises(RunLockedError, match="SLURM job 78"):
        RunLock(folder).acquire()


def test_a_requeued_job_takes_over_the_lock_of_its_killed_incarnation(tmp_path, monkeypatch):
    folder = run_dir(tmp_path, "e", "en", "m", 0)
    _foreign_lock(folder, age_s=0.0, slurm={"job": "79", "restart": 0, "node": "other-node", "cluster": ""})
    monkeypatch.setenv("SLURM_JOB_ID", "79")
    monkeypatch.setenv("SLURM_RESTART_COUNT", "1")
    with RunLock(folder):
        assert json.loads((folder / "LOCK").read_text())["slurm"]["restart"] == 1


HOLDER = textwrap.dedent("""
    import socket, sys, time
    socket.gethostname = lambda: sys.argv[2]          # this process poses as another machine
    from diagnostics.finetune import _run_lock as run_lock
    run_lock.fcntl = None                              # a shared file system whose flocks other hosts do not see
    run_lock.TAKEOVER_SETTLE_S = 0.05
    log = open(sys.argv[3], "a", buffering=1)
    lock = run_lock.RunLock(sys.argv[1])
    deadline = time.time() + float(sys.argv[4])
    while True:
        try:
            lock.acquire()
            break
        except run_lock.RunLockedError:
            if time.time() > deadline:
                log.write(f"{sys.argv[2]} gave-up {time.time()}\\n")
                sys.exit(3)
            time.sleep(0.05)
    log.write(f"{sys.argv[2]} got {time.time()}\\n")
    try:
        end = time.time() + float(sys.argv[5])
        while time.time() < end:                      # "training"
            log.write(f"{sys.argv[2]} train {time.time()}\\n")
            time.sleep(0.05)
        log.write(f"{sys.argv[2]} done {time.time()}\\n")
    except run_lock.RunLockLost:
        log.write(f"{sys.argv[2]} lost {time.time()}\\n")
    finally:
        lock.release()
""")


def _holder(folder, host, log, wait_s, train_s, sigint=signal.SIG_DFL):
    """A process posing as ``host`` that takes the lock, "trains" ``train_s`` seconds and logs what happens.

    ``sigint=signal.SIG_IGN`` starts it with SIGINT ignored, as a job started with ``&`` from a batch script is."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-c", HOLDER, str(folder), host, str(log), str(wait_s), str(train_s)],
                            env=env, preexec_fn=lambda: signal.signal(signal.SIGINT, sigint))


def _events(log):
    rows = [line.split() for line in log.read_text().splitlines()]
    return [(host, what, float(t)) for host, what, t in rows]


def _wait_for(log, text, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if log.exists() and text in log.read_text():
            return
        time.sleep(0.05)
    raise AssertionError(f"{text!r} not in {log.read_text() if log.exists() else 'no log'}")


def test_two_hosts_never_train_one_run_at_once(tmp_path):
    folder = run_dir(tmp_path, "e", "en", "m", 0)
    log = tmp_path / "events"
    a = _holder(folder, "node-a", log, wait_s=30, train_s=2.0)
    _wait_for(log, "node-a got")
    b = _holder(folder, "node-b", log, wait_s=30, train_s=0.3)  # tries every 0.05 s while A trains and beats
    assert a.wait(60) == 0 and b.wait(60) == 0
    events = _events(log)
    a_done = next(t for h, w, t in events if h == "node-a" and w == "done")
    b_got = next(t for h, w, t in events if h == "node-b" and w == "got")
    assert b_got >= a_done  # B waited for A's release, although A's flock was invisible to it
    assert not folder.joinpath("LOCK").exists()


@pytest.mark.parametrize("sigint", [signal.SIG_DFL, signal.SIG_IGN], ids=["sigint-default", "sigint-ignored"])
def test_a_frozen_host_loses_its_lock_and_stops_when_it_wakes(tmp_path, sigint):
    """A owner whose heartbeat stops (a frozen machine) is taken over after the bound; when it wakes, its heartbeat
    finds the new owner and stops its training, so the two never train on together; also when the owner ignores
    SIGINT (started in the background of a non-interactive shell)."""
    folder = run_dir(tmp_path, "e", "en", "m", 0)
    log = tmp_path / "events"
    a = _holder(folder, "node-a", log, wait_s=30, train_s=60, sigint=sigint)
    _wait_for(log, "node-a got")
    os.kill(a.pid, signal.SIGSTOP)
    time.sleep(0.05)  # let the stop land
    last_beat = folder.joinpath("LOCK").stat().st_mtime  # A's heartbeat touches LOCK; frozen, it touches it no more
    b = _holder(folder, "node-b", log, wait_s=30, train_s=3.0)
    _wait_for(log, "node-b got")
    os.kill(a.pid, signal.SIGCONT)
    woke = time.time()
    assert a.wait(30) == 0 and b.wait(30) == 0
    events = _events(log)
    b_got = next(t for h, w, t in events if h == "node-b" and w == "got")
    assert b_got - last_beat >= 1.0  # not before A's last heartbeat is as old as the stale bound
    a_lost = next(t for h, w, t in events if h == "node-a" and w == "lost")
    assert a_lost - woke < 1.5  # within a few heartbeats of waking
    assert not any(h == "node-a" and w == "done" for h, w, t in events)
    assert ("node-b", "done") in {(h, w) for h, w, t in events}
    assert not folder.joinpath("LOCK").exists()  # A did not remove B's lock; B removed its own

