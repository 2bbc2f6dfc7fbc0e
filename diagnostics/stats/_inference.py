"""Confidence intervals and two-setting tests on top of Multi-Bootstrap samples, as tidy DataFrames.

A comparison reports what the MultiBERTs reference code's ``report_ci`` reports, field by field:

* ``ci_low_a, ci_high_a`` / ``ci_low_b, ci_high_b`` / ``delta_ci_low, delta_ci_high``: percentile intervals
  (numpy's linear quantiles) of the baseline L, the intervention L' and the delta L' - L (its ``base``,
  ``expt`` and ``delta`` low / high);
* ``boot_mean_a``, ``boot_mean_b``, ``delta_boot_mean``: the bootstrap means (its ``mean``s), beside the point
  estimates on the original data (``estimate_a``, ``estimate_b``, ``delta``), which it does not report;
* ``p_value``: the share of bootstrap deltas <= 0 (>= 0 with ``expect_negative_effect``), floored at
  1 / n_boot because a bootstrap cannot estimate a smaller p-value;
* ``p_threshold``: P(delta >= threshold) (its ``abs_threshold``; P(delta <= -threshold) with
  ``expect_negative_effect``);
* ``p_rel_threshold``: P(delta >= rel_threshold * |L|) per sample (its ``rel_threshold``;
  P(delta <= -rel_threshold * |L|) with ``expect_negative_effect``);
* sampling designs: ``resample="both" | "seeds" | "examples"`` (its ``sample_seeds`` / ``sample_examples``);
  ``paired`` is its ``paired_seeds``.

Deliberate differences from the reference: ``rel_threshold`` compares the delta with ``rel_threshold`` times
the *absolute* baseline (the reference divides by L: the same when L > 0, while for an MCC at or below 0 the
ratio flips sign or is undefined); ``rel_threshold=0`` is reported (the reference skips a falsy value); samples
that are NaN (accuracy of a category without a drawn example, possible only with ``stratify=False``) are left
out of the shares, quantiles and means instead of counting as failures; ``two_sided=True`` adds a two-sided
p-value the reference does not have. Beyond the reference, per-category comparisons report multiplicity-adjusted
p-values (``p_holm``, ``p_bh``) and a simultaneous band (``delta_simul_low``, ``delta_simul_high``) over the
categories (:mod:`diagnostics.stats._multiple`). A single setting's ``p_threshold`` is P(theta >= threshold).

Per-category rows are stratified by default (each category resampled within itself, keeping its size; see
:func:`~diagnostics.stats.multibootstrap`); the rows that summarise the whole set (all examples, the mean over
categories) are always computed on whole-set resamples, which keep the correlation between categories that
share examples.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from ..core.errors import UserInputError
from ._bootstrap import Metric, check_resample, multibootstrap, multibootstrap_pair, point_estimate
from ._matrix import SettingMatrix, setting_arrays
from ._multiple import adjust_pvalues, simultaneous_interval
from ._scores import ALL, OVERALL, overall_n
from ._table import SETTING_KEYS


def _interval(samples: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), found {level!r}")
    quantile = np.nanquantile if np.isnan(samples).any() else np.quantile  # equal without NaN; nanquantile is slow
    low, high = quantile(samples, [(1 - level) / 2, 1 - (1 - level) / 2], axis=0)
    return low, high


def _share(hits: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Share of ``hits`` among the ``valid`` samples of each column (NaN for a column without any)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return (hits & valid).sum(axis=0) / valid.sum(axis=0)


def _simultaneous(samples: np.ndarray, family: np.ndarray, level: float, low: np.ndarray, high: np.ndarray):
    """Simultaneous bounds over the ``family`` columns; other columns keep their marginal interval."""
    simul_low, simul_high, simul_level = low.copy(), high.copy(), level
    if family.sum() > 1:
        simul_low[family], simul_high[family], simul_level = simultaneous_interval(samples[:, family], level)
    return simul_low, simul_high, simul_level


def summarize_samples(samples: np.ndarray, estimate=None, names: Sequence[str] | None = None, level: float = 0.95,
                      threshold: float | None = None, family=None) -> pd.DataFrame:
    """Tidy summary of bootstrap samples of one quantity (or one per category).

    Parameters
    ----------
    samples : numpy.ndarray, shape (n_boot,) or (n_boot, n_categories)
        Bootstrap samples; NaN samples are left out of every statistic.
    estimate : float or array, optional
        Point estimate on the original data; defaults to the bootstrap mean.
    names : sequence of str, optional
        Category names (default ``"all"`` / ``"0", "1"...``).
    level : float
        Confidence level of the percentile interval.
    threshold : float, optional
        Also report ``p_threshold`` = P(theta >= threshold), the share of samples at or above it.
    family : array_like of bool, optional
        Columns that form the family of the simultaneous band (default: all).

    Returns
    -------
    pandas.DataFrame
        ``category, in_family, estimate, boot_mean, boot_std, ci_low, ci_high, simul_low, simul_high``
        (+ ``threshold, p_threshold``), ``level, simul_level, n_boot``; one row per column. ``simul_low`` /
        ``simul_high`` bound all family columns at once with probability ``level``
        (:func:`~diagnostics.stats.simultaneous_interval`, the marginal percentile level
        ``simul_level``); outside the family, and for a family of one, they equal the marginal interval.

    Raises
    ------
    ValueError
        For a ``level`` outside (0, 1) or names that do not match the columns.
    """
    arr = np.asarray(samples, dtype=np.float64)
    arr2 = arr[:, None] if arr.ndim == 1 else arr
    if names is None:
        names = ["all"] if arr.ndim == 1 else [str(i) for i in range(arr2.shape[1])]
    if len(names) != arr2.shape[1]:
        raise ValueError(f"{len(names)} names for {arr2.shape[1]} columns of samples")
    fam = np.ones(arr2.shape[1], dtype=bool) if family is None else np.asarray(family, dtype=bool)
    low, high = _interval(arr2, level)
    simul_low, simul_high, simul_level = _simultaneous(arr2, fam, level, low, high)
    boot_mean = np.nanmean(arr2, axis=0)
    est = boot_mean if estimate is None else np.broadcast_to(np.asarray(estimate, dtype=np.float64), boot_mean.shape)
    out = pd.DataFrame({"category": list(names), "in_family": fam, "estimate": est, "boot_mean": boot_mean,
                        "boot_std": np.nanstd(arr2, axis=0, ddof=1) if len(arr2) > 1 else np.nan,
                        "ci_low": low, "ci_high": high, "simul_low": simul_low, "simul_high": simul_high})
    if threshold is not None:
        out["threshold"] = threshold
        out["p_threshold"] = _share(arr2 >= threshold, ~np.isnan(arr2))
    out["level"] = level
    out["simul_level"] = np.where(fam, simul_level, level)
    out["n_boot"] = len(arr2)
    return out


def _draw(sides: list, labels, metric: Metric, n_boot: int, seed: int, categories, paired: bool, resample: str,
          stratify: bool) -> list[np.ndarray]:
    """Samples (n_boot, n_columns) of one setting or of a pair on shared draws."""
    if len(sides) == 1:
        out = [multibootstrap(sides[0], labels, metric, n_boot, seed, categories, resample, stratify)]
    else:
        out = list(multibootstrap_pair(sides[0], sides[1], labels, metric, n_boot, seed, categories, paired,
                                       resample, stratify))
    return [x[:, None] if x.ndim == 1 else x for x in out]


def _samples(sides: list, labels, metric: Metric, n_boot: int, seed: int, categories, paired: bool, resample: str,
             stratify: bool, summaries: Sequence[str]) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Per-category samples and estimates of each side, then the ``summaries`` columns (``"all"``: all examples;
    ``"overall"``: the mean over categories).

    The per-category columns follow ``stratify``; the summary columns are statistics of the whole set and always
    come from whole-set resamples (the same resamples as the categories when those are not stratified).
    """
    if categories is None:
        samples = _draw(sides, labels, metric, n_boot, seed, None, paired, resample, stratify)
        return samples, [np.atleast_1d(point_estimate(p, labels, metric)) for p in sides]
    cats = np.asarray(categories)
    g = cats.shape[1] if cats.ndim == 2 else None
    if not summaries or g is None:  # (a malformed matrix is refused by multibootstrap)
        samples = _draw(sides, labels, metric, n_boot, seed, cats, paired, resample, stratify)
    else:
        with_all = np.column_stack([cats, np.ones(len(cats), dtype=cats.dtype)])
        whole = _draw(sides, labels, metric, n_boot, seed, with_all, paired, resample, False)
        per = whole if not stratify or resample == "seeds" else \
            _draw(sides, labels, metric, n_boot, seed, cats, paired, resample, True)
        parts = {"all": [w[:, g] for w in whole], "overall": [w[:, :g].mean(axis=1) for w in whole]}
        samples = [np.column_stack([p[:, :g]] + [parts[k][i] for k in summaries]) for i, p in enumerate(per)]
    estimates = []
    for pred in sides:
        est = np.atleast_1d(point_estimate(pred, labels, metric, cats))
        extra = [np.mean(est) if k == "overall" else point_estimate(pred, labels, metric) for k in summaries]
        estimates.append(np.concatenate([est, np.asarray(extra, dtype=np.float64)]))
    return samples, estimates


def _names(category_names, categories, default: str) -> list[str]:
    if category_names is not None:
        return list(category_names)
    return [default] if categories is None else [str(i) for i in range(np.asarray(categories).shape[1])]


def bootstrap_ci(predictions, labels, metric: Metric = "mcc", n_boot: int = 1000, seed: int = 0, categories=None,
                 category_names: Sequence[str] | None = None, level: float = 0.95,
                 threshold: float | None = None, overall: bool = False, *, resample: str = "both",
                 stratify: bool = True) -> pd.DataFrame:
    """Multi-Bootstrap confidence interval of one setting's seed-averaged metric.

    Parameters
    ----------
    predictions : array_like, shape (n_examples, n_seeds) or (n_examples, n_seeds, n_inner)
        Predictions of each run, as in :func:`~diagnostics.stats.multibootstrap` (2-D or nested 3-D).
    labels : array_like, shape (n_examples,)
        Gold labels, same encoding.
    metric : {"accuracy", "mcc"} or callable
        The metric; a callable is ``metric(y_true, y_pred) -> float``.
    n_boot : int
        Number of bootstrap samples.
    seed : int
        Seed of the resampling; the same seed gives the same samples.
    categories : array_like of bool, shape (n_examples, n_categories), optional
        Category membership; one row per category instead of one overall row.
    category_names : sequence of str, optional
        Names of the ``categories`` columns.
    level : float
        Confidence level (percentile interval, and joint level of the simultaneous band over categories).
    threshold : float, optional
        Report ``p_threshold`` = P(theta >= threshold).
    overall : bool
        With categories, add a row for the mean over categories (the paper's overall MCC), bootstrapped on
        whole-set resamples (it is a statistic of the whole set; see :func:`~diagnostics.stats.multibootstrap`).
    resample : {"both", "seeds", "examples"}
        Sampling design: seeds and examples (default), seeds only, or examples only.
    stratify : bool
        Resample each category within itself (default; it keeps its size) or the whole set.

    Returns
    -------
    pandas.DataFrame
        The columns of :func:`summarize_samples` (the simultaneous band's family: the categories) and
        ``resample, stratified, n_examples, n_seeds``; ``estimate`` is the seed-averaged metric on the original
        data.

    Raises
    ------
    ValueError
        For malformed inputs (see :func:`~diagnostics.stats.multibootstrap`) or ``level`` outside (0, 1).
    """
    check_resample(resample)
    summaries = ["overall"] if overall and categories is not None else []
    (samples,), (estimate,) = _samples([predictions], labels, metric, n_boot, seed, categories, True, resample,
                                       stratify, summaries)
    names = _names(category_names, categories, "all") + [OVERALL] * len(summaries)
    family = np.arange(len(names)) < len(names) - len(summaries) if categories is not None else \
        np.zeros(1, dtype=bool)
    out = summarize_samples(samples if categories is not None else samples[:, 0], estimate, names, level, threshold,
                            family)
    pred = np.asarray(predictions)
    return out.assign(resample=resample, stratified=bool(stratify and categories is not None and resample != "seeds"),
                      n_examples=pred.shape[0], n_seeds=pred.shape[1])


def _delta_frame(a: np.ndarray, b: np.ndarray, est_a: np.ndarray, est_b: np.ndarray, names: list[str],
                 family: np.ndarray, level: float, threshold: float | None, rel_threshold: float | None,
                 expect_negative_effect: bool, two_sided: bool) -> pd.DataFrame:
    """The comparison table of :func:`compare` from samples (n_boot, n_columns) of both sides."""
    delta = b - a
    valid = ~np.isnan(delta)
    low_a, high_a = _interval(a, level)
    low_b, high_b = _interval(b, level)
    low_d, high_d = _interval(delta, level)
    floor = 1.0 / np.maximum(valid.sum(axis=0), 1)
    at_most, at_least = _share(delta <= 0, valid), _share(delta >= 0, valid)
    at_most, at_least = np.where(at_most == 0, floor, at_most), np.where(at_least == 0, floor, at_least)
    if two_sided:
        p_value = np.minimum(1.0, 2 * np.minimum(at_most, at_least))
    else:
        p_value = at_least if expect_negative_effect else at_most
    simul_low, simul_high, simul_level = _simultaneous(delta, family, level, low_d, high_d)
    p_holm, p_bh = p_value.copy(), p_value.copy()
    p_holm[family], p_bh[family] = adjust_pvalues(p_value[family], "holm"), adjust_pvalues(p_value[family], "bh")
    out = pd.DataFrame({"category": names, "in_family": family,
                        "estimate_a": est_a, "boot_mean_a": np.nanmean(a, axis=0), "ci_low_a": low_a,
                        "ci_high_a": high_a, "estimate_b": est_b, "boot_mean_b": np.nanmean(b, axis=0),
                        "ci_low_b": low_b, "ci_high_b": high_b, "delta": est_b - est_a,
                        "delta_boot_mean": np.nanmean(delta, axis=0), "delta_ci_low": low_d, "delta_ci_high": high_d,
                        "delta_simul_low": simul_low, "delta_simul_high": simul_high,
                        "p_value": p_value, "p_holm": p_holm, "p_bh": p_bh,
                        "expect_negative_effect": expect_negative_effect, "two_sided": two_sided})
    sign = -1.0 if expect_negative_effect else 1.0
    if threshold is not None:
        out["threshold"] = threshold
        out["p_threshold"] = _share(sign * delta >= threshold, valid)
    if rel_threshold is not None:
        both = valid & ~np.isnan(a)
        out["rel_threshold"] = rel_threshold
        out["p_rel_threshold"] = _share(sign * delta >= rel_threshold * np.abs(a), both)
    out["level"] = level
    out["simul_level"] = np.where(family, simul_level, level)
    out["n_boot"] = len(delta)
    return out


def compare(predictions_a, predictions_b, labels, metric: Metric = "mcc", n_boot: int = 1000, seed: int = 0,
            categories=None, category_names: Sequence[str] | None = None, paired: bool = True,
            level: float = 0.95, threshold: float | None = 0.0, overall: bool = False, *,
            rel_threshold: float | None = None, expect_negative_effect: bool = False, two_sided: bool = False,
            resample: str = "both", stratify: bool = True) -> pd.DataFrame:
    """Two-setting Multi-Bootstrap comparison: delta = theta_b - theta_a, reported as the reference's ``report_ci``.

    Parameters
    ----------
    predictions_a, predictions_b : array_like
        Baseline (a, the reference's L) and intervention (b, L'), rows aligned to the same examples.
    labels : array_like, shape (n_examples,)
        Gold labels, as in :func:`bootstrap_ci`.
    metric : {"accuracy", "mcc"} or callable
        The metric, as in :func:`bootstrap_ci`.
    n_boot : int
        Number of bootstrap samples.
    seed : int
        Seed of the resampling.
    categories : array_like of bool, shape (n_examples, n_categories), optional
        Category membership; without it one row named ``all``.
    category_names : sequence of str, optional
        Names of the ``categories`` columns (default: their indices).
    paired : bool
        Share the seed resample between the sides (seed k of a and b are related, e.g. same pretraining seed);
        False resamples seeds independently (examples are always shared).
    level : float
        Confidence level of the percentile intervals and joint level of the simultaneous band.
    threshold : float or None
        The reference's ``abs_threshold``: report ``p_threshold`` = P(delta >= threshold), or
        P(delta <= -threshold) with ``expect_negative_effect``; None leaves it out.
    overall : bool
        With categories, add a row for the mean over categories, bootstrapped on whole-set resamples.
    rel_threshold : float, optional
        The reference's ``rel_threshold``: report ``p_rel_threshold`` = P(delta >= rel_threshold * |theta_a|)
        over the samples (e.g. 0.01: an improvement of at least 1 % of the baseline), or
        P(delta <= -rel_threshold * |theta_a|) with ``expect_negative_effect``. The reference divides by the
        baseline ((L' - L) / L >= rel_threshold), the same where the baseline is positive; the absolute value
        keeps the direction for a baseline MCC below 0 (near 0, any relative threshold is meaningless).
    expect_negative_effect : bool
        The reference's direction switch: the p-value tests H0: delta >= 0 (share of deltas >= 0) and the
        thresholds look for a decrease.
    two_sided : bool
        Report a two-sided ``p_value`` instead, ``min(1, 2 min(P(delta <= 0), P(delta >= 0)))`` (each share floored
        at 1 / n_boot), for differences without an expected direction (not in the reference).
    resample : {"both", "seeds", "examples"}
        Sampling design: seeds and examples (default), seeds only, or examples only.
    stratify : bool
        Resample each category within itself (default; it keeps its size) or the whole set.

    Returns
    -------
    pandas.DataFrame
        One row per category (then ``Overall``): ``category, in_family``, ``estimate_a, boot_mean_a, ci_low_a,
        ci_high_a`` (the reference's ``base``), the same for b (``expt``), ``delta`` (point estimate on the
        original data), ``delta_boot_mean, delta_ci_low, delta_ci_high`` (its ``delta``), ``delta_simul_low,
        delta_simul_high`` (simultaneous band over the categories), ``p_value`` (its ``p``: share of bootstrap
        deltas <= 0, floored at 1 / n_boot), ``p_holm, p_bh`` (adjusted over the categories),
        ``expect_negative_effect, two_sided[, threshold, p_threshold][, rel_threshold, p_rel_threshold], level,
        simul_level, n_boot, paired, resample, stratified``. The family of the adjustment and of the band is the
        categories (``in_family``); a row outside it (``Overall``, or the single row without categories) is a
        family of one: its adjusted p-values and band equal the raw ones.

    Raises
    ------
    ValueError
        For malformed inputs (see :func:`~diagnostics.stats.multibootstrap_pair`) or ``level`` outside (0, 1).
    """
    check_resample(resample)
    summaries = ["overall"] if overall and categories is not None else []
    (a, b), (est_a, est_b) = _samples([predictions_a, predictions_b], labels, metric, n_boot, seed, categories,
                                      paired, resample, stratify, summaries)
    names = _names(category_names, categories, "all") + [OVERALL] * len(summaries)
    family = np.arange(len(names)) < len(names) - len(summaries) if categories is not None else \
        np.zeros(1, dtype=bool)
    out = _delta_frame(a, b, est_a, est_b, names, family, level, threshold, rel_threshold, expect_negative_effect,
                       two_sided)
    return out.assign(paired=paired, resample=resample,
                      stratified=bool(stratify and categories is not None and resample != "seeds"))


def _check_by(by: str | None) -> None:
    if by not in ("category", "coarse", None):
        raise ValueError(f"by must be 'category', 'coarse' or None, found {by!r}")


def setting_ci(predictions: pd.DataFrame, setting: Mapping, metric: Metric = "mcc", by: str | None = "category",
               n_boot: int = 1000, seed: int = 0, level: float = 0.95, threshold: float | None = None,
               dataset=None, *, resample: str = "both", stratify: bool = True) -> pd.DataFrame:
    """Multi-Bootstrap CIs of one setting of the predictions table, per category and overall.

    Parameters
    ----------
    predictions : pandas.DataFrame
        A validated predictions table.
    setting : mapping
        Selects one setting (see :func:`setting_arrays`).
    metric : {"accuracy", "mcc"} or callable
        The metric, as in :func:`bootstrap_ci`.
    by : {"category", "coarse"} or None
        Per fine / coarse category (plus the mean over them, the paper's overall score, with ``by="category"``)
        and always the metric over all examples; ``None``: all examples only.
    n_boot : int
        Number of bootstrap samples.
    seed : int
        Seed of the resampling.
    level : float
        Confidence level of the percentile intervals (and joint level of the simultaneous band).
    threshold : float, optional
        Report P(theta >= threshold).
    dataset : str or pandas.DataFrame, optional
        Category source, as in :func:`setting_arrays`.
    resample : {"both", "seeds", "examples"}
        Sampling design: seeds and examples (default), seeds only, or examples only.
    stratify : bool
        Resample each category within itself (default: a category keeps its size in every sample) or the whole
        set. The all-examples and overall rows always resample the whole set.

    Returns
    -------
    pandas.DataFrame
        The setting keys + the columns of :func:`bootstrap_ci`; the all-examples row has category
        ``"All examples"``. The simultaneous band's family is the categories.

    Raises
    ------
    ValueError
        For a selection that is not exactly one setting, runs on different examples, or bad options.
    """
    _check_by(by)
    check_resample(resample)
    arr = setting_arrays(predictions, setting, dataset, by or "category")
    cats, names, summaries = _categories_and_summaries(arr, by)
    (samples,), (estimate,) = _samples([arr.predictions], arr.labels, metric, n_boot, seed, cats, True, resample,
                                       stratify, summaries)
    family = np.arange(len(names)) < len(names) - len(summaries)
    out = summarize_samples(samples, estimate, names, level, threshold, family)
    out = out.assign(resample=resample, stratified=bool(stratify and cats is not None and resample != "seeds"),
                     n_examples=arr.predictions.shape[0], n_seeds=arr.predictions.shape[1])
    return _prefix(out, arr.setting)


def _categories_and_summaries(arr: SettingMatrix, by):
    """Category matrix (None for ``by=None``), row names, and the summary rows after the categories."""
    if not by:
        return None, [ALL], []
    summaries = ["all", "overall"] if by == "category" and arr.category_names else ["all"]
    names = list(arr.category_names) + [{"all": ALL, "overall": OVERALL}[k] for k in summaries]
    return arr.categories, names, summaries


def _prefix(frame: pd.DataFrame, setting: Mapping) -> pd.DataFrame:
    for i, (key, value) in enumerate(setting.items()):
        frame.insert(i, key, value)
    return frame


#: Alternatives of :func:`compare_settings`: delta = b - a differs from 0, is above it, is below it.
ALTERNATIVES = ("two-sided", "greater", "less")
#: Adjustments of the per-category p-values over the categories (``none`` keeps the raw p-values).
ADJUSTMENTS = ("holm", "bh", "none")
#: How the seeds of the two sides are resampled: ``auto`` pairs them when both sides have the same runs.
PAIRINGS = ("auto", "paired", "unpaired")


def _check_choice(option: str, value, allowed: tuple) -> None:
    if value not in allowed:
        raise UserInputError(f"{option}: expected one of {', '.join(map(str, allowed))}, found {value!r}")


def compare_settings(predictions: pd.DataFrame, a: Mapping | None, b: Mapping | None, metric: Metric = "mcc",
                     by: str | None = "category", paired: bool | str = "auto", n_boot: int = 1000, seed: int = 0,
                     level: float = 0.95, threshold: float | None = 0.0, dataset=None, *,
                     alternative: str = "two-sided", adjust: str = "holm", alpha: float = 0.05,
                     predictions_b: pd.DataFrame | None = None, rel_threshold: float | None = None,
                     resample: str = "both", stratify: bool = True) -> pd.DataFrame:
    """Compare two settings (delta = b - a) with Multi-Bootstrap, per category: the one compare function.

    :func:`diagnostics.predictions.compare_tables` (``diagnostics compare``) reports this comparison for two
    tables, with McNemar's test for single runs, a summary and a figure.

    Parameters
    ----------
    predictions : pandas.DataFrame
        A validated predictions table.
    a, b : mapping or None
        Each selects one setting (baseline a, intervention b; see
        :func:`~diagnostics.stats.select_rows`); None for a table holding one setting. Both must cover the
        same example ids (e.g. two training mixtures evaluated on one diagnostic set); they are aligned by id.
    metric : {"accuracy", "mcc"} or callable
        The metric, as in :func:`bootstrap_ci`.
    by : {"category", "coarse"} or None
        Categories, as in :func:`setting_ci`.
    paired : bool or {"auto", "paired", "unpaired"}
        Resample the seeds of both sides together (seed k of a and b share something, such as a pretraining
        checkpoint) or independently; ``auto`` (default) pairs when both sides have the same runs.
    n_boot : int
        Number of bootstrap samples.
    seed : int
        Seed of the resampling.
    level : float
        Confidence level of the percentile intervals and joint level of the simultaneous band.
    threshold : float or None
        Report P(delta >= threshold) (the reference's ``abs_threshold``; P(delta <= -threshold) with
        ``alternative="less"``), as in :func:`compare`.
    dataset : str or pandas.DataFrame, optional
        Category source, as in :func:`setting_arrays`.
    alternative : {"two-sided", "greater", "less"}
        The hypothesis of ``p_value``: delta differs from 0 (``min(1, 2 min(P(delta <= 0), P(delta >= 0)))``),
        is above 0 (the share of deltas <= 0, the reference's p) or below it (the share >= 0); each share floored
        at 1 / n_boot.
    adjust : {"holm", "bh", "none"}
        Adjustment of ``p_adjusted`` over the categories (a summary row is a family of one).
    alpha : float
        Level at which ``p_adjusted`` counts as ``significant``.
    predictions_b : pandas.DataFrame, optional
        The table ``b`` selects from, when it is another table than ``predictions``.
    rel_threshold : float, optional
        Report P(delta >= rel_threshold * |theta_a|), as in :func:`compare`.
    resample : {"both", "seeds", "examples"}
        Sampling design: seeds and examples (default), seeds only, or examples only.
    stratify : bool
        Resample each category within itself (default) or the whole set; the all-examples and overall rows
        always resample the whole set.

    Returns
    -------
    pandas.DataFrame
        ``a_<key>``/``b_<key>`` for the setting keys that differ, then the columns of :func:`compare`, ``n``
        (examples of the row), ``alternative``, ``adjust``, ``p_adjusted``, ``significant``; rows: the categories
        (the family of the adjustment and of the simultaneous band), then ``All examples`` and (``by="category"``)
        ``Overall``. ``paired`` says which design ``auto`` chose.

    Raises
    ------
    UserInputError
        For selections that are not one setting each, settings on different examples or gold labels, a paired
        design without the same seeds, or an unknown option value (all also ``ValueError``).
    """
    _check_by(by)
    check_resample(resample)
    _check_choice("alternative", alternative, ALTERNATIVES)
    _check_choice("adjust", adjust, ADJUSTMENTS)
    _check_choice("paired", paired, (True, False) + PAIRINGS)
    if not 0 < alpha < 1:
        raise UserInputError(f"alpha must lie in (0, 1), found {alpha}")
    arr_a = setting_arrays(predictions, a, dataset, by or "category", what="A")
    arr_b = setting_arrays(predictions if predictions_b is None else predictions_b, b, dataset, by or "category",
                           what="B")
    if set(arr_a.ids) != set(arr_b.ids):
        only_a, only_b = len(set(arr_a.ids) - set(arr_b.ids)), len(set(arr_b.ids) - set(arr_a.ids))
        raise UserInputError(f"settings {arr_a.setting} and {arr_b.setting} cover different examples ({only_a} "
                             f"only in A, {only_b} only in B, of {len(arr_a.ids)} and {len(arr_b.ids)}); a "
                             "comparison resamples shared examples")
    pos = pd.Index(arr_b.ids).get_indexer(arr_a.ids)
    pred_a, pred_b, labels = arr_a.predictions, arr_b.predictions[pos], arr_a.labels
    if not np.array_equal(arr_b.labels[pos], labels):
        bad = int(np.sum(arr_b.labels[pos] != labels))
        raise UserInputError(f"settings {arr_a.setting} and {arr_b.setting} disagree on the gold labels of {bad} "
                             "example(s) with the same id; compare predictions of one dataset (or of translations "
                             "whose labels agree)")
    same_runs = pred_a.shape[1:] == pred_b.shape[1:] and arr_a.runs == arr_b.runs
    if paired in (True, "paired") and resample != "examples" and pred_a.shape[1:] != pred_b.shape[1:]:
        raise UserInputError(f"a paired design needs the same seeds on both sides, found different seeds "
                             f"{arr_a.runs} and {arr_b.runs}; compare them unpaired")
    paired = paired in (True, "paired") or (paired == "auto" and same_runs)
    cats, names, summaries = _categories_and_summaries(arr_a, by)
    (sa, sb), (est_a, est_b) = _samples([pred_a, pred_b], labels, metric, n_boot, seed, cats, paired, resample,
                                        stratify, summaries)
    family = np.arange(len(names)) < len(names) - len(summaries) if cats is not None else np.zeros(1, dtype=bool)
    out = _delta_frame(sa, sb, est_a, est_b, names, family, level, threshold, rel_threshold,
                       alternative == "less", alternative == "two-sided")
    counts = [len(labels)] if cats is None else list(cats.sum(axis=0).astype(int)) + [
        {"all": len(labels), "overall": overall_n(cats)}[k] for k in summaries]
    p_adjusted = out["p_value"].to_numpy().copy()
    if adjust != "none" and family.any():
        p_adjusted[family] = adjust_pvalues(p_adjusted[family], adjust)
    out = out.assign(n=np.asarray(counts, dtype=np.int64), alternative=alternative, adjust=adjust,
                     p_adjusted=p_adjusted, significant=p_adjusted <= alpha, paired=paired, resample=resample,
                     stratified=bool(stratify and cats is not None and resample != "seeds"))
    differing = [k for k in SETTING_KEYS if arr_a.setting[k] != arr_b.setting[k]] or list(SETTING_KEYS)
    for i, key in enumerate(differing):
        out.insert(2 * i, f"a_{key}", arr_a.setting[key])
        out.insert(2 * i + 1, f"b_{key}", arr_b.setting[key])
    return out
