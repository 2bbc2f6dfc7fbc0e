"""The submitit executor without a cluster: jobs reported as they end, a job that ended without a result given up
after the grace period (never while SLURM's answer is unknown), Ctrl-C cancelling the sweep's own jobs. (The job-side
marks of a stopped run and the outcome of a run stopped from outside are in test_executors.py.)"""

import pytest
from submitit.core.utils import cloudpickle_dump

from diagnostics.finetune import ConfigError
from diagnostics.finetune import _submitit as submitit_executor
from diagnostics.finetune._executors import failure
from diagnostics.finetune._slurm import GONE, JobState
from diagnostics.finetune._store import mark_done, mark_failed, run_state
from diagnostics.finetune._submitit import _Waiting, submit_and_watch, watch

from _fake_slurm import FakeSpec, Timeline, started_jobs


@pytest.fixture()
def jobs(tmp_path):
    """Three jobs of one run each, in run folders with partial files (their training had started)."""
    return started_jobs(tmp_path)


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
