"""Run-store integrity: the lock under contention, checksums of finished runs, pool workers dying with their parent.

* lock: three processes take the lock of the same run folder at the same moment, trial after trial (fresh
  folders, and folders holding a dead owner's lock): never two holders at once;
* checksums: each file of a finished run edited so that only its checksum can tell (or truncated) is reported by
  ``verify_run``, and the next sweep trains the run again to the same predictions;
* pool: ``kill -9`` of a ``pool`` sweep takes its spawned workers down with it.
"""

from __future__ import annotations

import functools
import json
import multiprocessing as mp
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml

from diagnostics.finetune import SweepConfig, collect_predictions, run_sweep
from diagnostics.finetune._run_lock import RunLock, RunLockedError
from diagnostics.finetune._store import RUN_FILES, file_checksums, run_dir
from diagnostics.finetune._store_checks import verify_run

from _run_stores import edit_json, truncate_half

PROCESSES = 3
TRIALS = 100
STALE_TRIALS = 20


def _contend(root: str, trials: int, barrier, start, results) -> None:
    """One contender: at each trial, wait for the others, try the lock, and while holding it claim a marker."""
    held = violations = 0
    for trial in range(trials):
        folder = Path(root) / f"trial{trial}"
        barrier.wait()
        while time.time() < start.value:  # spin to the common start: the contenders try within microseconds
            pass
        try:
            lock = RunLock(folder).acquire()
        except RunLockedError:
            pass
        else:
            held += 1
            try:  # a second holder at the same time finds the marker of the first
                fd = os.open(folder / "HOLDER", os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                violations += 1
            else:
                time.sleep(0.01)
                os.close(fd)
                os.unlink(folder / "HOLDER")
            lock.release()
        barrier.wait()  # nobody starts the next trial while someone still holds this one
    results.put((held, violations))


def _set_start(start) -> None:
    start.value = time.time() + 0.002


def _trials(root: Path, trials: int) -> tuple[int, int]:
    # fork starts the contenders at once (nothing to import again); spawn where fork does not exist
    ctx = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
    start = ctx.Value("d", 0.0, lock=False)
    barrier, results = ctx.Barrier(PROCESSES, action=functools.partial(_set_start, start)), ctx.Queue()
    workers = [ctx.Process(target=_contend, args=(str(root), trials, barrier, start, results))
               for _ in range(PROCESSES)]
    for worker in workers:
        worker.start()
    outcomes = [results.get(timeout=120) for _ in workers]
    for worker in workers:
        worker.join(timeout=30)
    return sum(h for h, _ in outcomes), sum(v for _, v in outcomes)


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_three_processes_never_hold_one_lock_together(tmp_path):
    held, violations = _trials(tmp_path / "fresh", TRIALS)
    assert violations == 0
    assert TRIALS <= held  # every trial has a holder (a late contender may take it again after the release)


def test_takeover_of_a_dead_owners_lock_has_one_winner(tmp_path):
    root = tmp_path / "stale"
    dead = _dead_pid()
    for trial in range(STALE_TRIALS):  # half written by an older version (no flock mark), half by a killed owner
        folder = root / f"trial{trial}"
        folder.mkdir(parents=True)
        record = {"pid": dead, "host": socket.gethostname()} | ({"flock": True} if trial % 2 else {})
        (folder / "LOCK").write_text(json.dumps(record))
    held, violations = _trials(root, STALE_TRIALS)
    assert violations == 0 and held >= STALE_TRIALS


def test_a_half_written_lock_file_holds_nothing_and_a_lease_is_never_half_written(tmp_path):
    """A lease is created whole (one link of a complete file), so an empty or cut ``LOCK`` is no owner's (an older
    version killed while writing it); the next claim takes the run at once."""
    from diagnostics.finetune._run_lock import lock_held
    from diagnostics.finetune._store import run_state

    folder = tmp_path / "e" / "en" / "m" / "seed=0"
    folder.mkdir(parents=True)
    (folder / "LOCK").write_text('{"pid": 12')
    assert not lock_held(folder) and run_state(folder) == "interrupted"
    with RunLock(folder):
        assert json.loads((folder / "LOCK").read_text())["pid"] == os.getpid()
        with pytest.raises(RunLockedError, match="already locked by this process"):
            RunLock(folder).acquire()
    assert not (folder / "LOCK").exists()


# -- checksums of finished runs ---------------------------------------------------------------------------------

SEEDS = [0, 1, 2, 3]


@pytest.fixture(scope="module")
def finished(tmp_path_factory, tiny_model_dir):
    """A sweep of four tiny runs (en), finished: its config and its predictions."""
    root = tmp_path_factory.mktemp("integrity") / "runs"
    cfg = SweepConfig(output_dir=str(root), experiment="e", languages=["en"], seeds=SEEDS,
                      models=[{"name": "tiny", "path": str(tiny_model_dir)}], train_size=32, max_seq_length=24,
                      batch_size=16, max_epochs=1, max_steps=1, eval_batch_size=512, warmup_ratio=0.0,
                      num_threads=1, progress=False)
    assert run_sweep(cfg)["state"].tolist() == ["done"] * len(SEEDS)
    return cfg, collect_predictions(root)


def _copy(cfg: SweepConfig, tmp_path: Path) -> SweepConfig:
    shutil.copytree(cfg.output_dir, tmp_path / "runs")
    return cfg.with_overrides([f"output_dir={tmp_path / 'runs'}"])


def _edit_predictions(path: Path) -> None:  # a valid table with one prediction flipped
    table = pd.read_parquet(path)
    table.loc[0, "prediction"] = "entailment" if table.loc[0, "prediction"] == "not_entailment" else "not_entailment"
    table.to_parquet(path, index=False)


#: One damage per run file that the structural checks alone miss (valid file, other content).
EDITS = {"predictions.parquet": _edit_predictions, "metrics.json": edit_json("best", {"validation_mcc": 0.99}),
         "config.json": edit_json("note", "edited by hand"), "versions.json": edit_json("torch", "0.0.1")}


def _key(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.sort_values(["seed", "example_id"]).reset_index(drop=True)


def test_done_records_the_checksum_of_every_run_file(finished):
    cfg, _ = finished
    run = run_dir(cfg.output_dir, "e", "en", "tiny", 0)
    recorded = json.loads((run / "DONE").read_text())
    assert set(recorded["sha256"]) == set(RUN_FILES) and recorded["sha256"] == file_checksums(run)
    assert "best" in recorded and verify_run(run) == []


@pytest.mark.parametrize("damage", ["edit", pytest.param("truncate", marks=pytest.mark.slow)])
def test_each_damaged_run_file_is_reported_and_the_run_redone(finished, tmp_path, damage):
    cfg, reference = finished
    cfg = _copy(cfg, tmp_path)
    for seed, name in zip(SEEDS, RUN_FILES):
        path = run_dir(cfg.output_dir, "e", "en", "tiny", seed) / name
        (EDITS[name] if damage == "edit" else truncate_half)(path)
        problems = verify_run(path.parent)
        assert len(problems) == 1 and problems[0].startswith(name), (name, problems)
        if damage == "edit":
            assert "changed after the run finished" in problems[0]
    with pytest.warns(UserWarning, match="corrupt") as caught:
        result = run_sweep(cfg)
    assert sum("training it again" in str(w.message) for w in caught) == len(SEEDS)
    assert result["state"].tolist() == ["done"] * len(SEEDS)
    assert all(verify_run(run_dir(cfg.output_dir, "e", "en", "tiny", seed)) == [] for seed in SEEDS)
    pd.testing.assert_frame_equal(_key(collect_predictions(cfg.output_dir)), _key(reference))


# -- pool workers exit with their parent --------------------------------------------------------------------------


def _children(pid: int) -> list[int]:
    """Pids whose parent is ``pid`` (a /proc scan; Linux)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="finds workers through /proc (Linux)")
def test_killing_a_pool_sweep_ends_its_workers(tmp_path, tiny_model_dir):
    config = tmp_path / "sweep.yaml"
    # runs long enough that workers are still training when the sweep is killed
    config.write_text(yaml.safe_dump(dict(
        experiment="k", output_dir=str(tmp_path / "runs"), models=[{"name": "tiny", "path": str(tiny_model_dir)}],
        languages=["en"], seeds=[0, 1], train_size=2000, max_seq_length=64, batch_size=8, max_epochs=50,
        warmup_ratio=0.0, num_threads=1, progress=False, executor="pool", workers=2,
        executor_options={"threads_per_worker": 1})))
    env = {**os.environ, "PYTHONHASHSEED": "0", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    sweep = subprocess.Popen([sys.executable, "-m", "diagnostics", "sweep", "run", str(config)], cwd=tmp_path, env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    workers: list[int] = []
    try:
        locks = [run_dir(tmp_path / "runs", "k", "en", "tiny", seed) / "LOCK" for seed in (0, 1)]
        deadline = time.time() + 180
        while time.time() < deadline and sweep.poll() is None and not all(p.exists() for p in locks):
            time.sleep(0.1)
        assert all(p.exists() for p in locks), "the workers never started training"
        workers = _children(sweep.pid)
        assert len(workers) >= 2
        os.kill(sweep.pid, signal.SIGKILL)
        sweep.wait()
        killed = time.time()
        while time.time() < killed + 10 and any(_alive(pid) for pid in workers):
            time.sleep(0.1)
        alive = [pid for pid in workers if _alive(pid)]
        print(f"workers {workers} gone {time.time() - killed:.2f} s after the kill")
        assert not alive, f"workers {alive} still running 10 s after their sweep was killed"
    finally:
        if sweep.poll() is None:
            sweep.kill()
            sweep.wait()
        for pid in workers:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
