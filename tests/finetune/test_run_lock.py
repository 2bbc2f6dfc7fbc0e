"""The lease of a run folder: its token that only grows, its heartbeat counter, liveness judged on the reader's own
clock, takeover of another host's lease when SLURM says its job ended or its heartbeat stood still, fencing of a
frozen owner, claims that need no shared ``flock``, and disk errors that name the path and leak nothing."""

import errno
import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from diagnostics.finetune import RunLockedError, RunStoreError, run_dir
from diagnostics.finetune import _run_lock as run_lock
from diagnostics.finetune import _slurm as slurm
from diagnostics.finetune._run_lock import LEASE_FOLDER, RunLock, RunLockLost, lease_head, lock_held
from diagnostics.finetune._run_writer import RunWriter
from diagnostics.finetune._store import run_state

from _paths import ROOT


@pytest.fixture(autouse=True)
def short_bounds(monkeypatch):
    """Heartbeats every 0.1 s, another host's lease stale after 1 s watched, no SLURM job around."""
    monkeypatch.setenv(run_lock.HEARTBEAT_VARIABLE, "0.1")
    monkeypatch.setenv(run_lock.STALE_VARIABLE, "1")
    for name in ("SLURM_JOB_ID", "SLURM_ARRAY_JOB_ID", "SLURM_ARRAY_TASK_ID", "SLURM_RESTART_COUNT"):
        monkeypatch.delenv(name, raising=False)
    slurm._cache.clear()
    run_lock._memory.clear()


def _foreign_lease(folder, token=1, beat=0, **extra):
    """Lease ``token`` of a process on another host, its heartbeat counter at ``beat``."""
    leases = folder / LEASE_FOLDER
    leases.mkdir(parents=True, exist_ok=True)
    record = {"token": token, "pid": 4242, "host": "other-node", "heartbeat_s": 0.1, **extra}
    (leases / str(token)).write_text(json.dumps(record))
    (leases / f"{token}.beat").write_text(str(beat))
    (folder / "LOCK").write_text(json.dumps(record))
    (folder / "config.json").write_text("{}")  # a partial run
    return record


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


def test_the_lease_names_its_owner_its_token_grows_and_its_heartbeat_counts(tmp_path):
    folder = run_dir(tmp_path, "e", "en", "m", 0)
    tokens = []
    for _ in range(3):
        with RunLock(folder) as lock:
            record = json.loads((folder / "LOCK").read_text())
            assert record["pid"] == os.getpid() and record["host"] == socket.gethostname()
            assert record["token"] == lock.token and "slurm" not in record
            assert lease_head(folder) == (lock.token, record, False)
            time.sleep(0.45)
            assert int((folder / LEASE_FOLDER / f"{lock.token}.beat").read_text()) >= 2  # counted while held
            assert lock.lost is None and lock.holds() and run_state(folder) == "running"
            tokens.append(lock.token)
        assert not (folder / "LOCK").exists() and lease_head(folder)[2]  # released
        assert run_state(folder) == "pending" and not lock_held(folder)
    assert tokens == [1, 2, 3]


def test_inside_a_slurm_job_the_lease_names_the_job(tmp_path, monkeypatch):
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


def test_another_hosts_lease_is_taken_over_only_after_this_host_watched_its_heartbeat_stand_still(tmp_path):
    folder = run_dir(tmp_path, "e", "en", "m", 0)
    _foreign_lease(folder, token=4)
    started = time.monotonic()
    with pytest.raises(RunLockedError, match=r"other-node.*stand still for 1 s"):
        RunLock(folder).acquire()
    assert lock_held(folder) and run_state(folder) == "running"
    while time.monotonic() - started < 1.2:  # a live owner's counter moves: the watch starts again each time
        (folder / LEASE_FOLDER / "4.beat").write_text(str(int(time.monotonic() * 10)))
        assert lock_held(folder)
        time.sleep(0.1)
    still = time.monotonic()
    while time.monotonic() - still < 1.1:  # now it stands still
        time.sleep(0.1)
    assert not lock_held(folder) and run_state(folder) == "interrupted"
    with RunLock(folder) as lock:
        assert lock.token == 5 and json.loads((folder / "LOCK").read_text())["pid"] == os.getpid()


def test_the_watch_goes_on_in_a_later_process_of_the_same_host(tmp_path):
    """A sweep run again after the bound takes over at once: the first one's observation is kept on disk."""
    folder = run_dir(tmp_path, "e", "en", "m", 0)
    _foreign_lease(folder)
    assert lock_held(folder)  # first sight
    time.sleep(1.1)
    run_lock._memory.clear()  # as a new process
    assert not lock_held(folder)


@pytest.mark.parametrize("skew_s", [600, -600], ids=["reader-10-min-ahead", "reader-10-min-behind"])
def test_a_readers_clock_skew_changes_nothing(tmp_path, monkeypatch, skew_s):
    """No time written by another host is compared with this host's clock: a live owner stays live and a dead one
    goes stale after the bound, whatever this host's wall clock says."""
    folder = run_dir(tmp_path, "e", "en", "m", 0)
    _foreign_lease(folder)
    wall = time.time
    monkeypatch.setattr(time, "time", lambda: wall() + skew_s)
    stop = threading.Event()

    def beat():
        n = 0
        while not stop.wait(0.1):
            n += 1
            (folder / LEASE_FOLDER / "1.beat").write_text(str(n))

    owner = threading.Thread(target=beat)
    owner.start()
    try:
        for _ in range(15):  # 1.5 s, longer than the bound
            assert lock_held(folder)
            time.sleep(0.1)
    finally:
        stop.set()
        owner.join()
    assert lock_held(folder)  # the counter stopped: watching starts now
    time.sleep(1.1)
    assert not lock_held(folder)


def test_a_lease_without_heartbeat_from_another_host_is_honoured(tmp_path):
    """Written by a version without heartbeats: nothing tells that its owner died."""
    folder = run_dir(tmp_path, "e", "en", "m", 0)
    record = _foreign_lease(folder)
    del record["heartbeat_s"]
    (folder / LEASE_FOLDER / "1").write_text(json.dumps(record))
    time.sleep(1.1)
    with pytest.raises(RunLockedError):
        RunLock(folder).acquire()


def test_a_lease_whose_slurm_job_has_ended_is_taken_over_at_once(tmp_path, monkeypatch):
    _fake_slurm(tmp_path, monkeypatch, ["77|CANCELLED|other-node"])
    folder = run_dir(tmp_path, "e", "en", "m", 0)
    _foreign_lease(folder, slurm={"job": "77", "restart": 0, "node": "other-node", "cluster": ""})
    assert run_state(folder) == "interrupted"
    with RunLock(folder) as lock:
        assert lock.token == 2


def test_slurm_outranks_the_heartbeat_a_running_job_keeps_its_lease(tmp_path, monkeypatch):
    """A suspended job's heartbeat stops, but SLURM says it still runs on its node."""
    _fake_slurm(tmp_path, monkeypatch, ["78|SUSPENDED|other-node"])
    folder = run_dir(tmp_path, "e", "en", "m", 0)
    _foreign_lease(folder, slurm={"job": "78", "restart": 0, "node": "other-node", "cluster": ""})
    lock_held(folder)
    time.sleep(1.1)
    with pytest.raises(RunLockedError, match="SLURM job 78"):
        RunLock(folder).acquire()


def test_a_requeued_job_takes_over_the_lease_of_its_killed_incarnation(tmp_path, monkeypatch):
    folder = run_dir(tmp_path, "e", "en", "m", 0)
    _foreign_lease(folder, slurm={"job": "79", "restart": 0, "node": "other-node", "cluster": ""})
    monkeypatch.setenv("SLURM_JOB_ID", "79")
    monkeypatch.setenv("SLURM_RESTART_COUNT", "1")
    with RunLock(folder):
        assert json.loads((folder / "LOCK").read_text())["slurm"]["restart"] == 1


def test_a_lease_taken_over_fences_its_old_owner(tmp_path, monkeypatch):
    """The old owner's next write raises ``RunLockLost`` naming the new owner, and writes nothing; its heartbeat
    notes the loss; its release leaves the new owner's lease alone."""
    folder = run_dir(tmp_path, "e", "en", "m", 0)
    old = RunLock(folder).acquire()
    writer = RunWriter(old)
    writer.write_text("progress", "old")
    # another host judged it dead and took generation 2 (its claim: one link, as RunLock._claim does)
    (folder / LEASE_FOLDER / "2").write_text(json.dumps({"token": 2, "pid": 99, "host": "node-b",
                                                          "claimed": "2026-01-01T10:00:00"}))
    with pytest.raises(RunLockLost, match=r"lost to pid 99 on node-b at 2026-01-01T10:00:00"):
        writer.write_text("progress", "stale")
    assert (folder / "progress").read_text() == "old"
    assert not writer.mark_failed("Traceback ...") and not (folder / "FAILED").exists()
    time.sleep(0.3)
    assert old.lost is not None and old.lost["host"] == "node-b"
    old.release()
    assert lease_head(folder)[:1] == (2,) and not (folder / LEASE_FOLDER / "2.end").exists()


def test_a_disk_error_while_claiming_names_the_path_and_leaks_nothing(tmp_path, monkeypatch):
    folder = run_dir(tmp_path, "e", "en", "m", 0)
    folder.mkdir(parents=True)
    fds = len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else None
    real_link = os.link

    def full(src, dst, *args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "link", full)
    with pytest.raises(RunStoreError, match=r"No space left on device.*\.lease/1") as caught:
        RunLock(folder).acquire()
    assert caught.value.errno == errno.ENOSPC and "\n" not in str(caught.value)
    assert [p.name for p in (folder / LEASE_FOLDER).iterdir() if p.name.startswith(".claim")] == []
    if fds is not None:
        assert len(os.listdir("/proc/self/fd")) == fds  # no descriptor (and so no flock) kept
    monkeypatch.setattr(os, "link", real_link)
    with RunLock(folder) as lock:  # the space is back: the claim goes through
        assert lock.token == 1


HOLDER = textwrap.dedent("""
    import socket, sys, time
    socket.gethostname = lambda: sys.argv[2]          # this process poses as another machine
    from diagnostics.finetune import _run_lock as run_lock
    from diagnostics.finetune._run_writer import RunWriter
    run_lock.fcntl = None                              # a shared file system whose flocks other hosts do not see
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
    writer = RunWriter(lock)
    try:
        end = time.time() + float(sys.argv[5])
        while time.time() < end:                      # "training": every step writes through the fenced writer
            now = time.time()
            writer.write_text("progress", f"{sys.argv[2]} {now}")
            log.write(f"{sys.argv[2]} wrote {now}\\n")  # the time the step began, before its write's check
            time.sleep(0.05)
        writer.mark_done({})
        log.write(f"{sys.argv[2]} done {time.time()}\\n")
    except run_lock.RunLockLost:
        log.write(f"{sys.argv[2]} lost {time.time()}\\n")
    finally:
        lock.release()
""")


def _holder(folder, host, log, wait_s, train_s, sigint=signal.SIG_DFL):
    """A process posing as ``host`` that takes the lease, "trains" ``train_s`` seconds and logs what happens.

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
def test_a_frozen_host_loses_its_lease_and_writes_nothing_when_it_wakes(tmp_path, sigint):
    """An owner whose heartbeat stops (a frozen machine) is taken over once the other host has watched it stand
    still for the bound; woken, its next write finds the new owner: it stops and writes nothing into the run."""
    folder = run_dir(tmp_path, "e", "en", "m", 0)
    log = tmp_path / "events"
    a = _holder(folder, "node-a", log, wait_s=30, train_s=60, sigint=sigint)
    _wait_for(log, "node-a wrote")
    os.kill(a.pid, signal.SIGSTOP)
    frozen = time.time()
    b = _holder(folder, "node-b", log, wait_s=30, train_s=3.0)
    _wait_for(log, "node-b got")
    os.kill(a.pid, signal.SIGCONT)
    woke = time.time()
    assert a.wait(30) == 0 and b.wait(30) == 0
    events = _events(log)
    b_got = next(t for h, w, t in events if h == "node-b" and w == "got")
    assert b_got - frozen >= 1.0  # not before B watched A's counter stand still for the bound
    a_lost = next(t for h, w, t in events if h == "node-a" and w == "lost")
    assert a_lost - woke < 1.0  # at its first write after waking
    assert not any(h == "node-a" and w in ("wrote", "done") and t > b_got for h, w, t in events)
    assert ("node-b", "done") in {(h, w) for h, w, t in events}
    assert (folder / "progress").read_text().startswith("node-b ")  # A wrote nothing over B's files
    assert (folder / "DONE").exists() and not folder.joinpath("LOCK").exists()


CLAIMER = textwrap.dedent("""
    import socket, sys, time
    socket.gethostname = lambda: sys.argv[2]
    from diagnostics.finetune import _run_lock as run_lock
    run_lock.fcntl = None                              # flocks that the other "hosts" do not see
    start = float(sys.argv[3])
    while time.time() < start:
        pass
    try:
        lock = run_lock.RunLock(sys.argv[1]).acquire()
    except run_lock.RunLockedError:
        print("refused")
    else:
        print(f"got {lock.token}")
        time.sleep(0.3)
        lock.release()
""")


@pytest.mark.parametrize("dead_owner", [False, pytest.param(True, marks=pytest.mark.slow)],
                         ids=["fresh-run", "dead-owner"])
def test_hosts_claiming_at_the_same_instant_without_shared_flock_get_one_owner(tmp_path, dead_owner):
    """Three "hosts" start their claims within microseconds of each other on a fresh run, or on a run whose owner
    (on this host) died: exactly one gets the lease, every time."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for trial in range(5):
        folder = run_dir(tmp_path, "e", "en", "m", trial)
        if dead_owner:
            gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                                  text=True).stdout.strip()
            leases = folder / LEASE_FOLDER
            leases.mkdir(parents=True)
            record = {"token": 1, "pid": int(gone), "host": "node-0", "heartbeat_s": 0.1}
            (leases / "1").write_text(json.dumps(record))
            (folder / "LOCK").write_text(json.dumps(record))
        start = time.time() + 1.5
        claimers = [subprocess.Popen([sys.executable, "-c", CLAIMER, str(folder),
                                      "node-0" if dead_owner else f"node-{i}", str(start)],
                                     env=env, stdout=subprocess.PIPE, text=True) for i in range(3)]
        answers = sorted(p.communicate(timeout=60)[0].strip() for p in claimers)
        expected = "got 2" if dead_owner else "got 1"
        assert answers == [expected, "refused", "refused"], answers
