"""Behaviour held fixed across refactors: two small sweeps (the ``epoch`` recipe with AdamW, the ``jiant`` recipe with
BertAdam) store the run hashes and AX-b predictions committed in ``tests/finetune/data/fixed_behaviour.json``, and
(slow) the demo's own first run (``configs/demo.yaml``, English, seed 0: the embedded model, its frozen-layer
features, SICK as extra data) those in ``tests/finetune/data/demo_run.json``, recorded with the code before recipes
became objects.

A change that alters either on purpose (a new default, an exact kernel) rewrites the file with
``DIAGNOSTICS_UPDATE_FIXED=1 pytest tests/finetune/test_fixed_behaviour.py`` and says why in the CHANGELOG.
P(entailment) is compared within 1e-4, and its pattern over the examples by correlation (above 0.999): the same
seed gives the same run on one machine bit for bit, while CPUs with other vector units round matrix products
differently in the last bits."""

import json
import os
from pathlib import Path

import numpy as np
import pytest

from diagnostics.finetune import collect_predictions, load_config, run_sweep, sweep_runs

from _paths import ROOT
from _sweeps import write_config

FIXED = ROOT / "tests" / "finetune" / "data" / "fixed_behaviour.json"
DEMO_RUN = ROOT / "tests" / "finetune" / "data" / "demo_run.json"
RECIPES = {"epoch": {}, "jiant": {"recipe": "jiant", "optimizer": "bert_adam", "val_interval": 2, "max_vals": 3,
                                   "weight_decay": 0.01, "adam_eps": 1e-6}}


def _sweep(tmp_path, tiny_model_dir, recipe: str) -> dict:
    config = write_config(tmp_path / recipe, tiny_model_dir, experiment=recipe, languages=["en"], seeds=[0],
                          train_size=32, max_epochs=1, batch_size=8, **RECIPES[recipe])
    run_sweep(load_config(config))
    return _axb_run(tmp_path / recipe / "runs" / recipe, load_config(config))


def _axb_run(runs: Path, config) -> dict:
    """The run hash and AX-b P(entailment) (by example) of the one run of ``config`` stored under ``runs``."""
    table = collect_predictions(runs)
    axb = table[table["dataset"] == "axb"].sort_values("example_id")
    stored = json.loads((sweep_runs(config)[0].path / "config.json").read_text(encoding="utf-8"))
    return {"run_hash": stored["run"]["run_hash"], "examples": axb["example_id"].astype(str).tolist(),
            "p_entailment": [round(float(p), 9) for p in axb["probability"]]}


def _compare(found: dict, path: Path) -> None:
    """Compare runs with the committed ones, or rewrite ``path`` (``DIAGNOSTICS_UPDATE_FIXED=1``)."""
    if os.environ.get("DIAGNOSTICS_UPDATE_FIXED") == "1":
        path.write_text(json.dumps(found, indent=0) + "\n", encoding="utf-8")
        pytest.skip(f"rewrote {path.relative_to(ROOT)}")
    committed = json.loads(path.read_text(encoding="utf-8"))
    assert set(committed) == set(found)
    for name, run in found.items():
        assert run["run_hash"] == committed[name]["run_hash"], name
        assert run["examples"] == committed[name]["examples"], name
        found_p, committed_p = np.array(run["p_entailment"]), np.array(committed[name]["p_entailment"])
        np.testing.assert_allclose(found_p, committed_p, atol=1e-4, rtol=0, err_msg=name)
        # a tiny model moves little from 0.5: the pattern across examples must hold too, not only the level
        assert np.corrcoef(found_p, committed_p)[0, 1] > 0.999, name


def test_the_stored_runs_are_the_committed_ones(tmp_path, tiny_model_dir):
    _compare({recipe: _sweep(tmp_path, tiny_model_dir, recipe) for recipe in RECIPES}, FIXED)


@pytest.mark.slow
def test_the_demos_first_run_is_the_committed_one(tmp_path):
    """The demo's settings as shipped, one language and seed, one thread (minutes on two cores)."""
    config = load_config(ROOT / "configs" / "demo.yaml", overrides=[
        "languages=[en]", "seeds=[0]", f"output_dir={tmp_path}", "num_threads=1", "workers=1"])
    run_sweep(config)
    _compare({"demo": _axb_run(tmp_path / config.experiment, config)}, DEMO_RUN)
