"""Slices by feature: a model's MCC and accuracy on the pairs that show a feature against the pairs that do not.

The features of an example come from outside the predictions table: the rule annotator's (any NLI test set with
gold labels in a language that has annotator rules; :func:`diagnostics.annotate.annotate_cached` annotates each
pair once), or a diagnostic set's own categories. Per setting (experiment x language x model x dataset) and
feature, every seed is scored on the pairs *with* the feature and on the pairs *without* it (MCC from
:func:`~diagnostics.stats.mcc_from_counts`, 0 where undefined), then summarised over seeds: mean, σ (sample standard
deviation, ``ddof=1``), and how many pairs of each side flip (their seeds are not unanimous). Pure numpy / pandas.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..core.schema import ENTAILMENT, NOT_ENTAILMENT
from ..core.taxonomy import COARSE_OF, FINE
from ._matrix import setting_matrices
from ._mcc import binary_counts, mcc_from_counts

#: The sides of a slice: the pairs with the feature and the pairs without it.
SIDES = ("with", "without")


@dataclass
class FeatureSlices:
    """Feature slices of a predictions table.

    Parameters
    ----------
    table : pandas.DataFrame
        One row per setting x feature: the setting keys, ``feature``, ``coarse``, ``n_with``, ``n_without``,
        ``n_seeds``, and for each side (``with`` / ``without``): ``mcc_<side>`` (mean over seeds), ``mcc_<side>_sd``
        (σ over seeds, ``ddof=1``; NaN with one seed), ``accuracy_<side>``, ``accuracy_<side>_sd``,
        ``flipping_<side>`` (pairs whose seeds disagree) and ``flip_share_<side>``; and ``mcc_delta`` (with -
        without).
    per_seed : pandas.DataFrame
        One row per setting x feature x seed x side: ``n``, ``mcc``, ``accuracy``.
    flips : pandas.DataFrame
        The flipping pairs of each feature: setting keys, ``feature``, ``example_id``, ``label``, ``n_seeds``,
        ``n_entailment``, ``flip_rate``.
    """

    table: pd.DataFrame
    per_seed: pd.DataFrame
    flips: pd.DataFrame


def feature_matrix(annotations: pd.DataFrame, ids, column: str = "auto_features") -> tuple[list[str], np.ndarray]:
    """Indicator matrix of the features of the examples ``ids``.

    Parameters
    ----------
    annotations : pandas.DataFrame
        ``id`` and ``column`` (a list of fine feature names per example, e.g. from
        :func:`diagnostics.annotate.annotate_cached`).
    ids : array_like of str
        The examples, in the matrix's row order.
    column : str
        The column of feature lists.

    Returns
    -------
    names : list of str
        Features shown by at least one of the examples, in taxonomy order (names outside it after, sorted).
    matrix : numpy.ndarray of bool, shape (len(ids), len(names))

    Raises
    ------
    KeyError
        Example ids the annotations do not have, or a missing column.
    """
    for needed in ("id", column):
        if needed not in annotations.columns:
            raise KeyError(f"annotations need the columns id and {column}, found {list(annotations.columns)}")
    index = pd.Index(annotations["id"].astype(str))
    wanted = np.asarray(ids, dtype=str)
    position = index.get_indexer(wanted)
    if (position < 0).any():
        raise KeyError(f"example ids without annotations: {list(wanted[position < 0][:5])}")
    lists = [list(annotations[column].iloc[p]) if annotations[column].iloc[p] is not None else [] for p in position]
    present = {name for row in lists for name in row}
    names = [n for n in FINE if n in present] + sorted(present - set(FINE))
    column_of = {name: j for j, name in enumerate(names)}
    matrix = np.zeros((len(wanted), len(names)), dtype=bool)
    for i, row in enumerate(lists):
        for name in row:
            matrix[i, column_of[name]] = True
    return names, matrix


def _annotations_for(annotations: pd.DataFrame | Mapping, dataset: str) -> pd.DataFrame:
    if isinstance(annotations, Mapping):
        if dataset not in annotations:
            raise KeyError(f"no annotations for dataset {dataset!r} (have {', '.join(map(str, annotations))})")
        return annotations[dataset]
    return annotations


def _sample_sd(values: np.ndarray) -> np.ndarray:
    """σ over the last axis (``ddof=1``); NaN with fewer than two values."""
    if values.shape[-1] < 2:
        return np.full(values.shape[:-1], np.nan)
    return values.std(axis=-1, ddof=1)


def feature_slices(predictions: pd.DataFrame, annotations: pd.DataFrame | Mapping[str, pd.DataFrame], *,
                   column: str = "auto_features", validate: bool = True) -> FeatureSlices:
    """Score every setting's seeds on the pairs with and without each feature.

    Parameters
    ----------
    predictions : pandas.DataFrame
        The predictions table (gold labels needed; see :mod:`diagnostics.stats._table`).
    annotations : pandas.DataFrame or mapping
        ``id`` and ``column`` per example of the set (one table for every dataset of ``predictions``), or dataset
        name -> such a table.
    column : str
        The column of feature lists (``auto_features`` of the annotator; ``features`` for a diagnostic set's own
        categories).
    validate : bool
        Validate the table's format first.

    Returns
    -------
    FeatureSlices
        The per-feature table, the per-seed scores and the flipping pairs.

    Raises
    ------
    KeyError
        Examples of the table without annotations.
    """
    rows, seeds_rows, flip_rows = [], [], []
    for m in setting_matrices(predictions, validate=validate):
        names, members = feature_matrix(_annotations_for(annotations, str(m.setting.get("dataset"))), m.ids, column)
        if not names:
            continue
        valid = m.valid
        pred = np.where(valid, m.pred, 0)
        both = np.concatenate([members, ~members], axis=1)
        counts = binary_counts(m.gold, pred, both, valid)
        tp, fp, fn, tn = (counts[c] for c in ("tp", "fp", "fn", "tn"))
        n = tp + fp + fn + tn
        mcc, _ = mcc_from_counts(tp, fp, fn, tn)
        with np.errstate(invalid="ignore", divide="ignore"):
            accuracy = (tp + tn) / n
        mcc, accuracy = np.where(n > 0, mcc, np.nan), np.where(n > 0, accuracy, np.nan)
        k = ((m.pred == 1) & valid).sum(axis=1)
        voters = valid.sum(axis=1)
        flipping = (k > 0) & (k < voters)
        with np.errstate(invalid="ignore", divide="ignore"):
            rate = np.where(voters >= 2, 2.0 * k * (voters - k) / (voters * (voters - 1.0)), np.nan)
        F = len(names)
        labels = np.array([NOT_ENTAILMENT, ENTAILMENT], dtype=object)
        for j, name in enumerate(names):
            row = {**m.setting, "feature": name, "coarse": COARSE_OF.get(name), "n_seeds": len(m.runs)}
            for s, side in enumerate(SIDES):
                c = j + s * F
                inside = both[:, c]
                row[f"n_{side}"] = int(inside.sum())
                row[f"mcc_{side}"] = float(np.nanmean(mcc[c])) if np.isfinite(mcc[c]).any() else np.nan
                row[f"mcc_{side}_sd"] = float(_sample_sd(mcc[c][np.isfinite(mcc[c])]))
                row[f"accuracy_{side}"] = (float(np.nanmean(accuracy[c])) if np.isfinite(accuracy[c]).any()
                                           else np.nan)
                row[f"accuracy_{side}_sd"] = float(_sample_sd(accuracy[c][np.isfinite(accuracy[c])]))
                row[f"flipping_{side}"] = int((flipping & inside).sum())
                row[f"flip_share_{side}"] = float((flipping & inside).sum() / inside.sum()) if inside.any() \
                    else np.nan
                for r, run in enumerate(m.runs):
                    seeds_rows.append({**m.setting, "feature": name, "seed": run, "side": side,
                                       "n": int(n[c, r]), "mcc": float(mcc[c, r]), "accuracy": float(accuracy[c, r])})
            row["mcc_delta"] = row["mcc_with"] - row["mcc_without"]
            rows.append(row)
            for i in np.flatnonzero(flipping & members[:, j]):
                flip_rows.append({**m.setting, "feature": name, "example_id": m.ids[i],
                                  "label": labels[int(m.gold[i])], "n_seeds": int(voters[i]),
                                  "n_entailment": int(k[i]), "flip_rate": float(rate[i])})
    return FeatureSlices(pd.DataFrame(rows), pd.DataFrame(seeds_rows), pd.DataFrame(flip_rows))
