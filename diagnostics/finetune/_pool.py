"""A local process pool that knows which job each worker holds: a dead worker is named with its runs and exit.

Each worker is a ``spawn`` process that takes one job at a time over its own pipe, so when one dies (killed,
out of memory, a crash in native code) the pool knows its job, its exit code or signal, and the other workers go on
(:class:`concurrent.futures.ProcessPoolExecutor` breaks the whole pool and cannot say whose job died). The jobs of
dead workers are retried once, in a fresh pool once the others have ended; a job whose worker dies again is given
up. While jobs train, a waiting line names each busy worker, its runs, for how long, and whether its process is
stopped (:mod:`._waiting`).
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ._waiting import WaitLog, duration, process_state

#: Seconds a worker gets to exit after the pool is closed before it is terminated.
CLOSE_GRACE_S = 10.0
#: Exit status of a pool worker whose parent died.
EXIT_PARENT_GONE = 70


def exit_with_parent(parent_pid: int | None = None, poll_s: float = 0.5) -> None:
    """Make this process exit as soon as the process that started it dies (even by ``kill -9``).

    A daemon thread waits on :func:`multiprocessing.parent_process`'s sentinel (a pipe the parent holds, closed
    by the kernel when it dies), or, where there is none, polls :func:`os.getppid` every ``poll_s`` seconds for a
    change from ``parent_pid`` (default: the current parent); then it ends the process with ``os._exit``. Each
    pool worker calls it first, so that a killed sweep does not leave workers training (and holding memory) for
    minutes.
    """
    import multiprocessing
    import threading

    parent = multiprocessing.parent_process()
    expected = os.getppid() if parent_pid is None else parent_pid

    def watch() -> None:
        if parent is not None and parent.sentinel is not None:
            from multiprocessing.connection import wait

            wait([parent.sentinel])
        else:
            while os.getppid() == expected:
                time.sleep(poll_s)
        os._exit(EXIT_PARENT_GONE)

    if parent is None and os.getppid() != expected:
        os._exit(EXIT_PARENT_GONE)
    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def exit_description(code: int | None) -> str:
    """A worker's exit as people read it: ``killed by SIGKILL``, ``exit code 1``, ``exit status unknown``."""
    if code is None:
        return "exit status unknown"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


def _names(job: list) -> str:
    return ", ".join(spec.describe() if hasattr(spec, "describe") else str(spec.path) for spec in job)


def _serve(conn, worker: Callable, threads: int | None, parent_pid: int) -> None:
    """A worker's loop: run each job received on ``conn`` with ``worker(job, threads)`` and send back its records;
    end on ``None`` or when the pool's end of the pipe closes (and when the parent dies)."""
    exit_with_parent(parent_pid)
    while True:
        try:
            job = conn.recv()
        except (EOFError, OSError):
            return
        if job is None:
            return
        conn.send(worker(job, threads))


@dataclass
class _Slot:
    """One worker process, its end of the pipe and the job it holds (``None`` while idle)."""

    process: Any
    conn: Any
    job: list | None = None
    since: float = 0.0
    extra: dict = field(default_factory=dict)


@dataclass
class DeadWorker:
    """A job whose worker process died before it sent the job's outcomes.

    Parameters
    ----------
    job : list of RunSpec
        The runs it held.
    pid : int
        The worker's process id.
    exitcode : int or None
        Its exit code (negative: the signal that killed it), as :mod:`multiprocessing` reports it.
    """

    job: list
    pid: int
    exitcode: int | None

    def message(self) -> str:
        """One line: which worker died, how, and which runs it held."""
        return (f"pool worker {self.pid} died ({exit_description(self.exitcode)}) while training "
                f"{_names(self.job)}")


def pool_round(jobs: list[list], worker: Callable, threads: int | None, workers: int, died: list[DeadWorker],
               log: WaitLog | None = None) -> Iterator[dict[str, Any]]:
    """Run ``jobs`` on up to ``workers`` fresh processes; yield each job's outcome records as the job ends.

    The job of a worker that dies is appended to ``died`` (and said on stderr at once); a replacement worker takes
    the next queued job. ``worker(job, threads)`` (picklable, top level) returns the job's records.
    """
    import multiprocessing as mp
    from multiprocessing.connection import wait

    ctx = mp.get_context("spawn")
    queue = list(jobs)
    slots: list[_Slot] = []
    log = log or WaitLog()

    def start() -> _Slot:
        ours, theirs = ctx.Pipe()
        process = ctx.Process(target=_serve, args=(theirs, worker, threads, os.getpid()), name="diagnostics-pool")
        process.start()
        theirs.close()
        return _Slot(process, ours)

    try:
        while queue or any(slot.job is not None for slot in slots):
            for slot in slots:
                if slot.job is None and queue:
                    slot.job, slot.since = queue.pop(0), time.monotonic()
                    slot.conn.send(slot.job)
            while queue and len(slots) < workers:
                slot = start()
                slot.job, slot.since = queue.pop(0), time.monotonic()
                slot.conn.send(slot.job)
                slots.append(slot)
            busy = [slot for slot in slots if slot.job is not None]
            ready = wait([s.conn for s in busy] + [s.process.sentinel for s in busy], timeout=min(1.0, log.interval_s))
            for slot in busy:
                records = None
                if slot.conn in ready or slot.process.sentinel in ready:
                    try:
                        records = slot.conn.recv() if slot.conn.poll() else None
                    except (EOFError, OSError):
                        records = None
                    if records is None and slot.process.is_alive():
                        continue  # the pipe said something that was not a result: look again
                else:
                    continue
                job, slot.job = slot.job, None
                if records is not None:
                    log.restart()
                    yield from records
                    continue
                slot.process.join(timeout=5)
                dead = DeadWorker(job, slot.process.pid, slot.process.exitcode)
                died.append(dead)
                log.write(dead.message())
                slot.conn.close()
                slots.remove(slot)
            busy = [slot for slot in slots if slot.job is not None]
            if busy:
                log.tick(lambda: _pool_line(busy, len(queue)))
    finally:
        _close(slots)


def _pool_line(busy: list[_Slot], queued: int) -> str:
    now = time.monotonic()
    parts = []
    for slot in busy:
        state = process_state(slot.process.pid)
        parts.append(f"worker {slot.process.pid}{' (' + state + ')' if state else ''} on {_names(slot.job)} for "
                     f"{duration(now - slot.since)}")
    return f"{len(busy)} pool job(s): {'; '.join(parts)}" + (f"; {queued} queued" if queued else "")


def _close(slots: list[_Slot]) -> None:
    """End the workers: idle ones are told to stop, busy ones (an interrupted sweep) get :data:`CLOSE_GRACE_S`."""
    for slot in slots:
        if slot.job is None:
            try:
                slot.conn.send(None)
            except OSError:
                pass
    deadline = time.monotonic() + CLOSE_GRACE_S
    for slot in slots:
        slot.process.join(timeout=max(0.0, deadline - time.monotonic()))
        if slot.process.is_alive():
            slot.process.terminate()
            slot.process.join(timeout=5)
        slot.conn.close()


def run_with_retry(jobs: list[list], worker: Callable, threads: int | None, workers: int,
                   given_up: Callable[[list, DeadWorker], list[dict[str, Any]]]) -> Iterator[dict[str, Any]]:
    """Run ``jobs`` in a pool of ``workers`` processes; retry once, in a fresh pool, the jobs whose worker died.

    Parameters
    ----------
    jobs : list of list of RunSpec
        The jobs (a run, or a fused group of runs).
    worker : callable
        ``worker(job, threads)``: a job's outcome records (picklable, defined at module level).
    threads : int or None
        Passed to ``worker``.
    workers : int
        Processes at once.
    given_up : callable
        ``given_up(job, dead)``: the records of a job whose worker died on the retry too.

    Yields
    ------
    dict
        One outcome record per run, as jobs end.
    """
    died: list[DeadWorker] = []
    yield from pool_round(jobs, worker, threads, workers, died)
    if not died:
        return
    sys.stderr.write(f"retrying {len(died)} job(s) whose worker died, in a fresh pool: "
                     f"{'; '.join(_names(d.job) for d in died)}\n")
    sys.stderr.flush()
    again: list[DeadWorker] = []
    yield from pool_round([d.job for d in died], worker, threads, min(workers, len(died)), again)
    for dead in again:
        yield from given_up(dead.job, dead)
