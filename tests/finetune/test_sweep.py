"""Sweeps on a tiny random BERT: en + ru x 2 seeds, SIGKILL + restart, lock refusal, executors, CLI."""

import json
import os
import signal
import socket
import subprocess
import sys
import time

import pandas as pd
import pytest
from typer.testing import CliRunner

from diagnostics import data
from diagnostics.cli import app
from diagnostics.finetune import SweepConfig, collect_predictions, load_config, run_sweep, sweep_status
from diagnostics.models import tiny_random_model

from _sweeps import KEYS, sorted_table, write_config

RUN_FILES = {"config.json", "versions.json", "metrics.json", "predictions.parquet", "DONE"}


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return tiny_random_model(tmp_path_factory.mktemp("tiny") / "model", seed=1)


@pytest.fixture(scope="module")
def reference(tiny, tmp_path_factory):
    """An uninterrupted en + ru x 2-seed sweep."""
    folder = tmp_path_factory.mktemp("reference")
    result = run_sweep(load_config(write_config(folder, tiny)))
    return result, folder / "runs"


def test_two_languages_two_seeds_write_axb_and_lidirus(reference):
    result, root = reference
    assert result["state"].tolist() == ["done"] * 4
    table = collect_predictions(root)
    assert sorted(table.groupby(["language", "dataset"]).size().items()) == [(("en", "axb"), 2208),
                                                                             (("ru", "lidirus"), 2208)]
    for language, dataset in (("en", "axb"), ("ru", "lidirus")):
        ids = data.load(dataset)["id"]
        for seed in (0, 1):
            part = table[(table.language == language) & (table.seed == seed)]
            assert part["example_id"].tolist() == ids.tolist()
            assert part["label"].tolist() == data.load(dataset)["label"].tolist()
    assert set(table["prediction"]) <= {"entailment", "not_entailment"}
    assert table["probability"].between(0, 1).all()


@pytest.mark.slow
def test_sigkill_mid_sweep_then_restart_equals_uninterrupted(tiny, tmp_path, reference):
    ref_result, ref_root = reference
    config_path = write_config(tmp_path, tiny)
    root = tmp_path / "runs" / "s"
    proc = subprocess.Popen([sys.executable, "-m", "diagnostics", "sweep", "run", str(config_path)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tmp_path)
    target = root / "en" / "tiny" / "seed=1"
    deadline = time.time() + 240
    while not (target / "config.json").exists() and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    time.sleep(0.3)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    states = sweep_status(root).set_index(["language", "seed"])["state"].to_dict()
    assert states[("en", 0)] == "done"
    assert "done" not in (states.get(("ru", 0)), states.get(("ru", 1)))  # killed mid-sweep
    assert states[("en", 1)] in ("interrupted", "done")

    again = run_sweep(load_config(config_path))
    assert again.set_index(["language", "seed"]).loc[("en", 0), "state"] == "skipped"
    assert set(again["state"]) <= {"skipped", "done"}
    assert set(sweep_status(root)["state"]) == {"done"}
    table = collect_predictions(tmp_path / "runs")
    assert not table.duplicated(KEYS).any()
    pd.testing.assert_frame_equal(sorted_table(table), sorted_table(collect_predictions(ref_root)))
    for folder in root.glob("*/tiny/seed=*"):
        assert {p.name for p in folder.iterdir()} == RUN_FILES | {".lease"}  # no staging left, no LOCK


def test_live_lock_is_refused_and_other_runs_go_on(tiny, tmp_path):
    cfg = load_config(write_config(tmp_path, tiny, languages=["en"], executor="submitit",
                                   executor_options={"cluster": "debug"}))
    locked = tmp_path / "runs/s/en/tiny/seed=1"
    locked.mkdir(parents=True)
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        (locked / "LOCK").write_text(json.dumps({"pid": holder.pid, "host": socket.gethostname()}))
        result = run_sweep(cfg).set_index("seed")
    finally:
        holder.kill()
        holder.wait()
    assert result.loc[0, "state"] == "done"
    assert result.loc[1, "state"] == "locked" and f"pid {holder.pid}" in result.loc[1, "error"]
    # the holder is gone: its lock is stale and the next sweep takes it over
    assert run_sweep(cfg).set_index("seed").loc[1, "state"] == "done"


def test_finished_run_with_other_settings_is_not_mixed_in(tiny, tmp_path, reference):
    _, ref_root = reference
    cfg = load_config(write_config(tmp_path, tiny)).with_overrides([f"output_dir={ref_root}", "lr=0.5"])
    with pytest.raises(ValueError, match=r"other settings \(lr: [0-9.e-]+ -> 0\.5\)"):  # names what changed
        run_sweep(cfg)


def test_cli_dry_run_and_config_errors(tiny, tmp_path, reference):
    _, ref_root = reference
    config_path = write_config(tmp_path, tiny)
    runner = CliRunner()
    result = runner.invoke(app, ["sweep", "run", str(config_path), "--set", f"output_dir={ref_root}",
                                 "--set", "seeds=[0,1,2]", "--dry-run"])
    assert result.exit_code == 0, result.output
    lines = [line.split() for line in result.output.strip().splitlines()]
    assert ["en/tiny/seed=0", "done"] in lines and ["ru/tiny/seed=2", "pending"] in lines and len(lines) == 6
    bad = runner.invoke(app, ["sweep", "run", str(config_path), "--set", "learning_rate=1"])
    assert bad.exit_code == 2 and "learning_rate: unknown config key" in bad.output


@pytest.mark.slow
@pytest.mark.parametrize("executor,options", [("pool", {}), ("submitit", {"cluster": "local"})])
def test_process_executors_match_inprocess(tiny, tmp_path, reference, executor, options):
    _, ref_root = reference
    cfg = load_config(write_config(tmp_path, tiny, executor=executor, workers=2, executor_options=options))
    result = run_sweep(cfg)
    assert result["state"].tolist() == ["done"] * 4, result["error"].tolist()
    pd.testing.assert_frame_equal(sorted_table(collect_predictions(tmp_path / "runs")),
                                  sorted_table(collect_predictions(ref_root)))


def test_config_written_next_to_runs(reference):
    _, root = reference
    run = root / "s/en/tiny/seed=0"
    recorded = json.loads((run / "config.json").read_text())
    assert recorded["run"] == {"experiment": "s", "language": "en", "model": "tiny", "seed": 0, "pretrain_seed": None,
                               "run_hash": SweepConfig.from_dict(recorded["sweep"]).run_hash()}
    assert json.loads((root / "s/sweep.json").read_text())["seeds"] == [0, 1]


@pytest.mark.slow
def test_several_sweeps_share_one_pool_and_match_separate_sweeps(tiny, tmp_path, reference):
    from diagnostics.finetune import run_sweeps

    _, ref_root = reference
    first = load_config(write_config(tmp_path, tiny, languages=["en"], executor="pool", workers=2,
                                     executor_options={"threads_per_worker": 1}))
    second = first.with_overrides({"experiment": "u", "seeds": [1]})
    result = run_sweeps([first, second])
    assert result[["experiment", "seed", "state"]].values.tolist() == [["s", 0, "done"], ["s", 1, "done"],
                                                                      ["u", 1, "done"]], result["error"].tolist()
    ours = collect_predictions(tmp_path / "runs" / "s")
    theirs = collect_predictions(ref_root / "s")
    pd.testing.assert_frame_equal(sorted_table(ours), sorted_table(theirs[theirs["language"] == "en"]))
    # the second experiment's seed 1 is the first's seed 1 (same data, same seed), in its own folder
    u = collect_predictions(tmp_path / "runs" / "u")
    pd.testing.assert_frame_equal(sorted_table(u)[["prediction", "probability"]],
                                  sorted_table(ours[ours["seed"] == 1])[["prediction", "probability"]])
    assert run_sweeps([first, second])["state"].tolist() == ["skipped"] * 3
    with pytest.raises(ValueError, match="repeat"):
        run_sweeps([first, first])


def test_a_corrupt_finished_run_is_trained_again_and_matches(tiny, tmp_path):
    cfg = load_config(write_config(tmp_path, tiny, languages=["en"], train_size=32, max_epochs=1))
    run_sweep(cfg)
    before = sorted_table(collect_predictions(tmp_path / "runs"))
    broken = tmp_path / "runs/s/en/tiny/seed=1/predictions.parquet"
    broken.write_bytes(broken.read_bytes()[:100])  # truncated by a full disk, say
    dry = CliRunner().invoke(app, ["sweep", "run", str(tmp_path / "sweep.yaml"), "--dry-run"])
    assert dry.exit_code == 0 and [line.split()[-1] for line in dry.output.splitlines()] == ["done", "corrupt"]
    with pytest.warns(UserWarning, match="seed=1.*corrupt.*training it again"):
        result = run_sweep(cfg).set_index("seed")
    assert result.loc[0, "state"] == "skipped" and result.loc[1, "state"] == "done"
    pd.testing.assert_frame_equal(sorted_table(collect_predictions(tmp_path / "runs")), before)
