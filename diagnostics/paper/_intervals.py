"""Where each number the study prints lies in our distribution: an interval over our seeds, examples held fixed.

The study's numbers and ours are computed on the same AX-b / LiDiRus examples, so resampling the examples would add
a variance that does not separate the two numbers; only the seeds differ. Every interval is over our seeds, and
each is built by a method that keeps its level with the few seeds a study has (3 to 10):

* a **single-run** number (printed for one seed, e.g. "Conditionals, en, seed 0: 0.6") against the prediction
  interval of one new run, ``mean ± t(n-1) · s · sqrt(1 + 1/n)`` over our ``n`` runs (:data:`PREDICTION`). No seed of
  ours is paired with the study's seed of the same index (the random streams differ). A statistic of one run per
  language (the cross-language correlation of Fig. 1) is computed for every combination of one run per language,
  since nothing pairs runs of different languages either; the spread of a new combination then comes from the
  crossed layout's mean squares (each language's run effect and their interaction) with Satterthwaite's degrees
  of freedom;
* a **mean** over seeds (:data:`T_SEEDS`) against the t-interval ``mean ± t(n-1) · s / sqrt(n)``; a mean over
  languages of seed means against the Welch interval (Welch-Satterthwaite degrees of freedom). A percentile
  bootstrap of a mean over six seeds is too narrow (its spread is ``sqrt((n-1)/n)`` of the standard error, and a
  normal quantile stands for a t one), so it covers less than its level;
* a **σ** over seeds (:data:`CHI_SQUARE`) against the chi-square interval for σ under normality,
  ``[sqrt((n-1) s² / χ²(1-α/2, n-1)), sqrt((n-1) s² / χ²(α/2, n-1))]``: exact for normal runs at any ``n``. A
  bootstrap σ over six resampled seeds is biased low (its expected variance is ``(n-1)/n · s²`` before ties, and a
  draw of one seed six times has σ = 0), so its interval sits low. The study's σ ranges (smallest and largest σ over
  languages) take each language's interval at the tail ``a`` that solves ``(1-a)^L - a^L = level`` for ``L``
  languages and reduce the ends alike (min or max): exact when every language has the same σ and when their σ lie
  far apart at ``L = 2``, conservative in between for more languages;
* any other statistic about all seeds (RS corr, a relative change, a share of cells, a σ decrease, a correlation
  of improvements) against the **jackknife** t-interval (:data:`JACKKNIFE`): each setting's seeds left out one at a
  time, the variance ``Σ_settings (n-1)/n Σ_i (θ_(i) - θ_(·))²`` and Welch-Satterthwaite degrees of freedom. For a
  mean it is the t (Welch) interval exactly; for a smooth statistic it is the t-interval of its linearisation.

"inside" means the interval holds the paper's number, "outside" that it does not, and "degenerate (all seeds
equal)" that the interval has no width (every seed gives the same value: there is no spread to place a number in).
How often "outside" fires when the paper's numbers come from our distribution is simulated by
:mod:`diagnostics.paper._chance`.
"""

from __future__ import annotations

import functools
import math
import warnings

import numpy as np
import pandas as pd

from ._draws import leave_one_out
from ._samplers import NO_INTERVAL, RUN_VALUES, SAMPLERS, SIGMA_RANGES, RunValues, sigma_columns
from ._values import SEED_VALUES
from ._view import StoreView

#: Interval kinds (the ``interval`` column of :func:`~diagnostics.paper.against_paper`).
PREDICTION = "prediction over seeds"
T_SEEDS = "t over seeds"
CHI_SQUARE = "chi-square over seeds"
JACKKNIFE = "jackknife t over seeds"
#: Statistics about all seeds whose interval is the t (Welch) interval of a mean.
MEANS = frozenset({"mean_mcc"})
#: Magnitudes below this are floating-point noise: they read as 0, and an interval this narrow has no width.
NOISE = 1e-12
DEGENERATE = "degenerate (all seeds equal)"
#: The verdict of a jackknife interval without width.
DEGENERATE_JACKKNIFE = "degenerate (leaving any one seed out changes nothing)"


def _check_level(level: float) -> None:
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), found {level!r}")


@functools.lru_cache(maxsize=512)
def _t_quantile(q: float, df: float) -> float:
    """Student's t quantile (cached: every row asks for the same few)."""
    from scipy import stats

    return float(stats.t.ppf(q, df))


def _t(q: float, df: np.ndarray) -> np.ndarray:
    df = np.asarray(df, dtype=np.float64)
    if df.ndim == 0 or np.unique(df[np.isfinite(df)]).size <= 1:
        finite = df[np.isfinite(df)]
        value = _t_quantile(q, float(finite.flat[0])) if finite.size else float("nan")
        return np.where(np.isfinite(df), value, np.nan)
    from scipy import stats

    return stats.t.ppf(q, df)


def snap(values):
    """Floating-point noise (magnitude below :data:`NOISE`) set to exactly 0; arrays and scalars alike."""
    x = np.asarray(values, dtype=np.float64)
    x = np.where(np.abs(x) < NOISE, 0.0, x)
    return float(x) if x.ndim == 0 else x


def _finite_rows(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean, sum of squared deviations and count of the finite values along the last axis."""
    x = np.asarray(values, dtype=np.float64)
    ok = np.isfinite(x)
    n = ok.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(ok, x, 0.0).sum(axis=-1) / n
        ss = (np.where(ok, x - mean[..., None], 0.0) ** 2).sum(axis=-1)
    return mean, ss, n


def prediction_interval(values, level: float = 0.95) -> tuple[float, float]:
    """Prediction interval for one new run from our runs' values: mean ± t(n-1) · s · sqrt(1 + 1/n).

    Parameters
    ----------
    values : array_like
        One value per run of ours (NaN values are left out).
    level : float
        Coverage of the interval for a new run from a normal distribution, in (0, 1).

    Returns
    -------
    (float, float)
        The low and high ends; NaN with fewer than two values.
    """
    _check_level(level)
    low, high = prediction_bounds(np.asarray(values, dtype=np.float64)[None], None, level)
    return float(low[0]), float(high[0])


def prediction_bounds(values: np.ndarray, shape: tuple | None, level: float) -> tuple[np.ndarray, np.ndarray]:
    """Vectorised prediction interval of one new value per row of ``values`` ``(n_draws, n_values)``.

    ``shape``: None when each value is one run (``mean ± t(n-1) · s · sqrt(1 + 1/n)``); the runs per language when the
    values are every combination of one run per language (C order), see :func:`_combination_bounds`.
    """
    if shape is not None and len(shape) > 1:
        return _combination_bounds(values, shape, level)
    mean, ss, n = _finite_rows(values)
    with np.errstate(invalid="ignore", divide="ignore"):
        half = _t((1 + level) / 2, np.where(n >= 2, n - 1, np.nan)) * np.sqrt(ss / (n - 1) * (1 + 1 / n))
    return mean - half, mean + half


def _combination_bounds(values: np.ndarray, shape: tuple, level: float) -> tuple[np.ndarray, np.ndarray]:
    """Prediction interval of a new combination of one run per language, from every combination of ours.

    The values are a crossed layout without replication: each language's run adds a main effect, and what is left
    is the interaction. With ``N`` combinations, ``n_l`` runs of language ``l``, main-effect mean squares ``MS_l``
    (``E = N / n_l · σ_l² + σ_e²``) and the residual mean square ``MS_e`` (``E = σ_e²``), a new combination's
    distance from our mean has variance ``Σ σ_l² (1 + 1/n_l) + σ_e² (1 + 1/N)``, estimated from the mean squares,
    with Satterthwaite's degrees of freedom. Undefined values (a constant vector) leave the row without interval.
    """
    n_draws = values.shape[0]
    x = values.reshape((n_draws,) + tuple(shape))
    total = int(np.prod(shape))
    with np.errstate(invalid="ignore", divide="ignore"):
        grand = x.mean(axis=tuple(range(1, x.ndim)))
        fitted = np.broadcast_to(grand.reshape((n_draws,) + (1,) * len(shape)), x.shape).copy()
        terms = []
        for axis, n in enumerate(shape, start=1):
            others = tuple(a for a in range(1, x.ndim) if a != axis)
            effect = x.mean(axis=others, keepdims=True) - grand.reshape((n_draws,) + (1,) * len(shape))
            fitted = fitted + effect
            ms = total / n * (effect.reshape(n_draws, -1) ** 2).sum(axis=1) / (n - 1)
            terms.append((ms, n - 1, n / total * (1 + 1 / n)))
        df_e = total - 1 - sum(n - 1 for n in shape)
        ms_e = ((x - fitted).reshape(n_draws, -1) ** 2).sum(axis=1) / df_e
        c_e = 1 + 1 / total - sum(c for _, _, c in terms)
        variance = sum(c * ms for ms, _, c in terms) + c_e * ms_e
        df = variance ** 2 / (sum((c * ms) ** 2 / d for ms, d, c in terms) + (c_e * ms_e) ** 2 / df_e)
        half = _t((1 + level) / 2, df) * np.sqrt(np.maximum(variance, 0.0))
    half = np.where(snap(variance) == 0, 0.0, half)
    return grand - half, grand + half


def t_interval(values, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """The t confidence interval of a mean along the last axis: mean ± t(n-1) · s / sqrt(n).

    Parameters
    ----------
    values : array_like, shape (..., n)
        Runs along the last axis (NaN values left out).
    level : float
        Confidence level, in (0, 1).

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        Low and high ends, shape ``(...)``; NaN with fewer than two values. The same as
        ``scipy.stats.t.interval(level, n - 1, mean, s / sqrt(n))``.
    """
    _check_level(level)
    mean, ss, n = _finite_rows(values)
    with np.errstate(invalid="ignore", divide="ignore"):
        half = _t((1 + level) / 2, np.where(n >= 2, n - 1, np.nan)) * np.sqrt(ss / (n - 1) / n)
    return mean - half, mean + half


def sigma_interval(values, level: float = 0.95, tail: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The chi-square confidence interval of σ under normality along the last axis.

    ``[sqrt((n-1) s² / χ²(1 - a, n-1)), sqrt((n-1) s² / χ²(a, n-1))]`` with ``a = (1 - level) / 2``: exact for normal
    runs at any ``n``, and not biased low as the bootstrap σ of a few seeds is. It is about σ itself, whatever
    ``ddof`` the point estimate uses.

    Parameters
    ----------
    values : array_like, shape (..., n)
        Runs along the last axis (NaN values left out).
    level : float
        Confidence level, in (0, 1).
    tail : float, optional
        The probability in each tail, instead of ``(1 - level) / 2``.

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        Low and high ends, shape ``(...)``; NaN with fewer than two values; ``[0, 0]`` when every run is equal.
    """
    from scipy import stats

    _check_level(level)
    a = (1 - level) / 2 if tail is None else tail
    _, ss, n = _finite_rows(values)
    df = np.where(n >= 2, n - 1, np.nan)
    ss = snap(ss)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.sqrt(ss / stats.chi2.ppf(1 - a, df)), np.sqrt(ss / stats.chi2.ppf(a, df))


def range_tail(level: float, n_languages: int) -> float:
    """The tail ``a`` of each language's σ interval for a smallest / largest σ over ``L`` languages.

    Solves ``(1 - a)^L - a^L = level``: the coverage of ``[min low, min high]`` (or max) when every language has the
    same σ. ``(1 - level) / 2`` for one or two languages.
    """
    from scipy import optimize

    if n_languages <= 2:
        return (1 - level) / 2
    return float(optimize.brentq(lambda a: (1 - a) ** n_languages - a ** n_languages - level, 1e-12, 0.5))


def _sigma_range_interval(draws, view: StoreView, row, level: float):
    columns = sigma_columns(draws, view, row)
    tail = range_tail(level, len(columns))
    ends = np.array([sigma_interval(column, level, tail) for column in columns])  # (L, 2, n_draws)
    reduce = np.nanmin if SIGMA_RANGES[row.statistic] == "min" else np.nanmax
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        low, high = reduce(ends[:, 0], axis=0), reduce(ends[:, 1], axis=0)
    return low, high, min(column.shape[1] for column in columns)


class RecordingDraws:
    """Wraps a draws object to note which settings a statistic reads (values handed through unchanged)."""

    def __init__(self, draws):
        self.draws, self.used = draws, []

    def get(self, experiment: str, language: str, stratified: bool = False):
        found = self.draws.get(experiment, language)
        if (experiment, language) not in self.used:
            self.used.append((experiment, language))
        return found


def statistic_draws(draws, view: StoreView, row) -> tuple[np.ndarray, list[tuple[str, str]]]:
    """Our statistic of one paper row about all seeds on every draw, and the settings it read.

    ``row`` is a row of :func:`~diagnostics.paper.paper_numbers` whose statistic is in
    :data:`~diagnostics.paper._samplers.SAMPLERS`. Raises ``NotRun`` as the statistic itself does.
    """
    recorder = RecordingDraws(draws)
    with np.errstate(all="ignore"):
        values = np.asarray(SAMPLERS[row.statistic](recorder, view, row), dtype=np.float64)
    return values, recorder.used


def jackknife_interval(draws, view: StoreView, row, level: float):
    """The jackknife t-interval of a statistic about all seeds, per draw: leave each setting's seeds out in turn.

    Parameters
    ----------
    draws : StoreValues or Draws
        The store (one draw) or simulated stores.
    view : StoreView
        The model's scores.
    row : namedtuple
        A paper row whose statistic is in :data:`~diagnostics.paper._samplers.SAMPLERS`.
    level : float
        Confidence level.

    Returns
    -------
    (estimate, low, high, n_seeds)
        Arrays ``(n_draws,)`` and the fewest seeds of a setting read. The variance is
        ``Σ_k (n_k - 1)/n_k Σ_i (θ_(k,i) - θ_(k,·))²`` over the settings ``k`` read; the t quantile has the
        Welch-Satterthwaite degrees of freedom ``(Σ v_k)² / Σ v_k² / (n_k - 1)``.
    """
    estimate, used = statistic_draws(draws, view, row)
    parts, dfs = [], []
    for key in used:
        n = draws.get(*key).n_seeds
        if n < 2:
            nan = np.full_like(estimate, np.nan)
            return estimate, nan, nan, n
        replicates, _ = statistic_draws(leave_one_out(draws, used, key), view, row)
        replicates = replicates.reshape(-1, n)
        centred = replicates - replicates.mean(axis=1, keepdims=True)
        part = snap((n - 1) / n * (centred ** 2).sum(axis=1))
        parts.append(part)
        dfs.append(n - 1)
    variance = np.sum(parts, axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        df = variance ** 2 / np.sum([p ** 2 / d for p, d in zip(parts, dfs)], axis=0)
        half = _t((1 + level) / 2, df) * np.sqrt(variance)
    half = np.where(variance == 0, 0.0, half)
    return estimate, estimate - half, estimate + half, min(draws.get(*k).n_seeds for k in used)


def row_interval(draws, view: StoreView, row, level: float, runs: RunValues | None = None) -> dict:
    """The interval of one paper row on every draw of ``draws`` (the store itself, or simulated stores).

    Returns a dict: ``interval`` (its kind), ``low``, ``high`` (arrays per draw), ``n_seeds`` and, for single-run rows,
    ``runs`` (:class:`~diagnostics.paper._samplers.RunValues`; given, they stand for the draws' own).
    ``NotRun`` / ``LookupError`` as the
    statistic raises them; ``KeyError`` for a statistic without an interval.
    """
    if row.statistic in RUN_VALUES and not pd.isna(row.seed):
        runs = RUN_VALUES[row.statistic](draws, view, row) if runs is None else runs
        low, high = prediction_bounds(runs.values, runs.shape, level)
        return {"interval": PREDICTION, "low": low, "high": high, "n_seeds": runs.n_seeds, "runs": runs}
    if row.statistic in SIGMA_RANGES:
        low, high, n_seeds = _sigma_range_interval(draws, view, row, level)
        return {"interval": CHI_SQUARE, "low": low, "high": high, "n_seeds": n_seeds}
    if row.statistic not in SAMPLERS:
        raise KeyError(row.statistic)
    _, low, high, n_seeds = jackknife_interval(draws, view, row, level)
    return {"interval": T_SEEDS if row.statistic in MEANS else JACKKNIFE, "low": low, "high": high,
            "n_seeds": n_seeds}


def verdict(value: float, low: float, high: float, interval: str | None = None) -> str:
    """``inside`` / ``outside`` the interval, or why it has no width (:data:`DEGENERATE`,
    :data:`DEGENERATE_JACKKNIFE`)."""
    if high - low <= NOISE:
        return DEGENERATE_JACKKNIFE if interval == JACKKNIFE else DEGENERATE
    return "inside" if low <= value <= high else "outside"


def place(view: StoreView, store, row, ours: float, level: float) -> dict:
    """Place one paper number in our distribution: the interval over our seeds and the verdict.

    Parameters
    ----------
    view : StoreView
        The model's scores.
    store : StoreValues
        The model's runs as arrays.
    row : namedtuple
        A row of :func:`~diagnostics.paper.paper_numbers`.
    ours : float
        Our value of the row's statistic.
    level : float
        Level of the intervals.

    Returns
    -------
    dict
        ``ours`` (a single-run row: the mean of our runs' values), ``interval_low``, ``interval_high`` (noise below
        :data:`NOISE` read as 0), ``verdict``, ``interval`` (:data:`PREDICTION`, :data:`T_SEEDS`,
        :data:`CHI_SQUARE`, :data:`JACKKNIFE` or None), ``n_seeds``, ``share_below``, ``share_above`` (single-run
        rows) and ``as_printed`` (claims, designs, settings, counts: ours equals the printed value to its last
        printed digit).
    """
    out = {"ours": ours, "interval_low": np.nan, "interval_high": np.nan, "interval": None, "n_seeds": pd.NA,
           "share_below": np.nan, "share_above": np.nan, "as_printed": pd.NA}
    if row.kind != "value":
        same = bool(abs(ours - row.value) <= max(row.tolerance, NOISE))
        out["as_printed"] = same
        if row.kind == "claim":
            return {**out, "verdict": f"no interval: a claim; ours {'agrees' if same else 'disagrees'}"}
        return {**out, "verdict": f"no interval: a {row.kind}; {'same as' if same else 'differs from'} printed"}
    if row.statistic in NO_INTERVAL:
        return {**out, "verdict": "no interval: " + NO_INTERVAL[row.statistic]}
    runs = None
    if row.statistic in SEED_VALUES and not pd.isna(row.seed):  # our runs' own values, as the view reads them
        try:
            values = np.asarray(SEED_VALUES[row.statistic](view, row), dtype=np.float64)
        except LookupError as err:
            return {**out, "verdict": f"no interval: {err}"}
        runs = RunValues(values[None], int(np.isfinite(values).sum()), (len(values),))
    try:
        with np.errstate(all="ignore"):
            found = row_interval(store, view, row, level, runs)
    except KeyError:
        return {**out, "verdict": "no interval: no spread over seeds computed for it here"}
    except LookupError as err:  # a setting the point estimate did without (e.g. a category one language lacks)
        return {**out, "verdict": f"no interval: {err}"}
    out.update(interval=found["interval"], n_seeds=found["n_seeds"])
    if "runs" in found:
        x = found["runs"].values[0]
        x = x[np.isfinite(x)]
        if len(x):
            out.update(ours=float(x.mean()), share_below=float((x < row.value).mean()),
                       share_above=float((x > row.value).mean()))
    if found["n_seeds"] < 2:
        return {**out, "verdict": "no interval: needs two of our seeds per setting"}
    low, high = float(found["low"][0]), float(found["high"][0])
    if not (math.isfinite(low) and math.isfinite(high)):
        return {**out, "verdict": "no interval: undefined on our seeds (e.g. a σ with a seed left out)"}
    low, high = snap(low), snap(high)
    return {**out, "interval_low": low, "interval_high": high,
            "verdict": verdict(row.value, low, high, found["interval"])}
