"""Recipes as objects: every registered recipe loads with its parts, ``recipe:`` accepts exactly the registered
names, and the third recipe (Hugging Face ``Trainer``'s defaults) trains solo and fused: a check per epoch, no early
stopping, the last epoch's model (its course alone: test_recipe_trainer.py)."""

import json

import numpy as np
import pandas as pd
import pytest

from diagnostics.finetune import SweepConfig, collect_predictions, load_config, run_sweep
from diagnostics.finetune._config import RECIPES
from diagnostics.finetune._recipes import RECIPE_MODULES, get_recipe

from _sweeps import KEYS, write_config


def test_every_registered_recipe_loads_with_its_parts():
    assert RECIPES == tuple(RECIPE_MODULES) == ("epoch", "jiant", "trainer")
    for name in RECIPES:
        recipe = get_recipe(name)
        assert recipe.name == name and recipe.optimizer in ("adamw", "bert_adam")
        config = SweepConfig(recipe=name, optimizer=recipe.optimizer, max_epochs=3, batch_size=4)
        assert recipe.budget(config, 10) > 0
    with pytest.raises(ValueError, match="unknown recipe 'hf'; choose one of epoch, jiant, trainer"):
        get_recipe("hf")


def test_the_trainer_recipe_trains_every_epoch_keeps_the_last_and_fused_equals_solo(tmp_path, tiny_model_dir):
    settings = dict(languages=["en"], seeds=[0, 1], train_size=48, max_epochs=3, dropout=0.0, recipe="trainer",
                    patience=1)
    solo = run_sweep(load_config(write_config(tmp_path / "solo", tiny_model_dir, **settings)))
    fused = run_sweep(load_config(write_config(tmp_path / "fused", tiny_model_dir, fuse=2, **settings)))
    assert solo["state"].tolist() == fused["state"].tolist() == ["done", "done"]
    for seed in (0, 1):
        metrics = json.loads((tmp_path / "solo" / "runs" / "s" / "en" / "tiny" / f"seed={seed}" /
                              "metrics.json").read_text())
        assert [entry["epoch"] for entry in metrics["history"]] == [1, 2, 3]  # patience 1 stops nothing
        assert metrics["best"] == metrics["history"][-1] and metrics["steps"] == 9
    a = collect_predictions(tmp_path / "solo" / "runs").sort_values(KEYS).reset_index(drop=True)
    b = collect_predictions(tmp_path / "fused" / "runs").sort_values(KEYS).reset_index(drop=True)
    pd.testing.assert_frame_equal(a.drop(columns="probability"), b.drop(columns="probability"))
    np.testing.assert_allclose(a["probability"], b["probability"], atol=1e-5)
