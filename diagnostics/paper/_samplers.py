"""Each statistic about all seeds of the paper comparison, computed on draws of the store (vectorised over them).

One function per statistic name of ``paper_numbers.csv`` (:data:`SAMPLERS`), taking an object with a
``get(experiment, language)`` method that hands out :class:`~diagnostics.paper._draws.SettingDraws` (the
store itself, its leave-one-seed-out replicates or simulated stores), a
:class:`~diagnostics.paper._view.StoreView` and one paper row, and returning the statistic per draw. They
mirror the statistics of :mod:`diagnostics.paper._values`; RS corr leaves out a pair of slots holding the
same run. :data:`RUN_VALUES` gives, per draw, our value in every run for the numbers printed for one run.
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ._draws import SettingDraws
from ._view import NotRun, StoreView


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


def _mean_mcc(draws, view: StoreView, row) -> np.ndarray:
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


def sigma_columns(draws, view: StoreView, row) -> list[np.ndarray]:
    """Per language of the row's experiment: the per-run MCC of its category, ``(n_draws, n_seeds)`` each."""
    experiment = view.one(row.experiment)
    stacked = [column for language in view.languages(experiment)
               if (column := draws.get(experiment, language).column(row.category)) is not None]
    if not stacked:
        raise NotRun(f"no {row.category} examples")
    return stacked


def _sigma_range(which: str) -> Callable:
    def sample(draws, view, row):
        stacked = np.array([_sigma(column, view.ddof) for column in sigma_columns(draws, view, row)])
        return _nan_reduce(np.nanmin if which == "low" else np.nanmax, stacked)
    return sample


#: σ-range statistics -> how they reduce the languages' σ (their interval: the chi-square one per language).
SIGMA_RANGES = {"sigma_range_low": "min", "sigma_range_high": "max"}


def _rs_by_language(draws, view: StoreView, experiment: str) -> np.ndarray:
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


def _paired_columns(draws, view: StoreView, row, languages=None):
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


#: Statistic name -> function ``(draws, StoreView, row) -> statistic per draw (n_draws,)``, numbers about all seeds.
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
NO_INTERVAL = {"probe_accuracy": "a probe is one fit per model and layer, no spread over seeds to measure"}


@dataclass(frozen=True)
class RunValues:
    """Our value of a single-run statistic in every run (or combination of runs), per draw.

    Parameters
    ----------
    values : numpy.ndarray, shape (n_draws, n_values)
        One value per run; for a statistic of one run per language, one per combination of runs (every run of
        each language with every run of the others: runs of different languages are not paired by seed index).
    n_seeds : int
        The runs behind the values (the fewest of the languages'): the sample size of the prediction interval.
    shape : tuple of int
        The runs per language along which ``values`` is laid out (C order).
    """

    values: np.ndarray
    n_seeds: int
    shape: tuple

    def run(self, index: int) -> np.ndarray:
        """The value of run ``index`` (of run ``index`` in every language), per draw."""
        return self.values[:, int(np.ravel_multi_index((index,) * len(self.shape), self.shape))]


def _run_mcc(draws, view: StoreView, row) -> RunValues:
    found = draws.get(view.one(row.experiment), row.language)
    values = found.values.mean(axis=2) if row.category == "overall" else found.column(row.category)
    if values is None:
        raise NotRun(f"no {row.category} examples in the {row.language} diagnostic set")
    return RunValues(values, found.n_seeds, (found.n_seeds,))


def _standardised(values: np.ndarray) -> np.ndarray:
    """Each run's category vector centred and scaled to norm 1 (NaN for a constant vector)."""
    centred = values - values.mean(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return centred / np.sqrt((centred ** 2).sum(axis=-1, keepdims=True))


def _run_cross_language(draws, view: StoreView, row) -> RunValues:
    """Mean Pearson r over language pairs of one run per language, for every combination of runs."""
    experiment = view.one(row.experiment)
    languages = view.languages(experiment)
    if len(languages) < 2:
        raise NotRun("needs at least two languages")
    found = {lang: draws.get(experiment, lang) for lang in languages}
    shape = tuple(found[lang].n_seeds for lang in languages)
    n_draws = found[languages[0]].n_draws
    total = np.zeros((n_draws,) + shape)
    count = np.zeros((n_draws,) + shape)
    for (i, a), (j, b) in itertools.combinations(enumerate(languages), 2):
        common = [c for c in found[a].categories if c in found[b].categories]
        x = _standardised(found[a].values[:, :, [found[a].categories.index(c) for c in common]])
        y = _standardised(found[b].values[:, :, [found[b].categories.index(c) for c in common]])
        r = np.clip(np.einsum("bic,bjc->bij", x, y), -1.0, 1.0)
        axes = [1] * len(languages)
        axes[i], axes[j] = shape[i], shape[j]
        r = r.reshape((n_draws,) + tuple(axes))
        total = total + np.nan_to_num(r)
        count = count + np.isfinite(r)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(count > 0, total / count, np.nan)
    return RunValues(mean.reshape(n_draws, -1), min(shape), shape)


#: Statistics printed for single runs -> function ``(draws, StoreView, row) -> RunValues``.
RUN_VALUES: dict[str, Callable] = {"mcc": _run_mcc, "cross_language_corr": _run_cross_language}


