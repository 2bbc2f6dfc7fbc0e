"""Where each number the study prints lies in our distribution, and how often "outside" happens by chance.

No seed of ours is paired with a seed of the study: the random streams differ, so our seed k and the study's seed k
share nothing but the number. Instead:

* a **single-run** number (a value the study printed for one seed, e.g. "Conditionals, en, seed 0: 0.6") is placed
  among all our seeds: the share of our seeds below and above it, and the prediction interval for one new run,
  ``mean ± t(n-1, (1+level)/2) · s · sqrt(1 + 1/n)`` over our ``n`` seeds (sample sd ``s``). It covers a new run
  with probability ``level`` exactly when a run's value is normal; the seeds' empirical quantiles could not reach
  95 % with six seeds (their widest interval, [min, max], covers a new run with probability (n-1)/(n+1) = 71 %);
* a number **about all seeds** (a seed mean, a correlation, a σ, a share, a relative change) gets a percentile
  bootstrap interval of our statistic at ``level``: the statistic recomputed on each draw of
  :class:`~diagnostics.stats._paper_draws.StoreDraws` (seeds resampled, and the examples too where the predictions
  are at hand). The statistics mirror those of :mod:`diagnostics.stats._paper_values` on the draws; RS corr leaves
  out a pair of slots that drew the same run (its correlation with itself says nothing about stability).

"inside" means the interval holds the paper's number, "outside" that it does not. How often "outside" fires when
the paper's number comes from the same distribution as ours (:func:`chance_single_run`, :func:`chance_bootstrap`):

* prediction interval: ``1 - level`` when a run's value is normal; measured on the store's own seeds by leaving one
  seed out in turn (the left-out seed plays the paper's single run, the interval is built from the other seeds);
* bootstrap interval: the interval is about our statistic only, while the paper's number carries its own seed
  noise, so "outside" fires more often than ``1 - level``: about 17 % at 95 % for a normal statistic (both numbers
  with the same spread). Measured from the draws themselves: a draw plays the paper's number, another draw plays
  our estimate, and our interval moves with it (``[low, high] + draw - estimate``); the share of pairs outside.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Callable

import numpy as np
import pandas as pd

from ._inference import _interval
from ._paper_draws import SettingDraws, StoreDraws
from ._paper_values import SEED_VALUES, NotRun, StoreView

#: Interval kinds (the ``interval`` column of :func:`~diagnostics.stats.against_paper`).
PREDICTION = "prediction over seeds"
BOOTSTRAP_SEEDS = "bootstrap over seeds"
BOOTSTRAP_BOTH = "bootstrap over seeds and examples"


def prediction_interval(values, level: float = 0.95) -> tuple[float, float]:
    """Prediction interval for one new run from our runs' values: mean ± t · s · sqrt(1 + 1/n).

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
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), found {level!r}")
    x = np.asarray(values, dtype=np.float64)
    x = x[np.isfinite(x)]
    if len(x) < 2:
        return float("nan"), float("nan")
    half = _t_quantile((1 + level) / 2, len(x) - 1) * x.std(ddof=1) * math.sqrt(1 + 1 / len(x))
    return float(x.mean() - half), float(x.mean() + half)


@functools.lru_cache(maxsize=256)
def _t_quantile(q: float, df: int) -> float:
    """Student's t quantile (cached: every row and every left-out seed asks for the same few)."""
    from scipy import stats

    return float(stats.t.ppf(q, df))


def chance_single_run(values, level: float = 0.95) -> float:
    """Share of our runs outside the prediction interval built from the others (leave one seed out).

    Each run in turn plays the paper's single run, and the interval of :func:`prediction_interval` comes from the
    remaining runs: how often "outside" fires for a number drawn from our own distribution. NaN with fewer than
    three finite values (the interval needs two).
    """
    x = np.asarray(values, dtype=np.float64)
    x = x[np.isfinite(x)]
    if len(x) < 3:
        return float("nan")
    misses = 0
    for j in range(len(x)):
        low, high = prediction_interval(np.delete(x, j), level)
        misses += not low <= x[j] <= high
    return misses / len(x)


def chance_bootstrap(samples, estimate: float, low: float, high: float) -> float:
    """Share of draw pairs (b, c) with draw c outside our interval moved to draw b: ``[low, high] + θ_b − θ̂``.

    Draw ``c`` plays the paper's number (a statistic with its own seed noise) and draw ``b`` our estimate; the
    percentile interval moves with the estimate. Over all ordered pairs of finite draws, by sorting (no loop over
    pairs). NaN without two finite draws or without an interval.
    """
    x = np.sort(np.asarray(samples, dtype=np.float64))
    x = x[np.isfinite(x)]
    if len(x) < 2 or not all(np.isfinite([estimate, low, high])):
        return float("nan")
    below = np.searchsorted(x, low + x - estimate, side="left")
    above = len(x) - np.searchsorted(x, high + x - estimate, side="right")
    return float((below + above).sum() / (len(x) * len(x)))


def normal_chance_bootstrap(level: float = 0.95) -> float:
    """Chance of "outside" for a normal statistic when the paper's number has our spread: 2 (1 − Φ(z / √2)).

    ``z`` is the normal quantile of ``(1 + level) / 2``; 0.166 at ``level=0.95``.
    """
    from scipy import stats

    return float(2 * stats.norm.sf(stats.norm.ppf((1 + level) / 2) / math.sqrt(2)))


# --- statistics of the draws ---------------------------------------------------------------------------------------

def _pearson(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pearson r between the rows of ``x`` and ``y`` (n_boot, k): NaN where either row is constant."""
    xc, yc = x - x.mean(axis=1, keepdims=True), y - y.mean(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = (xc * yc).sum(axis=1) / np.sqrt((xc ** 2).sum(axis=1) * (yc ** 2).sum(axis=1))
    return np.clip(r, -1.0, 1.0)


def _rs_corr(draws: SettingDraws) -> np.ndarray:
    """Mean Pearson r over pairs of drawn runs per draw, leaving out pairs of the same run and constant vectors."""
    v = draws.values - draws.values.mean(axis=2, keepdims=True)
    norms = np.sqrt((v ** 2).sum(axis=2))
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.einsum("bic,bjc->bij", v, v) / (norms[:, :, None] * norms[:, None, :])
    n = draws.n_seeds
    upper = np.triu(np.ones((n, n), dtype=bool), 1)[None]
    keep = upper & (draws.seed_idx[:, :, None] != draws.seed_idx[:, None, :]) & np.isfinite(r)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(keep, r, 0.0).sum(axis=(1, 2)) / keep.sum(axis=(1, 2))


def _seed_mean(draws: SettingDraws, category: str) -> np.ndarray:
    if category == "overall":
        return draws.values.mean(axis=2).mean(axis=1)
    column = draws.column(category)
    if column is None:
        raise NotRun(f"no {category} examples")
    return column.mean(axis=1)


def _sigma(column: np.ndarray, ddof: int) -> np.ndarray:
    if column.shape[1] <= ddof:
        return np.full(column.shape[0], np.nan)
    return column.std(axis=1, ddof=ddof)


def _languages(view: StoreView, experiment: str, language: str) -> list[str]:
    return view.languages(experiment) if language == "all" else [language]


def _nan_reduce(function, stacked: np.ndarray) -> np.ndarray:
    """``function`` (nanmean, nanmin ...) over axis 0, NaN where a column has no finite value, without warnings."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return function(stacked, axis=0)


def _mean_mcc(draws: StoreDraws, view: StoreView, row) -> np.ndarray:
    experiment = view.one(row.experiment)
    return _mean_over_languages(draws, view, experiment, row.language, row.category)


def _mean_over_languages(draws, view, experiment, language, category) -> np.ndarray:
    stratified = category != "overall"
    return np.mean([_seed_mean(draws.get(experiment, lang, stratified), category)
                    for lang in _languages(view, experiment, language)], axis=0)


def _relative_change_mean_mcc(draws, view, row):
    before = _mean_over_languages(draws, view, view.one(row.reference), "all", row.category)
    after = _mean_over_languages(draws, view, view.one(row.experiment), "all", row.category)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(before != 0, after / before - 1, np.nan)


def _sigma_range(which: str) -> Callable:
    def sample(draws, view, row):
        experiment = view.one(row.experiment)
        stacked = []
        for language in view.languages(experiment):
            column = draws.get(experiment, language, stratified=True).column(row.category)
            if column is not None:
                stacked.append(_sigma(column, view.ddof))
        if not stacked:
            raise NotRun(f"no {row.category} examples")
        return _nan_reduce(np.nanmin if which == "low" else np.nanmax, np.array(stacked))
    return sample


def _rs_by_language(draws: StoreDraws, view: StoreView, experiment: str) -> np.ndarray:
    return np.array([_rs_corr(draws.get(experiment, lang)) for lang in view.languages(experiment)])


def _rs_corr_range(draws, view, row):
    stacked = _rs_by_language(draws, view, view.one(row.experiment))
    return _nan_reduce(np.nanmax, stacked) - _nan_reduce(np.nanmin, stacked)


def _mean_rs_corr(draws, view, row):
    return _nan_reduce(np.nanmean, _rs_by_language(draws, view, view.one(row.experiment)))


def _relative_change_mean_rs_corr(draws, view, row):
    before = _nan_reduce(np.nanmean, _rs_by_language(draws, view, view.one(row.reference)))
    after = _nan_reduce(np.nanmean, _rs_by_language(draws, view, view.one(row.experiment)))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(before != 0, after / before - 1, np.nan)


def _paired_columns(draws: StoreDraws, view: StoreView, row, languages=None):
    """Per language: the reference's and the experiment's per-run columns of their common categories."""
    experiment, reference = view.one(row.experiment), view.one(row.reference)
    if languages is None:
        both = [lang for lang in view.languages(experiment) if lang in view.languages(reference)]
        languages = both if row.language == "all" else [row.language]
    out = {}
    for language in languages:
        a, b = draws.get(reference, language), draws.get(experiment, language)
        common = [c for c in a.categories if c in b.categories]
        out[language] = (common, a.values[:, :, [a.categories.index(c) for c in common]],
                         b.values[:, :, [b.categories.index(c) for c in common]])
    return out


def _share_delta(what: str) -> Callable:
    def sample(draws, view, row):
        flags = []
        for _, a, b in _paired_columns(draws, view, row).values():
            if what == "mcc":
                flags.append(b.mean(axis=1) - a.mean(axis=1) > 0.1)
            else:
                with np.errstate(invalid="ignore"):
                    flags.append(_std(b, view.ddof) - _std(a, view.ddof) < -0.05)
        return np.concatenate(flags, axis=1).mean(axis=1)
    return sample


def _std(values: np.ndarray, ddof: int) -> np.ndarray:
    """σ over the seed slots (axis 1) of ``(n_boot, n_seeds, n_categories)``; NaN with too few seeds."""
    if values.shape[1] <= ddof:
        return np.full((values.shape[0], values.shape[2]), np.nan)
    return values.std(axis=1, ddof=ddof)


def _sigma_decrease(draws, view, row):
    parts = [_std(a, view.ddof) - _std(b, view.ddof) for _, a, b in _paired_columns(draws, view, row).values()]
    return _nan_reduce(np.nanmean, np.concatenate(parts, axis=1).T)


def _improvement_corr(draws, view, row):
    pairs = _paired_columns(draws, view, row, languages=["en", "ru"])
    common = [c for c in pairs["en"][0] if c in pairs["ru"][0]]
    deltas = []
    for language in ("en", "ru"):
        names, a, b = pairs[language]
        index = [names.index(c) for c in common]
        deltas.append(b.mean(axis=1)[:, index] - a.mean(axis=1)[:, index])
    return _pearson(*deltas)


def _cross_language_corr(draws, view, row):
    experiment = view.one(row.experiment)
    means = {lang: draws.get(experiment, lang) for lang in view.languages(experiment)}
    languages, values = sorted(means), []
    for i, la in enumerate(languages):
        for lb in languages[i + 1:]:
            common = [c for c in means[la].categories if c in means[lb].categories]
            x = means[la].values.mean(axis=1)[:, [means[la].categories.index(c) for c in common]]
            y = means[lb].values.mean(axis=1)[:, [means[lb].categories.index(c) for c in common]]
            values.append(_pearson(x, y))
    return _nan_reduce(np.nanmean, np.array(values))


#: Statistic name -> function ``(StoreDraws, StoreView, row) -> samples (n_boot,)`` for numbers about all seeds.
SAMPLERS: dict[str, Callable] = {
    "mean_mcc": _mean_mcc, "relative_change_mean_mcc": _relative_change_mean_mcc,
    "sigma_range_low": _sigma_range("low"), "sigma_range_high": _sigma_range("high"),
    "rs_corr_range": _rs_corr_range, "mean_rs_corr": _mean_rs_corr,
    "relative_change_mean_rs_corr": _relative_change_mean_rs_corr,
    "share_delta_mcc_gt_0.1": _share_delta("mcc"), "share_delta_sigma_lt_-0.05": _share_delta("sigma"),
    "sigma_decrease": _sigma_decrease, "improvement_corr": _improvement_corr,
    "cross_language_corr": _cross_language_corr,
}
#: Statistics of measured values that get no interval, and why.
NO_INTERVAL = {"probe_accuracy": "a probe is one fit per model and layer, nothing here to resample"}


class _Recorder:
    """Wraps :class:`StoreDraws` to note which settings a statistic used (their seeds, whether examples moved)."""

    def __init__(self, draws: StoreDraws):
        self.draws, self.used = draws, []

    def get(self, experiment: str, language: str, stratified: bool = False) -> SettingDraws:
        found = self.draws.get(experiment, language, stratified)
        self.used.append(found)
        return found


def bootstrap_samples(draws: StoreDraws, view: StoreView, row) -> tuple[np.ndarray, list[SettingDraws]]:
    """Our statistic of one paper row on every draw, and the settings' draws it used.

    ``row`` is a row of :func:`~diagnostics.stats.paper_numbers` whose statistic is in :data:`SAMPLERS`. Raises
    ``NotRun`` as the statistic itself does.
    """
    recorder = _Recorder(draws)
    with np.errstate(all="ignore"):
        samples = np.asarray(SAMPLERS[row.statistic](recorder, view, row), dtype=np.float64)
    return samples, recorder.used


def place(view: StoreView, draws: StoreDraws, row, ours: float, level: float) -> dict:
    """Place one paper number in our distribution: the interval, the verdict and the chance of "outside".

    Parameters
    ----------
    view : StoreView
        The model's scores.
    draws : StoreDraws
        The model's bootstrap draws.
    row : namedtuple
        A row of :func:`~diagnostics.stats.paper_numbers`.
    ours : float
        Our value of the row's statistic.
    level : float
        Level of the intervals.

    Returns
    -------
    dict
        ``ours`` (a single-run row: our seed mean), ``interval_low``, ``interval_high``, ``verdict``, ``interval``
        (:data:`PREDICTION`, :data:`BOOTSTRAP_SEEDS`, :data:`BOOTSTRAP_BOTH` or None), ``n_seeds``,
        ``share_below``, ``share_above`` (single-run rows), ``chance_outside`` and ``as_printed`` (claims,
        designs, settings, counts: ours equals the printed value to its last printed digit).
    """
    out = {"ours": ours, "interval_low": np.nan, "interval_high": np.nan, "interval": None, "n_seeds": pd.NA,
           "share_below": np.nan, "share_above": np.nan, "chance_outside": np.nan, "as_printed": pd.NA}
    if row.kind != "value":
        same = bool(abs(ours - row.value) <= max(row.tolerance, 1e-12))
        out["as_printed"] = same
        if row.kind == "claim":
            return {**out, "verdict": f"no interval: a claim; ours {'agrees' if same else 'disagrees'}"}
        return {**out, "verdict": f"no interval: a {row.kind}; {'same as' if same else 'differs from'} printed"}
    if row.statistic in SEED_VALUES and not pd.isna(row.seed):
        return {**out, **_single_run(SEED_VALUES[row.statistic](view, row), row.value, level)}
    if row.statistic not in SAMPLERS:
        return {**out, "verdict": "no interval: " + NO_INTERVAL.get(row.statistic, "no resampling for it here")}
    try:
        samples, used = bootstrap_samples(draws, view, row)
    except LookupError as err:  # a setting the point estimate did without (e.g. a category one language lacks)
        return {**out, "verdict": f"no interval: {err}"}
    n_seeds = min(d.n_seeds for d in used)
    out.update(n_seeds=n_seeds, interval=BOOTSTRAP_BOTH if all(d.examples for d in used) else BOOTSTRAP_SEEDS)
    if n_seeds < 2:
        return {**out, "verdict": "no interval: needs two of our seeds per setting"}
    if not np.isfinite(samples).any():
        return {**out, "verdict": "no interval: undefined on every draw"}
    low, high = (float(v[0]) for v in _interval(samples[:, None], level))
    return {**out, "interval_low": low, "interval_high": high, "verdict": _inside(row.value, low, high),
            "chance_outside": chance_bootstrap(samples, ours, low, high)}


def _inside(value: float, low: float, high: float) -> str:
    return "inside" if low <= value <= high else "outside"


def _single_run(values: np.ndarray, paper: float, level: float) -> dict:
    x = np.asarray(values, dtype=np.float64)
    x = x[np.isfinite(x)]
    out = {"interval": PREDICTION, "n_seeds": len(x), "ours": float(x.mean()) if len(x) else float("nan")}
    if len(x):
        out.update(share_below=float((x < paper).mean()), share_above=float((x > paper).mean()))
    if len(x) < 2:
        return {**out, "verdict": "no interval: needs two of our seeds"}
    low, high = prediction_interval(x, level)
    return {**out, "interval_low": low, "interval_high": high, "verdict": _inside(paper, low, high),
            "chance_outside": chance_single_run(x, level)}
