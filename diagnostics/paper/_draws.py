"""Our runs' per-category MCCs as arrays, for the intervals of the paper comparison: the store itself, its
leave-one-seed-out replicates, and stores simulated from it.

The paper's numbers and ours are computed on the same diagnostic examples (AX-b, LiDiRus), so the examples are held
fixed: the only thing that differs between two stores of the same setting is the seeds. Every statistic of the
paper comparison is a function of arrays ``(n_draws, n_seeds, n_categories)``, one per (experiment, language)
(:class:`SettingDraws`), handed out by an object with a ``get(experiment, language)`` method:

* :class:`StoreValues`: the store as it is (one draw);
* :func:`leave_one_out`: one setting's seeds left out one at a time, every other setting as it is (the jackknife
  of :mod:`diagnostics.paper._intervals`);
* :func:`simulate_store`: stores drawn from a normal model of each setting's runs (the mean and the covariance of
  the categories across our seeds), for how often "outside" fires by chance (:mod:`diagnostics.paper._chance`).
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class SettingDraws:
    """Per-run MCC per fine category of one (experiment, language), for one or more draws of the store.

    Parameters
    ----------
    values : numpy.ndarray, shape (n_draws, n_seeds, n_categories)
        MCC of each run (axis 1) in each category (axis 2), per draw (axis 0).
    seed_idx : numpy.ndarray of int, shape (n_draws, n_seeds)
        Which run fills each slot (distinct within a draw: no run is ever taken twice).
    categories : list of str
        The fine categories along axis 2.
    """

    values: np.ndarray
    seed_idx: np.ndarray
    categories: list

    @property
    def n_seeds(self) -> int:
        """The number of runs per draw."""
        return self.values.shape[1]

    @property
    def n_draws(self) -> int:
        """The number of draws."""
        return self.values.shape[0]

    def column(self, category: str) -> np.ndarray | None:
        """Per-run MCC of one category, ``(n_draws, n_seeds)``; None when the setting lacks it."""
        if category not in self.categories:
            return None
        return self.values[:, :, self.categories.index(category)]


class StoreValues:
    """Our runs' per-category MCCs of every (experiment, language) of one model's scores, examples fixed.

    Parameters
    ----------
    scores : pandas.DataFrame
        :func:`~diagnostics.stats.category_scores` of one model, one diagnostic set per language.
    """

    def __init__(self, scores: pd.DataFrame):
        self.scores = scores[scores["level"] == "fine"] if "level" in scores.columns else scores
        self._settings: dict = {}

    def get(self, experiment: str, language: str, stratified: bool = False) -> SettingDraws:
        """One draw: the setting's runs (rows: runs by seed; columns: categories every run has).

        ``stratified`` is accepted for the statistics' sake and changes nothing (no example is resampled).
        ``LookupError`` when the scores have no fine category of that setting.
        """
        key = (experiment, language)
        if key not in self._settings:
            rows = self.scores[(self.scores["experiment"] == experiment) & (self.scores["language"] == language)]
            run = ["pretrain_seed", "seed"] if "pretrain_seed" in rows.columns else ["seed"]
            wide = rows.pivot_table(index=run, columns="category", values="mcc", aggfunc="first").dropna(axis=1)
            if wide.empty:
                raise LookupError(f"no fine-category scores of the {experiment} runs in {language}")
            matrix = wide.to_numpy(dtype=np.float64)
            self._settings[key] = SettingDraws(matrix[None], np.arange(len(matrix))[None],
                                               [str(c) for c in wide.columns])
        return self._settings[key]


class Draws:
    """A fixed set of draws per setting (all with the same number of draws), looked up like :class:`StoreValues`.

    Parameters
    ----------
    settings : mapping
        ``(experiment, language)`` -> :class:`SettingDraws`.
    """

    def __init__(self, settings: Mapping[tuple[str, str], SettingDraws]):
        self.settings = dict(settings)

    def get(self, experiment: str, language: str, stratified: bool = False) -> SettingDraws:
        """The draws of one setting; ``LookupError`` for a setting not held."""
        try:
            return self.settings[(experiment, language)]
        except KeyError:
            raise LookupError(f"no fine-category scores of the {experiment} runs in {language}") from None


def leave_one_out(draws, used: list[tuple[str, str]], key: tuple[str, str]) -> Draws:
    """The jackknife replicates of one setting: each of its seeds left out in turn, every other setting whole.

    Parameters
    ----------
    draws : StoreValues or Draws
        The store (or stores) to replicate, ``B`` draws per setting.
    used : list of (experiment, language)
        The settings the statistic reads.
    key : (experiment, language)
        The setting whose seeds are left out.

    Returns
    -------
    Draws
        ``B * n`` draws per setting (``n``: the seeds of ``key``), draw-major: draw ``b * n + i`` is draw ``b``
        without seed ``i`` of ``key``.
    """
    target = draws.get(*key)
    n = target.n_seeds
    keep = ~np.eye(n, dtype=bool)  # row i: every slot but i
    out = {}
    for setting in used:
        found = draws.get(*setting)
        if setting == key:
            values = np.stack([found.values[:, k] for k in keep], axis=1)  # (B, n, n - 1, c)
            seeds = np.stack([found.seed_idx[:, k] for k in keep], axis=1)
            out[setting] = SettingDraws(values.reshape(-1, n - 1, values.shape[-1]), seeds.reshape(-1, n - 1),
                                        found.categories)
        else:
            out[setting] = SettingDraws(np.repeat(found.values, n, axis=0), np.repeat(found.seed_idx, n, axis=0),
                                        found.categories)
    return Draws(out)


def _stream(*names) -> int:
    """A stable integer for a stream's name (the generator's second seed word)."""
    return zlib.crc32("\x1f".join(map(str, names)).encode("utf-8"))


def simulate_store(store: StoreValues, settings: list[tuple[str, str]], n_seeds: Mapping | int, n_sim: int,
                   seed: int, stream: str) -> Draws:
    """Stores drawn from a normal model of each setting's runs: our seeds' mean and covariance across categories.

    A simulated run of a setting is ``mean + zᵀ C / sqrt(n - 1)`` with ``C`` our ``n`` runs centred and ``z`` standard
    normal: its categories have exactly the covariance of our seeds (so rows about the same setting move together as
    ours do), and settings are independent (different runs). Each setting has its own generator, seeded from
    ``seed``, ``stream`` and the setting, so one seed fixes every store.

    Parameters
    ----------
    store : StoreValues
        Our runs.
    settings : list of (experiment, language)
        The settings to simulate.
    n_seeds : int or mapping
        Runs per simulated store: one number, or ``(experiment, language)`` -> number (default: ours).
    n_sim : int
        Simulated stores.
    seed : int
        Seed of the draws.
    stream : str
        Name of this stream (e.g. ``"paper"`` and ``"ours"`` for two independent sets of stores).

    Returns
    -------
    Draws
        ``n_sim`` draws per setting.
    """
    out = {}
    for setting in settings:
        found = store.get(*setting)
        x = found.values[0]
        n = len(x)
        m = n_seeds if isinstance(n_seeds, (int, np.integer)) else n_seeds.get(setting, n)
        rng = np.random.default_rng([seed, _stream(stream, *setting)])
        centred = (x - x.mean(axis=0)) / np.sqrt(max(n - 1, 1))
        values = x.mean(axis=0) + rng.standard_normal((n_sim, m, n)) @ centred
        out[setting] = SettingDraws(values, np.broadcast_to(np.arange(m), (n_sim, m)), found.categories)
    return Draws(out)
