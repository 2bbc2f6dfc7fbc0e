"""The sweep's jobs on SLURM through submitit: one job array, watched by its own polls, each job reported as it ends.

submitit's own waiting reads job states from ``sacct`` only: without accounting every poll warns, and a job that died
without a result stays ``UNKNOWN``, which it reads as running, so the sweep would wait for ever. Here the sweep asks
``squeue`` itself (then ``sacct`` where accounting answers, :mod:`._slurm`), reads each job's result file as soon as
it appears, and treats a job that has ended (or left the queue) without a result as over once
``lost_job_grace_s`` has passed: its runs are reported ``interrupted``, with the job's SLURM state and the tail of its
log. Ctrl-C cancels the sweep's unfinished jobs (``scancel`` by job id) and says which.

``cluster: local`` (submitit's local executor, processes on this machine) is watched the same way, its processes in
place of the queue; ``cluster: debug`` runs each job in this process when its result is read.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import _store as store
from ._config import ConfigError
from ._run_spec import RunSpec
from ._slurm import GONE, JobState, accounting_available, cancel, job_states, node_states
from ._waiting import Asking, WaitLog, describe_jobs

#: The executor's own options (``executor_options``) and their defaults; every other key goes to submitit.
OWN_OPTIONS: dict[str, Any] = {"cluster": None, "folder": None, "threads_per_worker": None, "poll_s": 15.0,
                               "lost_job_grace_s": 60.0, "requeue": False}
#: ``timeout_min`` of submitit's local executor unless ``executor_options`` set one (submitit's own is 2 minutes).
LOCAL_TIMEOUT_MIN = 24 * 60
#: Lines of a lost job's log quoted in its runs' error.
LOG_TAIL_LINES = 8


def split_options(options: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Split ``executor_options`` into this executor's own options (with defaults) and submitit's parameters."""
    own = {key: options.get(key, default) for key, default in OWN_OPTIONS.items()}
    return own, {key: value for key, value in options.items() if key not in OWN_OPTIONS}


def make_executor(jobs: list[list[RunSpec]], own: dict[str, Any], params: dict[str, Any]):
    """The submitit executor for ``own["cluster"]`` with ``params`` set; logs in ``own["folder"]`` (default
    ``<output_dir>/<experiment>/.submitit/%j`` of the first run)."""
    import submitit

    first = jobs[0][0]
    folder = own["folder"] or str(Path(first.config["output_dir"]) / first.config["experiment"] / ".submitit" / "%j")
    params = dict(params)
    if own["cluster"] == "local":
        executor = submitit.LocalExecutor(folder=folder)
        # submitit's local default (2 minutes, then SIGUSR2) kills a real run half-way; a run ends on its own
        params.setdefault("timeout_min", LOCAL_TIMEOUT_MIN)
    elif own["cluster"] == "debug":
        executor = submitit.DebugExecutor(folder=folder)
    else:
        executor = submitit.AutoExecutor(folder=folder, cluster=own["cluster"])
        if executor.cluster == "slurm":
            params.setdefault("name", f"diagnostics-{first.config['experiment']}")
            if own["requeue"]:  # SLURM may requeue the jobs itself (preemption, node failure)
                extra = dict(params.get("slurm_additional_parameters") or {})
                extra.setdefault("requeue", True)
                params["slurm_additional_parameters"] = extra
    if params:
        try:
            executor.update_parameters(**params)
        except (NameError, ValueError, TypeError) as err:  # submitit names the parameters it knows
            raise ConfigError([("executor_options", str(err).strip().splitlines()[0])]) from None
    return executor


def submit(executor, worker: Callable, jobs: list[list[RunSpec]], threads: int | None) -> list:
    """Submit every job as one batch: one SLURM job array (``slurm_array_parallelism`` of them at once)."""
    with executor.batch():
        handles = [executor.submit(worker, job, threads) for job in jobs]
    return handles


@dataclass
class _Waiting:
    """A submitted job not yet reported: its handle, its runs, and since when it has seemed ended without a result."""

    handle: Any
    job: list[RunSpec]
    ended_since: float | None = None
    state: JobState | None = field(default=None)
    since: float = 0.0  # clock time since which ``state`` has held

    @property
    def job_id(self) -> str:
        return str(self.handle.job_id)


def read_result(handle) -> tuple[str, Any] | None:
    """A job's ``(outcome, value)`` from its result file (``success`` / ``error``); ``None`` while there is none."""
    from submitit.core.utils import pickle_load

    path = handle.paths.result_pickle
    if not path.exists():
        return None
    try:
        return pickle_load(path)
    except (EOFError, OSError, ValueError):
        return None  # not complete yet: the next look reads it


def log_tail(handle, lines: int = LOG_TAIL_LINES) -> str:
    """The last ``lines`` lines of a job's stderr log (its stdout when stderr is empty), one string."""
    for path in (handle.paths.stderr, handle.paths.stdout):
        try:
            text = Path(path).read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            continue
        if text:
            return " | ".join(text.splitlines()[-lines:])
    return "(no log)"


def lost_outcomes(waiting: _Waiting) -> list[dict[str, Any]]:
    """The outcomes of a job that ended without a result: each run as its folder reads (``done`` when it finished,
    ``failed`` when its training raised, else ``interrupted``), with the job's SLURM state and log tail."""
    state = waiting.state.state if waiting.state else GONE
    where = {"squeue": "squeue", "sacct": "sacct"}.get(waiting.state.source if waiting.state else "", "")
    said = "it left the queue and no accounting knows it" if state == GONE else f"state {state}" + \
        (f" from {where}" if where else "")
    error = (f"SLURM job {waiting.job_id} ended without a result ({said}); log "
             f"{waiting.handle.paths.stderr}: {log_tail(waiting.handle)}")
    outcomes = []
    for spec in waiting.job:
        folder = store.run_state(spec.path)
        if folder == "done":
            outcomes.append({"path": str(spec.path), "state": "done", "metrics": None})
        else:
            outcomes.append({"path": str(spec.path), "state": "failed" if folder == "failed" else "interrupted",
                             "error": error})
    return outcomes


def _local_states(waiting: list[_Waiting]) -> dict[str, JobState]:
    """States of submitit's local jobs: their processes in place of a queue."""
    return {w.job_id: JobState("COMPLETED" if w.handle.done() else "RUNNING", "", "process") for w in waiting}


def _ask(ids: list[str], states: Callable[[list[str]], dict[str, JobState] | None],
         nodes: Callable[[list[str]], dict[str, str] | None] | None) -> tuple[dict[str, JobState] | None,
                                                                             dict[str, str] | None]:
    """The jobs' states and, when some run on nodes, those nodes' states (``None`` when not asked or unknown)."""
    known = states(ids)
    busy = sorted({state.nodes for state in (known or {}).values() if state is not None and state.nodes})
    return known, (nodes(busy) if nodes is not None and busy else None)


def watch(waiting: list[_Waiting], *, states: Callable[[list[str]], dict[str, JobState] | None],
          failure: Callable[[RunSpec, BaseException], dict[str, Any]], poll_s: float, grace_s: float,
          clock: Callable[[], float] | None = None, sleep: Callable[[float], None] | None = None,
          log: WaitLog | None = None, scheduler: str = "SLURM",
          nodes: Callable[[list[str]], dict[str, str] | None] | None = None) -> Iterator[dict[str, Any]]:
    """Yield the outcomes of each job as it ends, in the order the jobs end.

    Each job's result file is read every second; ``states`` (job ids -> :class:`JobState`, ``None`` when unknown) is
    asked every ``poll_s`` seconds, in a thread of its own: an answer that comes within a second is used in the same
    round, a slower one when it comes, and meanwhile the loop goes on (no new question while one is open). A job
    SLURM calls ended (or no longer lists) while it has no result is given up ``grace_s`` seconds later
    (:func:`lost_outcomes`); an unknown state never counts as ended. A job that raised outside the training (``error``
    result) is reported with ``failure``. ``waiting`` is emptied as jobs end. ``clock`` and ``sleep`` default to
    :func:`time.monotonic` and :func:`time.sleep`.

    While it waits, ``log`` (a :class:`~._waiting.WaitLog` on ``clock`` by default) prints a line every
    :data:`~._waiting.WAIT_LINE_S` seconds, on time also while ``squeue`` hangs: the jobs by state and reason
    (pending, held, on a drained node: ``nodes`` gives the states of the nodes the jobs run on, asked with the jobs'
    states), since when, and for how long ``squeue`` has not answered.
    """
    clock = clock or time.monotonic
    sleep = sleep or time.sleep
    log = log or WaitLog(clock=clock)
    next_poll = clock()
    answered = clock()  # the last time ``states`` answered
    silent = False
    found: dict[str, str] | None = None  # the running jobs' nodes' states, as last asked
    asking: Asking | None = None
    for item in waiting:
        item.since = answered
    while waiting:
        for item in list(waiting):
            result = read_result(item.handle)
            if result is not None:
                waiting.remove(item)
                yield from _outcomes(item, result, failure)
        if not waiting:
            return
        now = clock()
        if asking is None and now >= next_poll:
            next_poll = now + poll_s
            ids = [item.job_id for item in waiting]
            asking = Asking(lambda: _ask(ids, states, nodes))
            asking.done.wait(max(0.0, min(1.0, poll_s, log.due_in())))  # not past a line that is due
        if asking is not None and asking.done.is_set():
            known, found = asking.result()
            asking = None
            silent = known is None
            if not silent:
                answered = now
            for item in waiting if known is not None else ():
                state = known.get(item.job_id)
                if state is not None and (item.state is None or (state.state, state.reason, state.nodes) !=
                                          (item.state.state, item.state.reason, item.state.nodes)):
                    item.since = now
                item.state = state or item.state
                if state is None or not state.ended:
                    item.ended_since = None
                elif item.ended_since is None:
                    item.ended_since = now
        for item in list(waiting):
            if item.ended_since is not None and now - item.ended_since >= grace_s:
                waiting.remove(item)
                result = read_result(item.handle)  # a last look: the file may have arrived just now
                yield from (_outcomes(item, result, failure) if result is not None else lost_outcomes(item))
        if waiting:
            log.tick(lambda: describe_jobs([(item.job_id, item.state, item.since) for item in waiting], now,
                                           scheduler=scheduler, silent_s=now - answered if silent else None,
                                           nodes=None if silent else found))
            sleep(max(0.0, min(1.0, poll_s, log.due_in())))


def _outcomes(item: _Waiting, result: tuple[str, Any], failure: Callable) -> list[dict[str, Any]]:
    outcome, value = result
    if outcome == "success" and isinstance(value, list):
        return value
    message = str(value).strip().splitlines()[-1] if str(value).strip() else "no message"
    error = RuntimeError(f"SLURM job {item.job_id} raised outside the training: {message}")
    return [failure(spec, error) for spec in item.job]


def cancel_waiting(waiting: list[_Waiting], cluster: str) -> None:
    """Cancel the jobs still waiting (Ctrl-C): ``scancel`` by job id on SLURM, the processes of the local executor;
    say on stderr which."""
    if not waiting:
        return
    ids = [item.job_id for item in waiting]
    if cluster == "slurm":
        ok = cancel(ids)
        what = f"cancelled {len(ids)} SLURM job(s) of this sweep: {' '.join(ids)}" if ok else \
            f"could not cancel the SLURM jobs of this sweep; cancel them with: scancel {' '.join(ids)}"
    else:
        for item in waiting:
            item.handle.cancel(check=False)
        what = f"cancelled {len(ids)} job(s) of this sweep"
    sys.stderr.write(f"interrupted: {what}; their runs start from scratch when the sweep runs again\n")
    sys.stderr.flush()


def submit_and_watch(jobs: list[list[RunSpec]], options: dict[str, Any], worker: Callable,
                     failure: Callable[[RunSpec, BaseException], dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """Submit ``jobs`` (one SLURM job array) and yield their runs' outcomes as each job ends.

    Parameters
    ----------
    jobs : list of list of RunSpec
        The sweep's jobs (a run, or a fused group of runs).
    options : dict
        ``executor_options``: :data:`OWN_OPTIONS` and submitit parameters (``timeout_min``, ``slurm_partition``,
        ``gpus_per_node``, ``slurm_array_parallelism`` ...).
    worker : callable
        What a job runs: ``worker(job, threads)`` returns one outcome record per run.
    failure : callable
        ``failure(spec, error)``: the outcome record of a run whose job raised outside the training.

    Yields
    ------
    dict
        One outcome per run (``path``, ``state``, ``error``), as jobs end.
    """
    own, params = split_options(options)
    executor = make_executor(jobs, own, params)
    handles = submit(executor, worker, jobs, own["threads_per_worker"])
    waiting = [_Waiting(handle, job) for handle, job in zip(handles, jobs)]
    cluster = executor.cluster if hasattr(executor, "cluster") else own["cluster"]
    if own["cluster"] == "debug" or cluster == "debug":
        for item in waiting:  # runs each job here, when its result is asked for
            try:
                yield from item.handle.result()
            except Exception as err:
                yield from (failure(spec, err) for spec in item.job)
        return
    if cluster == "slurm":
        sys.stderr.write(f"submitted {len(jobs)} SLURM job(s): {_ids(waiting)}; logs in "
                         f"{Path(str(executor.folder))}\n")
        accounting = accounting_available()

        def states(ids: list[str]) -> dict[str, JobState] | None:
            return job_states(ids, accounting=accounting)
    else:
        def states(ids: list[str]) -> dict[str, JobState] | None:
            return _local_states([item for item in waiting if item.job_id in ids])
    try:
        yield from watch(waiting, states=states, failure=failure, poll_s=float(own["poll_s"]),
                         grace_s=float(own["lost_job_grace_s"]), scheduler="SLURM" if cluster == "slurm" else cluster,
                         nodes=node_states if cluster == "slurm" else None)
    except KeyboardInterrupt:
        cancel_waiting(waiting, cluster)
        raise


def _ids(waiting: list[_Waiting]) -> str:
    ids = [item.job_id for item in waiting]
    arrays = sorted({i.split("_")[0] for i in ids if "_" in i})
    return f"array {arrays[0]} ({len(ids)} tasks)" if len(arrays) == 1 and len(ids) > 1 else " ".join(ids)


def submit_detached(jobs: list[list[RunSpec]], options: dict[str, Any], worker: Callable) -> dict[str, Any]:
    """Submit ``jobs`` (one SLURM job array) and return at once what was submitted; nothing watches the jobs.

    Parameters
    ----------
    jobs : list of list of RunSpec
        The sweep's jobs.
    options : dict
        ``executor_options``, as for :func:`submit_and_watch`; ``cluster: debug`` (jobs that run in this process)
        cannot be detached.
    worker : callable
        What a job runs: ``worker(job, threads)``.

    Returns
    -------
    dict
        ``cluster`` (``slurm`` or ``local``), ``folder`` (of the logs), ``poll_s`` and ``jobs``: per job its
        ``job_id``, ``runs`` (run folders), ``stdout``, ``stderr`` and ``result`` files.

    Raises
    ------
    ConfigError
        For ``cluster: debug``, before anything is submitted.
    """
    own, params = split_options(options)
    if own["cluster"] == "debug":
        raise ConfigError([("executor_options.cluster", "--detach needs a cluster that runs the jobs on its own "
                                                        "(slurm or local), found 'debug'")])
    executor = make_executor(jobs, own, params)
    cluster = getattr(executor, "cluster", None) or own["cluster"]
    if cluster == "debug":
        raise ConfigError([("executor_options.cluster", "--detach needs a cluster that runs the jobs on its own "
                                                        "(slurm or local), found 'debug'")])
    handles = submit(executor, worker, jobs, own["threads_per_worker"])
    return {"cluster": cluster, "folder": str(executor.folder), "poll_s": float(own["poll_s"]),
            "jobs": [{"job_id": str(handle.job_id), "runs": [str(Path(spec.path).resolve()) for spec in job],
                      "stdout": str(handle.paths.stdout), "stderr": str(handle.paths.stderr),
                      "result": str(handle.paths.result_pickle)} for handle, job in zip(handles, jobs)]}
