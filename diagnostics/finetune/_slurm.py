"""What SLURM says about jobs: their states (``squeue``, then ``sacct`` where accounting is on), this process's own
job, and cancelling jobs by id.

Every command runs with a timeout and its failure is an answer too: ``None`` (SLURM could not be asked) is never
read as "the job has ended", so a controller that does not answer delays a decision instead of faking one.
``squeue`` lists a job for ``MinJobAge`` (300 s by default) after it ends, with its final state; after that only
``sacct`` knows it, and only where accounting (``slurmdbd``) is configured. A job that neither lists has left the
queue: :data:`GONE`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterable
from dataclasses import dataclass

#: States of a job that will not run again (the result, if any, is written).
TERMINAL = frozenset({"BOOT_FAIL", "CANCELLED", "COMPLETED", "DEADLINE", "FAILED", "NODE_FAIL", "OUT_OF_MEMORY",
                      "PREEMPTED", "REVOKED", "TIMEOUT"})
#: States in which a job's processes run on its node (a suspended job's are stopped, but alive).
ON_NODE = frozenset({"RUNNING", "COMPLETING", "CONFIGURING", "SUSPENDED", "STOPPED", "SIGNALING", "STAGE_OUT",
                     "RESIZING"})
#: The state of a job that no command lists any more (it left the queue and there is no accounting).
GONE = "GONE"

#: Seconds a SLURM command may take before its answer counts as "unknown".
COMMAND_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class JobState:
    """One job's state as SLURM reports it.

    Parameters
    ----------
    state : str
        ``PENDING``, ``RUNNING``, ``CANCELLED`` ... (the first word: ``CANCELLED by 0`` is ``CANCELLED``), or
        :data:`GONE`.
    nodes : str
        The node list (``""`` while pending or when unknown).
    source : str
        ``squeue``, ``sacct`` or ``none`` (for :data:`GONE`).
    reason : str
        Why a pending job waits, or why it ended, as ``squeue``'s reason column says (``Priority``, ``Resources``,
        ``JobHeldUser``, ``ReqNodeNotAvail, UnavailableNodes:n3`` ...); ``""`` when SLURM gives none (``None``, a
        running job, ``sacct``, or an ``squeue`` too old to print the column).
    """

    state: str
    nodes: str = ""
    source: str = "squeue"
    reason: str = ""

    @property
    def ended(self) -> bool:
        """Whether the job will not run again: a terminal state, or gone from every listing."""
        return self.state in TERMINAL or self.state == GONE


def _run(command: list[str]) -> subprocess.CompletedProcess | None:
    """Run a SLURM client command; ``None`` when it is missing, times out or cannot start."""
    if shutil.which(command[0]) is None:
        return None
    try:
        return subprocess.run(command, capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None


def _base_ids(job_ids: Iterable[str]) -> list[str]:
    """The job ids to ask for: an array task ``12_3`` is asked for as its array ``12``."""
    return sorted({str(job_id).split("_")[0] for job_id in job_ids})


def _parse(text: str, wanted: set[str], source: str) -> dict[str, JobState]:
    """Lines ``id|state|nodes[|reason]`` -> states; the columns after the state may be missing (older output), a
    reason holding ``|`` is kept whole."""
    states = {}
    for line in text.splitlines():
        parts = line.strip().split("|", 3)
        if len(parts) < 2 or parts[0] not in wanted:
            continue
        state = parts[1].split()[0] if parts[1].strip() else "UNKNOWN"
        reason = parts[3].strip() if len(parts) > 3 else ""
        states[parts[0]] = JobState(state.rstrip("+"), parts[2].strip() if len(parts) > 2 else "", source,
                                    "" if reason in ("None", "(null)") else reason)
    return states


def queue_states(job_ids: Iterable[str]) -> dict[str, JobState] | None:
    """The states ``squeue`` lists for ``job_ids`` (one line per array task, finished jobs included), with the reason
    a pending job waits (``%r``).

    A job missing from the answer is not in the queue (any more). ``None`` when ``squeue`` could not be asked
    (not installed, controller not answering).
    """
    wanted = {str(j) for j in job_ids}
    if not wanted:
        return {}
    done = _run(["squeue", "--noheader", "--array", "--states=all", "--format=%i|%T|%N|%r",
                 f"--jobs={','.join(_base_ids(wanted))}"])
    if done is None:
        return None
    if done.returncode != 0:
        # every id unknown to the controller (long finished): an answer, not a failure
        return {} if "Invalid job id" in done.stderr else None
    return _parse(done.stdout, wanted, "squeue")


def accounting_states(job_ids: Iterable[str]) -> dict[str, JobState] | None:
    """The states ``sacct`` records for ``job_ids``; ``None`` without accounting (or when it cannot be asked)."""
    wanted = {str(j) for j in job_ids}
    if not wanted:
        return {}
    done = _run(["sacct", "--noheader", "--parsable2", "--allocations", "--format=JobID,State,NodeList",
                 f"--jobs={','.join(_base_ids(wanted))}"])
    if done is None or done.returncode != 0:
        return None
    return _parse(done.stdout, wanted, "sacct")


def job_states(job_ids: Iterable[str], *, accounting: bool = True) -> dict[str, JobState] | None:
    """The state of each of ``job_ids``: ``squeue`` first, then ``sacct`` for the jobs it no longer lists.

    Parameters
    ----------
    job_ids : iterable of str
        Job ids (``12``) or array task ids (``12_3``).
    accounting : bool
        Ask ``sacct`` for the jobs ``squeue`` does not list (skip it where accounting is known to be off).

    Returns
    -------
    dict of str to JobState, or None
        Every id of ``job_ids``; a job no command lists is :data:`GONE`. ``None`` when ``squeue`` could not be
        asked (the states are unknown, not ended).
    """
    wanted = [str(j) for j in job_ids]
    states = queue_states(wanted)
    if states is None:
        return None
    missing = [j for j in wanted if j not in states]
    if missing and accounting:
        states.update(accounting_states(missing) or {})
    return {j: states.get(j, JobState(GONE, "", "none")) for j in wanted}


def node_states(nodes: Iterable[str]) -> dict[str, str] | None:
    """The state ``sinfo`` gives each of ``nodes`` (``idle``, ``mixed``, ``allocated``, ``draining``, ``drained``,
    ``down*`` ...); ``None`` when ``sinfo`` could not be asked. Node lists such as ``n[1-3]`` are asked as given."""
    wanted = sorted({n for n in nodes if n})
    if not wanted:
        return {}
    done = _run(["sinfo", "--noheader", "--Node", "--format=%N|%T", f"--nodes={','.join(wanted)}"])
    if done is None or done.returncode != 0:
        return None
    found = {}
    for line in done.stdout.splitlines():
        name, _, state = line.strip().partition("|")
        if name and state:
            found[name] = state.strip()
    return found


def accounting_available() -> bool:
    """Whether ``sacct`` answers here (accounting through ``slurmdbd`` is configured and up)."""
    done = _run(["sacct", "--noheader", "--parsable2", "--allocations", "--format=JobID", "--starttime=now"])
    return done is not None and done.returncode == 0


def cancel(job_ids: Iterable[str]) -> bool:
    """``scancel`` the given jobs (by id, nothing else); whether the command ran and succeeded."""
    ids = sorted({str(j) for j in job_ids})
    if not ids:
        return True
    done = _run(["scancel", *ids])
    return done is not None and done.returncode == 0


def current_job() -> dict[str, object] | None:
    """This process's SLURM job as a lock records it: ``job`` (``12`` or array task ``12_3``), ``restart``
    (``SLURM_RESTART_COUNT``), ``node`` and ``cluster``; ``None`` outside a SLURM job."""
    env = os.environ
    if not env.get("SLURM_JOB_ID"):
        return None
    job = env["SLURM_JOB_ID"]
    if env.get("SLURM_ARRAY_JOB_ID") and env.get("SLURM_ARRAY_TASK_ID"):
        job = f"{env['SLURM_ARRAY_JOB_ID']}_{env['SLURM_ARRAY_TASK_ID']}"
    try:
        restart = int(env.get("SLURM_RESTART_COUNT") or 0)
    except ValueError:
        restart = 0
    return {"job": job, "restart": restart, "node": env.get("SLURMD_NODENAME") or "",
            "cluster": env.get("SLURM_CLUSTER_NAME") or ""}


#: How long an answer of :func:`owner_job_ended` is reused (a status listing asks once per run folder).
_CACHE_S = 5.0
_cache: dict[str, tuple[float, JobState | None]] = {}


def _cached_state(job: str) -> JobState | None:
    now = time.monotonic()
    hit = _cache.get(job)
    if hit is not None and now - hit[0] < _CACHE_S:
        return hit[1]
    states = job_states([job])
    state = None if states is None else states[job]
    _cache[job] = (now, state)
    return state


def owner_job_ended(record: dict[str, object]) -> bool | None:
    """Whether the SLURM job that a lock ``record`` names has ended, as far as SLURM can tell.

    ``record`` holds ``slurm`` as :func:`current_job` returns it. ``True`` when the job has ended, was requeued (a
    later incarnation, or one pending again) or runs on another node than the record's; ``False`` while that
    incarnation runs; ``None`` when the record names no job or SLURM cannot be asked (another cluster, no
    ``squeue`` here): decide by the heartbeat then.
    """
    owner = record.get("slurm")
    if not isinstance(owner, dict) or not owner.get("job"):
        return None
    mine = current_job()
    if mine is not None and owner.get("cluster") and mine["cluster"] and owner["cluster"] != mine["cluster"]:
        return None
    if mine is not None and mine["job"] == owner["job"]:
        # this job took over its own run: the recorded incarnation was killed before a requeue started this one
        return mine["restart"] != owner.get("restart") or mine["node"] != owner.get("node")
    state = _cached_state(str(owner["job"]))
    if state is None:
        return None
    if state.ended or state.state not in ON_NODE:
        return True  # ended, or pending again after a requeue: the recorded incarnation is gone
    node = str(owner.get("node") or "")
    if node and state.nodes and not any(ch in state.nodes for ch in "[,") and state.nodes != node:
        return True
    return False
