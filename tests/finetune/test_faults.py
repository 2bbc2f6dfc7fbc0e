"""Faults of the run store that need root, mounts or real processes (the slow target; run as root):

* two "hosts" (own UTS namespaces, each seeing the store through its own ``bindfs`` view, so that their flocks do
  not see each other) claiming one fresh run at the same instant, 30 times, with and without a delay before
  ``LOCK``: one trains each time; a frozen owner (SIGSTOP past the stale bound) whose run another host takes over
  and finishes writes nothing into it when it wakes, and says so;
* readers whose clock is 10 minutes ahead or behind (``faketime``) against a live and a dead owner of another host;
* a full tmpfs at each write of a run, a read-only remount, an unreadable finished file (root without its
  permission-override capabilities);
* a fused multi-run sweep killed at random moments (SIGKILL, SIGTERM, SIGINT) 20 times while it trains, resumed each
  time (a fresh sweep once one is done): every run done, predictions equal to an uninterrupted sweep, no run ever
  held by two processes at once (``DIAGNOSTICS_LEASE_LOG``).

Sweeps run in processes forked from one warmed-up process (:class:`_Zygote`), so that a killed and resumed sweep
costs its training, not the imports and data loading of a fresh interpreter.
"""

import itertools
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pandas as pd
import pytest

from diagnostics.finetune import _run_lock as run_lock
from diagnostics.finetune._run_lock import lease_head

from _paths import ROOT
from _sweeps import write_config

pytestmark = pytest.mark.slow

#: Heartbeat and stale bound (seconds) of every process of this module.
HEARTBEAT_S, STALE_S = 0.1, 2.0
RUN = ("runs", "s", "en", "tiny", "seed=0")
#: A child process's stand-in host name where it cannot have a UTS namespace of its own.
POSE = ("import os, socket\nif os.environ.get('FAULT_HOST'):\n"
        "    socket.gethostname = lambda: os.environ['FAULT_HOST']\n")


def _environment(**extra) -> dict:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")]),
           run_lock.HEARTBEAT_VARIABLE: str(HEARTBEAT_S), run_lock.STALE_VARIABLE: str(STALE_S),
           "TOKENIZERS_PARALLELISM": "false"}
    for name in ("SLURM_JOB_ID", "SLURM_ARRAY_JOB_ID", "SLURM_ARRAY_TASK_ID", run_lock.LEASE_LOG_VARIABLE):
        env.pop(name, None)
    return env | extra


def _require_root() -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root (mounts, UTS namespaces, capabilities): run `bash scripts/test.sh --slow` as root")


def _require(tool: str) -> None:
    _require_root()
    if shutil.which(tool) is None:
        pytest.skip(f"needs `{tool}`: `bash scripts/setup_fault_tools.sh` installs it (as root, with apt-get)")


def _uts_works() -> bool:
    probe = subprocess.run(["unshare", "--uts", "sh", "-c", "hostname fault-probe && hostname"], capture_output=True,
                           text=True, check=False)
    return probe.returncode == 0 and probe.stdout.strip() == "fault-probe"


def _as_host(host: str, argv: list[str], env: dict) -> tuple[list[str], dict]:
    """``argv`` run as machine ``host``: in a UTS namespace of its own, else posing through ``FAULT_HOST``."""
    if shutil.which("unshare") and _uts_works():
        return ["unshare", "--uts", "sh", "-c", 'hostname "$0" && exec "$@"', host, *argv], env
    return argv, {**env, "FAULT_HOST": host}


@pytest.fixture
def mount(tmp_path):
    """``mount(command, target)``: run a mount command onto ``target`` (created); unmounted after the test."""
    mounted = []

    def do(command: list[str], target: Path) -> Path:
        target.mkdir(parents=True, exist_ok=True)
        done = subprocess.run([*command, str(target)], capture_output=True, text=True, check=False)
        if done.returncode:
            pytest.skip(f"{' '.join(command)} failed here: {done.stderr.strip()}")
        mounted.append(target)
        return target

    yield do
    for target in reversed(mounted):
        subprocess.run(["umount", "-l", str(target)], capture_output=True, check=False)


def _views(mount, tmp_path) -> tuple[Path, Path, Path]:
    """A folder and two bindfs views of it, as two hosts see one network file system; their flocks are separate."""
    _require("bindfs")
    store = tmp_path / "store"
    store.mkdir()
    a, b = (mount(["bindfs", str(store)], tmp_path / name) for name in ("view-a", "view-b"))
    import fcntl

    with open(a / ".probe", "w") as one, open(b / ".probe") as other:
        fcntl.flock(one, fcntl.LOCK_EX | fcntl.LOCK_NB)
        fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)  # would raise if the views shared their flocks
    (store / ".probe").unlink()
    return store, a, b


# ---- processes forked from one warmed-up interpreter ---------------------------------------------------------------

ZYGOTE = textwrap.dedent("""
    import ctypes, json, os, socket, sys, time, traceback
    from diagnostics.finetune import load_config, run_sweep
    import diagnostics.cli
    run_sweep(load_config(sys.argv[1]))          # imports, data and tokenizer loaded once, for every child
    replies = sys.stdout
    sys.stdout = sys.stderr

    def become(host):
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.unshare(0x04000000) == 0 and libc.sethostname(host.encode(), len(host)) == 0:  # CLONE_NEWUTS
            return
        socket.gethostname = lambda: host

    for line in sys.stdin:
        request = json.loads(line)
        if "wait" in request:
            pid, deadline, status = request["wait"], time.time() + request["timeout"], None
            while status is None:
                done, code = os.waitpid(pid, os.WNOHANG)
                if done:
                    status = -os.WTERMSIG(code) if os.WIFSIGNALED(code) else os.WEXITSTATUS(code)
                elif time.time() > deadline:
                    os.kill(pid, 9)
                    os.waitpid(pid, 0)
                    status = "timeout"
                else:
                    time.sleep(0.02)
            replies.write(json.dumps({"status": status, "at": time.time()}) + "\\n")
            replies.flush()
            continue
        pid = os.fork()
        if pid:
            replies.write(json.dumps({"pid": pid}) + "\\n")
            replies.flush()
            continue
        code = 1
        try:
            out = os.open(request["out"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            os.dup2(out, 1)
            os.dup2(out, 2)
            sys.stdout, sys.stderr = open(1, "w", buffering=1), open(2, "w", buffering=1)
            os.environ.update(request.get("env", {}))
            if request.get("host"):
                become(request["host"])
            exec(compile(request["code"], "<child>", "exec"), {"__name__": "__child__", "ARGS": request["args"]})
            code = 0
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
        except BaseException:
            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
""")


class _Zygote:
    """A warmed-up Python that forks a child per request, runs code there and reports how the child ended."""

    def __init__(self, warm_config: Path, log: Path):
        self.log = open(log, "w")
        self.proc = subprocess.Popen([sys.executable, "-c", ZYGOTE, str(warm_config)], env=_environment(),
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, text=True)

    def _ask(self, request: dict) -> dict:
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the zygote died: {Path(self.log.name).read_text()[-3000:]}")
        return json.loads(line)

    def start(self, code: str, out: Path, *, args=(), env=None, host=None) -> int:
        """Fork a child running ``code`` (``ARGS``: ``args``), its output appended to ``out``; its pid."""
        return self._ask({"code": code, "args": [str(a) for a in args], "out": str(out), "env": env or {},
                          "host": host})["pid"]

    def wait(self, pid: int, timeout: float = 300) -> int:
        """The child's exit status (negative: the signal that ended it); it fails the test after ``timeout``."""
        status = self._ask({"wait": pid, "timeout": timeout})["status"]
        assert status != "timeout", f"child {pid} still ran after {timeout} s"
        return status

    def run(self, code: str, out: Path, **kwargs) -> int:
        return self.wait(self.start(code, out, **kwargs))

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(30)
        self.log.close()


@pytest.fixture(scope="module")
def zygote(tiny_model_dir, tmp_path_factory):
    folder = tmp_path_factory.mktemp("zygote")
    warm = write_config(folder, tiny_model_dir, languages=["en", "ru"], seeds=[0], train_size=32, max_epochs=1)
    forker = _Zygote(warm, folder / "zygote.log")
    yield forker
    forker.close()


#: Child code: ``sweep run CONFIG`` as on the command line (exit status as the CLI's).
CLI = "import sys\nfrom diagnostics.cli import main\nsys.argv = ['diagnostics', 'sweep', 'run', ARGS[0]]\nmain()\n"

#: Child code: run the sweep ``ARGS[0]`` in process, write each run's state, error and problems to ``ARGS[1]``.
SWEEP = textwrap.dedent("""
    import json, warnings
    from pathlib import Path
    from diagnostics.finetune import load_config, run_sweep, verify_run
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = run_sweep(load_config(ARGS[0]))
    rows = [{"seed": int(r.seed), "language": r.language, "state": r.state, "error": r.error,
             "problems": verify_run(Path(r.path)) if r.state in ("done", "skipped") else None}
            for r in result.itertuples()]
    Path(ARGS[1]).write_text(json.dumps({"runs": rows, "warnings": [str(w.message) for w in caught]}))
""")


def _sweep(zygote, config: Path, tmp_path: Path, name: str = "sweep", **kwargs) -> dict:
    report, out = tmp_path / f"{name}.json", tmp_path / f"{name}.out"
    status = zygote.run(SWEEP, out, args=[config, report], **kwargs)
    assert status == 0, out.read_text()[-3000:]
    return json.loads(report.read_text())


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _one_run_config(folder: Path, tiny: Path, output: Path, **overrides) -> Path:
    values = {"languages": ["en"], "seeds": [0], "train_size": 32, "max_epochs": 1, "output_dir": str(output)}
    values |= overrides
    return write_config(folder, tiny, **values)


# ---- 1. two hosts without shared flocks --------------------------------------------------------------------------

CLAIMER = POSE + textwrap.dedent("""
    import sys, time
    from diagnostics.finetune import _run_lock as run_lock
    from diagnostics.finetune._run_writer import RunWriter
    root, spacing, trials, delay = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
    host = socket.gethostname()
    print("ready", flush=True)
    first = float(sys.stdin.readline())                  # the same instant for both hosts, once both are ready
    if delay:                                            # the owner record (LOCK) comes late
        write_pointer = run_lock.RunLock._write_pointer
        def late(self, record):
            time.sleep(delay)
            write_pointer(self, record)
        run_lock.RunLock._write_pointer = late
    for trial in range(trials):
        start = first + trial * spacing
        while time.time() < start - 0.02:
            time.sleep(0.002)
        while time.time() < start:                       # both hosts leave this loop within microseconds
            pass
        began = time.time()
        try:
            lock = run_lock.RunLock(f"{root}/trial-{trial}").acquire()
        except run_lock.RunLockedError:
            print(trial, "refused", began, time.time(), flush=True)
            continue
        RunWriter(lock).write_text(f"trained-by-{host}", host)   # "training", through the fenced writer
        got, token = time.time(), lock.token
        while time.time() < start + spacing - 0.1:       # held until the other host has surely tried
            time.sleep(0.01)
        lock.release()
        print(trial, "got", token, began, got, time.time(), flush=True)
""")


@pytest.mark.parametrize("delay_s", [0.0, 0.3], ids=["at-once", "late-owner-record"])
def test_two_hosts_without_shared_flock_claiming_at_the_same_instant_get_one_trainer(tmp_path, mount, delay_s):
    store, view_a, view_b = _views(mount, tmp_path)
    trials, spacing = 30, 0.8
    procs = []
    for host, view in (("node-a", view_a), ("node-b", view_b)):
        argv, env = _as_host(host, [sys.executable, "-c", CLAIMER, str(view), str(spacing), str(trials), str(delay_s)],
                             _environment())
        procs.append(subprocess.Popen(argv, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True))
    for proc in procs:
        assert proc.stdout.readline().strip() == "ready", proc.communicate(timeout=30)
    first = time.time() + 0.5
    for proc in procs:
        proc.stdin.write(f"{first}\n")
        proc.stdin.flush()
    outputs = [p.communicate(timeout=trials * spacing + 60) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [err[-2000:] for _, err in outputs]
    answers: dict[int, list[str]] = {}
    times: dict[int, list[str]] = {}
    for out, _ in outputs:
        for line in out.splitlines():
            trial, what, *rest = line.split()
            answers.setdefault(int(trial), []).append(f"{what} {rest[0]}" if what == "got" else what)
            times.setdefault(int(trial), []).append(line)
    for trial in range(trials):
        assert sorted(answers[trial]) == ["got 1", "refused"], times[trial]
        folder = store / f"trial-{trial}"
        assert len(list(folder.glob("trained-by-*"))) == 1
        assert lease_head(folder)[0] == 1 and lease_head(folder)[2]  # one generation, released
    winners = {p.name for p in store.glob("trial-*/trained-by-*")}
    assert winners <= {"trained-by-node-a", "trained-by-node-b"}  # each claimer really was its own host


def test_a_frozen_owner_writes_nothing_into_the_run_another_host_finished(tmp_path, mount, zygote, tiny_model_dir):
    """Host A trains a run, is frozen (SIGSTOP) past the stale bound; host B watches A's heartbeat stand still,
    takes the run over and finishes it; A, woken (SIGCONT), writes nothing into the run and says its lease was
    lost."""
    store, view_a, view_b = _views(mount, tmp_path)
    long = _one_run_config(tmp_path / "a", tiny_model_dir, view_a / "runs", train_size=64, max_epochs=100,
                           patience=100)
    short = _one_run_config(tmp_path / "b", tiny_model_dir, view_b / "runs")
    run = store.joinpath(*RUN)
    a_out = tmp_path / "a.out"
    a = zygote.start(CLI, a_out, args=[long], host="node-a")
    deadline = time.time() + 120
    while not (run / "versions.json").exists():
        assert time.time() < deadline, a_out.read_text()[-3000:]
        time.sleep(0.05)
    time.sleep(0.5)  # A is training
    os.kill(a, signal.SIGSTOP)
    frozen = time.time()
    try:
        retry = textwrap.dedent("""
            import json, time
            from pathlib import Path
            from diagnostics.finetune import load_config, run_sweep
            states = []
            while time.time() < float(ARGS[1]):
                state = run_sweep(load_config(ARGS[0]))["state"].iat[0]
                states.append([state, time.time()])
                if state == "done":
                    break
                time.sleep(0.2)
            Path(ARGS[2]).write_text(json.dumps(states))
        """)
        report = tmp_path / "b.json"
        status = zygote.run(retry, tmp_path / "b.out", args=[short, time.time() + 120, report], host="node-b")
        assert status == 0, (tmp_path / "b.out").read_text()[-3000:]
        states = json.loads(report.read_text())
        assert states[-1][0] == "done" and {s for s, _ in states[:-1]} <= {"locked"}, states
        assert states[-1][1] - frozen >= STALE_S  # not before B watched A's counter stand still for the bound
        finished = _files(run)
    finally:
        os.kill(a, signal.SIGCONT)
    assert zygote.wait(a, timeout=120) == 1  # the sweep reports the run it lost and exits 1
    said = a_out.read_text()
    assert "lease lost" in said and "node-b" in said and "Traceback" not in said, said[-3000:]
    assert _files(run) == finished  # nothing of A's landed in B's run
    from diagnostics.finetune import verify_run

    assert verify_run(run) == [] and json.loads((run / "config.json").read_text())["sweep"]["max_epochs"] == 1


# ---- 2. clock skew --------------------------------------------------------------------------------------------------

HOLDER = POSE + textwrap.dedent("""
    import sys, time
    from diagnostics.finetune import _run_lock as run_lock
    lock = run_lock.RunLock(sys.argv[1]).acquire()
    print("held", lock.token, flush=True)
    time.sleep(600)
""")

READER = POSE + textwrap.dedent("""
    import os, sys, time
    from diagnostics.finetune import _run_lock as run_lock
    folder, live_s, go = sys.argv[1], float(sys.argv[2]), sys.argv[3]
    print("clock", time.time(), flush=True)
    end = time.monotonic() + live_s                      # the owner beats: refused all along
    while time.monotonic() < end:
        assert run_lock.lock_held(folder)
        try:
            run_lock.RunLock(folder).acquire()
        except run_lock.RunLockedError:
            pass
        else:
            print("took-a-live-lease", flush=True)
            sys.exit(1)
        time.sleep(0.05)
    print("refused-while-live", flush=True)
    while not os.path.exists(go):                        # the owner is killed
        time.sleep(0.01)
    seen = time.monotonic()
    while True:
        try:
            lock = run_lock.RunLock(folder).acquire()
            break
        except run_lock.RunLockedError:
            time.sleep(0.05)
    print("took", lock.token, time.monotonic() - seen, flush=True)
    lock.release()
""")


@pytest.mark.parametrize("skew", ["+10m", "-10m"], ids=["reader-10-min-ahead", "reader-10-min-behind"])
def test_a_reader_with_a_skewed_clock_refuses_a_live_owner_and_waits_the_bound_for_a_dead_one(tmp_path, mount, skew):
    _require("faketime")
    _, view_a, view_b = _views(mount, tmp_path)
    folder = "runs/s/en/tiny/seed=0"
    argv, env = _as_host("node-a", [sys.executable, "-c", HOLDER, str(view_a / folder)], _environment())
    owner = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert owner.stdout.readline().split() == ["held", "1"]
        go = tmp_path / "owner-killed"
        argv, env = _as_host("node-b", ["faketime", "-f", skew, sys.executable, "-c", READER, str(view_b / folder),
                                        str(2 * STALE_S), str(go)], _environment())
        reader = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        clock = reader.stdout.readline().split()
        assert clock[0] == "clock", reader.communicate(timeout=30)
        offset = float(clock[1]) - time.time()
        assert abs(offset - (600 if skew == "+10m" else -600)) < 30  # faketime is in effect
        assert reader.stdout.readline().strip() == "refused-while-live", reader.communicate(timeout=30)
    finally:
        owner.kill()
        owner.wait()
    go.touch()
    out, err = reader.communicate(timeout=60)
    assert reader.returncode == 0, err[-2000:]
    took, token, after = out.split()
    assert took == "took"
    assert token == "2"
    # the last beat was seen at most one heartbeat before the kill; the bound was watched on the reader's own clock
    assert STALE_S - 2 * HEARTBEAT_S <= float(after) <= STALE_S + 3, after


# ---- 3. full disk -------------------------------------------------------------------------------------------------

FILL = textwrap.dedent("""
    import errno, json, os
    from pathlib import Path
    from diagnostics.finetune._run_lock import RunLock
    from diagnostics.finetune._run_writer import RunWriter
    config, mount, run, point, report = ARGS

    def fill():
        with open(os.path.join(mount, "filler"), "ab", buffering=0) as handle:
            for size in (1 << 20, 1 << 12, 1):
                try:
                    while True:
                        handle.write(b"\\0" * size)
                except OSError as err:
                    if err.errno != errno.ENOSPC:
                        raise

    owner, method, name = {"lease": (RunLock, "_claim", None), "LOCK": (RunLock, "_write_pointer", None),
                           "config.json": (RunWriter, "write_json", "config.json"),
                           "predictions": (RunWriter, "write_predictions", None),
                           "metrics.json": (RunWriter, "write_json", "metrics.json"),
                           "DONE": (RunWriter, "write_json", "DONE")}[point]
    original = getattr(owner, method)

    def full_first(self, *args, **kwargs):
        if name is None or args[0] == name:
            fill()
        return original(self, *args, **kwargs)

    setattr(owner, method, full_first)
    import sys
    from diagnostics.cli import main
    sys.argv = ["diagnostics", "sweep", "run", config]
    try:
        main()
        code = 0
    except SystemExit as stop:
        code = stop.code
    setattr(owner, method, original)
    os.remove(os.path.join(mount, "filler"))                     # the space is back
    open_here = [os.readlink(f"/proc/self/fd/{fd}") for fd in os.listdir("/proc/self/fd")
                 if os.path.exists(f"/proc/self/fd/{fd}")]
    leaked = [p for p in open_here if p.startswith(mount)]
    with RunLock(Path(run)) as lock:                             # no lock kept by this process
        token = lock.token
    Path(report).write_text(json.dumps({"code": code, "leaked": leaked, "token": token}))
""")


@pytest.mark.parametrize("point", ["lease", "LOCK", "config.json", "predictions", "metrics.json", "DONE"])
def test_a_full_disk_at_any_write_ends_the_run_with_one_line_and_a_rerun_finishes_it(tmp_path, mount, zygote,
                                                                                     tiny_model_dir, point):
    _require_root()
    disk = mount(["mount", "-t", "tmpfs", "-o", "size=48m", "tmpfs"], tmp_path / "disk")
    config = _one_run_config(tmp_path / "config", tiny_model_dir, disk / "runs")
    run = disk.joinpath(*RUN)
    out, report = tmp_path / "full.out", tmp_path / "full.json"
    assert zygote.run(FILL, out, args=[config, disk, run, point, report]) == 0, out.read_text()[-3000:]
    said, after = out.read_text(), json.loads(report.read_text())
    assert after["code"] == 1, said[-3000:]
    assert "Traceback" not in said, said[-3000:]
    lines = [line for line in said.splitlines() if "No space left on device" in line]
    assert lines and all(str(run) in line for line in lines), said[-3000:]
    assert after["leaked"] == [] and after["token"] >= 1  # no descriptor, no lock left behind: a new claim works
    assert not (run / "DONE").exists()
    rerun = _sweep(zygote, config, tmp_path, "rerun")  # another process, the space back
    assert [(r["state"], r["problems"]) for r in rerun["runs"]] == [("done", [])], rerun


# ---- 4. read-only store, unreadable finished file -----------------------------------------------------------------

def test_a_read_only_store_leaves_finished_runs_alone_and_names_the_path(tmp_path, mount, zygote, tiny_model_dir):
    """A store remounted read-only: the sweep stops before any run with one line naming the path, and nothing
    changes. Read-only run folders (bind mounts) of a damaged finished run and of an unfinished one: each ends alone
    with one line naming its path and the error; the damaged run keeps its ``DONE`` and files; the sound run is
    skipped. Writable again, the sweep finishes them."""
    _require_root()
    disk = mount(["mount", "-t", "tmpfs", "-o", "size=48m", "tmpfs"], tmp_path / "disk")
    config = _one_run_config(tmp_path / "config", tiny_model_dir, disk / "runs", seeds=[0, 1])
    first = _sweep(zygote, config, tmp_path, "first")
    assert [r["state"] for r in first["runs"]] == ["done", "done"]
    damaged, unfinished = disk / "runs/s/en/tiny/seed=1", disk / "runs/s/en/tiny/seed=2"
    (damaged / "metrics.json").write_text((damaged / "metrics.json").read_text() + " ")  # withdrawn if writable
    unfinished.mkdir()
    _one_run_config(tmp_path / "config", tiny_model_dir, disk / "runs", seeds=[0, 1, 2])
    before = _files(disk)

    subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
    out = tmp_path / "ro.out"
    status = zygote.run(CLI, out, args=[config])
    said = out.read_text()
    assert status == 2 and "Traceback" not in said, said[-3000:]
    assert [line for line in said.splitlines() if line.strip()] == [
        line for line in said.splitlines() if "Read-only file system" in line and str(disk) in line], said[-3000:]
    subprocess.run(["mount", "-o", "remount,rw", str(disk)], check=True)
    assert _files(disk) == before  # nothing deleted, nothing written

    for folder in (damaged, unfinished):
        mount(["mount", "--bind", "-o", "ro", str(folder)], folder)
    out = tmp_path / "ro-runs.out"
    status = zygote.run(CLI, out, args=[config])
    said = out.read_text()
    assert status == 1 and "Traceback" not in said, said[-3000:]
    for folder in (damaged, unfinished):
        assert any(f"{folder}/" in line and "Read-only file system" in line for line in said.splitlines()), said
    assert _files(damaged) == {k[len("runs/s/en/tiny/seed=1/"):]: v for k, v in before.items()
                               if k.startswith("runs/s/en/tiny/seed=1/")}
    for folder in (unfinished, damaged):
        subprocess.run(["umount", str(folder)], check=True)
    again = _sweep(zygote, config, tmp_path, "again")
    assert [(r["state"], r["problems"]) for r in again["runs"]] == [("skipped", []), ("done", []), ("done", [])]


UNPRIVILEGED = textwrap.dedent("""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)

    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Data(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]

    header, data = Header(0x20080522, 0), (Data * 2)()
    assert libc.capget(ctypes.byref(header), data) == 0
    data[0].effective &= ~0b110                          # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH: root obeys modes
    data[0].permitted &= ~0b110
    assert libc.capset(ctypes.byref(header), data) == 0, ctypes.get_errno()
""")


def test_an_unreadable_finished_file_is_left_alone_with_a_warning(tmp_path, zygote, tiny_model_dir):
    """Root without its permission-override capabilities cannot read a file of mode 0000: EACCES, as on a network
    mount that refuses a file for a moment. The finished run is skipped with a warning naming the file and the
    error, and nothing of it is touched."""
    _require_root()
    config = _one_run_config(tmp_path / "config", tiny_model_dir, tmp_path / "runs")
    assert [r["state"] for r in _sweep(zygote, config, tmp_path, "first")["runs"]] == ["done"]
    run = tmp_path.joinpath(*RUN)
    before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in run.rglob("*") if p.is_file()}
    (run / "predictions.parquet").chmod(0)
    report, out = tmp_path / "unreadable.json", tmp_path / "unreadable.out"
    status = zygote.run(UNPRIVILEGED + SWEEP, out, args=[config, report])
    assert status == 0, out.read_text()[-3000:]
    seen = json.loads(report.read_text())
    assert [r["state"] for r in seen["runs"]] == ["skipped"], seen
    assert any("left alone: predictions.parquet could not be read (EACCES: " in w and "Permission denied" in w
               for w in seen["warnings"]), seen["warnings"]
    (run / "predictions.parquet").chmod(0o644)
    assert {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in run.rglob("*") if p.is_file()} == before
    from diagnostics.finetune import verify_run

    assert verify_run(run) == []


# ---- 5. killed at random and resumed ------------------------------------------------------------------------------

KILLS = 20


def _intervals(log: Path, exits: dict[int, float]) -> dict[str, list[tuple[float, float, int, int]]]:
    """Per run folder, ``(claimed, ended, token, pid)`` of every lease from the lease log; a lease never released
    ends when its process was seen gone."""
    open_: dict[tuple[int, str, int], float] = {}
    held: dict[str, list] = {}
    for line in log.read_text().splitlines():
        at, pid, path, token, event = line.split()
        key = (int(pid), path, int(token))
        if event == "claim":
            assert key not in open_, line
            open_[key] = float(at)
        else:
            held.setdefault(path, []).append((open_.pop(key), float(at), int(token), int(pid)))
    for (pid, path, token), at in open_.items():
        held.setdefault(path, []).append((at, exits.get(pid, time.time()), token, pid))
    return held


def _running(pid: int) -> bool:
    """Whether a child of the zygote runs (not yet ended; a zombie has ended)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_a_sweep_killed_at_random_20_times_ends_equal_to_an_uninterrupted_one(tmp_path, zygote, tiny_model_dir):
    from _sweeps import sorted_table

    from diagnostics.finetune import collect_predictions

    # dropout 0: a resumed job pairs its runs in other stacks than an uninterrupted one, which changes the dropout
    # masks a run draws (with dropout on, its probabilities differ by ~1e-4 after a resume)
    settings = {"languages": ["en", "ru"], "seeds": [0, 1, 2], "train_size": 32, "max_epochs": 2, "fuse": 2,
                "dropout": 0.0}
    reference = write_config(tmp_path / "reference", tiny_model_dir, **settings)
    timing = tmp_path / "reference-leases.log"
    assert {r["state"] for r in _sweep(zygote, reference, tmp_path, "reference",
                                       env={run_lock.LEASE_LOG_VARIABLE: str(timing)})["runs"]} == {"done"}
    job_s = max(ended - claimed for leases in _intervals(timing, {}).values() for claimed, ended, _, _ in leases)
    log = tmp_path / "leases.log"
    env = {run_lock.LEASE_LOG_VARIABLE: str(log)}
    rng = random.Random(50)
    stores: list[Path] = []  # a sweep resumed until done, then a fresh one: KILLS kills all land on training sweeps
    config = write_config(tmp_path / "killed-0", tiny_model_dir, **settings)
    stores.append(config)
    exits, landed, attempts = {}, 0, 0
    while landed < KILLS:
        attempts += 1
        assert attempts <= 3 * KILLS, f"only {landed} of {attempts} attempts found a sweep training"
        out = tmp_path / f"attempt-{attempts}.out"
        pid = zygote.start(CLI, out, args=[config], env=env)
        while _running(pid) and f" {pid} " not in (log.read_text() if log.exists() else ""):
            time.sleep(0.02)  # until this attempt claims its first run: the moments before are all alike
        if f" {pid} " not in (log.read_text() if log.exists() else ""):  # it claimed nothing: every run is done
            assert zygote.wait(pid, timeout=300) == 0, out.read_text()[-3000:]
            config = write_config(tmp_path / f"killed-{len(stores)}", tiny_model_dir, **settings)
            stores.append(config)
            continue
        time.sleep(rng.uniform(0.0, 1.1 * job_s))  # any moment of a job: set-up, training, predicting, storing
        sig = rng.choice([signal.SIGKILL, signal.SIGTERM, signal.SIGINT])
        if _running(pid):
            os.kill(pid, sig)
            landed += 1
        status = zygote.wait(pid, timeout=300)
        exits[pid] = time.time()
        assert "Traceback" not in out.read_text() or sig == signal.SIGINT, out.read_text()[-3000:]
        assert status in (0, 1, 130, -signal.SIGKILL, -signal.SIGTERM, -signal.SIGINT), (status, out.read_text())
    expected = sorted_table(collect_predictions(tmp_path / "reference" / "runs"))
    for number, store in enumerate(stores):
        final = _sweep(zygote, store, tmp_path, f"final-{number}", env=env)
        assert [(r["state"] in ("done", "skipped"), r["problems"]) for r in final["runs"]] == [(True, [])] * 6, final
        pd.testing.assert_frame_equal(sorted_table(collect_predictions(store.parent / "runs")), expected)
    held = _intervals(log, exits)
    assert len(held) == 6 * len(stores)
    print(f"\n{landed} kills landed in {attempts} attempts on {len(stores)} sweeps")
    for path, leases in held.items():
        leases.sort()
        tokens = [token for _, _, token, _ in leases]
        assert tokens == sorted(tokens) and len(set(tokens)) == len(tokens), (path, leases)
        for (_, ended, _, pid), (claimed, _, _, other) in itertools.pairwise(leases):
            assert claimed >= ended, f"{path}: lease of pid {other} claimed while pid {pid} held it"
