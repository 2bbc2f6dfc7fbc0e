"""The submitit executor without a cluster: jobs reported as they end, a job that ended without a result given up
after the grace period (never while SLURM's answer is unknown), Ctrl-C cancelling the sweep's own jobs, the
job-side marks of a stopped run, and one word (``interrupted``) for a run stopped from outside."""

import pytest
from submitit.core.utils import cloudpickle_dump

from diagnostics.finetune import ConfigError, RunLockedError, run_dir
from diagnostics.finetune import _submitit as submitit_executor
from diagnostics.finetune._executors import SweepJob, failure
from diagnostics.finetune._slurm import GONE, JobState
from diagnostics.finetune._store import mark_done, mark_failed, run_state
from diagnostics.finetune._submitit import _Waiting, submit_and_watch, watch

from _fake_slurm import FakeJob, FakeSpec, Timeline


@pytest.fixture()
def jobs(tmp_path):
    """Three jobs of one run each, in run folders with partial files (their training had started)."""
    out = []
    for k in range(3):
        folder = run_dir(tmp_path / "runs", "e", "en", "m", k)
        folder.mkdir(parents=True)
        (folder / "config.json").write_text("{}")
        out.append((FakeJob(tmp_path, f"7_{k}"), [FakeSpec(folder)]))
    return out


def _done(job, spec):
    return lambda: job.finish([{"path": str(spec.path), "state": "done", "metrics": {}}])


def _collect(waiting, timeline, states, *, poll_s=2.0, grace_s=10.0):
    got = []
    for outcome in watch(waiting, states=states, failure=failure, poll_s=poll_s, grace_s=grace_s,
                         clock=timeline.clock, sleep=timeline.sleep):
        got.append((timeline.now, outcome))
    return got


def test_runs_are_reported_as_their_jobs_end_not_in_submission_order(jobs):
    (j0, s0), (j1, s1), (j2, s2) = jobs
    timeline = Timeline({3: _done(j2, s2[0]), 5: _done(j0, s0[0]), 8: _done(j1, s1[0])})
    got = _collect([_Waiting(j, s) for j, s in jobs], timeline,
                   lambda ids: {i: JobState("RUNNING", "vm") for i in ids})
    assert [o["path"] for _, o in got] == [str(s2[0].path), str(s0[0].path), str(s1[0].path)]
    assert [t for t, _ in got] == [3, 5, 8]  # each as soon as its result exists


def test_a_job_gone_without_a_result_ends_its_run_after_the_grace_period(jobs):
    """The first job dies (scancel) and leaves no result; without accounting its state is unknown once it left the
    queue. It is reported ``interrupted`` after the grace period and holds back none of the others."""
    (j0, s0), (j1, s1), (j2, s2) = jobs
    j0.paths.stderr.write_text("line 1\nslurmstepd: *** JOB 7 CANCELLED ***\n")
    timeline = Timeline({4: _done(j1, s1[0]), 30: _done(j2, s2[0])})

    def states(ids):
        return {i: JobState("RUNNING", "vm") if i != "7_0" or timeline.now < 6 else JobState(GONE, "", "none")
                for i in ids}

    got = _collect([_Waiting(j, s) for j, s in jobs], timeline, states)
    order = [o["path"] for _, o in got]
    assert order == [str(s1[0].path), str(s0[0].path), str(s2[0].path)]
    when, lost = got[1]
    assert 6 + 10 <= when <= 6 + 10 + 2 + 1  # grace period after the poll that saw it gone, never a hang
    assert lost["state"] == "interrupted" and run_state(s0[0].path) == "interrupted"
    assert "SLURM job 7_0 ended without a result (it left the queue" in lost["error"]
    assert "JOB 7 CANCELLED" in lost["error"]  # the log's tail


def test_the_state_slurm_reports_is_named_and_a_finished_folder_reads_done(jobs):
    (j0, s0), (j1, s1), _ = jobs
    mark_done(s1[0].path, {})  # finished, but its result file was lost
    timeline = Timeline({})
    got = _collect([_Waiting(j0, s0), _Waiting(j1, s1)], timeline,
                   lambda ids: {i: JobState("TIMEOUT", "vm", "sacct") for i in ids})
    by_path = {o["path"]: o for _, o in got}
    assert "state TIMEOUT from sacct" in by_path[str(s0[0].path)]["error"]
    assert by_path[str(s1[0].path)]["state"] == "done"


def test_unknown_states_and_requeues_are_waited_for(jobs):
    """``squeue`` not answering (None) is no end; a requeued job (pending again) is waited for."""
    (j0, s0), _, _ = jobs
    answers = {0: None, 20: JobState("PENDING"), 40: JobState("RUNNING", "vm")}
    timeline = Timeline({60: _done(j0, s0[0])})

    def states(ids):
        current = [v for t, v in sorted(answers.items()) if t <= timeline.now][-1]
        return None if current is None else {i: current for i in ids}

    got = _collect([_Waiting(j0, s0)], timeline, states)
    assert [(t, o["state"]) for t, o in got] == [(60, "done")]


def test_a_job_that_raised_outside_the_training_fails_its_runs(jobs):
    (j0, s0), _, _ = jobs
    cloudpickle_dump(("error", "Traceback (most recent call last):\nModuleNotFoundError: No module named 'x'"),
                     j0.paths.result_pickle)
    mark_failed(s0[0].path, "Traceback ...")
    got = _collect([_Waiting(j0, s0)], Timeline({}), lambda ids: {})
    (_, outcome), = got
    assert outcome["state"] == "failed" and "No module named 'x'" in outcome["error"]


def test_ctrl_c_cancels_the_sweeps_unfinished_jobs_by_id_and_says_so(jobs, tmp_path, monkeypatch, capsys):
    (j0, s0), (j1, s1), (j2, s2) = jobs
    j1.finish([{"path": str(s1[0].path), "state": "done", "metrics": {}}])
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "scancel").write_text(f"#!/bin/sh\necho \"$@\" >> {tmp_path / 'scancelled'}\n")
    (bin_dir / "scancel").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")

    class Executor:
        cluster = "slurm"
        folder = tmp_path

    def ctrl_c(ids, accounting=True):
        raise KeyboardInterrupt

    monkeypatch.setattr(submitit_executor, "make_executor", lambda jobs, own, params: Executor())
    monkeypatch.setattr(submitit_executor, "submit", lambda executor, worker, jobs, threads: [j0, j1, j2])
    monkeypatch.setattr(submitit_executor, "accounting_available", lambda: False)
    monkeypatch.setattr(submitit_executor, "job_states", ctrl_c)
    outcomes = submit_and_watch([s0, s1, s2], {"cluster": "slurm"}, worker=None, failure=failure)
    assert next(outcomes)["path"] == str(s1[0].path)  # the finished one is reported first
    with pytest.raises(KeyboardInterrupt):
        next(outcomes)
    assert (tmp_path / "scancelled").read_text().split() == ["7_0", "7_2"]
    assert "cancelled 2 SLURM job(s) of this sweep: 7_0 7_2" in capsys.readouterr().err


def test_bad_submitit_parameters_are_a_config_error(tmp_path):
    spec = FakeSpec(tmp_path / "runs/e/en/m/seed=0")
    spec.config = {"output_dir": str(tmp_path / "runs"), "experiment": "e"}
    with pytest.raises(ConfigError, match="executor_options: .*learning_rate"):
        submitit_executor.make_executor([[spec]], submitit_executor.split_options({})[0], {"learning_rate": 1})


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


def test_the_executors_own_options_are_checked_with_the_config():
    from diagnostics.finetune import SweepConfig

    with pytest.raises(ConfigError) as caught:
        SweepConfig(executor_options={"poll_s": 0, "lost_job_grace_s": -1, "requeue": "yes"})
    assert str(caught.value) == ("executor_options.poll_s: expected a number of seconds > 0, found 0; "
                                 "executor_options.lost_job_grace_s: expected a number of seconds >= 0, found -1; "
                                 "executor_options.requeue: expected true or false, found 'yes'")
    SweepConfig(executor_options={"poll_s": 0.5, "lost_job_grace_s": 0, "requeue": True})
