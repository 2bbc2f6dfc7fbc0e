"""Multiple comparisons across categories: adjusted p-values and simultaneous bootstrap intervals.

A per-category comparison runs one test per category (33 fine categories): at level 0.05, about 1.6 categories
per comparison show a "significant" difference by chance alone when nothing differs. Two remedies:

* :func:`adjust_pvalues`: Holm's step-down adjustment (controls the family-wise error rate, the chance of any false
  positive) or Benjamini-Hochberg's step-up adjustment (controls the false discovery rate, the expected share of
  false positives among the rejections).
* :func:`simultaneous_interval`: percentile intervals widened together until they cover the whole vector of
  categories in ``level`` of the bootstrap samples (a max-statistic band): the categories whose band excludes 0
  survive with the family-wise error controlled at ``1 - level``.

Bootstrap p-values are multiples of ``1 / n_boot`` and never below it: Holm can only reject at level ``alpha`` with
``m`` categories when ``1 / n_boot <= alpha / m`` (``n_boot >= 660`` for 33 categories at 0.05; twice that for a
two-sided p-value). Both remedies are only as good as the bootstrap's far tail (around ``alpha / m``): in
simulations with 33 null categories, resampling seeds and examples with several seeds kept the family-wise error
below 5 % (Holm 2 %, the band 1.7 %), while 40-example categories with a single seed and only examples resampled
gave about 8 % (Holm) and 11-13 % (band), whatever ``n_boot``: the percentile bootstrap's tails are too thin for
small samples.
"""

from __future__ import annotations

import numpy as np

METHODS = ("holm", "bh")


def adjust_pvalues(pvalues, method) -> np.ndarray:
    """Adjust p-values for multiple comparisons (Holm or Benjamini-Hochberg).

    Parameters
    ----------
    pvalues : array_like of float
        Raw p-values in [0, 1], any shape; NaN marks a test that was not run (it stays NaN and does not count in
        the family size).
    method : {"holm", "bh"}
        ``"holm"``: Holm's step-down adjustment, ``min(1, max_{k <= i} (m - k + 1) p_(k))`` for the i-th smallest
        p-value (family-wise error rate; valid under any dependence). ``"bh"``: Benjamini-Hochberg,
        ``min(1, min_{k >= i} m p_(k) / k)`` (false discovery rate; valid for independent or positively dependent
        tests). The same values as ``statsmodels.stats.multitest.multipletests`` with ``"holm"`` / ``"fdr_bh"``.

    Returns
    -------
    numpy.ndarray of float64
        Adjusted p-values, the shape of ``pvalues``; reject where adjusted ``<= alpha``.

    Raises
    ------
    ValueError
        For an unknown method or a p-value outside [0, 1].

    Examples
    --------
    >>> adjust_pvalues([0.01, 0.04, 0.03], "holm").round(3).tolist()
    [0.03, 0.06, 0.06]
    >>> adjust_pvalues([0.01, 0.04, 0.03], "bh").round(3).tolist()
    [0.03, 0.04, 0.04]
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, found {method!r}")
    p = np.array(pvalues, dtype=np.float64)
    flat = p.ravel()
    finite = ~np.isnan(flat)
    values = flat[finite]
    if ((values < 0) | (values > 1)).any():
        raise ValueError(f"p-values must lie in [0, 1], found {values[(values < 0) | (values > 1)][0]!r}")
    m = len(values)
    if m:
        order = np.argsort(values, kind="stable")
        ranked = values[order]
        if method == "holm":
            adjusted = np.maximum.accumulate((m - np.arange(m)) * ranked)
        else:
            adjusted = np.minimum.accumulate((m * ranked / np.arange(1, m + 1))[::-1])[::-1]
        out = np.empty(m)
        out[order] = np.minimum(adjusted, 1.0)
        flat[finite] = out
    return flat.reshape(p.shape)


def simultaneous_level(samples, level: float = 0.95) -> float:
    """Find the marginal level at which the percentile intervals of all columns jointly cover ``level`` of samples.

    Each bootstrap sample (row) is assigned the smallest marginal level whose percentile interval contains it in
    every column (two-sided, from its rank in each column: the max-statistic over columns); the joint level is the
    ``level`` quantile of these.

    Parameters
    ----------
    samples : array_like, shape (n_boot, n_columns)
        Bootstrap samples of several quantities (e.g. one delta per category), drawn jointly or independently.
        NaN entries (a quantity undefined on a resample) never constrain the level.
    level : float
        Joint coverage wanted, in (0, 1).

    Returns
    -------
    float
        The marginal level, between ``level`` and 1.

    Raises
    ------
    ValueError
        For ``level`` outside (0, 1) or samples that are not 2-D.
    """
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), found {level!r}")
    arr = np.asarray(samples, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[0] == 0:
        raise ValueError(f"samples must be (n_boot, n_columns) with n_boot >= 1, found shape {arr.shape}")
    needed = np.zeros(arr.shape[0])
    for column in arr.T:
        finite = ~np.isnan(column)
        values = column[finite]
        n = len(values)
        if n < 2:
            continue
        ordered = np.sort(values)
        below = np.searchsorted(ordered, values, side="left")  # index of the first copy of the value
        top = np.searchsorted(ordered, values, side="right") - 1  # index of its last copy
        # numpy's linear quantile q sits at position q (n - 1) of the sorted values: the lower bound is <= the
        # value when (1 - lam) / 2 (n - 1) <= top, the upper bound >= it when (1 + lam) / 2 (n - 1) >= below
        lam = np.maximum(1 - 2 * top / (n - 1), 2 * below / (n - 1) - 1)
        needed[finite] = np.maximum(needed[finite], lam)
    k = int(np.ceil(level * len(needed))) - 1
    return float(min(1.0, max(np.partition(needed, k)[k], level)))


def simultaneous_interval(samples, level: float = 0.95) -> tuple[np.ndarray, np.ndarray, float]:
    """Compute a simultaneous percentile band over the columns of bootstrap samples (max-statistic calibration).

    The marginal percentile intervals are widened to the common level of :func:`simultaneous_level`, so that the
    band covers every column at once in ``level`` of the samples. A column whose band excludes 0 is a
    difference that survives with the family-wise error rate held near ``1 - level`` over the columns (as far as
    the bootstrap distribution's tails match the sampling distribution's). Unlike Bonferroni's per-column level
    ``1 - (1 - level) / m``, the calibration uses the samples' dependence (correlated columns give a narrower
    band; independent ones about Sidak's ``level ** (1 / m)``), and it keeps the percentile intervals' shape
    (skewed, bounded MCC distributions).

    Parameters
    ----------
    samples : array_like, shape (n_boot, n_columns)
        Bootstrap samples, as in :func:`simultaneous_level`.
    level : float
        Joint coverage, in (0, 1).

    Returns
    -------
    low, high : numpy.ndarray, shape (n_columns,)
        The band; each contains the marginal percentile interval at ``level``.
    marginal_level : float
        The common marginal level used.

    Raises
    ------
    ValueError
        As :func:`simultaneous_level`.
    """
    arr = np.asarray(samples, dtype=np.float64)
    lam = simultaneous_level(arr, level)
    low, high = np.full(arr.shape[1], np.nan), np.full(arr.shape[1], np.nan)
    for j, column in enumerate(arr.T):
        values = np.sort(column[~np.isnan(column)])
        if len(values):
            low[j], high[j] = _linear_quantiles(values, [(1 - lam) / 2, (1 + lam) / 2])
            marginal = _linear_quantiles(values, [(1 - level) / 2, (1 + level) / 2])
            low[j], high[j] = min(low[j], marginal[0]), max(high[j], marginal[1])
    return low, high, lam


def _linear_quantiles(ordered: np.ndarray, q) -> np.ndarray:
    """Numpy's linear quantiles of sorted values, with positions within rounding of an integer taken as exact.

    :func:`simultaneous_level` puts the band's ends exactly on sample positions; ``q * (n - 1)`` computed in
    floating point can land a hair past them and leave the boundary sample out.
    """
    pos = np.asarray(q, dtype=np.float64) * (len(ordered) - 1)
    pos = np.where(np.abs(pos - np.round(pos)) < 1e-9, np.round(pos), pos)
    lo = np.floor(pos).astype(np.int64)
    hi = np.minimum(lo + 1, len(ordered) - 1)
    return ordered[lo] + (pos - lo) * (ordered[hi] - ordered[lo])
