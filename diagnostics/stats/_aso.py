"""Almost Stochastic Order (ASO) of per-run scores, per diagnostic category.

ASO (Dror, Shlomov and Reichart 2019, "Deep Dominance", building on del Barrio, Cuesta-Albertos and Matrán 2018)
compares two *distributions* of scores, here the per-run (per-seed) MCC of two settings in one category, instead
of their means. With ``F`` and ``G`` the score distributions of A and B and ``F^-1``, ``G^-1`` their quantile
functions, the violation ratio

    eps_W2(F, G) = int_{t: F^-1(t) < G^-1(t)} (F^-1(t) - G^-1(t))^2 dt / int_0^1 (F^-1(t) - G^-1(t))^2 dt

is the share of the squared Wasserstein-2 distance where A's quantile lies below B's: 0 when A is stochastically
dominant over B (every quantile of A at least B's), 1 when B is, 0.5 when the distributions are equal. Its
estimate on the empirical quantile functions of the n and m runs is bootstrapped (both sides resampled with
replacement, ``n_boot`` times); with ``sigma`` the standard deviation of the bootstrap ratios, the one-sided upper
confidence bound at level ``confidence`` is

    eps_min = eps_hat + sigma * Phi^-1(confidence)     (clipped to [0, 1]),

the documented estimator of the ``deepsig`` package (Ulmer, Hardmeier and Frellsen 2022, ``aso``, whose
``sqrt(n m / (n + m))`` scaling cancels out). ``eps_min < tau`` (``tau = 0.5`` by default) declares A *almost
stochastically dominant* over B: the share of the order that is violated is below ``tau`` with confidence
``confidence``. The bound for B over A follows from the same draws (``1 - eps_hat``, the same ``sigma``).

Implementation notes (our own, not deepsig's code):

* The integrals are computed exactly: empirical quantile functions are step functions whose steps sit at ``i / n``
  and ``j / m``, so each integral is a weighted sum over the at most ``n + m`` intervals between these points.
  deepsig 1.2.8 sums over the grid ``t = 0.005, 0.010, ... 0.995`` instead (``dt = 0.005``, indices from
  ``ceil(n t)`` in floating point, the first grid point left out of the numerator): its ratio is off the exact one
  by up to about 0.03 with 10 or fewer scores per side and 0.05-0.09 with 20-200, where a step of the quantile
  function spans one to a few grid points.
  ``integration="deepsig"`` reproduces its sum (to reproduce its numbers up to the random stream).
  Equal quantile functions (zero distance) give 0.5, as in deepsig.
* The bootstrap is vectorised: the runs are sorted once, the drawn run indices sorted (a sorted resample of sorted
  values is the values at the sorted indices), and the ratios of every resample and every category are one array
  expression. ``numpy.random.default_rng(seed)`` draws the indices in fixed chunks: a seed fully determines the result.
* Multiple comparisons: ``eps_min < tau`` is the one-sided test of H0 ``eps >= tau`` whose p-value is
  ``Phi((eps_hat - tau) / sigma)`` (it is below ``1 - confidence`` exactly when ``eps_min < tau``). Over the
  categories these p-values are adjusted with Holm (default) or Benjamini-Hochberg, as every per-category test of
  ``diagnostics.stats`` is, and ``dominant`` is ``p_adjusted < 1 - confidence``. deepsig's correction is
  Bonferroni on the confidence level (``num_comparisons``): level ``1 - (1 - confidence) / m``, the same as
  rejecting where ``m p < 1 - confidence``. Holm rejects wherever Bonferroni does and possibly more, with the same
  family-wise guarantee under any dependence (categories share runs and examples), so it is the default here;
  :func:`aso` takes ``num_comparisons`` for Bonferroni's bound. (deepsig 1.2.8 itself raises the level to
  ``c + (1 - c) / m``, which is Bonferroni's level only for m = 2: for 33 categories at 0.95 it is 0.9515, almost
  no correction.)

Caveats: the bootstrap sees only the runs there are. With 3-5 seeds per side the resamples take few distinct
values, ``sigma`` underestimates the sampling error, and two sides whose runs do not overlap at all get
``eps_min = 0`` whatever their distance; with one run per side ASO only compares two numbers (refused by the
setting-level functions). ``tau = 0.5`` is the original, lenient threshold (more than half of the order may still
be violated at ``tau`` just below 0.5); Ulmer et al. recommend reporting ``eps_min`` itself and choosing
``tau <= 0.2`` for a confident claim. ASO treats the runs as independent draws: it ignores a pairing of seeds
between the sides, and in nested designs every (pretraining seed, seed) run counts as one draw. And it holds the
test examples fixed: it speaks of training randomness on this diagnostic set, where the Multi-Bootstrap delta
(:func:`~diagnostics.stats.compare_settings`) also resamples the examples; on small categories ASO can declare
dominance where the delta's interval still crosses 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from math import gcd

import numpy as np
import pandas as pd

from ..core.errors import UserInputError
from ._bootstrap import Metric, per_run_metric
from ._matrix import SettingMatrix, setting_arrays, setting_matrices
from ._multiple import adjust_pvalues
from ._scores import ALL, OVERALL, overall_n
from ._table import SETTING_KEYS

#: Bootstrap resamples drawn and evaluated together; fixed, so that results never depend on memory settings.
CHUNK = 256
#: Ways to integrate the quantile functions: exactly (default), or as deepsig 1.2.8 does (to reproduce its numbers).
INTEGRATIONS = ("exact", "deepsig")
#: The grid step of deepsig's ``aso`` (its default ``dt``).
DEEPSIG_DT = 0.005
#: Adjustments of the per-category ASO p-values over the categories.
ADJUSTMENTS = ("holm", "bh", "none")


@dataclass(frozen=True)
class ASOResult:
    """The result of :func:`aso`: point estimate, bootstrap spread and bounds, per score pair.

    Parameters
    ----------
    violation_ratio : float or numpy.ndarray
        ``eps_hat``, the violation ratio of A over B on the scores given (0: A dominant, 1: B dominant).
    boot_std : float or numpy.ndarray
        ``sigma``, the standard deviation (ddof 0) of the bootstrap violation ratios.
    eps_min : float or numpy.ndarray
        Upper confidence bound of the violation ratio of A over B (``eps_min < tau``: A almost stochastically
        dominant over B).
    eps_min_ba : float or numpy.ndarray
        The same for B over A.
    p_value : float or numpy.ndarray
        One-sided p-value of H0 ``eps >= tau`` for A over B, ``Phi((eps_hat - tau) / sigma)``.
    p_value_ba : float or numpy.ndarray
        The same for B over A.
    confidence : float
        Confidence level of the bounds (after the Bonferroni step when ``num_comparisons > 1``).
    tau : float
        Threshold of the p-values.
    n_boot : int
        Bootstrap resamples.
    seed : int
        Seed of the resampling.
    """

    violation_ratio: float | np.ndarray
    boot_std: float | np.ndarray
    eps_min: float | np.ndarray
    eps_min_ba: float | np.ndarray
    p_value: float | np.ndarray
    p_value_ba: float | np.ndarray
    confidence: float
    tau: float
    n_boot: int
    seed: int


def _grid(n: int, m: int, integration: str = "exact") -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Where both empirical quantile functions are evaluated, and the weights of the two integrals.

    ``exact``: the intervals ``(u_{k-1}, u_k]`` between consecutive points of ``{i / n} | {j / m}``, on which both
    step functions are constant; the index of A's and of B's sorted scores there (``ceil(n u_k) - 1``,
    ``ceil(m u_k) - 1``) and the interval's width, from integer arithmetic on the common denominator
    ``lcm(n, m)``. ``deepsig``: deepsig 1.2.8's Riemann sum, the points ``t = dt, 2 dt, ... < 1`` of
    ``numpy.arange(dt, 1, dt)`` with ``dt = 0.005``, the indices from ``ceil(n t) - 1`` in floating point, weight
    ``dt`` each, and the first point left out of the numerator. Returns ``index_a, index_b, weight`` (denominator)
    and ``weight_violated`` (numerator).
    """
    if integration == "deepsig":
        t = np.arange(DEEPSIG_DT, 1, DEEPSIG_DT)
        index_a = np.clip(np.ceil(n * t).astype(np.int64) - 1, 0, n - 1)
        index_b = np.clip(np.ceil(m * t).astype(np.int64) - 1, 0, m - 1)
        weight = np.full(len(t), DEEPSIG_DT)
        violated = weight.copy()
        violated[0] = 0.0
        return index_a, index_b, weight, violated
    lcm = n * m // gcd(n, m)
    ends = np.union1d(np.arange(1, n + 1) * (lcm // n), np.arange(1, m + 1) * (lcm // m))
    width = np.diff(ends, prepend=0) / lcm
    index_a = -(-ends // (lcm // n)) - 1
    index_b = -(-ends // (lcm // m)) - 1
    return index_a, index_b, width, width


def _ratio(diff: np.ndarray, weight: np.ndarray, weight_violated: np.ndarray) -> np.ndarray:
    """Violation ratio from ``G^-1 - F^-1`` at the grid's points (last axis); 0.5 where the distance is 0."""
    squared = diff * diff
    total = squared @ weight
    violated = np.where(diff > 0, squared, 0.0) @ weight_violated
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, violated / np.where(total > 0, total, 1.0), 0.5)


def violation_ratio(scores_a, scores_b, integration: str = "exact") -> float | np.ndarray:
    """Compute the violation ratio ``eps_W2`` of A over B from the empirical quantile functions (exact integrals).

    Parameters
    ----------
    scores_a : array_like, shape (..., n)
        Scores of A (higher is better); leading axes are separate comparisons.
    scores_b : array_like, shape (..., m)
        Scores of B, with the same leading axes.
    integration : {"exact", "deepsig"}
        Exact integrals of the step functions (default), or deepsig 1.2.8's Riemann sum (``dt = 0.005``, first
        point left out of the numerator), which reproduces its ``compute_violation_ratio`` (off by up to a few
        hundredths).

    Returns
    -------
    float or numpy.ndarray
        In [0, 1]: the share of the squared Wasserstein-2 distance where A's quantile function lies below B's
        (0: A stochastically dominant over B); 0.5 where the two are equal. A float for 1-D inputs.

    Raises
    ------
    ValueError
        For empty or non-finite scores, leading axes that differ, or an unknown integration.
    """
    _check_integration(integration)
    a, b = _scores(scores_a, scores_b)
    index_a, index_b, weight, violated = _grid(a.shape[-1], b.shape[-1], integration)
    value = _ratio(b[..., index_b] - a[..., index_a], weight, violated)
    return float(value) if value.ndim == 0 else value


def _scores(scores_a, scores_b) -> tuple[np.ndarray, np.ndarray]:
    """Both sides as float arrays sorted along the last axis, checked."""
    a, b = np.asarray(scores_a, dtype=np.float64), np.asarray(scores_b, dtype=np.float64)
    for name, x in (("scores_a", a), ("scores_b", b)):
        if x.ndim == 0 or x.shape[-1] == 0:
            raise ValueError(f"{name} must hold at least one score along its last axis, found shape {x.shape}")
        if not np.isfinite(x).all():
            raise ValueError(f"{name} must be finite, found {x[~np.isfinite(x)].ravel()[0]!r}")
    if a.shape[:-1] != b.shape[:-1]:
        raise ValueError(f"scores_a and scores_b must have the same leading axes, found shapes {a.shape} and "
                         f"{b.shape}")
    return np.sort(a, axis=-1), np.sort(b, axis=-1)


def _check_levels(confidence: float, tau: float, n_boot) -> None:
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie in (0, 1), found {confidence!r}")
    if not 0 < tau < 1:
        raise ValueError(f"tau must lie in (0, 1), found {tau!r}")
    if not isinstance(n_boot, (int, np.integer)) or isinstance(n_boot, bool) or n_boot < 2:
        raise ValueError(f"n_boot must be an integer of at least 2, found {n_boot!r}")


def _check_integration(integration: str) -> None:
    if integration not in INTEGRATIONS:
        raise ValueError(f"integration must be one of {INTEGRATIONS}, found {integration!r}")


def _boot_std(a: np.ndarray, b: np.ndarray, n_boot: int, seed: int, integration: str = "exact") -> np.ndarray:
    """Standard deviation (ddof 0) of the bootstrap violation ratios; ``a``, ``b`` sorted along the last axis."""
    n, m = a.shape[-1], b.shape[-1]
    index_a, index_b, weight, violated = _grid(n, m, integration)
    rng = np.random.default_rng(seed)
    ratios = np.empty(a.shape[:-1] + (n_boot,))
    done = 0
    while done < n_boot:
        size = min(CHUNK, n_boot - done)
        draw_a = np.sort(rng.integers(0, n, size=(size, n)), axis=1)[:, index_a]  # (size, K) run index per interval
        draw_b = np.sort(rng.integers(0, m, size=(size, m)), axis=1)[:, index_b]
        ratios[..., done:done + size] = _ratio(b[..., draw_b] - a[..., draw_a], weight, violated)
        done += size
    return ratios.std(axis=-1)


def _bound_and_p(ratio: np.ndarray, sigma: np.ndarray, confidence: float, tau: float):
    from scipy.special import ndtr, ndtri

    eps_min = np.clip(ratio + sigma * ndtri(confidence), 0.0, 1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.where(sigma > 0, ndtr((ratio - tau) / np.where(sigma > 0, sigma, 1.0)),
                     np.where(ratio < tau, 0.0, 1.0))
    return eps_min, p


def aso(scores_a, scores_b, confidence: float = 0.95, n_boot: int = 1000, seed: int = 0, tau: float = 0.5,
        num_comparisons: int = 1, integration: str = "exact") -> ASOResult:
    """Test whether A is almost stochastically dominant over B (and B over A) from two samples of scores.

    Parameters
    ----------
    scores_a : array_like, shape (..., n)
        Scores of A, one per run (higher is better); leading axes (e.g. categories) are separate comparisons,
        all resampled with the same run draws.
    scores_b : array_like, shape (..., m)
        Scores of B, with the same leading axes; ``m`` may differ from ``n``.
    confidence : float
        Confidence level of the upper bound ``eps_min`` (deepsig's ``confidence_level``).
    n_boot : int
        Bootstrap resamples of both sides (deepsig's ``num_bootstrap_iterations``), at least 2.
    seed : int
        Seed of ``numpy.random.default_rng``: it fully determines the result.
    tau : float
        Threshold of the p-values (H0: ``eps >= tau``), in (0, 1).
    num_comparisons : int
        deepsig's Bonferroni correction: the bound is taken at ``1 - (1 - confidence) / num_comparisons``.
    integration : {"exact", "deepsig"}
        How the quantile functions are integrated (:func:`violation_ratio`); ``deepsig`` reproduces deepsig
        1.2.8's ``aso`` up to its random stream.

    Returns
    -------
    ASOResult
        Floats for 1-D inputs, arrays of the leading shape otherwise.

    Raises
    ------
    ValueError
        For empty or non-finite scores, mismatched leading axes, or a level, threshold, ``n_boot`` or
        ``num_comparisons`` out of range, or an unknown integration.

    Examples
    --------
    >>> result = aso([0.61, 0.64, 0.66, 0.70, 0.72], [0.52, 0.55, 0.58, 0.60, 0.63], seed=1)
    >>> round(result.violation_ratio, 3), result.eps_min < 0.5
    (0.0, True)
    """
    _check_levels(confidence, tau, n_boot)
    _check_integration(integration)
    if not isinstance(num_comparisons, (int, np.integer)) or num_comparisons < 1:
        raise ValueError(f"num_comparisons must be a positive integer, found {num_comparisons!r}")
    confidence = 1 - (1 - confidence) / num_comparisons  # Bonferroni
    a, b = _scores(scores_a, scores_b)
    index_a, index_b, weight, violated = _grid(a.shape[-1], b.shape[-1], integration)
    ratio = _ratio(b[..., index_b] - a[..., index_a], weight, violated)
    sigma = _boot_std(a, b, int(n_boot), seed, integration)
    eps_min, p = _bound_and_p(ratio, sigma, confidence, tau)
    eps_min_ba, p_ba = _bound_and_p(1.0 - ratio, sigma, confidence, tau)
    values = [ratio, sigma, eps_min, eps_min_ba, p, p_ba]
    if ratio.ndim == 0:
        values = [float(v) for v in values]
    return ASOResult(*values, confidence=float(confidence), tau=float(tau), n_boot=int(n_boot), seed=int(seed))


def run_scores(arr: SettingMatrix, metric: Metric = "mcc", by: str = "category") -> tuple[list[str], np.ndarray,
                                                                                            np.ndarray]:
    """Score every run of a setting in every category, the samples ASO compares.

    Parameters
    ----------
    arr : SettingMatrix
        A complete setting with categories (:func:`~diagnostics.stats.setting_arrays`).
    metric : {"mcc", "accuracy"} or callable
        The metric, as in :func:`~diagnostics.stats.multibootstrap`.
    by : {"category", "coarse"}
        The categories ``arr`` holds; ``category`` adds the overall row (mean of the fine categories per run).

    Returns
    -------
    names : list of str
        The categories, then ``All examples`` and (``by="category"`` with categories) ``Overall (mean of fine)``.
    scores : numpy.ndarray, shape (n_rows, n_runs)
        Each run's metric per row; every (pretraining seed, seed) run of a nested design is one column.
    n : numpy.ndarray of int, shape (n_rows,)
        Examples per row.
    """
    pred, labels = arr.pred, arr.gold
    if (pred < 0).any():
        arr.predictions  # noqa: B018 - refuses runs without every example, naming them
    whole = np.arange(len(labels))[None]
    names, rows, counts = [], [], []
    cats = arr.categories
    if cats is not None and cats.shape[1]:
        per_category = per_run_metric(pred, labels, metric, whole, cats)[0].T  # (n_categories, n_runs)
        names += list(arr.category_names)
        rows.append(per_category)
        counts += list(cats.sum(axis=0).astype(np.int64))
    names.append(ALL)
    rows.append(per_run_metric(pred, labels, metric, whole)[0].T)
    counts.append(len(labels))
    if by == "category" and cats is not None and cats.shape[1]:
        names.append(OVERALL)
        rows.append(per_category.mean(axis=0)[None])
        counts.append(overall_n(cats))
    return names, np.concatenate(rows, axis=0), np.asarray(counts, dtype=np.int64)


def _adjusted(p: np.ndarray, family: np.ndarray, adjust: str) -> np.ndarray:
    out = p.copy()
    if adjust != "none" and family.any():
        out[family] = adjust_pvalues(p[family], adjust)
    return out


def _check_options(by: str, adjust: str) -> None:
    if by not in ("category", "coarse"):
        raise UserInputError(f"by: expected one of category, coarse, found {by!r}")
    if adjust not in ADJUSTMENTS:
        raise UserInputError(f"adjust: expected one of {', '.join(ADJUSTMENTS)}, found {adjust!r}")


def aso_matrices(arr_a: SettingMatrix, arr_b: SettingMatrix, metric: Metric = "mcc", by: str = "category",
                 confidence: float = 0.95, n_boot: int = 1000, seed: int = 0, tau: float = 0.5,
                 adjust: str = "holm") -> pd.DataFrame:
    """Compare the per-run scores of two settings with ASO in every category they share.

    Parameters
    ----------
    arr_a, arr_b : SettingMatrix
        Complete settings with categories (:func:`~diagnostics.stats.setting_arrays`); they may be on different
        examples or datasets (ASO compares score distributions, not examples).
    metric : {"mcc", "accuracy"} or callable
        The per-run metric.
    by : {"category", "coarse"}
        The categories the settings hold.
    confidence : float
        Confidence level of ``eps_min``; ``dominant`` is ``p_adjusted < 1 - confidence``.
    n_boot : int
        Bootstrap resamples.
    seed : int
        Seed of the resampling (one draw of runs shared by all categories).
    tau : float
        Threshold of dominance.
    adjust : {"holm", "bh", "none"}
        Adjustment of the p-values over the categories (the summary rows are families of one).

    Returns
    -------
    pandas.DataFrame
        One row per shared category, then ``All examples`` and ``Overall``: ``category, in_family, n_a, n_b,
        runs_a, runs_b, mean_a, mean_b, violation_ratio, boot_std, eps_min, eps_min_ba, p_value, p_value_ba,
        p_adjusted, p_adjusted_ba, dominant, dominant_ba, confidence, tau, n_boot, seed, adjust``.

    Raises
    ------
    UserInputError
        A side with fewer than two runs, or an unknown option.
    """
    _check_options(by, adjust)
    try:
        _check_levels(confidence, tau, n_boot)
    except ValueError as err:
        raise UserInputError(str(err)) from None
    for side, arr in (("A", arr_a), ("B", arr_b)):
        if len(arr.runs) < 2:
            raise UserInputError(f"{side} {arr.setting}: ASO compares distributions over runs and needs at least "
                                 f"2 runs per side, found {len(arr.runs)}")
    names_a, scores_a, n_a = run_scores(arr_a, metric, by)
    names_b, scores_b, n_b = run_scores(arr_b, metric, by)
    position_b = {name: i for i, name in enumerate(names_b)}
    keep = [i for i, name in enumerate(names_a) if name in position_b]
    names = [names_a[i] for i in keep]
    take_b = [position_b[name] for name in names]
    sa, sb = scores_a[keep], scores_b[take_b]
    result = aso(sa, sb, confidence, int(n_boot), seed, tau)
    family = np.array([name not in (ALL, OVERALL) for name in names], dtype=bool)
    dominance_level = 1 - confidence
    p_adjusted = _adjusted(result.p_value, family, adjust)
    p_adjusted_ba = _adjusted(result.p_value_ba, family, adjust)
    return pd.DataFrame({
        "category": names, "in_family": family, "n_a": n_a[keep], "n_b": n_b[take_b],
        "runs_a": sa.shape[1], "runs_b": sb.shape[1], "mean_a": sa.mean(axis=1), "mean_b": sb.mean(axis=1),
        "violation_ratio": result.violation_ratio, "boot_std": result.boot_std, "eps_min": result.eps_min,
        "eps_min_ba": result.eps_min_ba, "p_value": result.p_value, "p_value_ba": result.p_value_ba,
        "p_adjusted": p_adjusted, "p_adjusted_ba": p_adjusted_ba, "dominant": p_adjusted < dominance_level,
        "dominant_ba": p_adjusted_ba < dominance_level, "confidence": confidence, "tau": tau,
        "n_boot": int(n_boot), "seed": seed, "adjust": adjust})


def aso_compare(predictions: pd.DataFrame, a: Mapping | None, b: Mapping | None, metric: Metric = "mcc",
                by: str = "category", confidence: float = 0.95, n_boot: int = 1000, seed: int = 0,
                tau: float = 0.5, adjust: str = "holm", dataset=None, *,
                predictions_b: pd.DataFrame | None = None) -> pd.DataFrame:
    """Compare two settings with Almost Stochastic Order, per category, over their runs' scores.

    Per category (then all examples, and the overall mean of the fine categories), the per-run scores of A and B
    (e.g. each seed's MCC) are compared as distributions: ``eps_min`` is the upper confidence bound of the
    violation ratio of A over B (:func:`aso`), and A is almost stochastically dominant over B where it is below
    ``tau`` after the adjustment over the categories. See :mod:`diagnostics.stats._aso` for the method, the
    correction and the caveats with few seeds.

    Parameters
    ----------
    predictions : pandas.DataFrame
        A validated predictions table.
    a, b : mapping or None
        Each selects one setting (see :func:`~diagnostics.stats.select_rows`); None for a table holding one.
        The settings may be on different examples (another language's diagnostic): only categories both have are
        compared.
    metric : {"mcc", "accuracy"} or callable
        The per-run metric.
    by : {"category", "coarse"}
        Fine (with the overall mean) or coarse categories.
    confidence : float
        Confidence level of ``eps_min``.
    n_boot : int
        Bootstrap resamples (at least 2).
    seed : int
        Seed of the resampling: it fully determines the result.
    tau : float
        Dominance threshold (0.5, the original; 0.2 or below for a confident claim).
    adjust : {"holm", "bh", "none"}
        Adjustment of the p-values over the categories.
    dataset : str, DataRef, pandas.DataFrame or mapping, optional
        Category source, as in :func:`~diagnostics.stats.setting_arrays`.
    predictions_b : pandas.DataFrame, optional
        The table ``b`` selects from, when it is another table than ``predictions``.

    Returns
    -------
    pandas.DataFrame
        ``a_<key>``/``b_<key>`` for the setting keys that differ, then the columns of :func:`aso_matrices`.

    Raises
    ------
    UserInputError
        Selections that are not one setting each, a side with fewer than two runs, or an unknown option.
    """
    _check_options(by, adjust)
    arr_a = setting_arrays(predictions, a, dataset, by, what="A")
    arr_b = setting_arrays(predictions if predictions_b is None else predictions_b, b, dataset, by, what="B")
    out = aso_matrices(arr_a, arr_b, metric, by, confidence, n_boot, seed, tau, adjust)
    differing = [k for k in SETTING_KEYS if arr_a.setting[k] != arr_b.setting[k]] or list(SETTING_KEYS)
    for i, key in enumerate(differing):
        out.insert(2 * i, f"a_{key}", arr_a.setting[key])
        out.insert(2 * i + 1, f"b_{key}", arr_b.setting[key])
    return out


def aso_settings(predictions: pd.DataFrame, settings: Sequence[Mapping] | None = None, metric: Metric = "mcc",
                 by: str = "category", confidence: float = 0.95, n_boot: int = 1000, seed: int = 0,
                 tau: float = 0.5, adjust: str = "holm", dataset=None) -> pd.DataFrame:
    """Compare every ordered pair of settings with Almost Stochastic Order, per category (deepsig's ``multi_aso``).

    Each unordered pair is computed once (:func:`aso_matrices` with ``seed``, so a row equals the one
    :func:`aso_compare` gives for that pair) and reported in both directions.

    Parameters
    ----------
    predictions : pandas.DataFrame
        A validated predictions table.
    settings : sequence of mapping, optional
        Selections of the settings to compare (each names one setting); default every setting of the table.
    metric : {"mcc", "accuracy"} or callable
        The per-run metric.
    by : {"category", "coarse"}
        Fine (with the overall mean) or coarse categories.
    confidence : float
        Confidence level of ``eps_min``.
    n_boot : int
        Bootstrap resamples.
    seed : int
        Seed of the resampling of every pair.
    tau : float
        Dominance threshold.
    adjust : {"holm", "bh", "none"}
        Adjustment over the categories of each ordered pair. Nothing is adjusted over the pairs: with k settings
        there are k (k - 1) / 2 comparisons per category (deepsig's ``multi_aso`` applies Bonferroni over them);
        adjust the ``p_value`` column over the pairs you test (:func:`~diagnostics.stats.adjust_pvalues`).
    dataset : str, DataRef, pandas.DataFrame or mapping, optional
        Category source, as in :func:`~diagnostics.stats.setting_arrays`.

    Returns
    -------
    pandas.DataFrame
        One row per ordered pair (A, B), A != B, and shared category: ``a_<key>``, ``b_<key>`` for every setting
        key, ``category, in_family, n_a, n_b, runs_a, runs_b, mean_a, mean_b, violation_ratio, boot_std,
        eps_min, p_value, p_adjusted, dominant`` (A over B) and the options. ``eps_min`` of (A, B) and (B, A)
        pivoted by ``a_*`` and ``b_*`` give deepsig's matrix.

    Raises
    ------
    UserInputError
        Fewer than two settings, a selection that is not one setting, a setting with fewer than two runs, or an
        unknown option.
    """
    _check_options(by, adjust)
    if settings is None:
        settings = [m.setting for m in setting_matrices(predictions, validate=False)]
    arrays = [setting_arrays(predictions, s, dataset, by, what="setting") for s in settings]
    if len(arrays) < 2:
        raise UserInputError(f"ASO compares settings: found {len(arrays)} setting(s), need at least 2")
    parts = []
    forward = ["violation_ratio", "eps_min", "p_value", "p_adjusted", "dominant"]
    for i, arr_a in enumerate(arrays):
        for arr_b in arrays[i + 1:]:
            frame = aso_matrices(arr_a, arr_b, metric, by, confidence, n_boot, seed, tau, adjust)
            back = frame.rename(columns={"n_a": "n_b", "n_b": "n_a", "runs_a": "runs_b", "runs_b": "runs_a",
                                         "mean_a": "mean_b", "mean_b": "mean_a"})
            back["violation_ratio"] = 1.0 - frame["violation_ratio"].to_numpy()
            for column in forward[1:]:
                back[column] = frame[f"{column}_ba"].to_numpy()
            for first, second, rows in ((arr_a, arr_b, frame), (arr_b, arr_a, back)):
                rows = rows.drop(columns=[f"{c}_ba" for c in forward[1:]])
                for j, key in enumerate(SETTING_KEYS):
                    rows.insert(2 * j, f"a_{key}", first.setting[key])
                    rows.insert(2 * j + 1, f"b_{key}", second.setting[key])
                parts.append(rows)
    return pd.concat(parts, ignore_index=True)


__all__ = ["ASOResult", "aso", "aso_compare", "aso_matrices", "aso_settings", "run_scores", "violation_ratio"]
