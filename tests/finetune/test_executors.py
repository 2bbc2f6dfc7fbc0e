"""Where runs execute, in ``_executors``: the outcome record of a run that did not finish (``locked``,
``interrupted`` or ``failed``), failures of a job turned into one record per run, the executor table, and the SLURM
job's side (:class:`SweepJob`): the runs it holds marked interrupted on SIGUSR2 or SIGTERM, a requeue only when
asked, an exit at once on the SIGTERM that ends a requeued incarnation. No cluster: run folders and jobs are
stand-ins."""

import pytest

from diagnostics.finetune import RunLockedError
from diagnostics.finetune._executors import (EXECUTORS, SweepJob, _capture, _worker_died, failure, get_executor,
                                             run_inprocess)
from diagnostics.finetune._pool import DeadWorker
from diagnostics.finetune._store import mark_failed, run_state

from _fake_slurm import started_jobs


@pytest.fixture()
def jobs(tmp_path):
    """Three jobs of one run each, in run folders with partial files (their training had started)."""
    return started_jobs(tmp_path)


def test_a_signalled_job_marks_its_runs_interrupted_and_requeues_only_when_asked(jobs):
    """Only the runs this process holds are marked: a run of the job that another process holds is left alone."""
    from diagnostics.finetune._run_lock import RunLock
    from diagnostics.finetune._run_writer import RunWriter

    (_, s0), (_, s1), (_, s2) = jobs
    held = RunLock(s0[0].path).acquire()
    try:
        assert SweepJob(requeue=False).checkpoint(s0 + s2, None) is None
        RunWriter(held).mark_failed("UncompletedJobError: Job not requeued")  # what the unwinding training writes
        assert "SIGUSR2" in (s0[0].path / "INTERRUPTED").read_text()
        assert not (s2[0].path / "INTERRUPTED").exists()  # never claimed by this process
    finally:
        held.release()
    assert run_state(s0[0].path) == "interrupted"
    held = RunLock(s1[0].path).acquire()
    try:
        job = SweepJob(requeue=True)
        again = job.checkpoint(s1, 2)
        assert again.function is job and again.args == (s1, 2)
        assert "requeued, the run goes on from its last check" in (s1[0].path / "INTERRUPTED").read_text()
    finally:
        held.release()


class _Exited(BaseException):
    """What the stand-in ``os._exit`` raises."""


def test_the_sigterm_that_ends_a_job_which_requeued_itself_exits_at_once(jobs, monkeypatch):
    """SLURM ends a requeued incarnation with SIGTERM: it exits then, even where submitit's own exit was lost; a job
    that has not requeued itself goes on after a SIGTERM (a SIGUSR2 may follow), and the requeued job starts fresh."""
    import pickle

    from diagnostics.finetune._run_lock import RunLock

    exits = []

    def fake_exit(code):
        exits.append(code)
        raise _Exited

    monkeypatch.setattr("diagnostics.finetune._executors.os._exit", fake_exit)
    (_, s0), _, _ = jobs
    held = RunLock(s0[0].path).acquire()
    try:
        job = SweepJob(requeue=True)
        job._terminated(s0)  # preempted, not yet requeued: goes on
        assert exits == []
        again = job.checkpoint(s0, 2)
        with pytest.raises(_Exited):
            job._terminated(s0)
        assert exits == [SweepJob.EXIT_TERMINATED]
        assert "SIGUSR2" in (s0[0].path / "INTERRUPTED").read_text()  # the requeue's reason stays
    finally:
        held.release()
    restarted = pickle.loads(pickle.dumps(again)).function  # what the requeued job runs
    assert restarted.requeue and not restarted._requeued


def test_one_word_for_a_run_stopped_from_outside(jobs):
    (_, s0), (_, s1), (_, s2) = jobs
    err = RuntimeError("worker died")
    assert failure(s0[0], err)["state"] == "interrupted"  # partial files, no traceback: killed
    mark_failed(s1[0].path, "Traceback ...")
    assert failure(s1[0], ValueError("bad"))["state"] == "failed" == run_state(s1[0].path)
    assert failure(s1[0], err, killed=True)["state"] == "interrupted"
    assert failure(s2[0], RunLockedError("held"))["state"] == "locked"


def test_a_job_that_raises_gives_a_failure_record_for_each_of_its_runs(jobs):
    (_, s0), (_, s1), _ = jobs
    mark_failed(s1[0].path, "Traceback ...")

    def boom(job):
        raise ValueError("bad batch")

    records = _capture(boom, s0 + s1)
    assert [(r["path"], r["state"], r["error"]) for r in records] == [
        (str(s0[0].path), "interrupted", "ValueError: bad batch"), (str(s1[0].path), "failed", "ValueError: bad batch")]
    assert _capture(lambda job: [{"state": "done"}], s0) == [{"state": "done"}]


def test_the_runs_of_a_worker_that_died_twice_are_interrupted_and_name_the_worker(jobs):
    (_, s0), (_, s1), _ = jobs
    mark_failed(s1[0].path, "Traceback ...")  # whatever the folder says, a killed worker's run was stopped
    records = _worker_died(s0 + s1, DeadWorker(s0 + s1, pid=4321, exitcode=-9))
    assert [r["state"] for r in records] == ["interrupted", "interrupted"]
    assert "4321" in records[0]["error"] and "after one retry" in records[0]["error"]


def test_the_executors_are_looked_up_by_name():
    assert get_executor("inprocess") is run_inprocess and set(EXECUTORS) == {"inprocess", "pool", "submitit"}
    with pytest.raises(ValueError, match="unknown executor 'ray'; choose one of inprocess, pool, submitit"):
        get_executor("ray")
