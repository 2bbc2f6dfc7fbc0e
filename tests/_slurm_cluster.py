"""A real single-node SLURM for the slow tests: ``scripts/slurm_cluster.sh`` in a folder of the test's own, on ports
of its own, and small helpers that watch its queue."""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from _paths import ROOT

SCRIPT = ROOT / "scripts" / "slurm_cluster.sh"
#: First of the three ports of the test cluster (slurmctld, slurmd, slurmdbd): not SLURM's default 6817, so that a
#: cluster someone started by hand on this machine goes on undisturbed.
PORT = int(os.environ.get("DIAGNOSTICS_TEST_SLURM_PORT", "6917"))
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

    @property
    def env(self) -> dict[str, str]:
        return {**os.environ, "SLURM_CLUSTER_DIR": str(self.folder), "SLURM_CLUSTER_PORT": str(PORT)}


def start(folder: Path, accounting: bool) -> Cluster:
    """Start the cluster (``slurm_cluster.sh start``); skip-worthy failures raise ``RuntimeError`` with its output."""
    cluster = Cluster(folder, str(folder / "slurm.conf"), accounting)
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


def wait_for_running(task_suffix: str, ready: Path, timeout: float = 300) -> str:
    """The id of the running array task ending in ``task_suffix`` once ``ready`` exists (its run is training)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        running = [job for job, state, _ in queue() if job.endswith(task_suffix) and state == "RUNNING"]
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
