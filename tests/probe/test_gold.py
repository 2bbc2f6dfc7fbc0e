"""Probes scored by cross-validation on the gold tags of a diagnostic set: stratified folds, a planted signal found in
its layer only, LiDiRus."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from diagnostics.probe import diagnostic_frame, gold_cv_layers, probe_gold_cv, stratified_folds

N = 80  # diagnostic pairs cross-validated


@pytest.fixture(scope="module")
def tiny(tiny_model_dir):
    """The 2-layer tiny model the probing protocol's tests use, encoding on one thread as they do."""
    import torch

    torch.set_num_threads(1)
    return tiny_model_dir


def test_gold_cv_on_lidirus(tiny, tmp_path):
    gold = probe_gold_cv({"pretrained": tiny, "seed=3": tiny}, "ru", "logic", tmp_path, max_test=N, folds=4)
    assert (gold["language"] == "ru").all() and (gold["n_folds"] == 4).all()
    assert gold.loc[gold["model"] == "seed=3", "seed"].eq(3).all()
    positives = diagnostic_frame("ru", max_test=N)["coarse"].map(lambda c: "Logic" in c).mean()
    assert gold["positive_rate"].iloc[0] == pytest.approx(positives)
    first, second = (gold[gold["model"] == m].reset_index(drop=True) for m in ("pretrained", "seed=3"))
    pd.testing.assert_frame_equal(first.drop(columns=["model", "seed"]), second.drop(columns=["model", "seed"]))


def test_gold_cv_finds_a_planted_signal_in_its_layer_only():
    rng = np.random.default_rng(0)
    y = (rng.random(300) < 0.3).astype(int)
    vectors = rng.standard_normal((3, 300, 16))
    vectors[1, :, 0] += 2.0 * (2 * y - 1)
    table = gold_cv_layers(vectors, {"planted": y}, folds=5, seed=0).set_index("layer")
    assert table.loc[1, "balanced_accuracy"] > 0.9
    assert (table.drop(index=1)["balanced_accuracy"] < 0.62).all()
    with pytest.raises(ValueError, match="folds"):
        stratified_folds(y[:3], 5, 0)
