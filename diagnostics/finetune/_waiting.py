"""Lines a sweep prints while it waits, so that a wait is never silent.

Whatever the sweep waits on (SLURM tasks pending, held, on a drained node, an ``squeue`` that does not answer, pool
workers that train or stopped), it prints one line on stderr at least every :data:`WAIT_LINE_S` seconds saying what it
waits for and for how long. :class:`WaitLog` keeps the time; the callers describe the wait.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from ._slurm import JobState

#: Seconds between two waiting lines (at most a minute; tests shorten it).
WAIT_LINE_S = 60.0


def duration(seconds: float) -> str:
    """``seconds`` as people read a wait: ``45 s``, ``3 min 05 s``, ``2 h 07 min``."""
    seconds = max(0, int(seconds))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"


class WaitLog:
    """Print a line describing a wait at most every ``interval_s`` seconds, the first one ``interval_s`` after start.

    Parameters
    ----------
    interval_s : float, optional
        Seconds between two lines; :data:`WAIT_LINE_S` (read when the log is made) by default.
    clock : callable, optional
        Seconds on a monotonic clock; :func:`time.monotonic` by default.
    stream : file, optional
        Where the lines go; ``sys.stderr`` (as it is when a line is written) by default.
    """

    def __init__(self, interval_s: float | None = None, clock: Callable[[], float] | None = None,
                 stream: TextIO | None = None):
        self.interval_s = float(WAIT_LINE_S if interval_s is None else interval_s)
        self.clock = clock or time.monotonic
        self.stream = stream
        self.started = self.clock()
        self.last = self.started

    def waited(self) -> float:
        """Seconds since the log was made (or :meth:`restart` last ran)."""
        return self.clock() - self.started

    def restart(self) -> None:
        """Start counting the wait again (something the sweep waited for arrived)."""
        self.started = self.last = self.clock()

    def due_in(self) -> float:
        """Seconds until the next line is due (0 or less: due now); a loop sleeps no longer than this, so that the
        line comes on time."""
        return self.last + self.interval_s - self.clock()

    def tick(self, describe: Callable[[], str]) -> bool:
        """Write ``waiting <how long>: <describe()>`` when a line is due; whether one was written."""
        now = self.clock()
        if now - self.last < self.interval_s:
            return False
        self.last = now
        self.write(f"waiting {duration(now - self.started)}: {describe()}")
        return True

    def write(self, line: str) -> None:
        """Write one line now (and flush: a batch script's log shows it at once)."""
        stream = self.stream or sys.stderr
        stream.write(line.rstrip("\n") + "\n")
        stream.flush()


class Asking:
    """One question to the scheduler (``squeue``, ``sinfo``, ``sacct``) in a thread of its own, so that a waiting loop
    goes on reading the store and printing its lines while a controller that does not answer keeps the command waiting
    (up to :data:`~._slurm.COMMAND_TIMEOUT_S`).

    Parameters
    ----------
    ask : callable
        The question; called once, in the thread.
    """

    def __init__(self, ask: Callable[[], Any]):
        self.answer: Any = None
        self.error: BaseException | None = None
        self.done = threading.Event()
        threading.Thread(target=self._run, args=(ask,), daemon=True, name="slurm-poll").start()

    def _run(self, ask: Callable[[], Any]) -> None:
        try:
            self.answer = ask()
        except BaseException as err:  # handed to the watcher's thread, raised there
            self.error = err
        finally:
            self.done.set()

    def result(self) -> Any:
        """The answer (call once :attr:`done` is set); the question's exception is raised here."""
        if self.error is not None:
            raise self.error
        return self.answer


def process_state(pid: int) -> str:
    """What the kernel says of process ``pid``: ``stopped`` (SIGSTOP, a debugger), ``zombie``, ``gone`` or ``""``
    (running, sleeping, or no ``/proc`` to ask)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return "gone" if Path("/proc/self/stat").exists() else ""
    except OSError:
        return ""
    state = text.rsplit(")", 1)[-1].split()[:1]
    return {"T": "stopped", "t": "stopped", "Z": "zombie", "X": "gone"}.get(state[0] if state else "", "")


#: Job ids named per group of a waiting line (the others are counted).
IDS_SHOWN = 6
#: What a pending job's reason means for the person waiting (the reason's first word).
REASON_HINTS = {
    "JobHeldUser": "held: release with scontrol release",
    "JobHeldAdmin": "held by an administrator",
    "ReqNodeNotAvail": "a node it needs is drained, down or reserved",
    "BeginTime": "held back after a requeue until its begin time",
    "Dependency": "waits for another job",
    "DependencyNeverSatisfied": "its dependency can never be met: cancel it",
    "PartitionDown": "its partition is down",
    "PartitionInactive": "its partition is inactive",
    "Reservation": "waits for its reservation",
    "launch failed requeued held": "its launch failed; held: release with scontrol release",
}
#: Node states (``sinfo``) worth naming beside a running job.
NODE_TROUBLE = ("drain", "down", "fail", "maint", "not_responding", "*")


def job_phrase(state: JobState | None, nodes: dict[str, str] | None = None) -> str:
    """One job's state as a waiting line names it: ``PENDING (Priority)``, ``RUNNING on n3 (node drained)``,
    ``PENDING (JobHeldUser: held: release with scontrol release)``; ``unknown`` for ``None``."""
    if state is None:
        return "state unknown"
    text = state.state
    if state.reason:
        hint = REASON_HINTS.get(state.reason) or REASON_HINTS.get(state.reason.split(",")[0].strip())
        text += f" ({state.reason}{': ' + hint if hint else ''})"
    if state.nodes and state.state != "PENDING":
        text += f" on {state.nodes}"
        trouble = (nodes or {}).get(state.nodes, "")
        if trouble and any(word in trouble for word in NODE_TROUBLE):
            text += f" (node {trouble})"
    return text


def describe_jobs(jobs: list[tuple[str, JobState | None, float]], now: float, *, scheduler: str = "SLURM",
                  silent_s: float | None = None, nodes: dict[str, str] | None = None) -> str:
    """What a sweep waits for, in one line: the jobs grouped by state, each group with its ids and how long.

    Parameters
    ----------
    jobs : list of (str, JobState or None, float)
        Each job's id, its last known state (``None``: not known yet) and the clock time since which it has been in
        that state.
    now : float
        The clock time now (same clock).
    scheduler : str
        Who runs the jobs: ``SLURM``, ``local``.
    silent_s : float, optional
        Seconds for which ``squeue`` has not answered (then the states are the last known ones).
    nodes : dict of str to str, optional
        Node -> ``sinfo`` state, to name a running job's troubled node (drained, down).

    Returns
    -------
    str
        E.g. ``3 SLURM job(s): PENDING (Priority) 7_0 7_2 for 3 min 00 s; RUNNING on vm 7_1 for 40 s``.
    """
    groups: dict[str, list[tuple[str, float]]] = {}
    for job_id, state, since in jobs:
        groups.setdefault(job_phrase(state, nodes), []).append((job_id, since))
    parts = []
    for phrase, members in groups.items():
        ids = " ".join(job_id for job_id, _ in members[:IDS_SHOWN])
        more = f" and {len(members) - IDS_SHOWN} more" if len(members) > IDS_SHOWN else ""
        parts.append(f"{phrase} {ids}{more} for {duration(now - min(since for _, since in members))}")
    head = f"{len(jobs)} {scheduler} job(s)"
    if silent_s is not None:
        head += f"; squeue has not answered for {duration(silent_s)} (controller down or busy?), last known"
    return f"{head}: {'; '.join(parts)}" if parts else head
