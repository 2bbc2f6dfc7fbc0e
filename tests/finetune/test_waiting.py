"""No silent wait: the SLURM watcher and the process pool print what they wait for at least every ``WAIT_LINE_S``
(shortened here); squeue's reason column is read (and its absence tolerated); a pool worker that dies is named with
its runs and exit, its job retried once in a fresh pool and then reported ``interrupted``."""

import io
import os
import time

import pytest

from diagnostics.finetune import _waiting, run_dir
from diagnostics.finetune._executors import failure
from diagnostics.finetune._pool import DeadWorker, exit_description, run_with_retry
from diagnostics.finetune._slurm import JobState, job_states, queue_states
from diagnostics.finetune._submitit import _Waiting, watch
from diagnostics.finetune._waiting import WaitLog, describe_jobs, duration

from _fake_slurm import FakeJob, FakeSpec, StampedStream, Timeline, fake_commands
from _pool_jobs import Spec, fake_worker


def test_squeue_reason_column_is_read_and_old_output_without_it_still_parses(tmp_path, monkeypatch):
    fake_commands(tmp_path / "bin", monkeypatch, squeue="5_0|PENDING||JobHeldUser\n5_1|RUNNING|vm|None\n"
                                                 "5_2|PENDING||ReqNodeNotAvail, UnavailableNodes:vm|x\n6|RUNNING|vm")
    states = queue_states(["5_0", "5_1", "5_2", "6"])
    assert states["5_0"] == JobState("PENDING", "", "squeue", "JobHeldUser")
    assert states["5_1"] == JobState("RUNNING", "vm", "squeue", "")  # squeue's "None" is no reason
    assert states["5_2"].reason == "ReqNodeNotAvail, UnavailableNodes:vm|x"
    assert states["6"] == JobState("RUNNING", "vm")  # three columns, as an older squeue printed them
    assert job_states(["5_0"])["5_0"].reason == "JobHeldUser"


def test_durations_read_as_people_read_them():
    assert [duration(s) for s in (5, 65, 3600 + 7 * 60)] == ["5 s", "1 min 05 s", "1 h 07 min"]


def test_the_watcher_says_what_it_waits_for_while_squeue_is_silent_and_tasks_pend(tmp_path):
    """squeue silent for 30 s, then one task held, one pending for a drained node, one running on a drained node;
    a line every 10 s (the shortened interval) names each, its reason and how long."""
    jobs = []
    for k in range(3):
        folder = run_dir(tmp_path / "runs", "e", "en", "m", k)
        folder.mkdir(parents=True)
        jobs.append((FakeJob(tmp_path, f"7_{k}"), [FakeSpec(folder)]))
    timeline = Timeline({95: lambda: [job.finish([{"path": str(spec[0].path), "state": "done"}])
                                      for job, spec in jobs]})
    answers = {"7_0": JobState("PENDING", "", "squeue", "JobHeldUser"),
               "7_1": JobState("PENDING", "", "squeue", "ReqNodeNotAvail, UnavailableNodes:n2"),
               "7_2": JobState("RUNNING", "n3")}

    def states(ids):
        return None if timeline.now < 30 else {i: answers[i] for i in ids}

    stream = io.StringIO()
    log = WaitLog(interval_s=10, clock=timeline.clock, stream=stream)
    outcomes = list(watch([_Waiting(j, s) for j, s in jobs], states=states, failure=failure, poll_s=5, grace_s=10,
                          clock=timeline.clock, sleep=timeline.sleep, log=log, nodes=lambda n: {"n3": "drained"}))
    assert len(outcomes) == 3
    lines = stream.getvalue().splitlines()
    assert len(lines) == 9  # at 10, 20 ... 90 s: never a silent minute
    assert lines[0] == "waiting 10 s: 3 SLURM job(s); squeue has not answered for 10 s (controller down or busy?), " \
                       "last known: state unknown 7_0 7_1 7_2 for 10 s"
    assert "squeue has not answered for 20 s" in lines[1]
    last = lines[-1]
    assert last.startswith("waiting 1 min 30 s: 3 SLURM job(s): ")
    assert "PENDING (JobHeldUser: held: release with scontrol release) 7_0 for 1 min 00 s" in last
    assert "PENDING (ReqNodeNotAvail, UnavailableNodes:n2: a node it needs is drained, down or reserved) 7_1" in last
    assert "RUNNING on n3 (node drained) 7_2 for 1 min 00 s" in last
    assert "squeue has not answered" not in last


def test_lines_come_on_time_while_squeue_hangs_and_its_answer_is_used_when_it_comes(tmp_path):
    """squeue hangs 1.5 s per question (a controller that does not answer, each try until its timeout), then says
    the job is held; the job ends at 4 s. The lines (every 0.3 s, real clock) never wait for the hanging command."""
    folder = run_dir(tmp_path / "runs", "e", "en", "m", 0)
    folder.mkdir(parents=True)
    job, spec = FakeJob(tmp_path, "8_0"), FakeSpec(folder)
    t0 = time.monotonic()
    asked = []

    def states(ids):
        asked.append(time.monotonic() - t0)
        time.sleep(1.5)
        if time.monotonic() - t0 > 4:
            job.finish([{"path": str(spec.path), "state": "done"}])
        return None if len(asked) == 1 else {i: JobState("PENDING", "", "squeue", "JobHeldUser") for i in ids}

    stream = StampedStream()
    outcomes = list(watch([_Waiting(job, [spec])], states=states, failure=failure, poll_s=0.1, grace_s=10,
                          log=WaitLog(interval_s=0.3, stream=stream)))
    assert [o["state"] for o in outcomes] == ["done"]
    times = [t - t0 for t, _ in stream.lines]
    assert len(asked) >= 2 and all(b - a >= 1.4 for a, b in zip(asked, asked[1:]))  # one question at a time
    assert max(b - a for a, b in zip([0.0, *times], times)) < 0.3 + 0.25, times  # on time, never 1.5 s late
    texts = [text for _, text in stream.lines]
    assert all("state unknown 8_0" in text for text in texts if "squeue has not answered" in text)
    assert any("squeue has not answered for 1 s" in text for text in texts)  # the first answer: none
    assert "PENDING (JobHeldUser: held: release with scontrol release) 8_0" in texts[-1]


def test_the_interval_is_a_module_constant_tests_can_shorten(monkeypatch):
    monkeypatch.setattr(_waiting, "WAIT_LINE_S", 0.5)
    assert WaitLog().interval_s == 0.5
    many = [(f"9_{k}", JobState("PENDING", "", "squeue", "Priority"), 0.0) for k in range(8)]
    line = describe_jobs(many, 120.0)
    assert line == "8 SLURM job(s): PENDING (Priority) 9_0 9_1 9_2 9_3 9_4 9_5 and 2 more for 2 min 00 s"


# --- the pool ------------------------------------------------------------------------------------------------------

def _specs(tmp_path, names):
    specs = []
    for name in names:
        folder = tmp_path / name
        folder.mkdir()
        specs.append(Spec(folder, name))
    return specs


def _given_up(job, dead):
    return [failure(spec, RuntimeError(dead.message()), killed=True) for spec in job]


def test_a_dead_workers_runs_are_named_retried_once_in_a_fresh_pool_then_reported(tmp_path, capfd):
    die, once, fine = _specs(tmp_path, ["die", "die-once", "fine"])
    outcomes = list(run_with_retry([[die], [once], [fine]], fake_worker, 1, 2, _given_up))
    by_name = {os.path.basename(o["path"]): o for o in outcomes}
    assert sorted(by_name) == ["die", "die-once", "fine"] and len(outcomes) == 3
    assert by_name["fine"]["state"] == "done" and by_name["die-once"]["state"] == "done"
    assert by_name["die"]["state"] == "interrupted"
    assert "died (killed by SIGKILL) while training die" in by_name["die"]["error"]
    assert (die.path / "tries").read_text() == "2" and (once.path / "tries").read_text() == "2"
    assert (fine.path / "tries").read_text() == "1"
    err = capfd.readouterr().err
    assert "died (killed by SIGKILL) while training die-once" in err
    assert "retrying 2 job(s) whose worker died, in a fresh pool: " in err


def test_a_stopped_worker_is_named_in_the_waiting_lines(tmp_path, capfd, monkeypatch):
    monkeypatch.setattr(_waiting, "WAIT_LINE_S", 0.5)
    stop, = _specs(tmp_path, ["stop"])
    t0 = time.monotonic()
    outcomes = list(run_with_retry([[stop]], fake_worker, 1, 1, _given_up))
    assert [o["state"] for o in outcomes] == ["done"] and time.monotonic() - t0 >= 2
    lines = [line for line in capfd.readouterr().err.splitlines() if line.startswith("waiting ")]
    assert any("(stopped) on stop for" in line for line in lines), lines
    assert all("1 pool job(s): worker " in line for line in lines)


def test_exits_are_described():
    assert exit_description(-9) == "killed by SIGKILL"
    assert exit_description(1) == "exit code 1"
    assert exit_description(None) == "exit status unknown"
    dead = DeadWorker([Spec(None, "en/m/seed=0")], 12, -15)
    assert dead.message() == "pool worker 12 died (killed by SIGTERM) while training en/m/seed=0"


@pytest.mark.parametrize("executor_options", [{}, {"threads_per_worker": 1}])
def test_run_pool_retries_through_the_same_pool(tmp_path, monkeypatch, executor_options):
    """``run_pool`` is the pool above with the sweep's worker: a job of a dead worker ends ``interrupted`` with its
    worker named."""
    from diagnostics.finetune import _executors

    die, fine = _specs(tmp_path, ["die", "fine"])
    monkeypatch.setattr(_executors, "_safe_worker", fake_worker)
    outcomes = {os.path.basename(o["path"]): o for o in _executors.run_pool([[die], [fine]], executor_options, 2)}
    assert outcomes["fine"]["state"] == "done"
    assert outcomes["die"]["state"] == "interrupted"
    assert "pool worker" in outcomes["die"]["error"] and "after one retry" in outcomes["die"]["error"]
