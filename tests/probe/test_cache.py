"""Vector cache and the one-call API ``probe_models`` on a tiny random model with real diagnostic pairs."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import torch

from diagnostics.data import load
from diagnostics.probe import (VectorCache, cached_sentence_vectors, discover_runs, layer_summary, probe_models)

from _encoders import CountingEncoder

N_LAYERS = 2


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from diagnostics.models import tiny_random_model

    torch.set_num_threads(1)
    return tiny_random_model(tmp_path_factory.mktemp("tiny"), seed=0, num_hidden_layers=N_LAYERS)


@pytest.fixture(scope="module")
def encoder():
    return CountingEncoder()


@pytest.fixture(scope="module")
def axb():
    frame = load("axb")
    rows = np.random.default_rng(0).permutation(len(frame))
    return frame.iloc[rows[:160]].reset_index(drop=True), frame.iloc[rows[160:260]].reset_index(drop=True)


def test_second_call_reads_the_cache_and_runs_no_model(tiny, encoder, tmp_path):
    texts = load("rte", "validation")["hypothesis"].head(12).tolist()
    first = cached_sentence_vectors(tiny, texts, tmp_path, encoder=encoder)
    assert len(encoder.calls) == 1
    assert first.dtype == np.float16 and first.shape == (N_LAYERS + 1, 12, 32)
    again = cached_sentence_vectors(tiny, texts, tmp_path, encoder=encoder)
    assert len(encoder.calls) == 1  # no model load, no forward pass
    np.testing.assert_array_equal(first, again)
    # other texts, pooling or dtype are different entries
    cached_sentence_vectors(tiny, texts[:6], tmp_path, encoder=encoder)
    full = cached_sentence_vectors(tiny, texts, tmp_path, dtype="float32", encoder=encoder)
    assert len(encoder.calls) == 3
    np.testing.assert_allclose(full, first.astype(np.float32), rtol=2e-3, atol=2e-3)
    assert len(list(tmp_path.glob("*.npy"))) == 3
    meta = json.loads(next(tmp_path.glob("*.json")).read_text())
    assert meta["pooling"] == "mean" and meta["n_texts"] in (6, 12)


def test_incomplete_entry_is_rebuilt(tiny, encoder, tmp_path):
    texts = ["One sentence.", "Another, longer sentence than the first one."]
    cached_sentence_vectors(tiny, texts, tmp_path, encoder=encoder)
    calls = len(encoder.calls)
    for meta in tmp_path.glob("*.json"):
        meta.unlink()  # a crash between the two writes leaves the array without its metadata
    assert VectorCache(tmp_path).get(next(tmp_path.glob("*.npy")).stem) is None
    cached_sentence_vectors(tiny, texts, tmp_path, encoder=encoder)
    assert len(encoder.calls) == calls + 1


def test_probe_models_table_on_gold_frames(tiny, encoder, axb, tmp_path):
    train, test = axb
    run = tmp_path / "runs" / "exp" / "en" / "tiny" / "seed=4"
    (run / "checkpoint").mkdir(parents=True)
    for f in tiny.iterdir():
        (run / "checkpoint" / f.name).write_bytes(f.read_bytes())
    (run / "DONE").write_text("{}")
    models = {"pretrained": tiny, **discover_runs(run.parent)}
    assert list(models) == ["pretrained", "seed=4"]
    # L2 chosen on pairs held out of the (gold-labelled) training frame: no annotator involved
    kwargs = dict(tasks="logic,Lexical Semantics,negation", cache_dir=tmp_path / "cache", train=train, test=test,
                  train_column=None, encoder=encoder, max_train=120, selection="holdout")
    # training labels: gold lists under the annotator's column names
    train = train.assign(auto_coarse=train["coarse"], auto_features=train["features"])
    kwargs["train"] = train
    calls = len(encoder.calls)
    table = probe_models(models, "en", **kwargs)
    # train texts + test texts of the first model; the copy has the same content fingerprint, so it is a cache hit
    assert len(encoder.calls) == calls + 2
    assert len(table) == 2 * 3 * (N_LAYERS + 1)
    assert set(table["task"]) == {"logic", "lexical_semantics", "negation"}
    assert table.loc[table["model"] == "pretrained", "seed"].isna().all()
    assert (table.loc[table["model"] == "seed=4", "seed"] == 4).all()
    assert (table["n_train"] == 96).all() and (table["n_selection"] == 24).all() and (table["n_test"] == 100).all()
    assert (table["selection"] == "holdout").all()
    np.testing.assert_allclose(table["selectivity"], table["accuracy"] - table["control"])
    logic = test["coarse"].map(lambda c: "Logic" in c).mean()
    np.testing.assert_allclose(table.loc[table["task"] == "logic", "majority"], max(logic, 1 - logic))
    assert table["accuracy"].between(0, 1).all() and table["alpha"].isin([1e-1, 1e-2, 1e-3, 1e-4, 1e-5]).all()
    # same weights -> same vectors -> same probes for the two labels
    a = table[table["model"] == "pretrained"].reset_index(drop=True)
    b = table[table["model"] == "seed=4"].reset_index(drop=True)
    pd.testing.assert_frame_equal(a.drop(columns=["model", "seed"]), b.drop(columns=["model", "seed"]))
    # a second run is served from the cache and is identical (a seed fully determines the run)
    again = probe_models(models, "en", **kwargs)
    assert len(encoder.calls) == calls + 2
    pd.testing.assert_frame_equal(table, again)
    assert len(list((tmp_path / "cache").glob("probe-*.json"))) == 1  # both labels share one result entry
    # refitting the probes on the cached vectors gives the same table, still without running a model
    refit = probe_models(models, "en", **kwargs, reuse_results=False)
    assert len(encoder.calls) == calls + 2
    pd.testing.assert_frame_equal(table, refit)
    # another probe setting is another result entry
    probe_models({"pretrained": tiny}, "en", **{**kwargs, "tasks": "logic"}, alphas=(1e-2,))
    assert len(list((tmp_path / "cache").glob("probe-*.json"))) == 2
    summary = layer_summary(table)
    assert len(summary) == 3 * (N_LAYERS + 1) and (summary["n_seeds"] == 1).all()
    np.testing.assert_allclose(summary["pretrained"], summary["mean"])


def test_unknown_task_and_missing_column_are_clear_errors(tiny, axb):
    train, test = axb
    with pytest.raises(ValueError, match="unknown probing task"):
        probe_models({"p": tiny}, "en", tasks="syntax", train=train, test=test)
    with pytest.raises(KeyError, match="auto_coarse"):
        probe_models({"p": tiny}, "en", tasks="logic", train=train, test=test)
