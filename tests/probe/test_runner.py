"""Probing over layers: a planted signal found in its layer only, a selection set choosing the regularisation, fits
reused across models with identical layers, the summary over seeds."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from diagnostics.probe import layer_summary, probe_layers
from diagnostics.probe._linear import fit_probe, standardise


def planted(n: int, layers: int, dim: int, signal_layer: int, labels: np.ndarray, seed: int) -> np.ndarray:
    """Noise vectors, with the label linearly encoded (along a random direction) in one layer only."""
    rng = np.random.default_rng(seed)
    vectors = rng.standard_normal((layers, n, dim))
    direction = rng.standard_normal(dim)
    direction /= np.linalg.norm(direction)
    vectors[signal_layer] += np.outer(2.0 * labels - 1.0, direction) * 2.5
    return vectors.astype(np.float32)


def test_planted_signal_is_found_in_its_layer_and_not_elsewhere():
    rng = np.random.default_rng(0)
    y_train = (rng.random(400) < 0.5).astype(int)
    y_test = (rng.random(300) < 0.5).astype(int)
    # the same direction in train and test: one generator call over both sets
    both = planted(700, 5, 24, signal_layer=3, labels=np.concatenate([y_train, y_test]), seed=1)
    table = probe_layers(both[:, :400], {"planted": y_train}, both[:, 400:], {"planted": y_test}, seed=0)
    by_layer = table.set_index("layer")
    assert by_layer.loc[3, "accuracy"] > 0.9
    others = by_layer.drop(index=3)
    assert (others["accuracy"] < 0.62).all(), others["accuracy"].tolist()
    assert by_layer["accuracy"].idxmax() == 3
    # the control task (labels shuffled across pairs) is near chance everywhere, so selectivity peaks at layer 3
    assert (by_layer["control"] < 0.62).all()
    assert by_layer["selectivity"].idxmax() == 3
    np.testing.assert_allclose(by_layer["selectivity"], by_layer["accuracy"] - by_layer["control"])
    np.testing.assert_allclose(by_layer["majority"], max(y_test.mean(), 1 - y_test.mean()))


def test_layer_summary_mean_and_std_across_seeds():
    rows = []
    for seed, accs in [(None, [0.5, 0.6]), (0, [0.6, 0.8]), (1, [0.7, 0.6])]:
        for layer, acc in enumerate(accs):
            rows.append({"model": f"m{seed}", "seed": seed, "language": "en", "task": "logic", "layer": layer,
                         "accuracy": acc, "majority": 0.55})
    table = pd.DataFrame(rows).astype({"seed": "Int64"})
    summary = layer_summary(table).set_index("layer")
    assert summary.loc[0, "mean"] == pytest.approx(0.65)
    assert summary.loc[0, "std"] == pytest.approx(np.std([0.6, 0.7], ddof=1))
    assert summary.loc[1, "pretrained"] == pytest.approx(0.6)
    assert (summary["n_seeds"] == 2).all()
    assert (summary["chance"] == summary["majority"]).all()  # the chance level of accuracy is the majority share
    with pytest.raises(KeyError):
        layer_summary(table, "nope")


def test_memo_reuses_layers_identical_across_models_and_refits_the_others(monkeypatch):
    import diagnostics.probe._runner as runner

    rng = np.random.default_rng(3)
    y_train, y_test = (rng.random(200) < 0.5).astype(int), (rng.random(100) < 0.5).astype(int)
    pretrained = planted(300, 4, 12, signal_layer=1, labels=np.concatenate([y_train, y_test]), seed=2)
    tuned = pretrained.copy()
    tuned[3] += rng.standard_normal(tuned[3].shape).astype(np.float32)  # only the top layer moved
    calls = []
    real_fit = runner.fit_probe
    monkeypatch.setattr(runner, "fit_probe", lambda *a, **k: calls.append(1) or real_fit(*a, **k))
    memo = {}
    first = probe_layers(pretrained[:, :200], {"t": y_train}, pretrained[:, 200:], {"t": y_test}, memo=memo)
    fits_first = len(calls)
    second = probe_layers(tuned[:, :200], {"t": y_train}, tuned[:, 200:], {"t": y_test}, memo=memo)
    assert fits_first == 8 and len(calls) - fits_first == 2  # 4 layers x (probe + control); then layer 3 only
    pd.testing.assert_frame_equal(first[first.layer < 3], second[second.layer < 3])
    fresh = probe_layers(tuned[:, :200], {"t": y_train}, tuned[:, 200:], {"t": y_test})
    pd.testing.assert_frame_equal(second, fresh)


@pytest.mark.slow
def test_layers_fitted_in_two_processes_equal_the_fits_here_and_share_the_memo():
    from diagnostics.probe._gold import gold_cv_layers

    rng = np.random.default_rng(11)
    y_train, y_test = (rng.random(160) < 0.5).astype(int), (rng.random(120) < 0.4).astype(int)
    pretrained = planted(280, 4, 10, signal_layer=2, labels=np.concatenate([y_train, y_test]), seed=4)
    tuned = pretrained.copy()
    tuned[3] += rng.standard_normal(tuned[3].shape).astype(np.float32)
    labels_train, labels_test = {"a": y_train, "b": 1 - y_train}, {"a": y_test, "b": 1 - y_test}
    for fit in (lambda v, **k: probe_layers(v[:, :160], labels_train, v[:, 160:], labels_test, **k),
                lambda v, **k: gold_cv_layers(v[:, 160:], labels_test, folds=3, **k)):
        here, there = {}, {}
        serial = [fit(v, memo=here) for v in (pretrained, tuned)]
        parallel = [fit(v, memo=there, n_jobs=2) for v in (pretrained, tuned)]
        for one, other in zip(serial, parallel):
            pd.testing.assert_frame_equal(one, other)  # same floats: each fit is deterministic wherever it runs
        assert len(here) == len(there) == 5  # 4 layers, then only the tuned model's moved top layer
        assert list(parallel[1]["layer"]) == [0, 0, 1, 1, 2, 2, 3, 3]


def test_a_selection_set_chooses_alpha_and_the_probe_is_fit_on_all_training_pairs():
    rng = np.random.default_rng(5)
    y = (rng.random(900) < 0.4).astype(int)
    both = planted(900, 3, 16, signal_layer=2, labels=y, seed=6)
    train, select, test = slice(0, 300), slice(300, 500), slice(500, 900)
    table = probe_layers(both[:, train], {"t": y[train]}, both[:, test], {"t": y[test]},
                         select_vectors=both[:, select], select_labels={"t": y[select]}).set_index("layer")
    assert (table["selection"] == "test").all()
    assert (table["n_train"] == 300).all() and (table["n_selection"] == 200).all()
    assert table["balanced_accuracy"].idxmax() == 2 and table.loc[2, "balanced_accuracy"] > 0.9
    x_train, x_select, x_test = standardise(both[2, train], both[2, select], both[2, test])
    fit = fit_probe(x_train, y[train], x_test, y[test], x_select=x_select, y_select=y[select])
    assert table.loc[2, "alpha"] == fit.alpha and table.loc[2, "accuracy"] == pytest.approx(fit.accuracy)
    with pytest.raises(ValueError, match="both"):
        fit_probe(x_train, y[train], x_test, y[test], x_select=x_select)
    with pytest.raises(ValueError, match="class_weight"):
        fit_probe(x_train, y[train], x_test, y[test], class_weight="auto")
