"""Bootstrap draws of a run store's per-run, per-category MCCs, for the intervals of the paper comparison.

One draw resamples the runs (seeds) of an (experiment, language) with replacement and, when the predictions are at
hand and ``resample="both"``, the diagnostic's examples too (Multi-Bootstrap's joint design, Sellam et al. 2022).
It gives the MCC of every drawn run in every fine category: an array ``(n_boot, n_seeds, n_categories)``. Every
statistic of the paper comparison is then a function of such arrays (:mod:`diagnostics.stats._paper_intervals`).

The machinery is Multi-Bootstrap's (:mod:`diagnostics.stats._bootstrap`): :func:`resample_indices` draws the
indices, and the MCC of every run on a chunk of example draws is one matrix product. Experiments scored on the same
examples of a language share their example draws (a change between two experiments is measured on the same
resampled examples, as Multi-Bootstrap's unpaired design of two settings does), while their seeds are drawn
independently (they are different runs). Each stream has its own generator, seeded from ``seed`` and the stream's
name, so a seed fully determines every draw, whatever else the store holds.

Example draws come in two kinds, as in :func:`~diagnostics.stats.multibootstrap`: stratified (each category's
examples resampled within the category, so it keeps its size: for statistics of one category) and whole-set (the
examples drawn once for all categories, which keeps the categories' correlation: for statistics over categories,
such as RS corr or the mean over categories).
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..core.errors import UserInputError
from ._bootstrap import CHUNK, _evaluator, _stratified, check_resample, resample_indices
from ._matrix import setting_arrays


@dataclass(frozen=True)
class SettingDraws:
    """The bootstrap draws of one (experiment, language): per-run MCC per fine category.

    Parameters
    ----------
    values : numpy.ndarray, shape (n_boot, n_seeds, n_categories)
        MCC of each drawn run (axis 1: the draw's seed slots) in each category, on the draw's examples.
    seed_idx : numpy.ndarray of int, shape (n_boot, n_seeds)
        Which of the setting's runs fills each slot (two equal entries: the same run drawn twice).
    categories : list of str
        The fine categories along axis 2 (those with examples).
    example_idx : numpy.ndarray of int, shape (n_boot, n_rows), optional
        The rows each draw took: positions in the setting's examples (the dataset's order) for whole-set draws, in
        the per-category layout (each category's examples in turn) for stratified ones; None when only the seeds
        were resampled.
    """

    values: np.ndarray
    seed_idx: np.ndarray
    categories: list
    example_idx: np.ndarray | None = None

    @property
    def examples(self) -> bool:
        """Whether the examples were resampled too (else only the seeds)."""
        return self.example_idx is not None

    @property
    def n_seeds(self) -> int:
        """The number of runs of the setting."""
        return self.values.shape[1]

    def column(self, category: str) -> np.ndarray | None:
        """Per-run MCC of one category over the draws, ``(n_boot, n_seeds)``; None when the setting lacks it."""
        if category not in self.categories:
            return None
        return self.values[:, :, self.categories.index(category)]


def _stream(*names) -> int:
    """A stable integer for a stream's name (the generator's second seed word)."""
    return zlib.crc32("\x1f".join(map(str, names)).encode("utf-8"))


def _stacked(chunks) -> np.ndarray:
    return np.concatenate(list(chunks), axis=0)


class StoreDraws:
    """Bootstrap draws of every (experiment, language) of one model's scores, made on demand and kept.

    Parameters
    ----------
    scores : pandas.DataFrame
        :func:`~diagnostics.stats.category_scores` of one model, one diagnostic set per language.
    predictions : pandas.DataFrame, optional
        The predictions behind ``scores``; without them only the seeds are resampled.
    dataset : str, DataFrame or mapping, optional
        Where categories come from, as for :func:`~diagnostics.stats.category_scores`.
    n_boot : int
        Number of draws.
    seed : int
        Seed of every stream of draws.
    resample : {"both", "seeds", "examples"}
        What is resampled (:data:`~diagnostics.stats._bootstrap.RESAMPLE`); ``"both"`` and ``"examples"`` need
        the predictions: without them (or for runs that do not cover the same examples) the seeds are resampled,
        whatever ``resample`` says.
    """

    def __init__(self, scores: pd.DataFrame, predictions: pd.DataFrame | None = None, dataset=None,
                 n_boot: int = 1000, seed: int = 0, resample: str = "both"):
        check_resample(resample)
        if not isinstance(n_boot, (int, np.integer)) or n_boot < 2:
            raise ValueError(f"n_boot must be an integer >= 2, found {n_boot!r}")
        if not isinstance(seed, (int, np.integer)) or seed < 0:
            raise ValueError(f"seed must be an integer >= 0, found {seed!r}")
        self.scores = scores[scores["level"] == "fine"] if "level" in scores.columns else scores
        self.predictions, self.dataset = predictions, dataset
        self.n_boot, self.seed, self.resample = int(n_boot), int(seed), resample
        self._settings: dict = {}
        self._examples: dict = {}
        self._matrices: dict = {}

    def get(self, experiment: str, language: str, stratified: bool = False) -> SettingDraws:
        """The draws of one (experiment, language); ``stratified`` for statistics of a single category.

        ``LookupError`` when the scores have no fine category of that setting.
        """
        key = (experiment, language, stratified)
        if key not in self._settings:
            self._settings[key] = self._make(experiment, language, stratified)
        return self._settings[key]

    def _seed_draws(self, experiment: str, language: str, n_runs: int, fixed: bool = False) -> np.ndarray:
        if fixed:
            return np.broadcast_to(np.arange(n_runs), (self.n_boot, n_runs))
        rng = np.random.default_rng([self.seed, _stream("seeds", experiment, language)])
        return _stacked(s[0] for _, s in resample_indices(rng, self.n_boot, 0, (n_runs,), resample="seeds"))

    def _make(self, experiment: str, language: str, stratified: bool) -> SettingDraws:
        if self.predictions is not None and self.resample != "seeds":
            try:
                return self._from_predictions(experiment, language, stratified)
            except UserInputError:  # runs on different examples: their seeds can still be resampled
                pass
        return self._from_scores(experiment, language)

    def _from_scores(self, experiment: str, language: str) -> SettingDraws:
        rows = self.scores[(self.scores["experiment"] == experiment) & (self.scores["language"] == language)]
        run = ["pretrain_seed", "seed"] if "pretrain_seed" in rows.columns else ["seed"]
        wide = rows.pivot_table(index=run, columns="category", values="mcc", aggfunc="first").dropna(axis=1)
        if wide.empty:
            raise LookupError(f"no fine-category scores of the {experiment} runs in {language}")
        matrix = wide.to_numpy(dtype=np.float64)
        seed_idx = self._seed_draws(experiment, language, len(matrix))
        return SettingDraws(matrix[seed_idx], seed_idx, [str(c) for c in wide.columns])

    def _from_predictions(self, experiment: str, language: str, stratified: bool) -> SettingDraws:
        key = (experiment, language)
        if key not in self._matrices:  # one selection for the whole-set and the stratified draws
            self._matrices[key] = setting_arrays(self.predictions, dict(zip(("experiment", "language"), key)),
                                                 self.dataset)
        m = self._matrices[key]
        m.predictions  # noqa: B018 - refuse runs that do not cover the same examples
        keep = m.categories.any(axis=0)
        cats, names = m.categories[:, keep], [n for n, k in zip(m.category_names, keep) if k]
        pred, gold, strata = m.pred, m.gold, None
        if stratified:
            index, strata, cats = _stratified(cats)
            pred, gold = pred[index], gold[index]
        example_idx = self._example_draws(language, m.ids, len(gold), strata)
        seed_idx = self._seed_draws(experiment, language, pred.shape[1], fixed=self.resample == "examples")
        evaluate = _evaluator(pred, gold, "mcc", cats)
        values = np.empty((self.n_boot, pred.shape[1], len(names)))
        for start in range(0, self.n_boot, CHUNK):
            stop = min(start + CHUNK, self.n_boot)
            values[start:stop] = np.take_along_axis(evaluate(example_idx[start:stop]), seed_idx[start:stop, :, None],
                                                    axis=1)
        return SettingDraws(values, seed_idx, names, example_idx)

    def _example_draws(self, language: str, ids: np.ndarray, n_rows: int, strata) -> np.ndarray:
        """Draws of the examples of one language's diagnostic (shared by the experiments scored on those ids)."""
        key = (language, _stream(*ids), strata is not None)
        if key not in self._examples:
            rng = np.random.default_rng([self.seed, _stream("examples", *key)])
            self._examples[key] = _stacked(e for e, _ in resample_indices(rng, self.n_boot, n_rows, (),
                                                                          resample="examples", strata=strata))
        return self._examples[key]
