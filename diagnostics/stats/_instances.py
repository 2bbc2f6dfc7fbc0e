"""Instance-level seed stability: which examples flip between seeds, and which drive a category's σ.

Per-category σ (:func:`~diagnostics.stats.stability`) says *that* a category is unstable across seeds; this module
says *which examples* make it so.

Definitions (one setting = experiment x language x model x dataset; its runs are the seeds, and in nested designs
every (pretrain_seed, seed) run counts as one seed, as in :func:`~diagnostics.stats.stability`):

* **flip rate** of an example: the share of *pairs of seeds* whose predictions for it differ. With ``n`` seeds
  predicting it and ``k`` of them predicting entailment it is ``2 k (n - k) / (n (n - 1))``: 0 when every seed
  agrees, 1 for two seeds that disagree, 2/3 for three seeds of which one dissents, 0.6 at most for six seeds
  (three against three). It is the chance that two different seeds drawn at random disagree, i.e. one minus the
  per-example agreement ``P_i`` of Fleiss' kappa, so its mean over a category's examples is one minus the
  category's pairwise agreement (:func:`~diagnostics.stats.pairwise_agreement`). NaN with fewer than two seeds.
* **minority share**: the share of seeds disagreeing with the majority, ``min(k, n - k) / n`` (0.5 on a tie).
* an example **flips** when its seeds are not unanimous (flip rate > 0).
* **Δσ** of an example in a category: σ (sample standard deviation over seeds, ``ddof=1``) of the category's
  per-seed MCC minus σ of the per-seed MCC recomputed without that example (leave one example out). A positive
  Δσ means the example raises the category's σ: the examples with the largest Δσ drive it.

Functions: :func:`instance_stability` (per example), :func:`category_instability` (per category) and
:func:`sigma_drivers` (per category x example, leave-one-example-out). Pure numpy / pandas.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping

import numpy as np
import pandas as pd

from ..core.schema import ENTAILMENT, NOT_ENTAILMENT
from ._categories import category_matrix, dataset_for, dataset_frame
from ._mcc import binary_counts, mcc_from_counts
from ._matrix import SettingMatrix, setting_matrices
from ._table import SETTING_KEYS


def flip_rate(n_entailment, n_seeds) -> np.ndarray:
    """Compute the flip rate: the share of seed pairs that disagree, from per-example counts.

    Parameters
    ----------
    n_entailment : array_like of int
        Seeds predicting entailment, per example.
    n_seeds : array_like of int
        Seeds predicting the example at all.

    Returns
    -------
    numpy.ndarray of float
        ``2 k (n - k) / (n (n - 1))``; NaN where fewer than two seeds predict the example.
    """
    k = np.asarray(n_entailment, dtype=np.float64)
    n = np.asarray(n_seeds, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n >= 2, 2.0 * k * (n - k) / (n * (n - 1.0)), np.nan)


def _sample_std(values: np.ndarray, axis: int = -1) -> np.ndarray:
    """Sample standard deviation (ddof=1) ignoring NaN; NaN where fewer than two values remain."""
    present = ~np.isnan(values)
    count = present.sum(axis=axis)
    filled = np.where(present, values, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = filled.sum(axis=axis) / count
        dev = np.where(present, values - np.expand_dims(mean, axis), 0.0)
        var = (dev * dev).sum(axis=axis) / (count - 1)
    return np.where(count >= 2, np.sqrt(var), np.nan)


def instance_stability(predictions: pd.DataFrame, *, validate: bool = True) -> pd.DataFrame:
    """Per example and setting: every seed's prediction, the flip rate and the spread of the probability.

    Parameters
    ----------
    predictions : pandas.DataFrame
        The predictions table (see :mod:`diagnostics.stats._table`); ``probability`` is optional.
    validate : bool
        Validate the table's format first.

    Returns
    -------
    pandas.DataFrame
        One row per setting x example, in table order: the setting keys, ``example_id, label``, ``seeds`` (tuple
        of the setting's seeds, sorted), ``predictions`` (tuple of labels in that order, None where a seed has no
        prediction), ``probabilities`` (tuple of floats, NaN where missing; only with a ``probability`` column),
        ``n_seeds`` (seeds predicting the example), ``n_entailment``, ``majority`` (the majority label, None on a
        tie), ``flip_rate`` (share of seed pairs that disagree, see the module docstring), ``minority_share``
        (share of seeds disagreeing with the majority), ``flips`` (seeds not unanimous), ``accuracy`` (share of
        seeds that are right) and, with probabilities, ``mean_probability`` and ``probability_std`` (sample
        standard deviation over seeds, ``ddof=1``).
    """
    parts = []
    for m in setting_matrices(predictions, validate=validate):
        valid = m.valid
        n = valid.sum(axis=1)
        k = (m.pred == 1).sum(axis=1)
        correct = (valid & (m.pred == m.gold[:, None])).sum(axis=1)
        labels = np.array([NOT_ENTAILMENT, ENTAILMENT, None], dtype=object)
        as_labels = labels[np.where(valid, m.pred, 2)]
        frame = pd.DataFrame({**{key: [value] * len(m.ids) for key, value in m.setting.items()},
                              "example_id": m.ids, "label": labels[m.gold.astype(int)]})
        frame["seeds"] = [tuple(m.runs)] * len(m.ids)
        frame["predictions"] = [tuple(row) for row in as_labels]
        if m.probability is not None:
            frame["probabilities"] = [tuple(float(x) for x in row) for row in m.probability]
        majority = np.where(2 * k > n, ENTAILMENT, np.where(2 * k < n, NOT_ENTAILMENT, None))
        rate = flip_rate(k, n)
        with np.errstate(invalid="ignore", divide="ignore"):
            frame = frame.assign(n_seeds=n.astype("int64"), n_entailment=k.astype("int64"),
                                 majority=majority.astype(object), flip_rate=rate,
                                 minority_share=np.minimum(k, n - k) / n, flips=(k > 0) & (k < n),
                                 accuracy=correct / n)
        if m.probability is not None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # an example no seed scored: NaN
                frame["mean_probability"] = np.nanmean(m.probability, axis=1)
            frame["probability_std"] = _sample_std(m.probability, axis=1)
        parts.append(frame)
    return pd.concat(parts, ignore_index=True)


def _category_arrays(m: SettingMatrix, dataset, level: str) -> tuple[list[str], np.ndarray]:
    names, members = category_matrix(dataset_frame(dataset_for(dataset, str(m.setting.get("dataset")))), level,
                                      ids=m.ids)
    return names, members


def _setting_category_stats(m: SettingMatrix, names: list[str], members: np.ndarray):
    """Per-seed MCC per category (NaN where the seed has no example of it), σ, and the per-example Δσ."""
    valid = m.valid
    pred = np.where(valid, m.pred, 0)
    counts = binary_counts(m.gold, pred, members, valid)
    tp, fp, fn, tn = (counts[c] for c in ("tp", "fp", "fn", "tn"))
    present = (tp + fp + fn + tn) > 0
    mcc, _ = mcc_from_counts(tp, fp, fn, tn)
    mcc = np.where(present, mcc, np.nan)
    sigma = _sample_std(mcc, axis=1)
    # leave one example out: every member's own confusion cell, per run, taken off the category's counts
    gold = m.gold[:, None].astype(bool)
    cells = {"tp": valid & gold & (pred == 1), "fp": valid & ~gold & (pred == 1),
             "fn": valid & gold & (pred == 0), "tn": valid & ~gold & (pred == 0)}
    drivers = []
    for c in range(len(names)):
        rows = np.flatnonzero(members[:, c])
        minus = {key: counts[key][c][None, :] - cells[key][rows] for key in cells}
        left = sum(minus.values()) > 0
        loo, _ = mcc_from_counts(minus["tp"], minus["fp"], minus["fn"], minus["tn"])
        without = _sample_std(np.where(left, loo, np.nan), axis=1)
        drivers.append((rows, without))
    return mcc, sigma, drivers


def sigma_drivers(predictions: pd.DataFrame, dataset: str | pd.DataFrame | Mapping | None = None, *,
                  level: str = "fine", validate: bool = True) -> pd.DataFrame:
    """Leave-one-example-out change of each category's σ of per-seed MCC: the examples that drive σ.

    Parameters
    ----------
    predictions : pandas.DataFrame
        The predictions table.
    dataset : str, DataFrame or mapping, optional
        Where categories come from, as in :func:`~diagnostics.stats.category_scores`: ``None`` loads each value of
        the ``dataset`` column; a name or a table (``id`` + ``features``) for every row; a mapping
        ``dataset name -> name or table``.
    level : {"fine", "coarse"}
        Category level.
    validate : bool
        Validate the table's format first.

    Returns
    -------
    pandas.DataFrame
        One row per setting x category x member example: setting keys, ``category, example_id, sigma`` (σ of the
        category's per-seed MCC, ``ddof=1``), ``sigma_without`` (the same without the example; NaN when fewer than
        two seeds keep an example of the category), ``delta_sigma`` (``sigma - sigma_without``: positive when the
        example raises σ), ``flip_rate``. Sorted by ``delta_sigma`` (largest first) within each category.
    """
    parts = []
    for m in setting_matrices(predictions, validate=validate):
        names, members = _category_arrays(m, dataset, level)
        if not names:
            continue
        _, sigma, drivers = _setting_category_stats(m, names, members)
        rate = flip_rate((m.pred == 1).sum(axis=1), m.valid.sum(axis=1))
        for c, (rows, without) in enumerate(drivers):
            frame = pd.DataFrame({**{key: [value] * len(rows) for key, value in m.setting.items()},
                                  "category": names[c], "example_id": m.ids[rows], "sigma": sigma[c],
                                  "sigma_without": without, "delta_sigma": sigma[c] - without,
                                  "flip_rate": rate[rows]})
            parts.append(frame.sort_values("delta_sigma", ascending=False, kind="stable"))
    if not parts:
        return pd.DataFrame(columns=[*SETTING_KEYS, "category", "example_id", "sigma", "sigma_without",
                                     "delta_sigma", "flip_rate"])
    return pd.concat(parts, ignore_index=True)


def category_instability(predictions: pd.DataFrame, dataset: str | pd.DataFrame | Mapping | None = None, *,
                         level: str = "fine", validate: bool = True) -> pd.DataFrame:
    """Per setting and category: the share of flipping examples, σ of per-seed MCC and the example driving it.

    Parameters
    ----------
    predictions : pandas.DataFrame
        The predictions table.
    dataset : str, DataFrame or mapping, optional
        Where categories come from (see :func:`sigma_drivers`).
    level : {"fine", "coarse"}
        Category level.
    validate : bool
        Validate the table's format first.

    Returns
    -------
    pandas.DataFrame
        One row per setting x category (categories with at least one example): setting keys, ``category, n``
        (examples), ``n_seeds``, ``n_flipping`` (examples whose seeds are not unanimous), ``flip_share``
        (``n_flipping / n``), ``mean_flip_rate``, ``mean`` and ``sigma`` of the per-seed MCC (``ddof=1``, as
        :func:`~diagnostics.stats.stability`), ``top_driver`` (id of the example with the largest Δσ) and
        ``top_delta_sigma``. Sorted by ``sigma``, largest first, within each setting.
    """
    rows = []
    for m in setting_matrices(predictions, validate=validate):
        names, members = _category_arrays(m, dataset, level)
        if not names:
            continue
        mcc, sigma, drivers = _setting_category_stats(m, names, members)
        k, n = (m.pred == 1).sum(axis=1), m.valid.sum(axis=1)
        rate = flip_rate(k, n)
        flips = (k > 0) & (k < n)
        for c, name in enumerate(names):
            member = members[:, c]
            member_rows, without = drivers[c]
            delta = sigma[c] - without
            top = int(np.nanargmax(delta)) if np.isfinite(delta).any() else None
            with np.errstate(invalid="ignore"):
                mean = float(np.nanmean(mcc[c])) if np.isfinite(mcc[c]).any() else np.nan
            rows.append({**m.setting, "category": name, "n": int(member.sum()),
                         "n_seeds": int(np.isfinite(mcc[c]).sum()), "n_flipping": int(flips[member].sum()),
                         "flip_share": float(flips[member].mean()),
                         "mean_flip_rate": float(np.nanmean(rate[member])) if np.isfinite(rate[member]).any()
                         else np.nan,
                         "mean": mean, "sigma": float(sigma[c]),
                         "top_driver": None if top is None else str(m.ids[member_rows[top]]),
                         "top_delta_sigma": np.nan if top is None else float(delta[top])})
    frame = pd.DataFrame(rows)
    if frame.empty:
        return frame
    keys = [k for k in SETTING_KEYS if k in frame.columns]
    order = frame.groupby(keys, sort=False).ngroup()
    return (frame.assign(_order=order).sort_values(["_order", "sigma"], ascending=[True, False], kind="stable")
            .drop(columns="_order").reset_index(drop=True))


__all__ = ["SettingMatrix", "category_instability", "flip_rate", "instance_stability", "setting_matrices",
           "sigma_drivers"]
