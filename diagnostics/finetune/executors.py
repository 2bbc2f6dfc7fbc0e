"""Where runs execute. Runs are independent, so an executor only maps :func:`train_run` over run specs.

``inprocess`` (default) runs them one after another here; ``pool`` uses local processes (``spawn``; threads are
split between workers); ``submitit`` submits to SLURM (``executor_options``: ``cluster`` = ``slurm`` | ``local``
| ``debug``, plus submitit parameters such as ``timeout_min``, ``slurm_partition``, ``gpus_per_node``); ``ray``
needs ``pip install ray``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from .train import RunSpec, train_run

#: ``timeout_min`` of submitit's local executor unless ``executor_options`` set one (submitit's own is 2 minutes).
LOCAL_TIMEOUT_MIN = 24 * 60


def _worker(spec: RunSpec, threads: int | None) -> dict[str, Any]:
    if threads:
        import torch

        torch.set_num_threads(threads)
    return train_run(spec, progress=False)


def failure(spec: RunSpec, err: BaseException) -> dict[str, Any]:
    """Outcome record of a run that raised: ``locked`` (another live process holds it) or ``failed``."""
    from .store import RunLockedError

    state = "locked" if isinstance(err, RunLockedError) or "RunLockedError" in f"{type(err).__name__}{err}" \
        else "failed"
    return {"path": str(spec.path), "state": state, "error": f"{type(err).__name__}: {err}"}


def _safe_worker(spec: RunSpec, threads: int | None) -> dict[str, Any]:
    """:func:`_worker` that returns failures as outcome records (the run's ``FAILED`` file keeps the traceback)
    instead of raising in a remote job (submitit's debug executor would open a debugger)."""
    try:
        return _worker(spec, threads)
    except Exception as err:
        return failure(spec, err)


def _capture(fn: Callable, spec: RunSpec) -> dict[str, Any]:
    try:
        return fn(spec)
    except Exception as err:  # reported per run; the sweep goes on with the others
        return failure(spec, err)


def run_inprocess(specs: list[RunSpec], options: dict[str, Any], workers: int) -> Iterator[dict[str, Any]]:
    """One run after another in this process (frozen-layer features stay in memory between seeds)."""
    for spec in specs:
        yield _capture(train_run, spec)


def run_pool(specs: list[RunSpec], options: dict[str, Any], workers: int) -> Iterator[dict[str, Any]]:
    """A local process pool of ``workers`` processes; each gets ``cpu_count // workers`` torch threads."""
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor, as_completed

    threads = options.get("threads_per_worker") or max(1, (os.cpu_count() or 1) // workers)
    with ProcessPoolExecutor(max_workers=workers, mp_context=mp.get_context("spawn")) as pool:
        futures = {pool.submit(_worker, spec, threads): spec for spec in specs}
        for future in as_completed(futures):
            try:
                yield future.result()
            except Exception as err:
                yield failure(futures[future], err)


def run_submitit(specs: list[RunSpec], options: dict[str, Any], workers: int) -> Iterator[dict[str, Any]]:
    """Submit each run as a job through submitit (SLURM, or its local / debug executors for testing)."""
    import submitit

    options = dict(options)
    cluster = options.pop("cluster", None)
    folder = options.pop("folder", None) or str(Path(specs[0].config["output_dir"]) / specs[0].config["experiment"]
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
    jobs = [(spec, executor.submit(_safe_worker, spec, threads)) for spec in specs]
    for spec, job in jobs:
        try:
            yield job.result()
        except Exception as err:
            yield failure(spec, err)


def run_ray(specs: list[RunSpec], options: dict[str, Any], workers: int) -> Iterator[dict[str, Any]]:
    """Ray tasks (``num_cpus`` / ``num_gpus`` from ``executor_options``); ``pip install ray`` first."""
    try:
        import ray
    except ImportError as err:
        raise ImportError("executor 'ray' needs Ray: pip install 'ray[default]'") from err
    if not ray.is_initialized():
        ray.init(**options.get("init", {}))
    remote = ray.remote(num_cpus=options.get("num_cpus", 1), num_gpus=options.get("num_gpus", 0))(_safe_worker)
    refs = {remote.remote(spec, options.get("num_cpus", 1)): spec for spec in specs}
    pending = list(refs)
    while pending:
        done, pending = ray.wait(pending, num_returns=1)
        try:
            yield ray.get(done[0])
        except Exception as err:
            yield failure(refs[done[0]], err)


EXECUTORS: dict[str, Callable[[list[RunSpec], dict[str, Any], int], Iterator[dict[str, Any]]]] = {
    "inprocess": run_inprocess, "pool": run_pool, "submitit": run_submitit, "ray": run_ray,
}


def get_executor(name: str):
    """The executor function registered as ``name``."""
    try:
        return EXECUTORS[name]
    except KeyError:
        raise ValueError(f"unknown executor {name!r}; choose one of {', '.join(EXECUTORS)}") from None
