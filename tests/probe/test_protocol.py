"""The study's probing protocol on real bundled data (rule-annotated RTE train + test, gold AX-b / LiDiRus) with a
tiny random model: L2 strength chosen on the annotated RTE test split, no class weighting, metrics as scikit-learn
computes them, protocol-aware result caching, the fallback for languages without a test split, and probes
cross-validated on the gold tags."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import torch

from sklearn.linear_model import LogisticRegression
from sklearn.metrics import balanced_accuracy_score, f1_score
from sklearn.model_selection import StratifiedKFold

from diagnostics.data import load
from diagnostics.probe import (ALPHAS, STUDY_FEATURES, STUDY_FEATURES_NAME, annotated_selection_frame,
                               annotated_training_frame, diagnostic_frame, layer_summary, probe_gold_cv, probe_models)
from diagnostics.probe import (cached_sentence_vectors, control_labels, fit_probe, pair_vectors, standardise,
                               stratified_folds)
from diagnostics.probe._runner import pair_index

from _encoders import CountingEncoder

N_LAYERS = 2
N = 80  # training, selection and test pairs
# Logic (a coarse task every RTE pair shows under the presence reading) and Negation (a fine task with both classes:
# the study's list makes Lexical Semantics nearly constant on RTE too, as most pairs name an entity)
TASKS = "logic,negation"


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from diagnostics.models import tiny_random_model

    torch.set_num_threads(1)
    return tiny_random_model(tmp_path_factory.mktemp("tiny"), seed=0, num_hidden_layers=N_LAYERS)


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("probe-cache")


@pytest.fixture(scope="module")
def encoder():
    return CountingEncoder()


@pytest.fixture(scope="module")
def study(tiny, cache, encoder):
    """The default (study) protocol on English: annotated RTE train + validation, annotated RTE test, AX-b."""
    return probe_models({"pretrained": tiny}, "en", TASKS, cache, max_train=N, max_test=N, encoder=encoder)


def layer_vectors(tiny, frame: pd.DataFrame, cache) -> np.ndarray:
    """The frame's pair vectors, read from the vector cache ``probe_models`` filled (a cache miss fails)."""
    texts: dict[str, int] = {}
    premise, hypothesis = pair_index(frame, texts)

    def no_model(folder):
        pytest.fail(f"cache miss: probe_models did not cache these {len(texts)} texts")

    return pair_vectors(cached_sentence_vectors(tiny, list(texts), cache, encoder=no_model), premise, hypothesis)


def direct_sklearn(x_train, y_train, x_select, y_select, x_test) -> tuple[float, np.ndarray]:
    """The study's selection done with scikit-learn alone: best selection accuracy, strongest alpha on ties."""
    best = None
    for alpha in sorted(ALPHAS, reverse=True):
        model = LogisticRegression(solver="liblinear", C=1.0 / (alpha * len(y_train)), intercept_scaling=10.0,
                                   max_iter=300, class_weight=None).fit(x_train, y_train)
        score = model.score(x_select, y_select)
        if best is None or score > best[0]:
            best = (score, alpha, model.predict(x_test))
    return best[1], best[2]


def test_default_is_the_study_protocol_and_matches_sklearn(study, tiny, cache):
    assert (study["selection"] == "test").all()
    assert (study["n_train"] == N).all() and (study["n_selection"] == N).all() and (study["n_test"] == N).all()
    train = annotated_training_frame("en", max_train=N, seed=0, cache_dir=cache)
    select = annotated_selection_frame("en", max_selection=N, seed=0, cache_dir=cache)
    test = diagnostic_frame("en", max_test=N, seed=0)
    # the selection pairs are RTE's unlabelled test split, labelled by the annotator
    assert set(select["id"]) <= set(load("rte", "test")["id"]) and select["label"].isna().all()
    vectors = [layer_vectors(tiny, frame, cache) for frame in (train, select, test)]
    for task, category, level in [("logic", "Logic", "coarse"), ("negation", "Negation", "features")]:
        y_train, y_select = (np.array([category in c for c in f[f"auto_{level}"]], int) for f in (train, select))
        y_test = np.array([category in c for c in test[level]], int)
        for layer in range(N_LAYERS + 1):
            row = study[(study["task"] == task) & (study["layer"] == layer)].iloc[0]
            if len(np.unique(y_train)) == 1:
                # under the presence reading nearly every RTE pair shows some Logic feature: one training class,
                # nothing to fit; the probe predicts that class
                assert np.isnan(row["alpha"]) and row["train_positive_rate"] in (0.0, 1.0)
                assert row["accuracy"] == pytest.approx(np.mean(y_test == y_train[0]))
                continue
            x_train, x_select, x_test = standardise(*(v[layer] for v in vectors))
            alpha, predictions = direct_sklearn(x_train, y_train, x_select, y_select, x_test)
            assert row["alpha"] == alpha
            assert row["accuracy"] == pytest.approx(np.mean(predictions == y_test))
            assert row["balanced_accuracy"] == pytest.approx(balanced_accuracy_score(y_test, predictions))
            assert row["macro_f1"] == pytest.approx(f1_score(y_test, predictions, average="macro", zero_division=0))
            assert row["train_positive_rate"] == pytest.approx(y_train.mean())


def test_selected_alpha_has_the_best_selection_score(tiny, cache, study):
    train = annotated_training_frame("en", max_train=N, seed=0, cache_dir=cache)
    select = annotated_selection_frame("en", max_selection=N, seed=0, cache_dir=cache)
    test = diagnostic_frame("en", max_test=N, seed=0)
    vectors = [layer_vectors(tiny, frame, cache) for frame in (train, select, test)]
    # Negation: both classes in the annotated training pairs (see the test above for Logic)
    y_train, y_select = (np.array(["Negation" in c for c in f["auto_features"]], int) for f in (train, select))
    y_test = np.array(["Negation" in c for c in test["features"]], int)
    assert 0 < y_train.mean() < 1
    for layer in range(N_LAYERS + 1):
        x_train, x_select, x_test = standardise(*(v[layer] for v in vectors))
        chosen = fit_probe(x_train, y_train, x_test, y_test, x_select=x_select, y_select=y_select)
        singles = {a: fit_probe(x_train, y_train, x_test, y_test, x_select=x_select, y_select=y_select,
                                alphas=(a,)) for a in ALPHAS}
        best = max(s.selection_accuracy for s in singles.values())
        assert chosen.selection_accuracy == pytest.approx(best)
        assert chosen.alpha == max(a for a, s in singles.items() if s.selection_accuracy == pytest.approx(best))
        assert chosen.accuracy == pytest.approx(singles[chosen.alpha].accuracy)
        np.testing.assert_array_equal(chosen.predictions, singles[chosen.alpha].predictions)
        row = study[(study["task"] == "negation") & (study["layer"] == layer)].iloc[0]
        assert row["selection_accuracy"] == pytest.approx(chosen.selection_accuracy)


def test_control_task_metrics_are_those_of_the_shuffled_labels(study, tiny, cache):
    train = annotated_training_frame("en", max_train=N, seed=0, cache_dir=cache)
    select = annotated_selection_frame("en", max_selection=N, seed=0, cache_dir=cache)
    test = diagnostic_frame("en", max_test=N, seed=0)
    vectors = [layer_vectors(tiny, frame, cache) for frame in (train, select, test)]
    y_train, y_select = (np.array(["Negation" in c for c in f["auto_features"]], int) for f in (train, select))
    y_test = np.array(["Negation" in c for c in test["features"]], int)
    # each set's labels shuffled with its own seed (probe seed + 1 / + 3 / + 2)
    c_train, c_select, c_test = control_labels(y_train, 1), control_labels(y_select, 3), control_labels(y_test, 2)
    for layer in range(N_LAYERS + 1):
        x_train, x_select, x_test = standardise(*(v[layer] for v in vectors))
        control = fit_probe(x_train, c_train, x_test, c_test, x_select=x_select, y_select=c_select)
        row = study[(study["task"] == "negation") & (study["layer"] == layer)].iloc[0]
        assert row["control"] == pytest.approx(control.accuracy)
        assert row["control_alpha"] == control.alpha or np.isnan(control.alpha) and np.isnan(row["control_alpha"])
        assert row["control_balanced_accuracy"] == pytest.approx(balanced_accuracy_score(c_test, control.predictions))
        assert row["selectivity"] == pytest.approx(row["accuracy"] - control.accuracy)


def test_protocols_are_cached_apart(study, tiny, cache, encoder):
    calls = len(encoder.calls)
    entries = set(cache.glob("probe-*.json"))
    again = probe_models({"pretrained": tiny}, "en", TASKS, cache, max_train=N, max_test=N, encoder=encoder)
    pd.testing.assert_frame_equal(study, again)
    assert set(cache.glob("probe-*.json")) == entries
    holdout = probe_models({"pretrained": tiny}, "en", TASKS, cache, max_train=N, max_test=N, encoder=encoder,
                           selection="holdout")
    assert (holdout["selection"] == "holdout").all()
    assert (holdout["n_train"] == N - N // 5).all() and (holdout["n_selection"] == N // 5).all()
    weighted = probe_models({"pretrained": tiny}, "en", TASKS, cache, max_train=N, max_test=N, encoder=encoder,
                            selection="holdout", class_weight="balanced")
    assert len(set(cache.glob("probe-*.json")) - entries) == 2  # one new result entry per protocol
    assert not holdout[["accuracy", "alpha"]].equals(study[["accuracy", "alpha"]])
    assert len(encoder.calls) == calls  # the training and test vectors were cached; holdout needs no others
    # the cached holdout tables are those the protocols compute afresh
    for table, kwargs in [(holdout, {"selection": "holdout"}),
                          (weighted, {"selection": "holdout", "class_weight": "balanced"})]:
        fresh = probe_models({"pretrained": tiny}, "en", TASKS, cache, max_train=N, max_test=N, encoder=encoder,
                             reuse_results=False, **kwargs)
        pd.testing.assert_frame_equal(table, fresh)


def test_feature_list_column_names_the_list_that_labelled_the_probes(study, tiny, cache, encoder):
    assert (study["feature_list"] == STUDY_FEATURES_NAME).all()
    common = dict(max_train=N, max_test=N, encoder=encoder)
    same = probe_models({"pretrained": tiny}, "en", "logic", cache, features=list(reversed(STUDY_FEATURES)), **common)
    assert (same["feature_list"] == "study-text").all()
    differs = probe_models({"pretrained": tiny}, "en", "logic", cache, probe_labels="differs", **common)
    assert (differs["feature_list"] == "differs").all()
    custom = probe_models({"pretrained": tiny}, "en", "logic", cache, features=["Negation", "Conjunction"], **common)
    assert (custom["feature_list"] == "custom").all()
    # the lists labelled different pairs positive
    assert custom["train_positive_rate"].iloc[0] < same["train_positive_rate"].iloc[0]


def test_max_selection_defaults_to_max_train_and_a_given_frame_is_annotated(study, tiny, cache, encoder):
    # the bundled RTE test split passed as a frame (no annotator columns) gives the default protocol's table
    given = probe_models({"pretrained": tiny}, "en", TASKS, cache, max_train=N, max_test=N, encoder=encoder,
                         selection_frame=load("rte", "test"))
    pd.testing.assert_frame_equal(study, given)
    smaller = probe_models({"pretrained": tiny}, "en", "logic", cache, max_train=N, max_test=N, encoder=encoder,
                           max_selection=N // 2)
    assert (smaller["n_selection"] == N // 2).all() and (smaller["n_train"] == N).all()


def gold_as_annotated(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.assign(auto_coarse=frame["coarse"], auto_features=frame["features"])


def test_language_without_a_test_split_falls_back_to_holdout_or_uses_a_given_frame(tiny, tmp_path):
    frame = load("swediagnostics")
    rows = np.random.default_rng(1).permutation(len(frame))
    train, select, test = (gold_as_annotated(frame.iloc[rows[a:b]]) for a, b in [(0, 60), (60, 100), (100, 150)])
    kwargs = dict(train=train, test=test, cache_dir=tmp_path, tasks="logic")
    with pytest.warns(UserWarning, match="no bundled RTE-style test split.*'sv'"):
        fallback = probe_models({"p": tiny}, "sv", **kwargs)
    assert (fallback["selection"] == "holdout").all()
    pd.testing.assert_frame_equal(fallback, probe_models({"p": tiny}, "sv", selection="holdout", **kwargs))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        chosen = probe_models({"p": tiny}, "sv", selection_frame=select, **kwargs)
    assert (chosen["selection"] == "test").all() and (chosen["n_selection"] == 40).all()
    with pytest.raises(ValueError, match="selection must be one of"):
        probe_models({"p": tiny}, "sv", selection="validation", **kwargs)
    with pytest.raises(ValueError, match="class_weight"):
        probe_models({"p": tiny}, "sv", class_weight="auto", **kwargs)


def test_gold_cv_reuses_the_cached_vectors_and_cross_validates_stratified_folds(study, tiny, cache, encoder):
    calls = len(encoder.calls)
    gold = probe_gold_cv({"pretrained": tiny}, "en", TASKS, cache, max_test=N, encoder=encoder)
    assert len(encoder.calls) == calls  # the AX-b vectors of the annotator-trained probes
    assert len(gold) == 2 * (N_LAYERS + 1) and (gold["n_folds"] == 5).all() and (gold["n_pairs"] == N).all()
    test = diagnostic_frame("en", max_test=N, seed=0)
    vectors = layer_vectors(tiny, test, cache)
    y = np.array(["Logic" in c for c in test["coarse"]], int)
    folds = list(StratifiedKFold(5, shuffle=True, random_state=0).split(np.zeros((N, 1)), y))
    for (a_train, a_test), (b_train, b_test) in zip(folds, stratified_folds(y, 5, 0)):
        np.testing.assert_array_equal(a_train, b_train)
        np.testing.assert_array_equal(a_test, b_test)
    for layer in range(N_LAYERS + 1):
        accuracy, balanced = [], []
        for k, (train, held) in enumerate(folds):
            x_train, x_test = standardise(vectors[layer][train], vectors[layer][held])
            fit = fit_probe(x_train, y[train], x_test, y[held], seed=k)
            accuracy.append(np.mean(fit.predictions == y[held]))
            balanced.append(balanced_accuracy_score(y[held], fit.predictions))
        row = gold[(gold["task"] == "logic") & (gold["layer"] == layer)].iloc[0]
        assert row["accuracy"] == pytest.approx(np.mean(accuracy))
        assert row["balanced_accuracy"] == pytest.approx(np.mean(balanced))
        assert row["balanced_accuracy_std"] == pytest.approx(np.std(balanced, ddof=1))
        assert row["majority"] == pytest.approx(max(y.mean(), 1 - y.mean()))
    summary = layer_summary(gold, "balanced_accuracy")
    assert (summary["chance"] == 0.5).all()
    again = probe_gold_cv({"pretrained": tiny}, "en", TASKS, cache, max_test=N, encoder=encoder)
    pd.testing.assert_frame_equal(gold, again)
    assert len(list(cache.glob("gold-cv-*.json"))) == 1
    with pytest.raises(ValueError, match="folds"):
        probe_gold_cv({"pretrained": tiny}, "en", TASKS, cache, max_test=N, folds=1, encoder=encoder)
