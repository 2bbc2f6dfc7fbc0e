"""Probes cross-validated on the diagnostic set's gold tags: no annotator involved.

The study's probes learn from rule-annotated RTE-style pairs and are scored on the gold-tagged diagnostic set, so
their score mixes what a layer encodes with how well the annotator agrees with the gold tags. Training and testing
the same logistic-regression probe on the gold tags themselves (stratified k-fold) isolates the first: a layer
that encodes a category lets a probe clear the chance level on unseen gold pairs.
"""

from __future__ import annotations

import warnings
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd

from ._layers import fit_layers
from ._linear import ALPHAS, fit_probe, majority_accuracy, standardise
from ._tasks import DEFAULT_TASKS, diagnostic_frame, parse_tasks, subsample, task_labels

GOLD_CV_COLUMNS = ["model", "seed", "language", "task", "layer", "accuracy", "accuracy_std", "balanced_accuracy",
                   "balanced_accuracy_std", "macro_f1", "majority", "alpha", "n_folds", "n_pairs", "positive_rate"]


def stratified_folds(labels: np.ndarray, folds: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Seeded stratified k-fold (train, test) index pairs (:class:`sklearn.model_selection.StratifiedKFold`).

    Parameters
    ----------
    labels : numpy.ndarray
        0/1 labels (a class with fewer members than ``folds`` is spread over as many folds as it has members).
    folds : int
        At least 2 and at most ``len(labels)``.
    seed : int
        Seed of the shuffling.

    Returns
    -------
    list of (numpy.ndarray, numpy.ndarray)
        One (train indices, test indices) pair per fold.
    """
    from sklearn.model_selection import StratifiedKFold

    labels = np.asarray(labels)
    if not 2 <= folds <= len(labels):
        raise ValueError(f"folds must be in [2, {len(labels)}] for {len(labels)} pairs, found {folds}")
    splitter = StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "the least populated class has only k members"
        return list(splitter.split(np.zeros((len(labels), 1)), labels))


def cv_probe(vectors: np.ndarray, labels: np.ndarray, folds: list[tuple[np.ndarray, np.ndarray]], *,
             alphas: tuple[float, ...] = ALPHAS, held_out: float = 0.2, seed: int = 0, max_iter: int = 300,
             class_weight: str | None = None) -> dict:
    """Cross-validate one probe on one layer's pair vectors.

    In each fold the features are standardised on the training folds and the probe's L2 strength is chosen on a
    seeded ``held_out`` fraction of them (the test fold is never seen before scoring).

    Parameters
    ----------
    vectors : numpy.ndarray
        ``[n, d]`` pair vectors.
    labels : numpy.ndarray
        0/1 gold labels.
    folds : list of (numpy.ndarray, numpy.ndarray)
        From :func:`stratified_folds`.
    alphas : tuple of float
        L2 strengths tried (see :func:`diagnostics.probe.fit_probe`).
    held_out : float
        Fraction of the training pairs held out to choose alpha.
    seed : int
        Seeds the held-out split inside the training folds (``seed + fold``).
    max_iter : int
    class_weight : {None, "balanced"}
        See :func:`diagnostics.probe.fit_probe`.

    Returns
    -------
    dict
        ``accuracy``, ``balanced_accuracy``, ``macro_f1`` (means over folds), ``accuracy_std``,
        ``balanced_accuracy_std`` (sample standard deviations over folds), ``alpha`` (the most often chosen;
        ties to the stronger), ``n_folds``.
    """
    labels = np.asarray(labels)
    fits = []
    for k, (train, test) in enumerate(folds):
        x_train, x_test = standardise(vectors[train], vectors[test])
        fits.append(fit_probe(x_train, labels[train], x_test, labels[test], alphas=alphas, held_out=held_out,
                              seed=seed + k, max_iter=max_iter, class_weight=class_weight))
    accuracy = np.array([f.accuracy for f in fits])
    balanced = np.array([f.balanced_accuracy for f in fits])
    chosen = [f.alpha for f in fits if not np.isnan(f.alpha)]
    alpha = max(set(chosen), key=lambda a: (chosen.count(a), a)) if chosen else float("nan")
    return {"accuracy": float(accuracy.mean()), "accuracy_std": float(accuracy.std(ddof=1)),
            "balanced_accuracy": float(balanced.mean()), "balanced_accuracy_std": float(balanced.std(ddof=1)),
            "macro_f1": float(np.mean([f.macro_f1 for f in fits])), "alpha": float(alpha), "n_folds": len(fits)}


def gold_cv_layers(vectors: np.ndarray, labels: dict[str, np.ndarray], *, folds: int = 5, seed: int = 0,
                   alphas: tuple[float, ...] = ALPHAS, held_out: float = 0.2, max_iter: int = 300,
                   class_weight: str | None = None, memo: dict | None = None, n_jobs: int = 1) -> pd.DataFrame:
    """:func:`cv_probe` for every task and layer (the same folds for every layer of a task).

    Parameters
    ----------
    vectors : numpy.ndarray
        ``[layers, n, d]`` pair vectors of the gold-tagged pairs.
    labels : dict
        Task name -> 0/1 gold labels.
    folds : int
        Stratified folds, seeded by ``seed``.
    seed : int
        Seeds the folds and the held-out splits.
    alphas : tuple of float
        L2 strengths tried (see :func:`diagnostics.probe.fit_probe`).
    held_out : float
        Fraction of the training pairs held out to choose alpha.
    max_iter : int
    class_weight : {None, "balanced"}
        See :func:`diagnostics.probe.fit_probe`.
    memo : dict, optional
        Shared across calls with the same labels and settings: a layer bit-identical to one seen before
        reuses its rows.
    n_jobs : int
        Processes fitting distinct layers at once (the rows are the same whatever it is).

    Returns
    -------
    pandas.DataFrame
        One row per (task, layer): the columns of :data:`GOLD_CV_COLUMNS` from ``task`` on.
    """
    splits = {task: stratified_folds(y, folds, seed) for task, y in labels.items()}
    fit = partial(_gold_layer, labels=labels, splits=splits, alphas=alphas, held_out=held_out, seed=seed,
                  max_iter=max_iter, class_weight=class_weight)
    inputs = [(vectors[layer],) for layer in range(vectors.shape[0])]
    return pd.DataFrame(fit_layers(inputs, fit, memo=memo, n_jobs=n_jobs))


def _gold_layer(layer: int, vectors: np.ndarray, *, labels: dict, splits: dict, **settings) -> list[dict]:
    """Every task's cross-validated row on one layer's pair vectors."""
    return [{"task": task, "layer": layer, **cv_probe(vectors, y, splits[task], **settings),
             "majority": majority_accuracy(y), "n_pairs": len(y), "positive_rate": float(np.mean(y))}
            for task, y in labels.items()]


def probe_gold_cv(models: dict[str, str | Path], lang: str, tasks=DEFAULT_TASKS,
                  cache_dir: str | Path | None = None, *, folds: int = 5, seed: int = 0,
                  max_test: int | None = None, test: pd.DataFrame | None = None, test_column: str | None = None,
                  alphas: tuple[float, ...] = ALPHAS, held_out: float = 0.2, max_iter: int = 300,
                  class_weight: str | None = None, pooling: str = "mean", max_length: int = 128,
                  dtype: str = "float16", batch_size: int = 64, progress: bool = False, encoder=None,
                  reuse_results: bool = True, precision: str = "fp32", n_jobs: int = 1) -> pd.DataFrame:
    """Probe every layer of each model with k-fold cross-validation on the diagnostic set's gold tags.

    The pairs are the diagnostic set that :func:`diagnostics.probe.probe_models` scores on (same ``max_test``
    and ``seed``: same pairs, so its cached sentence vectors are reused and no model runs). Each fold trains the
    probe of :func:`diagnostics.probe.fit_probe` on the other folds' gold labels (L2 strength chosen on
    ``held_out`` of them) and scores it on its own.

    Parameters
    ----------
    models : dict
        Label -> model folder or fine-tuned run folder (see :func:`diagnostics.probe.probe_models`).
    lang : str
        ``en``, ``ru``, ``sv`` (or any language when ``test`` is given).
    tasks : str or sequence of str
        Coarse or fine category names/slugs.
    cache_dir : str or Path, optional
        Vector and result cache (results as ``gold-cv-<key>.json``).
    folds : int
        Stratified folds (default 5).
    seed : int
        Seeds the subset, the folds and the held-out splits inside them.
    max_test : int, optional
        Seeded subset of the diagnostic set.
    test : pandas.DataFrame, optional
        A gold-tagged frame instead of the bundled diagnostic set.
    test_column : str, optional
        Its label list column; default ``coarse`` / ``features`` by task level.
    alphas : tuple of float
        L2 strengths tried (see :func:`diagnostics.probe.fit_probe`).
    held_out : float
        Fraction of the training pairs held out to choose alpha.
    max_iter : int
    class_weight : {None, "balanced"}
        See :func:`diagnostics.probe.fit_probe`.
    pooling : {"mean", "cls"}
        Pooling of the sentence vectors (see :func:`diagnostics.probe.probe_models`).
    max_length : int
        Maximum tokens per sentence.
    dtype : {"float16", "float32"}
        Storage dtype of the cached vectors.
    batch_size : int
        Sentences per forward pass.
    progress : bool
    encoder : callable, optional
        ``encoder(folder) -> (model, tokenizer)`` instead of :func:`diagnostics.probe.load_encoder`.
    reuse_results : bool
        Reuse cached result tables (see :func:`diagnostics.probe.probe_models`).
    precision : {"fp32", "bf16"}
        Compute precision of the encoders.
    n_jobs : int
        Processes fitting the probes of distinct layers at once (joblib; the table is the same whatever it is).

    Returns
    -------
    pandas.DataFrame
        Columns :data:`GOLD_CV_COLUMNS`: one row per (model, task, layer); ``accuracy`` / ``balanced_accuracy``
        / ``macro_f1`` are means over folds, ``majority`` the majority share of all pairs.
    """
    from ._runner import label_tables, run_cached

    if not models:
        raise ValueError("no model to probe")
    if class_weight not in (None, "balanced"):
        raise ValueError(f"class_weight must be None or 'balanced', found {class_weight!r}")
    task_list = parse_tasks(tasks)
    test = diagnostic_frame(lang, max_test=max_test, seed=seed) if test is None else subsample(test, max_test, seed)
    labels = {t.name: task_labels(test, t, test_column or t.columns(gold=True)) for t in task_list}
    if not 2 <= folds <= len(test):
        raise ValueError(f"folds must be in [2, {len(test)}] for {len(test)} pairs, found {folds}")
    settings = {"protocol": "gold-cv", "folds": folds, "alphas": [float(a) for a in alphas], "held_out": held_out,
                "seed": seed, "max_iter": max_iter, "class_weight": class_weight}

    def fit(vectors: dict, memo: dict, label: str) -> pd.DataFrame:
        return gold_cv_layers(vectors["test"], labels, folds=folds, seed=seed, alphas=alphas, held_out=held_out,
                              max_iter=max_iter, class_weight=class_weight, memo=memo, n_jobs=n_jobs)

    tables = run_cached(models, {"test": (test, labels)}, settings, fit, cache_dir=cache_dir,
                        reuse_results=reuse_results,
                        extraction=dict(pooling=pooling, max_length=max_length, dtype=dtype, precision=precision),
                        batch_size=batch_size, progress=progress, encoder=encoder, prefix="gold-cv")
    return label_tables(models, tables, lang)[GOLD_CV_COLUMNS]
