"""Evaluate models on a suite: per-case outcomes, failure rates, and their stability across seeds."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from diagnostics.core.errors import UserInputError
from diagnostics.core.schema import ENTAILMENT

from ._predictors import LABELS, TransformersPredictor, predict_many, run_coordinates
from ._suite import Case, load_suite

Predictor = Callable[[Sequence[str], Sequence[str]], Sequence[str]]
RESULT_COLUMNS = ["language", "test", "capability", "type", "case_id", "prediction", "original_prediction",
                  "label", "failed"]
LEVELS = {"test": ["language", "capability", "type", "test"], "capability": ["language", "capability"],
          "language": ["language"]}
RUN_KEYS = ["experiment", "model", "seed", "run"]


def _as_cases(suite) -> list[Case]:
    if isinstance(suite, (str, Path)):
        return load_suite(suite)
    cases = list(suite)
    if not cases:
        raise UserInputError("the suite has no cases")
    return cases


def as_predictor(model, **kwargs) -> Predictor:
    """Turn a model into a predictor: a callable is used as is; a path is loaded with :class:`TransformersPredictor`.

    Parameters
    ----------
    model : callable or str or Path
        ``predict(premises, hypotheses)``, or a model folder / run directory.
    **kwargs
        Passed to :class:`TransformersPredictor` (``batch_size``, ``max_length``, ``precision``).

    Returns
    -------
    callable
        ``predict(premises, hypotheses) -> list of "entailment" / "not_entailment"``.
    """
    if callable(model):
        return model
    return TransformersPredictor(model, **kwargs)


def _predict_pairs(predict: Predictor, pairs: list[tuple[str, str]]) -> dict:
    unique = list(dict.fromkeys(pairs))
    predictions = list(predict([p for p, _ in unique], [h for _, h in unique]))
    if len(predictions) != len(unique):
        raise ValueError(f"the model returned {len(predictions)} predictions for {len(unique)} pairs")
    bad = sorted({str(p) for p in predictions} - set(LABELS))
    if bad:
        raise ValueError(f"the model returned labels {bad[:3]}; expected 'entailment' / 'not_entailment'")
    return dict(zip(unique, predictions))


def _case_pairs(cases: list[Case]) -> list[tuple[str, str]]:
    """Every pair the cases need predicted: each case's pair, and the original pair of INV / DIR cases."""
    pairs = [(c.premise, c.hypothesis) for c in cases]
    return pairs + [(c.original_premise, c.original_hypothesis) for c in cases if c.type != "MFT"]


def _lookup(predicted: dict[tuple[str, str], str]) -> Predictor:
    def predict(premises, hypotheses):
        return [predicted[(p, h)] for p, h in zip(premises, hypotheses)]

    return predict


def run_suite(suite, model, **kwargs) -> pd.DataFrame:
    """Run one model on a suite and judge every case.

    Parameters
    ----------
    suite : list of Case, or str / Path of a suite jsonl
    model : callable or str / Path
        ``predict(premises, hypotheses) -> list of "entailment" / "not_entailment"``, or a model folder / run
        directory loadable by transformers.
    **kwargs
        Passed to :class:`TransformersPredictor` (``batch_size``, ``max_length``).

    Returns
    -------
    pandas.DataFrame
        One row per case: ``language, test, capability, type, case_id, prediction, original_prediction, label,
        failed``. MFT fails when ``prediction != label``; INV when ``prediction != original_prediction``; DIR when
        both predictions are ``entailment`` (a negated hypothesis must not stay entailed).
    """
    cases = _as_cases(suite)
    predict = as_predictor(model, **kwargs)
    predicted = _predict_pairs(predict, _case_pairs(cases))
    rows = []
    for c in cases:
        pred = predicted[(c.premise, c.hypothesis)]
        original = None if c.type == "MFT" else predicted[(c.original_premise, c.original_hypothesis)]
        if c.type == "MFT":
            failed = pred != c.label
        elif c.type == "INV":
            failed = pred != original
        else:
            failed = pred == ENTAILMENT and original == ENTAILMENT
        rows.append((c.language, c.test, c.capability, c.type, c.id, pred, original, c.label, bool(failed)))
    return pd.DataFrame(rows, columns=RESULT_COLUMNS)


def run_sweep(suite, run_dirs, **kwargs) -> pd.DataFrame:
    """Run every model of a sweep on a suite.

    Parameters
    ----------
    suite : list of Case, or a suite file
    run_dirs : iterable of str / Path, or mapping name -> callable / path
        Run directories ``runs/<exp>/<lang>/<model>/seed=<k>/`` (their coordinates become columns), or a
        mapping whose keys name the runs (``{"seed=0": predictor, ...}``; a key ``seed=<k>`` sets ``seed``).
    **kwargs
        Passed to :class:`TransformersPredictor` (``batch_size``, ``max_length``, ``precision``).

    Returns
    -------
    pandas.DataFrame
        :func:`run_suite`'s rows with ``experiment, model, seed, run`` in front (``language`` stays the case's).
    """
    cases = _as_cases(suite)
    items = list(run_dirs.items()) if isinstance(run_dirs, dict) else [(str(p), p) for p in run_dirs]
    models = {name: model for name, model in items}
    folders = [name for name, model in items if isinstance(model, (str, Path))]
    if len(folders) > 1:
        # seeds of one sweep share their frozen lower layers: predict every pair for all of them in one pass
        pairs = list(dict.fromkeys(_case_pairs(cases)))
        predictors = [TransformersPredictor(models[name], **kwargs) for name in folders]
        labels = predict_many(predictors, [p for p, _ in pairs], [h for _, h in pairs])
        for name, predicted in zip(folders, labels):
            models[name] = _lookup(dict(zip(pairs, predicted)))
    frames = []
    for name, model in items:
        coords = run_coordinates(model) if isinstance(model, (str, Path)) else run_coordinates(Path(str(name)))
        frame = run_suite(cases, models[name], **kwargs)
        frame.insert(0, "run", str(name))
        frame.insert(0, "seed", coords["seed"])
        frame.insert(0, "model", coords["model"])
        frame.insert(0, "experiment", coords["experiment"])
        frames.append(frame)
    if not frames:
        raise UserInputError("no runs given")
    return pd.concat(frames, ignore_index=True)


def failure_rates(results: pd.DataFrame, by: str = "test") -> pd.DataFrame:
    """Failure rate per test, capability or language (per run when ``results`` has run columns).

    Parameters
    ----------
    results : DataFrame
        From :func:`run_suite` or :func:`run_sweep`.
    by : {"test", "capability", "language"}

    Returns
    -------
    DataFrame
        Group keys, ``n`` (cases), ``failures`` and ``failure_rate``.
    """
    if by not in LEVELS:
        raise ValueError(f"by must be one of {', '.join(LEVELS)}, got {by!r}")
    keys = [k for k in RUN_KEYS if k in results.columns] + LEVELS[by]
    grouped = results.groupby(keys, dropna=False, sort=True)["failed"]
    out = grouped.agg(n="size", failures="sum").reset_index()
    out["failure_rate"] = out["failures"] / out["n"]
    return out


def rs_corr(vectors: np.ndarray) -> tuple[float, int]:
    """Mean pairwise Pearson correlation between the rows of ``vectors`` (one row per seed).

    Pairs where either row is constant (Pearson undefined) are skipped.

    Parameters
    ----------
    vectors : array_like, shape (n_seeds, n_groups)
        One failure-rate vector per seed.

    Returns
    -------
    (float, int)
        The mean correlation (NaN when no pair is defined) and the number of pairs it averages.
    """
    vectors = np.asarray(vectors, dtype=float)
    values = []
    for i in range(len(vectors)):
        for j in range(i + 1, len(vectors)):
            a, b = vectors[i] - vectors[i].mean(), vectors[j] - vectors[j].mean()
            denom = np.sqrt((a * a).sum() * (b * b).sum())
            if denom > 0:
                values.append(float((a * b).sum() / denom))
    return (float(np.mean(values)) if values else float("nan")), len(values)


@dataclass
class SeedSummary:
    """Failure rates across the seeds of a sweep.

    Parameters
    ----------
    rates : DataFrame
        Per group (``by`` level, per experiment / model): ``mean``, ``std`` (ddof=1), ``min``, ``max``,
        ``n_seeds``.
    stability : DataFrame
        Per language (per experiment / model): ``rs_corr`` (mean pairwise Pearson between the seeds'
        failure-rate vectors over the groups), ``n_pairs``, ``mean_std`` (mean of the per-group σ),
        ``n_seeds``, ``n_groups``.
    per_seed : DataFrame
        :func:`failure_rates` at the same level, one row per seed and group.
    """

    rates: pd.DataFrame
    stability: pd.DataFrame
    per_seed: pd.DataFrame


def summarise_across_seeds(results: pd.DataFrame, by: str = "test") -> SeedSummary:
    """Mean, σ and RS corr of failure rates over the seeds in ``results`` (from :func:`run_sweep`).

    Parameters
    ----------
    results : DataFrame
        Needs a ``seed`` column (several runs); ``experiment`` and ``model`` separate settings.
    by : {"test", "capability"}
        The vector each seed contributes (failure rate per test, or per capability), within a language.

    Returns
    -------
    SeedSummary
    """
    if "seed" not in results.columns:
        raise ValueError("results have no 'seed' column; use run_sweep over several run directories")
    if by not in ("test", "capability"):
        raise ValueError(f"by must be 'test' or 'capability', got {by!r}")
    per_seed = failure_rates(results, by=by)
    setting = [k for k in ("experiment", "model") if k in per_seed.columns and per_seed[k].notna().any()]
    groups = LEVELS[by]
    keys = setting + groups
    rates = (per_seed.groupby(keys, dropna=False, sort=True)["failure_rate"]
             .agg(mean="mean", std=lambda s: s.std(ddof=1), min="min", max="max", n_seeds="size").reset_index())
    rows = []
    for key, block in per_seed.groupby(setting + ["language"], dropna=False, sort=True):
        matrix = block.pivot_table(index="seed", columns=groups[1:], values="failure_rate", aggfunc="mean")
        matrix = matrix.dropna(axis=1)
        corr, n_pairs = rs_corr(matrix.to_numpy())
        key = key if isinstance(key, tuple) else (key,)
        std = matrix.std(axis=0, ddof=1) if len(matrix) > 1 else pd.Series(dtype=float)
        rows.append(dict(zip(setting + ["language"], key), rs_corr=corr, n_pairs=n_pairs,
                         mean_std=float(std.mean()) if len(std) else float("nan"), n_seeds=len(matrix),
                         n_groups=matrix.shape[1]))
    return SeedSummary(rates=rates, stability=pd.DataFrame(rows), per_seed=per_seed)
