"""Behaviour held fixed across refactors: two small sweeps (the ``epoch`` recipe with AdamW, the ``jiant`` recipe with
BertAdam) store the run hashes and AX-b predictions committed in ``tests/finetune/data/fixed_behaviour.json``.

A change that alters either on purpose (a new default, an exact kernel) rewrites the file with
``DIAGNOSTICS_UPDATE_FIXED=1 pytest tests/finetune/test_fixed_behaviour.py`` and says why in the CHANGELOG.
P(entailment) is compared within 1e-4, and its pattern over the examples by correlation (above 0.999): the same
seed gives the same run on one machine bit for bit, while CPUs with other vector units round matrix products
differently in the last bits."""

import json
import os

import numpy as np
import pytest

from diagnostics.finetune import collect_predictions, load_config, run_sweep, sweep_runs

from _paths import ROOT
from _sweeps import write_config

FIXED = ROOT / "tests" / "finetune" / "data" / "fixed_behaviour.json"
RECIPES = {"epoch": {}, "jiant": {"recipe": "jiant", "optimizer": "bert_adam", "val_interval": 2, "max_vals": 3,
                                   "weight_decay": 0.01, "adam_eps": 1e-6}}


def _sweep(tmp_path, tiny_model_dir, recipe: str) -> dict:
    config = write_config(tmp_path / recipe, tiny_model_dir, experiment=recipe, languages=["en"], seeds=[0],
                          train_size=32, max_epochs=1, batch_size=8, **RECIPES[recipe])
    run_sweep(load_config(config))
    table = collect_predictions(tmp_path / recipe / "runs" / recipe)
    axb = table[table["dataset"] == "axb"].sort_values("example_id")
    stored = json.loads((sweep_runs(load_config(config))[0].path / "config.json").read_text(encoding="utf-8"))
    return {"run_hash": stored["run"]["run_hash"], "examples": axb["example_id"].astype(str).tolist(),
            "p_entailment": [round(float(p), 9) for p in axb["probability"]]}


def test_the_stored_runs_are_the_committed_ones(tmp_path, tiny_model_dir):
    found = {recipe: _sweep(tmp_path, tiny_model_dir, recipe) for recipe in RECIPES}
    if os.environ.get("DIAGNOSTICS_UPDATE_FIXED") == "1":
        FIXED.write_text(json.dumps(found, indent=0) + "\n", encoding="utf-8")
        pytest.skip(f"rewrote {FIXED.relative_to(ROOT)}")
    committed = json.loads(FIXED.read_text(encoding="utf-8"))
    assert set(committed) == set(RECIPES)
    for recipe, run in found.items():
        assert run["run_hash"] == committed[recipe]["run_hash"], recipe
        assert run["examples"] == committed[recipe]["examples"], recipe
        found_p, committed_p = np.array(run["p_entailment"]), np.array(committed[recipe]["p_entailment"])
        np.testing.assert_allclose(found_p, committed_p, atol=1e-4, rtol=0, err_msg=recipe)
        # a tiny model moves little from 0.5: the pattern across examples must hold too, not only the level
        assert np.corrcoef(found_p, committed_p)[0, 1] > 0.999, recipe
