"""The local process pool of ``_pool``: one round runs every job on at most ``workers`` processes, yields each job's
records, hands the job of a worker that died to the caller (with its pid and exit) instead of retrying it, and leaves
no worker behind; the waiting line names each busy worker, its runs, how long, and the queue. (Retries across rounds
and exit descriptions are exercised in test_waiting.py.)"""

import os
import time
from types import SimpleNamespace

from diagnostics.finetune._pool import DeadWorker, _pool_line, _Slot, pool_round

from _pool_jobs import Spec, fake_worker


def _specs(tmp_path, names):
    specs = []
    for name in names:
        (tmp_path / name).mkdir()
        specs.append(Spec(tmp_path / name, name))
    return specs


def test_a_round_runs_every_job_and_hands_back_the_job_of_a_dead_worker(tmp_path):
    a, b, die, c = _specs(tmp_path, ["a", "b", "die", "c"])
    died: list[DeadWorker] = []
    records = list(pool_round([[a], [b, c], [die]], fake_worker, 1, 2, died))
    assert sorted(os.path.basename(r["path"]) for r in records) == ["a", "b", "c"]
    assert all(r["state"] == "done" for r in records)
    assert [d.job for d in died] == [[die]] and died[0].exitcode == -9 and died[0].pid > 0
    assert (die.path / "tries").read_text() == "1"  # not retried within the round
    assert [(s.path / "tries").read_text() for s in (a, b, c)] == ["1", "1", "1"]


def test_the_waiting_line_names_each_busy_worker_its_runs_and_the_queue():
    me = SimpleNamespace(pid=os.getpid())
    slot = _Slot(me, None, job=[Spec(None, "en/m/seed=0"), Spec(None, "en/m/seed=1")], since=time.monotonic() - 125)
    line = _pool_line([slot], 3)
    assert line == f"1 pool job(s): worker {os.getpid()} on en/m/seed=0, en/m/seed=1 for 2 min 05 s; 3 queued"
    assert _pool_line([slot], 0).endswith("for 2 min 05 s")
