"""Fitting the layers: each distinct layer once, the same rows with any number of processes, and a progress bar
over the layers fitted when asked."""

from __future__ import annotations

from functools import partial

import numpy as np

from diagnostics.probe._layers import fit_layers


def _fit(layer, vectors, scale=1.0):
    return [{"layer": layer, "value": float(vectors.sum()) * scale}]


def test_each_distinct_layer_once_same_rows_in_parallel_and_a_progress_bar(capsys):
    rng = np.random.default_rng(0)
    inputs = [(rng.normal(size=(4, 3)),) for _ in range(3)]
    inputs.append(inputs[0])  # a frozen layer equal to layer 0
    memo = {}
    rows = fit_layers(inputs, _fit, memo=memo)
    assert [r["layer"] for r in rows] == [0, 1, 2, 3] and rows[3]["value"] == rows[0]["value"]
    assert len(memo) == 3 and capsys.readouterr().err == ""
    shown = fit_layers(inputs, partial(_fit, scale=2.0), memo={}, n_jobs=2, progress="fit probes seed=0")
    assert [r["value"] for r in shown] == [2 * r["value"] for r in rows]
    err = capsys.readouterr().err
    assert "fit probes seed=0" in err and "0/3" in err  # a bar over the three distinct layers
