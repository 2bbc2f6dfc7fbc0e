"""A detached sweep: jobs submitted to a cluster and left to run on their own (``diagnostics sweep run --detach``).

What was submitted is recorded in each experiment folder as ``.submitit/detached.json`` (:data:`DETACHED_FILE`):
the cluster, the log folder and, per job, its id, its runs (their folders) and its log and result files. From that
record :func:`detached_status` adds the scheduler's side of each run (``queued``, ``training``, ``ended``) to the
store's (:func:`~._store_checks.sweep_status`), and :func:`wait_detached` follows the jobs until every one has
ended, saying at least once a minute what it waits for (:mod:`._waiting`) and each run as it finishes. Following a
sweep never cancels anything: Ctrl-C only stops the following.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TextIO

import pandas as pd

from diagnostics.core.errors import UserInputError
from diagnostics.core.io_utils import write_json_atomic

from ._slurm import GONE, ON_NODE, JobState, accounting_available, job_states
from ._store import run_coordinates, run_state
from ._waiting import Asking, WaitLog, describe_jobs, job_phrase, process_state

#: Where a detached sweep's record lives, relative to its experiment folder.
DETACHED_FILE = Path(".submitit") / "detached.json"
#: Version of the record's layout.
RECORD_VERSION = 1
#: The scheduler's side of a run: its job waits in the queue, runs on a node, has ended, or SLURM cannot say.
SCHEDULER_SIDES = ("queued", "training", "ended", "unknown")
#: Store states a finished attempt leaves (a line each when :func:`wait_detached` sees one appear).
FINAL_STATES = ("done", "failed", "interrupted")


@dataclass
class DetachedSweep:
    """What a detached submission sent to the cluster.

    Parameters
    ----------
    cluster : str
        ``slurm`` or ``local`` (submitit's local executor: processes on the submitting machine).
    folder : str
        The job logs' folder (``%j`` stands for a job id).
    jobs : list of dict
        One per job: ``job_id``, ``runs`` (run folders), ``stdout``, ``stderr`` and ``result`` (files of the job).
    experiments : list of str
        The experiment folders the jobs write into.
    poll_s : float
        Seconds between two ``squeue`` calls when following the jobs.
    submitted_at : str
        When (ISO 8601, UTC).
    host : str
        The submitting host.
    version : int
        The record's layout (:data:`RECORD_VERSION`).
    """

    cluster: str
    folder: str
    jobs: list[dict[str, Any]]
    experiments: list[str] = field(default_factory=list)
    poll_s: float = 15.0
    submitted_at: str = ""
    host: str = ""
    version: int = RECORD_VERSION

    def job_ids(self) -> list[str]:
        """List the jobs' ids.

        Returns
        -------
        list of str
            In submission order.
        """
        return [str(job["job_id"]) for job in self.jobs]

    def runs(self) -> dict[str, str]:
        """Map each run to its job.

        Returns
        -------
        dict of str to str
            Run folder -> the id of the job that trains it.
        """
        return {str(run): str(job["job_id"]) for job in self.jobs for run in job["runs"]}

    def to_dict(self) -> dict[str, Any]:
        """Turn the record into plain values.

        Returns
        -------
        dict
            The record as written to :data:`DETACHED_FILE`.
        """
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any], source: str | Path = "") -> DetachedSweep:
        """Read a record from its plain values.

        Parameters
        ----------
        data : dict
            As :meth:`to_dict` returns it.
        source : str or Path
            Where it was read (named in errors).

        Returns
        -------
        DetachedSweep
            The record.

        Raises
        ------
        UserInputError
            For a record this version cannot read (another layout version, no job list).
        """
        version = data.get("version", RECORD_VERSION) if isinstance(data, dict) else None
        if not isinstance(data, dict) or version != RECORD_VERSION or not isinstance(data.get("jobs"), list):
            raise UserInputError(f"{source}: expected a detached sweep record of version {RECORD_VERSION}, found "
                                 f"{'version ' + str(version) if isinstance(data, dict) else type(data).__name__}")
        known = {name for name in cls.__dataclass_fields__}
        return cls(**{key: value for key, value in data.items() if key in known})


def new_record(cluster: str, folder: str, jobs: list[dict[str, Any]], experiments: list[str | Path],
               poll_s: float) -> DetachedSweep:
    """A record of ``jobs`` submitted now from this host into the ``experiments`` folders."""
    return DetachedSweep(cluster, str(folder), jobs, sorted({str(Path(e).resolve()) for e in experiments}),
                         float(poll_s), datetime.now(timezone.utc).isoformat(timespec="seconds"), socket.gethostname())


def read_record(path: str | Path) -> DetachedSweep:
    """Read one record file; ``UserInputError`` naming it when it is unreadable or of another version."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise UserInputError(f"{path}: expected a detached sweep record, could not read it ({err})") from None
    return DetachedSweep.from_dict(data, path)


def write_detached(record: DetachedSweep) -> list[Path]:
    """Write ``record`` into each of its experiment folders (atomically); returns the files written."""
    written = []
    for root in record.experiments:
        path = Path(root) / DETACHED_FILE
        path.parent.mkdir(parents=True, exist_ok=True)
        write_json_atomic(path, record.to_dict())
        written.append(path)
    return written


def _record_files(root: Path) -> list[Path]:
    """The records that concern ``root``: its own, its experiment's (above a run folder) and those of the
    experiments below it (a run store)."""
    root = Path(root)
    found = [root / DETACHED_FILE, *(parent / DETACHED_FILE for parent in list(root.parents)[:3])]
    if root.is_dir():
        found += sorted(root.glob(f"*/{DETACHED_FILE.as_posix()}"))
    seen, out = set(), []
    for path in found:
        if path.is_file() and path.resolve() not in seen:
            seen.add(path.resolve())
            out.append(path)
    return out


def find_detached(root: str | Path) -> DetachedSweep | None:
    """The detached sweep whose runs ``root`` holds (a run store, an experiment or a run folder); ``None`` if none.

    Parameters
    ----------
    root : str or Path
        Searched for :data:`DETACHED_FILE` in itself, above it (up to its experiment) and in its experiments.

    Returns
    -------
    DetachedSweep or None
        The records found merged into one (each job once), keeping only the runs under ``root``.
    """
    root = Path(root)
    files = _record_files(root)
    if not files:
        return None
    records = [read_record(path) for path in files]
    inside = root.resolve()
    jobs: dict[str, dict[str, Any]] = {}
    for record in records:
        for job in record.jobs:
            runs = [run for run in job["runs"]
                    if Path(run).resolve() == inside or inside in Path(run).resolve().parents]
            if runs:
                jobs.setdefault(str(job["job_id"]), {**job, "runs": runs})
    if not jobs:
        return None
    first = records[0]
    return DetachedSweep(first.cluster, first.folder, list(jobs.values()),
                         sorted({e for r in records for e in r.experiments}), first.poll_s, first.submitted_at,
                         first.host)


def job_table(record: DetachedSweep) -> dict[str, JobState] | None:
    """Each job's state as the cluster reports it; ``None`` when SLURM could not be asked.

    A job whose result file exists has ended whatever the queue says (``COMPLETED``). On SLURM the states come
    from ``squeue``, then ``sacct`` (:func:`~._slurm.job_states`); for submitit's ``local`` cluster from the job's
    process (its id is the pid of the process that runs it).
    """
    ids = record.job_ids()
    if record.cluster == "slurm":
        states = job_states(ids, accounting=accounting_available())
        if states is None:
            return None
    else:
        states = {}
        for job_id in ids:
            alive = process_state(int(job_id)) if job_id.isdigit() else "gone"
            states[job_id] = JobState("STOPPED" if alive == "stopped" else "RUNNING", "", "process") \
                if alive in ("", "stopped") else JobState(GONE, "", "process")
    for job in record.jobs:
        if Path(job.get("result") or "/nonexistent").exists():
            state = states.get(str(job["job_id"]))
            if state is None or not state.ended:
                states[str(job["job_id"])] = JobState("COMPLETED", state.nodes if state else "", "result file")
    return states


def scheduler_side(state: JobState | None) -> str:
    """One of :data:`SCHEDULER_SIDES` for a job's state: ``queued`` (pending, requeued, held), ``training`` (on a
    node), ``ended``, or ``unknown`` (``None``: SLURM could not be asked)."""
    if state is None:
        return "unknown"
    if state.ended:
        return "ended"
    return "training" if state.state in ON_NODE else "queued"


def detached_status(root: str | Path, states: dict[str, JobState] | None = None) -> pd.DataFrame:
    """The store's state of every run under ``root`` beside the scheduler's side of the detached sweep's runs.

    Parameters
    ----------
    root : str or Path
        A run store, an experiment or a run folder (as for :func:`~diagnostics.finetune.sweep_status`).
    states : dict of str to JobState, optional
        The jobs' states; asked of the cluster (:func:`job_table`) when not given.

    Returns
    -------
    pandas.DataFrame
        The columns of :func:`~diagnostics.finetune.sweep_status`, then ``job`` (the job that trains the run),
        ``scheduler`` (one of :data:`SCHEDULER_SIDES`; ``None`` for a run no detached job holds) and ``job_state``
        (what the cluster says: ``PENDING (Priority)``, ``RUNNING on n3``, ``COMPLETED`` ...).
    """
    from ._store_checks import sweep_status

    table = sweep_status(root)
    record = find_detached(root)
    if record is None:
        return table.assign(job=None, scheduler=None, job_state=None)
    states = job_table(record) if states is None else states
    by_run = {str(Path(run).resolve()): job for run, job in record.runs().items()}
    listed = {str(Path(path).resolve()) for path in table["path"]}
    unseen = [{**run_coordinates(run), "state": run_state(Path(run)), "path": run} for run in record.runs()
              if str(Path(run).resolve()) not in listed]  # a queued job's runs have no folder yet
    if unseen:
        table = pd.concat([table, pd.DataFrame(unseen, columns=table.columns)], ignore_index=True)
        table = table.sort_values(["experiment", "language", "model", "seed"], kind="stable").reset_index(drop=True)
    jobs = [by_run.get(str(Path(path).resolve())) for path in table["path"]]
    side = [None if job is None else scheduler_side(None if states is None else states.get(job)) for job in jobs]
    said = [None if job is None else job_phrase(None if states is None else states.get(job)) for job in jobs]
    return table.assign(job=jobs, scheduler=side, job_state=said)


def describe_record(record: DetachedSweep) -> str:
    """Describe a detached sweep in one line: how many jobs, on which cluster, when and from where, and the log folder.

    Parameters
    ----------
    record : DetachedSweep
        The record of the detached sweep.

    Returns
    -------
    str
        The line.
    """
    return (f"detached sweep: {len(record.jobs)} {record.cluster} job(s) submitted {record.submitted_at} from "
            f"{record.host or 'an unknown host'}; logs in {Path(record.folder).parent}")


def still_queued(record: DetachedSweep) -> list[str] | None:
    """The ids of the record's jobs that have not ended; ``None`` when the cluster cannot say."""
    states = job_table(record)
    if states is None:
        return None
    return [job_id for job_id in record.job_ids() if not states.get(job_id, JobState(GONE)).ended]


def check_no_live_detached(experiment_roots: list[Path]) -> None:
    """Refuse a new detached submission into experiments whose previous detached jobs have not ended.

    Raises
    ------
    UserInputError
        One line naming the experiment, the jobs still queued or running (or that SLURM cannot say) and what to do.
    """
    for root in experiment_roots:
        path = Path(root) / DETACHED_FILE
        if not path.is_file():
            continue
        record = find_detached(root)
        if record is None:
            continue
        live = still_queued(record)
        if live is None:
            raise UserInputError(f"{path}: a detached sweep was submitted into {root} and SLURM cannot say whether "
                                 "its jobs have ended (squeue does not answer); try again when it does")
        if live:
            raise UserInputError(f"{path}: the detached sweep of {root} still has {len(live)} job(s) in the queue "
                                 f"({' '.join(live[:6])}{' ...' if len(live) > 6 else ''}); follow it with "
                                 f"`diagnostics sweep wait {root}` or cancel them (scancel) before submitting again")


def wait_detached(root: str | Path, *, poll_s: float | None = None, stream: TextIO | None = None,
                  clock: Callable[[], float] | None = None,
                  sleep: Callable[[float], None] | None = None) -> pd.DataFrame:
    """Follow a detached sweep until every one of its jobs has ended; return the final status table.

    Polls the cluster every ``poll_s`` seconds (the record's ``poll_s`` by default; ``squeue`` in a thread of its own,
    so that a controller that does not answer delays no line), prints a line for each run that had finished
    (``done``, ``failed``, ``interrupted``) before it began and for each run that finishes while it follows, and, at
    least every :data:`~._waiting.WAIT_LINE_S` seconds, one saying what it waits for (jobs by state and reason, for
    how long, a silent ``squeue``). Nothing is cancelled, also not on Ctrl-C (:class:`KeyboardInterrupt` propagates
    after nothing was touched).

    Parameters
    ----------
    root : str or Path
        A run store, an experiment or a run folder holding a detached sweep's runs.
    poll_s : float, optional
        Seconds between two polls.
    stream : file, optional
        Where the lines go (``sys.stderr`` by default).
    clock, sleep : callable, optional
        :func:`time.monotonic` and :func:`time.sleep` by default.

    Returns
    -------
    pandas.DataFrame
        :func:`detached_status` once every job has ended.

    Raises
    ------
    UserInputError
        When ``root`` holds no detached sweep.
    """
    root = Path(root)
    record = find_detached(root)
    if record is None:
        raise UserInputError(f"{root}: no detached sweep here (expected {DETACHED_FILE.as_posix()} in an experiment "
                             "folder, written by `diagnostics sweep run --detach`)")
    clock = clock or time.monotonic
    sleep = sleep or time.sleep
    poll_s = float(poll_s if poll_s is not None else record.poll_s)
    log = WaitLog(clock=clock, stream=stream)
    runs = record.runs()
    seen = {run: run_state(Path(run)) for run in runs}
    for run, state in seen.items():  # a run may end between the submission and the following
        if state in FINAL_STATES:
            log.write(f"{_describe_run(run)}: {state} (job {runs[run]}; before this wait began)")
    since: dict[str, tuple[JobState | None, float]] = {}
    answered, states, silent = clock(), None, False
    asking: Asking | None = None
    next_poll = asked = clock()
    scheduler = "SLURM" if record.cluster == "slurm" else record.cluster

    def say_finished_runs() -> None:
        for run, before in seen.items():
            state = run_state(Path(run))
            if state != before and state in FINAL_STATES:
                log.write(f"{_describe_run(run)}: {state} (job {runs[run]})")
            seen[run] = state

    while True:
        now = clock()
        if asking is None and now >= next_poll:
            next_poll = now + poll_s
            say_finished_runs()
            # squeue in a thread: an answer within a second is used in this round, a silent controller delays no line
            asking, asked = Asking(lambda: job_table(record)), now
            asking.done.wait(min(1.0, poll_s))
        if asking is not None and asking.done.is_set():
            known = asking.result()
            asking = None
            silent = known is None
            if not silent:
                answered, states = now, known
        waiting = [job_id for job_id in record.job_ids() if states is None or not states[job_id].ended]
        if not waiting:  # only an answer changes the states
            say_finished_runs()
            break
        for job_id in waiting:
            state = states.get(job_id) if states else None
            if job_id not in since or since[job_id][0] != state:
                since[job_id] = (state, now)
        hanging = asking is not None and clock() - asked > 1.0  # a question open for long is a silent squeue too
        log.tick(lambda: describe_jobs([(j, since[j][0], since[j][1]) for j in waiting], clock(), scheduler=scheduler,
                                       silent_s=clock() - answered if silent or hanging else None))
        sleep(max(0.0, min(1.0, poll_s, log.due_in())))
    return detached_status(root, states)


def _describe_run(run: str) -> str:
    try:
        where = run_coordinates(run)
        return f"{where['experiment']} {where['language']}/{where['model']}/seed={where['seed']}"
    except (KeyError, ValueError):
        return str(run)


def detached_lines(record: DetachedSweep) -> list[str]:
    """List what ``sweep run --detach`` prints: the job ids, the record's files and how to follow or cancel the jobs.

    Parameters
    ----------
    record : DetachedSweep
        The record of the sweep just submitted.

    Returns
    -------
    list of str
        The lines, in the order printed.
    """
    ids = record.job_ids()
    files = [Path(root) / DETACHED_FILE for root in record.experiments]
    where = " ".join(record.experiments)
    cancel = f"scancel {' '.join(ids)}" if record.cluster == "slurm" else f"kill {' '.join(ids)}"
    return [f"submitted {len(ids)} {record.cluster} job(s): {' '.join(ids)}",
            *(f"recorded in {path}" for path in files),
            f"the jobs run on their own: logging out or Ctrl-C cancels nothing; follow them with "
            f"`diagnostics sweep status {where}` or `diagnostics sweep wait {where}`; cancel them with `{cancel}`"]
