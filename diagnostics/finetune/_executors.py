"""Where runs execute. Jobs are independent, so an executor only maps :func:`train_job` over them.

A job is a list of runs: one run (``fuse: 1``), or a queue of runs that share a training key, trained K at a time
as one computation (:func:`.train.train_group`). Executors yield one outcome per run, whatever the grouping, as jobs
end.

``inprocess`` (default) runs them one after another here; ``pool`` uses local processes (``spawn``; threads are
split between workers); ``submitit`` submits them to SLURM as one job array and watches them (:mod:`._submitit`;
``executor_options``: ``cluster`` = ``slurm`` | ``local`` | ``debug``, ``poll_s``, ``lost_job_grace_s``,
``requeue``, plus submitit parameters such as ``timeout_min``, ``slurm_partition``, ``gpus_per_node``,
``slurm_array_parallelism``). A SLURM job runs :class:`SweepJob`, which marks its runs interrupted when the job is
cancelled, preempted or times out.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable, Iterator
from typing import Any

from . import _store as store
from ._config import EXECUTOR_NAMES
from ._pool import EXIT_PARENT_GONE, DeadWorker, exit_with_parent, run_with_retry  # noqa: F401 - names of the pool
from ._run_spec import RunSpec
from ._train import train_run

def train_job(job: list[RunSpec], progress: bool | None = None) -> list[dict[str, Any]]:
    """Train one job: a single run, or a group of runs trained together.

    ``progress`` defaults to the config's ``progress``. One outcome per run, in the order of ``job``.
    """
    if len(job) == 1:
        return [train_run(job[0], progress=progress)]
    from ._train import train_group

    return train_group(job, progress=progress)


def _worker(job: list[RunSpec], threads: int | None) -> list[dict[str, Any]]:
    if threads:
        import torch

        torch.set_num_threads(threads)
    return train_job(job, progress=False)


def failure(spec: RunSpec, err: BaseException, *, killed: bool = False) -> dict[str, Any]:
    """Build the outcome record of a run that did not finish: ``locked``, ``interrupted`` or ``failed``.

    ``locked``: another live process holds the run. ``interrupted``: it was stopped from outside (``killed``: its
    process died, e.g. a pool worker; or its folder reads ``interrupted``, :func:`~._store.run_state`), the word
    ``diagnostics sweep status`` uses for it too. ``failed``: its training raised. Keys: ``path`` (the run folder),
    ``state`` and ``error`` (type and message).
    """
    from ._run_lock import RunLockedError

    if isinstance(err, RunLockedError) or "RunLockedError" in f"{type(err).__name__}{err}":
        state = "locked"
    elif killed or store.run_state(spec.path) == "interrupted":
        state = "interrupted"
    else:
        state = "failed"
    return {"path": str(spec.path), "state": state, "error": f"{type(err).__name__}: {err}"}


def _safe_worker(job: list[RunSpec], threads: int | None) -> list[dict[str, Any]]:
    """:func:`_worker` that returns failures as outcome records (the run's ``FAILED`` file keeps the traceback)
    instead of raising in a remote job (submitit's debug executor would open a debugger)."""
    try:
        return _worker(job, threads)
    except Exception as err:
        return [failure(spec, err) for spec in job]


def _capture(fn: Callable, job: list[RunSpec]) -> list[dict[str, Any]]:
    try:
        return fn(job)
    except Exception as err:  # reported per run; the sweep goes on with the other jobs
        return [failure(spec, err) for spec in job]


def run_inprocess(jobs: list[list[RunSpec]], options: dict[str, Any], workers: int) -> Iterator[dict[str, Any]]:
    """Train one job after another in this process (frozen-layer features stay in memory between seeds).

    Each job is a run alone or a fused group; ``options`` and ``workers`` are unused (one run at a time). Yields one
    outcome per run, in order: the record :func:`train_run` returns, or a :func:`failure` record.
    """
    for job in jobs:
        yield from _capture(train_job, job)


def run_pool(jobs: list[list[RunSpec]], options: dict[str, Any], workers: int) -> Iterator[dict[str, Any]]:
    """Train the jobs in a local pool of ``workers`` processes; each gets ``cpu_count // workers`` torch threads.

    ``options`` is the sweep's ``executor_options`` (``threads_per_worker`` overrides the torch threads of each
    process). Yields one outcome per run, as jobs finish: the record :func:`train_run` returns, or a :func:`failure`
    record. A worker that dies (killed, out of memory) is said on stderr with its runs and its exit code or signal;
    its job is retried once in a fresh pool after the others, and reported ``interrupted`` if its worker dies again
    (:func:`~._pool.run_with_retry`). While jobs train, a line at least once a minute names each busy worker, its runs
    and whether its process is stopped.
    """
    threads = options.get("threads_per_worker") or max(1, (os.cpu_count() or 1) // workers)
    yield from run_with_retry(jobs, _safe_worker, threads, workers, _worker_died)


def _worker_died(job: list[RunSpec], dead: DeadWorker) -> list[dict[str, Any]]:
    """The records of a job whose pool worker died twice: ``interrupted``, naming the worker and its exit."""
    error = RuntimeError(f"{dead.message()}, after one retry; the run starts from scratch when the sweep runs again")
    return [failure(spec, error, killed=True) for spec in job]


class SweepJob:
    """What a SLURM job of the sweep runs: train one job (a run or a fused group), failures as outcome records.

    Inside the job it marks the runs it holds ``interrupted`` (an ``INTERRUPTED`` file,
    :func:`~._run_writer.mark_owned_interrupted`; runs it never claimed or another process holds are left alone)
    when the job is stopped from outside. On ``SIGTERM`` (``scancel``, preemption, the time limit; SIGKILL follows
    ``KillWait`` seconds later) it exits at once without a result, so the sweep reads the job's end from SLURM (and
    waits for it again if SLURM requeues it); with ``requeue`` it goes on instead, so that a ``SIGUSR2`` that follows
    can still requeue it. On ``SIGUSR2`` (submitit's warning before the time limit, or a preemption signal) submitit
    calls :meth:`checkpoint`, which requeues the job when ``requeue`` is set; the SIGTERM with which SLURM then ends
    this incarnation exits at once (submitit's own exit, an exception raised in a signal handler, can be lost).
    With ``requeue`` every run saves its state at each check (:mod:`._resume`), and a requeued or retried run goes
    on from its last check.

    Parameters
    ----------
    requeue : bool
        Requeue the job on ``SIGUSR2`` (submitit's checkpoint hook; submitit counts the timeouts).
    """

    #: Exit status of a job that stopped on SIGTERM (128 + 15, as the shell reports it).
    EXIT_TERMINATED = 143

    def __init__(self, requeue: bool = False):
        self.requeue = requeue
        self._requeued = False  # this process's checkpoint has requeued the job (not pickled: the next one has not)

    def __getstate__(self) -> dict[str, Any]:
        return {"requeue": self.requeue}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(**state)

    def __call__(self, job: list[RunSpec], threads: int | None) -> list[dict[str, Any]]:
        threads = threads or int(os.environ.get("SLURM_CPUS_PER_TASK") or 0) or None
        try:
            previous = signal.signal(signal.SIGTERM, lambda signum, frame: self._terminated(job))
        except ValueError:  # not the main thread (submitit's debug executor in a thread): no handler
            previous = None
        try:
            return _safe_worker(job, threads)
        finally:
            if previous is not None:
                signal.signal(signal.SIGTERM, previous)

    def _terminated(self, job: list[RunSpec]) -> None:
        from ._run_writer import mark_owned_interrupted

        # only the runs this process holds; a SIGUSR2's reason (requeued) stays
        mark_owned_interrupted("SIGTERM: the job was cancelled, preempted or reached its time limit", keep=True)
        if self._requeued:
            # SLURM ends the incarnation that requeued itself: submitit's SystemExit may not have ended it (a signal
            # handler's exception raised inside a __del__ is dropped), and it must not train on until the kill
            sys.stderr.write("SIGTERM after this job requeued itself: exiting; the requeued job goes on from the "
                             "last check\n")
            sys.stderr.flush()
            os._exit(self.EXIT_TERMINATED)
        if self.requeue:  # a SIGUSR2 may follow (preemption): its checkpoint requeues the job
            sys.stderr.write("SIGTERM: runs marked interrupted; going on until SIGUSR2 (requeue) or the kill\n")
            return
        sys.stderr.write("SIGTERM: runs marked interrupted; exiting\n")
        sys.stderr.flush()
        os._exit(self.EXIT_TERMINATED)

    def checkpoint(self, job: list[RunSpec], threads: int | None):
        """submitit's hook on ``SIGUSR2``: mark the runs interrupted; requeue (return the same call) if asked.

        Returns ``None`` without ``requeue``: submitit then ends the job with an error the runs report as
        ``interrupted``.
        """
        from submitit.helpers import DelayedSubmission

        from ._run_writer import mark_owned_interrupted

        what = "requeued, the run goes on from its last check" if self.requeue else \
            "not requeued (executor_options.requeue is off)"
        mark_owned_interrupted(f"SIGUSR2: time limit near or preempted; {what}")
        if not self.requeue:
            return None
        self._requeued = True  # submitit requeues the job now; SLURM's SIGTERM that follows ends this process
        return DelayedSubmission(self, job, threads)


def run_submitit(jobs: list[list[RunSpec]], options: dict[str, Any], workers: int) -> Iterator[dict[str, Any]]:
    """Submit the jobs through submitit as one SLURM job array (or to its local / debug executors for testing).

    A fused group is one SLURM job too. ``options`` is the sweep's ``executor_options``: ``cluster`` (``slurm``,
    ``local`` or ``debug``), ``folder`` (of the job logs), ``threads_per_worker``, ``poll_s`` (seconds between
    ``squeue`` polls), ``lost_job_grace_s`` (how long a job that ended without a result may still deliver one),
    ``requeue`` (requeue on timeout / preemption) and submitit parameters (``timeout_min``, ``slurm_partition``,
    ``gpus_per_node``, ``slurm_array_parallelism`` ...); ``workers`` is unused (the cluster schedules the jobs).
    Yields one outcome per run, as jobs end (:func:`~._submitit.submit_and_watch`): the record :func:`train_run`
    returns, or a :func:`failure` record.
    """
    from ._submitit import submit_and_watch

    yield from submit_and_watch(jobs, options, SweepJob(requeue=bool(options.get("requeue"))), failure)


def detach_submitit(jobs: list[list[RunSpec]], options: dict[str, Any]) -> dict[str, Any]:
    """Submit the jobs as :func:`run_submitit` does and return at once, without watching them (``--detach``).

    Returns what :func:`~._submitit.submit_detached` returns: the cluster, the log folder and each job's id, runs
    and files.
    """
    from ._submitit import submit_detached

    return submit_detached(jobs, options, SweepJob(requeue=bool(options.get("requeue"))))


#: The runtime table: each of the config's :data:`~diagnostics.finetune._config.EXECUTOR_NAMES` -> its function.
EXECUTORS: dict[str, Callable[[list[list[RunSpec]], dict[str, Any], int], Iterator[dict[str, Any]]]] = dict(
    zip(EXECUTOR_NAMES, (run_inprocess, run_pool, run_submitit), strict=True))


def get_executor(name: str):
    """Look up the executor function registered as ``name`` (``inprocess``, ``pool`` or ``submitit``).

    It is called as ``executor(jobs, options, workers)`` and yields one outcome record per run. ``ValueError`` for an
    unknown name.
    """
    try:
        return EXECUTORS[name]
    except KeyError:
        raise ValueError(f"unknown executor {name!r}; choose one of {', '.join(EXECUTORS)}") from None
