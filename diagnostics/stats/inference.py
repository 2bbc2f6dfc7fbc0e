"""Confidence intervals and two-setting tests on top of Multi-Bootstrap samples, as tidy DataFrames.

Conventions follow the MultiBERTs reference code (``report_ci``): percentile intervals, the p-value of
H0: delta <= 0 is the share of bootstrap deltas <= 0, and P(theta > threshold) is the share of samples above
the threshold.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..schema import ENTAILMENT
from .bootstrap import Metric, multibootstrap, multibootstrap_pair, point_estimate
from .categories import category_matrix, dataset_frame
from .scores import ALL, OVERALL
from .table import SETTING_KEYS


def _interval(samples: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), found {level!r}")
    low, high = np.nanquantile(samples, [(1 - level) / 2, 1 - (1 - level) / 2], axis=0)
    return low, high


def summarize_samples(samples: np.ndarray, estimate=None, names: Sequence[str] | None = None, level: float = 0.95,
                      threshold: float | None = None) -> pd.DataFrame:
    """Tidy summary of bootstrap samples of one quantity (or one per category).

    Parameters
    ----------
    samples : numpy.ndarray, shape (n_boot,) or (n_boot, n_categories)
    estimate : float or array, optional
        Point estimate on the original data; defaults to the bootstrap mean.
    names : sequence of str, optional
        Category names (default ``"all"`` / ``"0", "1"...``).
    level : float
        Confidence level of the percentile interval.
    threshold : float, optional
        Also report ``p_gt_threshold`` = P(theta > threshold) = share of samples above it.

    Returns
    -------
    pandas.DataFrame
        ``category, estimate, boot_mean, boot_std, ci_low, ci_high`` (+ ``p_gt_threshold``), one row per column.
    """
    arr = np.asarray(samples, dtype=np.float64)
    arr2 = arr[:, None] if arr.ndim == 1 else arr
    if names is None:
        names = ["all"] if arr.ndim == 1 else [str(i) for i in range(arr2.shape[1])]
    if len(names) != arr2.shape[1]:
        raise ValueError(f"{len(names)} names for {arr2.shape[1]} columns of samples")
    low, high = _interval(arr2, level)
    boot_mean = np.nanmean(arr2, axis=0)
    est = boot_mean if estimate is None else np.broadcast_to(np.asarray(estimate, dtype=np.float64), boot_mean.shape)
    out = pd.DataFrame({"category": list(names), "estimate": est, "boot_mean": boot_mean,
                        "boot_std": np.nanstd(arr2, axis=0, ddof=1) if len(arr2) > 1 else np.nan,
                        "ci_low": low, "ci_high": high})
    if threshold is not None:
        out["p_gt_threshold"] = np.mean(arr2 > threshold, axis=0)
    out["level"] = level
    out["n_boot"] = len(arr2)
    return out


def _with_overall(samples: np.ndarray, estimate: np.ndarray, names: list[str], overall: bool):
    """Append the paper's overall score (mean of the per-category values) as one more column."""
    if not overall or samples.ndim == 1:
        return samples, estimate, names
    return (np.column_stack([samples, samples.mean(axis=1)]), np.append(estimate, np.mean(estimate)),
            names + [OVERALL])


def bootstrap_ci(predictions, labels, metric: Metric = "mcc", n_boot: int = 1000, seed: int = 0, categories=None,
                 category_names: Sequence[str] | None = None, level: float = 0.95,
                 threshold: float | None = None, overall: bool = False) -> pd.DataFrame:
    """Multi-Bootstrap confidence interval of one setting's seed-averaged metric.

    Parameters
    ----------
    predictions, labels, metric, n_boot, seed, categories
        As in :func:`~diagnostics.stats.multibootstrap` (2-D or nested 3-D predictions).
    category_names : sequence of str, optional
        Names of the ``categories`` columns.
    level : float
        Confidence level (percentile interval).
    threshold : float, optional
        Report P(theta > threshold).
    overall : bool
        With categories, add a row for the mean over categories (the paper's overall MCC), bootstrapped on the
        same resamples.

    Returns
    -------
    pandas.DataFrame
        ``category, estimate, boot_mean, boot_std, ci_low, ci_high[, p_gt_threshold], level, n_boot,
        n_examples, n_seeds``; ``estimate`` is the seed-averaged metric on the original data.
    """
    samples = multibootstrap(predictions, labels, metric, n_boot, seed, categories)
    estimate = np.atleast_1d(point_estimate(predictions, labels, metric, categories))
    names = list(category_names) if category_names is not None else (
        None if categories is None else [str(i) for i in range(np.asarray(categories).shape[1])])
    samples, estimate, names = _with_overall(samples, estimate, names, overall)
    out = summarize_samples(samples, estimate, names, level, threshold)
    pred = np.asarray(predictions)
    return out.assign(n_examples=pred.shape[0], n_seeds=pred.shape[1])


def compare(predictions_a, predictions_b, labels, metric: Metric = "mcc", n_boot: int = 1000, seed: int = 0,
            categories=None, category_names: Sequence[str] | None = None, paired: bool = True,
            level: float = 0.95, threshold: float = 0.0, overall: bool = False) -> pd.DataFrame:
    """Two-setting Multi-Bootstrap comparison: delta = theta_b - theta_a.

    Parameters
    ----------
    predictions_a, predictions_b : array_like
        Baseline (a) and intervention (b), rows aligned to the same examples.
    labels, metric, n_boot, seed, categories, category_names, level, overall
        As in :func:`bootstrap_ci`.
    paired : bool
        Share the seed resample between the sides (seed k of a and b are related, e.g. same pretraining seed);
        False resamples seeds independently (examples are always shared).
    threshold : float
        Report ``p_delta_gt_threshold`` = P(delta > threshold).

    Returns
    -------
    pandas.DataFrame
        One row per category: ``estimate_a, ci_low_a, ci_high_a, estimate_b, ci_low_b, ci_high_b, delta,
        delta_ci_low, delta_ci_high, p_value`` (share of bootstrap deltas <= 0: H0 delta <= 0),
        ``p_delta_gt_threshold, paired, level, n_boot``.
    """
    a, b = multibootstrap_pair(predictions_a, predictions_b, labels, metric, n_boot, seed, categories, paired)
    est_a = np.atleast_1d(point_estimate(predictions_a, labels, metric, categories))
    est_b = np.atleast_1d(point_estimate(predictions_b, labels, metric, categories))
    names = list(category_names) if category_names is not None else (
        ["all"] if categories is None else [str(i) for i in range(np.asarray(categories).shape[1])])
    a2, est_a, _ = _with_overall(a, est_a, list(names), overall)
    b2, est_b, names = _with_overall(b, est_b, list(names), overall)
    a2 = a2[:, None] if a2.ndim == 1 else a2
    b2 = b2[:, None] if b2.ndim == 1 else b2
    delta = b2 - a2
    low_a, high_a = _interval(a2, level)
    low_b, high_b = _interval(b2, level)
    low_d, high_d = _interval(delta, level)
    return pd.DataFrame({"category": names, "estimate_a": est_a, "ci_low_a": low_a, "ci_high_a": high_a,
                         "estimate_b": est_b, "ci_low_b": low_b, "ci_high_b": high_b, "delta": est_b - est_a,
                         "delta_ci_low": low_d, "delta_ci_high": high_d, "p_value": np.mean(delta <= 0, axis=0),
                         "p_delta_gt_threshold": np.mean(delta > threshold, axis=0), "threshold": threshold,
                         "paired": paired, "level": level, "n_boot": len(delta)})


@dataclass(frozen=True)
class SettingArrays:
    """One setting of the predictions table as arrays for Multi-Bootstrap.

    Attributes
    ----------
    setting : dict
        The setting keys (experiment, language, model, dataset).
    example_ids : numpy.ndarray of str, shape (n_examples,)
    labels : numpy.ndarray of int8, shape (n_examples,)
        1 = entailment.
    predictions : numpy.ndarray of int8
        (n_examples, n_seeds), or (n_examples, n_pretrain_seeds, n_seeds) with ``pretrain_seed``.
    seeds : list
        Seed values along axis 1 (pretraining seeds in the nested case).
    inner_seeds : list
        Fine-tuning seeds along axis 2 (nested case), else empty.
    categories : numpy.ndarray of bool, shape (n_examples, n_categories)
    category_names : list of str
    """

    setting: dict
    example_ids: np.ndarray
    labels: np.ndarray
    predictions: np.ndarray
    seeds: list
    inner_seeds: list
    categories: np.ndarray
    category_names: list


def _select(predictions: pd.DataFrame, setting: Mapping) -> pd.DataFrame:
    unknown = [k for k in setting if k not in predictions.columns]
    if unknown:
        raise KeyError(f"setting keys not in the table: {unknown}")
    mask = np.ones(len(predictions), dtype=bool)
    for key, value in setting.items():
        mask &= (predictions[key].astype(str) == str(value)).to_numpy()
    rows = predictions[mask]
    found = rows[list(SETTING_KEYS)].drop_duplicates()
    if len(found) != 1:
        options = predictions[list(SETTING_KEYS)].drop_duplicates().to_dict("records")
        raise ValueError(f"setting {dict(setting)} must select exactly one setting, found {len(found)}; "
                         f"settings in the table: {options}")
    return rows


def setting_arrays(predictions: pd.DataFrame, setting: Mapping, dataset=None, by: str = "category") -> SettingArrays:
    """Pivot one setting of the predictions table into the arrays :func:`multibootstrap` takes.

    Parameters
    ----------
    predictions : pandas.DataFrame
        A validated predictions table.
    setting : mapping
        Column -> value selecting exactly one (experiment, language, model, dataset), e.g.
        ``{"experiment": "rte", "language": "en"}``.
    dataset : str or DataFrame, optional
        Category source (default: ``diagnostics.data.load`` of the setting's dataset).
    by : {"category", "coarse"}
        Fine or coarse categories.

    Returns
    -------
    SettingArrays

    Raises
    ------
    ValueError
        No or several settings selected, or runs that do not all cover the same examples.
    """
    rows = _select(predictions, setting)
    keys = {k: rows[k].iat[0] for k in SETTING_KEYS}
    nested = "pretrain_seed" in rows.columns
    columns = ["pretrain_seed", "seed"] if nested else ["seed"]
    wide = rows.pivot(index="example_id", columns=columns, values="prediction")
    if wide.isna().any().any():
        missing = wide.columns[wide.isna().any()].tolist()
        raise ValueError(f"setting {keys}: runs {missing} lack predictions for some examples; Multi-Bootstrap "
                         "needs every run on the same examples")
    frame = dataset_frame(dataset if dataset is not None else keys["dataset"])
    order = pd.Index(frame["id"].astype(str))
    wide = wide.loc[[i for i in order.unique() if i in wide.index]]
    labels = rows.drop_duplicates("example_id").set_index("example_id")["label"].loc[wide.index]
    pred = (wide.to_numpy() == ENTAILMENT).astype(np.int8)
    if nested:
        wide_cols = wide.columns
        outer = sorted(set(wide_cols.get_level_values(0)))
        inner = sorted(set(wide_cols.get_level_values(1)))
        if len(wide_cols) != len(outer) * len(inner):
            raise ValueError(f"setting {keys}: a nested design needs every fine-tuning seed {inner} under every "
                             f"pretraining seed {outer}")
        wide = wide.reindex(columns=pd.MultiIndex.from_product([outer, inner]))
        pred = (wide.to_numpy() == ENTAILMENT).astype(np.int8).reshape(len(wide), len(outer), len(inner))
        seeds, inner_seeds = outer, inner
    else:
        seeds, inner_seeds = list(wide.columns), []
    names, cats = category_matrix(frame, "fine" if by == "category" else "coarse", ids=wide.index.to_numpy())
    return SettingArrays(keys, wide.index.to_numpy(dtype=str), (labels.to_numpy() == ENTAILMENT).astype(np.int8),
                         pred, seeds, inner_seeds, cats, names)


def _check_by(by: str | None) -> None:
    if by not in ("category", "coarse", None):
        raise ValueError(f"by must be 'category', 'coarse' or None, found {by!r}")


def setting_ci(predictions: pd.DataFrame, setting: Mapping, metric: Metric = "mcc", by: str | None = "category",
               n_boot: int = 1000, seed: int = 0, level: float = 0.95, threshold: float | None = None,
               dataset=None) -> pd.DataFrame:
    """Multi-Bootstrap CIs of one setting of the predictions table, per category and overall.

    Parameters
    ----------
    predictions : pandas.DataFrame
        A validated predictions table.
    setting : mapping
        Selects one setting (see :func:`setting_arrays`).
    metric : {"accuracy", "mcc"} or callable
    by : {"category", "coarse"} or None
        Per fine / coarse category (plus the mean over them, the paper's overall score, with ``by="category"``)
        and always the metric over all examples; ``None``: all examples only.
    n_boot, seed, level, threshold
        As in :func:`bootstrap_ci`.
    dataset : optional
        Category source, as in :func:`setting_arrays`.

    Returns
    -------
    pandas.DataFrame
        The setting keys + the columns of :func:`bootstrap_ci`; the all-examples row has category
        ``"All examples"``.
    """
    _check_by(by)
    arr = setting_arrays(predictions, setting, dataset, by or "category")
    cats, names = _categories_with_all(arr, by)
    out = bootstrap_ci(arr.predictions, arr.labels, metric, n_boot, seed, cats, names, level, threshold)
    out = _add_overall_row(out, by, arr, metric, n_boot, seed, level, threshold)
    return _prefix(out, arr.setting)


def _categories_with_all(arr: SettingArrays, by):
    cats = np.column_stack([arr.categories, np.ones(len(arr.labels), dtype=bool)]) if by else \
        np.ones((len(arr.labels), 1), dtype=bool)
    names = (list(arr.category_names) if by else []) + [ALL]
    return cats, names


def _add_overall_row(out, by, arr, metric, n_boot, seed, level, threshold):
    if by != "category" or not arr.category_names:
        return out
    # same seed => same resamples as the per-category samples, so the mean is taken sample by sample
    samples = multibootstrap(arr.predictions, arr.labels, metric, n_boot, seed, arr.categories).mean(axis=1)
    estimate = np.mean(point_estimate(arr.predictions, arr.labels, metric, arr.categories))
    row = summarize_samples(samples, estimate, [OVERALL], level, threshold)
    row = row.assign(n_examples=arr.predictions.shape[0], n_seeds=arr.predictions.shape[1])
    return pd.concat([out, row], ignore_index=True)


def _prefix(frame: pd.DataFrame, setting: Mapping) -> pd.DataFrame:
    for i, (key, value) in enumerate(setting.items()):
        frame.insert(i, key, value)
    return frame


def compare_settings(predictions: pd.DataFrame, a: Mapping, b: Mapping, metric: Metric = "mcc",
                     by: str | None = "category", paired: bool = True, n_boot: int = 1000, seed: int = 0,
                     level: float = 0.95, threshold: float = 0.0, dataset=None) -> pd.DataFrame:
    """Compare two settings of the predictions table (delta = b - a) with Multi-Bootstrap.

    Parameters
    ----------
    predictions : pandas.DataFrame
    a, b : mapping
        Each selects one setting (baseline a, intervention b). Both must cover the same example ids (e.g. two
        training mixtures evaluated on one diagnostic set); they are aligned by id.
    metric, by, n_boot, seed, level, dataset
        As in :func:`setting_ci`.
    paired : bool
        Seeds paired across settings (same seed values on both sides, resampled together) or not.
    threshold : float
        Report P(delta > threshold).

    Returns
    -------
    pandas.DataFrame
        The columns of :func:`compare` plus ``a_<key>``/``b_<key>`` for the setting keys that differ.
    """
    _check_by(by)
    arr_a = setting_arrays(predictions, a, dataset, by or "category")
    arr_b = setting_arrays(predictions, b, dataset, by or "category")
    if set(arr_a.example_ids) != set(arr_b.example_ids):
        raise ValueError(f"settings {arr_a.setting} and {arr_b.setting} cover different examples "
                         f"({len(arr_a.example_ids)} and {len(arr_b.example_ids)} ids); a comparison resamples "
                         "shared examples")
    if paired and arr_a.seeds != arr_b.seeds:
        raise ValueError(f"paired=True needs the same seeds in both settings, found {arr_a.seeds} and "
                         f"{arr_b.seeds}; use paired=False")
    pos = pd.Index(arr_b.example_ids).get_indexer(arr_a.example_ids)
    pred_b = arr_b.predictions[pos]
    if not np.array_equal(arr_b.labels[pos], arr_a.labels):
        raise ValueError("the two settings disagree on gold labels of the same example ids")
    cats, names = _categories_with_all(arr_a, by)
    out = compare(arr_a.predictions, pred_b, arr_a.labels, metric, n_boot, seed, cats, names, paired, level,
                  threshold)
    if by == "category" and arr_a.category_names:
        g = len(arr_a.category_names)
        extra = compare(arr_a.predictions, pred_b, arr_a.labels, metric, n_boot, seed, arr_a.categories,
                        arr_a.category_names, paired, level, threshold, overall=True).iloc[[g]]
        out = pd.concat([out, extra], ignore_index=True)
    differing = [k for k in SETTING_KEYS if arr_a.setting[k] != arr_b.setting[k]] or list(SETTING_KEYS)
    for i, key in enumerate(differing):
        out.insert(2 * i, f"a_{key}", arr_a.setting[key])
        out.insert(2 * i + 1, f"b_{key}", arr_b.setting[key])
    return out
