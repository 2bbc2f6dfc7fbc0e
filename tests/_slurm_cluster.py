"""A real single-node SLURM for the slow tests: ``scripts/slurm_cluster.sh`` in a folder of the test's own, on ports
of its own, and small helpers that watch its queue."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from diagnostics.models import tiny_random_model

from _paths import ROOT
from _sweeps import write_config

SCRIPT = ROOT / "scripts" / "slurm_cluster.sh"
#: First of the three ports of the test cluster (slurmctld, slurmd, slurmdbd): not SLURM's default 6817, so that a
#: cluster someone started by hand on this machine goes on undisturbed.
PORT = int(os.environ.get("DIAGNOSTICS_TEST_SLURM_PORT", "6917"))
#: Lifetime of a job credential on the test cluster (s): SLURM holds a requeued job back this long plus a second
#: (its ``BeginTime``; 120 s by default). Not to be skipped (``scontrol update StartTime=now``): until the killed
#: incarnation's revoked credential expires, slurmd refuses to start the job again and SLURM marks it FAILED ("Killing
#: non-startable batch job: Job credential revoked").
CRED_EXPIRE_S = 10
#: The sweeps' ``lost_job_grace_s`` and ``poll_s`` on the test cluster: short, so that a lost job is given up soon.
GRACE_S = 10
POLL_S = 1
TOOLS = {False: ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "srun"),
         True: ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "srun", "slurmdbd", "mariadbd")}


def unavailable(accounting: bool) -> str | None:
    """Why no cluster can start here (a skip reason), or ``None``."""
    if os.name != "posix" or not shutil.which("bash"):
        return "a real SLURM needs a POSIX machine with bash"
    if hasattr(os, "geteuid") and os.geteuid() != 0:
        return "a real SLURM needs root here (its daemons run as root; missing packages install with apt-get)"
    missing = [tool for tool in TOOLS[accounting] if not shutil.which(tool)]
    if missing and not shutil.which("apt-get"):
        return f"{', '.join(missing)} missing and no apt-get to install Debian's slurm-wlm / munge / mariadb-server"
    return None


@dataclass
class Cluster:
    """A running test cluster: its state folder, ``SLURM_CONF`` and whether accounting (slurmdbd) is on."""

    folder: Path
    conf: str
    accounting: bool
    log_level: str = "debug"

    @property
    def env(self) -> dict[str, str]:
        return {**os.environ, "SLURM_CLUSTER_DIR": str(self.folder), "SLURM_CLUSTER_PORT": str(PORT),
                "SLURM_CLUSTER_LOG_LEVEL": self.log_level, "SLURM_CLUSTER_CRED_EXPIRE": str(CRED_EXPIRE_S)}

    @property
    def logs(self) -> dict[str, Path]:
        """The daemons' log files by daemon name."""
        return {name: self.folder / "log" / f"{name}.log" for name in ("slurmctld", "slurmd")}


def start(folder: Path, accounting: bool, log_level: str = "debug") -> Cluster:
    """Start the cluster (``slurm_cluster.sh start``; the daemons log at ``log_level``); skip-worthy failures raise
    ``RuntimeError`` with its output."""
    cluster = Cluster(folder, str(folder / "slurm.conf"), accounting, log_level)
    done = subprocess.run(["bash", str(SCRIPT), "start", *(["--accounting"] if accounting else [])],
                          env=cluster.env, capture_output=True, text=True, timeout=900, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"slurm_cluster.sh start failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return cluster


def stop(cluster: Cluster) -> str:
    """Stop the daemons the cluster's script started; its report."""
    done = subprocess.run(["bash", str(SCRIPT), "stop"], env=cluster.env, capture_output=True, text=True,
                          timeout=300, check=False)
    return done.stdout + done.stderr


class DaemonLogs:
    """What the cluster's daemons log during one test: their log files' sizes at the start, and :meth:`keep`, which
    copies what they wrote since into a folder of the test."""

    def __init__(self, cluster: Cluster):
        self.cluster = cluster
        self.start = {name: path.stat().st_size if path.exists() else 0 for name, path in cluster.logs.items()}

    def keep(self, folder: Path, tail: int = 0) -> str:
        """Write each daemon's lines since the start into ``folder/<daemon>.log``; the last ``tail`` lines of each,
        one text (empty for ``tail=0``)."""
        folder.mkdir(parents=True, exist_ok=True)
        shown = []
        for name, path in self.cluster.logs.items():
            try:
                with open(path, "rb") as stream:
                    stream.seek(self.start[name])
                    text = stream.read().decode("utf-8", errors="replace")
            except OSError as err:
                text = f"(could not read {path}: {err})\n"
            (folder / f"{name}.log").write_text(text, encoding="utf-8")
            if tail:
                shown.append(f"--- {name}.log, last {tail} lines (all in {folder / f'{name}.log'}) ---\n"
                             + "\n".join(text.splitlines()[-tail:]))
        return "\n".join(shown)


def queue() -> list[tuple[str, str, str]]:
    """``(job id, state, reason)`` of every job and array task in the queue (``squeue --array``)."""
    done = subprocess.run(["squeue", "--noheader", "--array", "--format=%i|%T|%r"], capture_output=True, text=True,
                          timeout=30, check=False)
    return [tuple(line.split("|", 2)) for line in done.stdout.splitlines() if line.count("|") == 2]


class QueueSampler:
    """Sample the queue every ``every_s`` seconds in a thread, while used as a context manager."""

    def __init__(self, every_s: float = 0.3):
        self.every_s = every_s
        self.samples: list[tuple[float, list[tuple[str, str, str]]]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.samples.append((time.time(), queue()))
            self._stop.wait(self.every_s)

    def __enter__(self) -> QueueSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(timeout=60)


def own_jobs(ready: Path) -> set[str]:
    """The ids of the jobs submitted by the sweep whose run holds ``ready``: the folders of its experiment's
    ``.submitit`` (one per job, array task and array)."""
    for parent in ready.parents:
        folder = parent / ".submitit"
        if folder.is_dir():
            return {path.name for path in folder.iterdir() if path.is_dir()}
    return set()


def wait_for_running(task_suffix: str, ready: Path, timeout: float = 300) -> str:
    """The id of the running job (or array task ending in ``task_suffix``) of the sweep whose run holds ``ready``,
    once ``ready`` exists (its run is training). Only that sweep's own jobs count: a job of an earlier test may still
    be running (its process ending after its sweep read its result), and a signal meant for this one must not hit it."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        own = own_jobs(ready)
        running = [job for job, state, _ in queue()
                   if job in own and job.endswith(task_suffix) and state == "RUNNING"]
        if running and ready.exists():
            return running[0]
        time.sleep(0.2)
    raise AssertionError(f"no running task *{task_suffix} with {ready} within {timeout} s: {queue()}")


class Lines:
    """The output of a process, line by line (``\\r`` ends a line too, as progress bars write), each with the time it
    arrived."""

    def __init__(self, stream):
        self.lines: list[tuple[float, str]] = []
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream) -> None:
        buffer = ""
        while True:
            chunk = stream.read(1)
            if not chunk:
                break
            if chunk in "\r\n":
                if buffer.strip():
                    self.lines.append((time.time(), buffer))
                buffer = ""
            else:
                buffer += chunk
        if buffer.strip():
            self.lines.append((time.time(), buffer))

    def join(self) -> None:
        self._thread.join(timeout=60)

    def first(self, text: str) -> tuple[float, str]:
        """The first line holding ``text`` and its time."""
        for when, line in self.lines:
            if text in line:
                return when, line
        raise AssertionError(f"{text!r} not in the output:\n" + "\n".join(line for _, line in self.lines))

    @property
    def text(self) -> str:
        return "\n".join(line for _, line in self.lines)


# --- fixtures and sweeps of the slow tests (import them into a test module) -----------------------------------------

@pytest.fixture(scope="module")
def cluster(request, tmp_path_factory):
    """The module's running cluster, ``request.param`` ``"accounting"`` or ``"no-accounting"``; ``SLURM_CONF`` set
    while it runs. Skips where none can start (no root, no apt-get)."""
    accounting = request.param == "accounting"
    reason = unavailable(accounting)
    if reason:
        pytest.skip(reason)
    try:
        running = start(tmp_path_factory.mktemp("slurm"), accounting)
    except RuntimeError as err:
        if "installing" in str(err) and "apt-get" in str(err):
            pytest.skip(f"could not install SLURM with apt-get: {err}")
        raise
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SLURM_CONF", running.conf)
        yield running
    stop(running)


@pytest.fixture(autouse=True)
def daemon_logs(request, tmp_path):
    """slurmctld's and slurmd's lines of each test on the real cluster, kept in its ``slurm-logs/`` folder; their
    tails printed when the test failed."""
    if "cluster" not in request.fixturenames:
        yield None
        return
    logs = DaemonLogs(request.getfixturevalue("cluster"))
    failed = request.session.testsfailed
    yield logs
    tails = logs.keep(tmp_path / "slurm-logs", tail=60 if request.session.testsfailed > failed else 0)
    if tails:
        print(tails)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """A tiny random BERT folder."""
    return tiny_random_model(tmp_path_factory.mktemp("tiny") / "model", seed=1)


def sweep_config(folder: Path, tiny: Path, **overrides) -> Path:
    """``folder/sweep.yaml`` of a tiny sweep (:func:`_sweeps.write_config`) through submitit on the test cluster:
    polls every :data:`POLL_S`, gives lost jobs up after :data:`GRACE_S`, one CPU per task; ``executor_options`` in
    ``overrides`` add to these."""
    options = {"cluster": "slurm", "poll_s": POLL_S, "lost_job_grace_s": GRACE_S, "timeout_min": 30,
               "cpus_per_task": 1, **overrides.pop("executor_options", {})}
    return write_config(folder, tiny, executor="submitit", executor_options=options, **overrides)


def diagnostics(*args: str, cwd: Path) -> subprocess.Popen:
    """``diagnostics ARGS`` started in ``cwd``, its stdout and stderr merged into one unbuffered pipe."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen([sys.executable, "-m", "diagnostics", *args], cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def sweep_cli(config: Path, folder: Path, *args: str) -> subprocess.Popen:
    """``diagnostics sweep run CONFIG ARGS`` started in ``folder`` (:func:`diagnostics`)."""
    return diagnostics("sweep", "run", str(config), *args, cwd=folder)
