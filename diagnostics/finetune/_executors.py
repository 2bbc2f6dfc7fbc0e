"""Where runs execute. Jobs are independent, so an executor only maps :func:`train_job` over them.

A job is a list of runs: one run (``fuse: 1``), or a group of runs of one experiment, language and model trained as
one computation (:mod:`.train_group`). Executors yield one outcome per run, whatever the grouping.

``inprocess`` (default) runs them one after another here; ``pool`` uses local processes (``spawn``; threads are
split between workers); ``submitit`` submits to SLURM (``executor_options``: ``cluster`` = ``slurm`` | ``local``
| ``debug``, plus submitit parameters such as ``timeout_min``, ``slurm_partition``, ``gpus_per_node``).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ._config import EXECUTOR_NAMES
from ._train import RunSpec, train_run

#: ``timeout_min`` of submitit's local executor unless ``executor_options`` set one (submitit's own is 2 minutes).
LOCAL_TIMEOUT_MIN = 24 * 60


#: Exit status of a pool worker whose parent died.
EXIT_PARENT_GONE = 70


def exit_with_parent(parent_pid: int | None = None, poll_s: float = 0.5) -> None:
    """Make this process exit as soon as the process that started it dies (even by ``kill -9``).

    A daemon thread waits on :func:`multiprocessing.parent_process`'s sentinel (a pipe the parent holds, closed
    by the kernel when it dies), or, where there is none, polls :func:`os.getppid` every ``poll_s`` seconds for a
    change from ``parent_pid`` (default: the current parent); then it ends the process with ``os._exit``. The
    ``initializer`` of the ``pool`` executor's workers, so that a killed sweep does not leave workers training (and
    holding memory) for minutes.
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


def train_job(job: list[RunSpec], progress: bool | None = None) -> list[dict[str, Any]]:
    """Train one job: a single run, or a group of runs trained together.

    ``progress`` defaults to the config's ``progress``. One outcome per run, in the order of ``job``.
    """
    if len(job) == 1:
        return [train_run(job[0], progress=progress)]
    from ._train_group import train_group

    return train_group(job, progress=progress)


def _worker(job: list[RunSpec], threads: int | None) -> list[dict[str, Any]]:
    if threads:
        import torch

        torch.set_num_threads(threads)
    return train_job(job, progress=False)


def failure(spec: RunSpec, err: BaseException) -> dict[str, Any]:
    """Build the outcome record of a run that raised: ``locked`` (another live process holds it) or ``failed``.

    Keys: ``path`` (the run folder), ``state`` and ``error`` (type and message).
    """
    from ._run_lock import RunLockedError

    state = "locked" if isinstance(err, RunLockedError) or "RunLockedError" in f"{type(err).__name__}{err}" \
        else "failed"
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
    record.
    """
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor, as_completed

    threads = options.get("threads_per_worker") or max(1, (os.cpu_count() or 1) // workers)
    # each worker exits when this process dies, even by SIGKILL (exit_with_parent)
    with ProcessPoolExecutor(max_workers=workers, mp_context=mp.get_context("spawn"), initializer=exit_with_parent,
                             initargs=(os.getpid(),)) as pool:
        futures = {pool.submit(_worker, job, threads): job for job in jobs}
        for future in as_completed(futures):
            try:
                yield from future.result()
            except Exception as err:
                yield from (failure(spec, err) for spec in futures[future])


def run_submitit(jobs: list[list[RunSpec]], options: dict[str, Any], workers: int) -> Iterator[dict[str, Any]]:
    """Submit each job through submitit (SLURM, or its local / debug executors for testing).

    A fused group is one SLURM job too. ``options`` is the sweep's ``executor_options``: ``cluster`` (``slurm``,
    ``local`` or ``debug``), ``folder`` (of the job logs), ``threads_per_worker``, and submitit parameters
    (``timeout_min``, ``slurm_partition`` ...); ``workers`` is unused (the cluster schedules the jobs). Yields one
    outcome per run, in submission order: the record :func:`train_run` returns, or a :func:`failure` record.
    """
    import submitit

    options = dict(options)
    cluster = options.pop("cluster", None)
    first = jobs[0][0]
    folder = options.pop("folder", None) or str(Path(first.config["output_dir"]) / first.config["experiment"]
                                                / ".submitit" / "%j")
    threads = options.pop("threads_per_worker", None)
    if cluster == "local":
        executor = submitit.LocalExecutor(folder=folder)
        # submitit's local default (2 minutes, then SIGUSR2) kills a real run half-way; a run ends on its own
        options.setdefault("timeout_min", LOCAL_TIMEOUT_MIN)
    elif cluster == "debug":
        executor = submitit.DebugExecutor(folder=folder)
    else:
        executor = submitit.AutoExecutor(folder=folder, cluster=cluster)
    if options:
        executor.update_parameters(**options)
    submitted = [(job, executor.submit(_safe_worker, job, threads)) for job in jobs]
    for job, handle in submitted:
        try:
            yield from handle.result()
        except Exception as err:
            yield from (failure(spec, err) for spec in job)


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
