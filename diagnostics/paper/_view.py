"""The store as the paper's statistics read it: one model's per-category scores, their σ over seeds and the run
settings (:class:`StoreView`), and the two ways a statistic cannot be given (:class:`NotRun`, :class:`NotComputed`).

Its own module so that the statistics of one value (:mod:`._values`) and of run arrays
(:mod:`._samplers`) can both build on it without importing each other in a circle.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd

from diagnostics.stats import OVERALL, parse_presence_experiment, stability

_EXTRA = re.compile(r"extra-(\d+)")


class NotRun(LookupError):
    """The run store lacks an experiment, language or seed the statistic needs."""


class NotComputed(LookupError):
    """The statistic needs more than predictions (probes, annotation, hardware), or more than the input holds."""


class StoreView:
    """The per-category scores of one model, with their σ over seeds and the run settings, for the statistics.

    Parameters
    ----------
    scores : pandas.DataFrame
        Output of :func:`~diagnostics.stats.category_scores` for one model and one diagnostic set per language.
    predictions : pandas.DataFrame, optional
        The predictions table the scores came from (for the label shares).
    settings : pandas.DataFrame, optional
        :func:`~diagnostics.paper._settings.run_settings` of the store.
    ddof : int
        Delta degrees of freedom of σ over seeds.
    model : str, optional
        The model the scores belong to (its name in the run store).
    probes : pandas.DataFrame, optional
        Layer-wise probing results of that model (:func:`diagnostics.probe.probe_models`: the pretrained model,
        ``seed`` empty, and its fine-tuned seeds) for the probing statistics.
    """

    def __init__(self, scores: pd.DataFrame, predictions: pd.DataFrame | None = None,
                 settings: pd.DataFrame | None = None, ddof: int = 1, model: str | None = None,
                 probes: pd.DataFrame | None = None):
        self.model = model
        self.probes = probes
        self.scores = scores
        self.predictions = predictions
        self.settings = settings
        self.ddof = ddof
        self.stab = stability(scores, ddof=ddof)
        self.cache: dict = {}  # values that several rows (and the intervals) ask for
        self._parts: dict[str, tuple[dict, set]] = {}
        self._languages: dict[str, list[str]] = {}
        self._experiments: dict[str, list[str]] = {}

    def experiments(self, pattern: str | None) -> list[str]:
        """List the store's experiments a paper experiment names (``extra-*`` and ``presence-*`` patterns included).

        ``pattern`` is ``base``, ``extra-374000``, ``extra-*`` (base and every extra size), ``presence-<slug>-*``,
        ``presence-*-<share>`` or ``presence-*``. Returns the matching experiments present in the scores, sorted; none
        for an empty or None ``pattern``.
        """
        if not isinstance(pattern, str) or not pattern:
            return []
        if pattern not in self._experiments:
            self._experiments[pattern] = self._matching(pattern)
        return list(self._experiments[pattern])

    def _matching(self, pattern: str) -> list[str]:
        present = sorted(pd.unique(self.scores["experiment"].astype(str)))
        if "*" not in pattern:
            return [pattern] if pattern in present else []
        if pattern == "extra-*":
            return [e for e in present if e == "base" or _EXTRA.fullmatch(e)]
        feature, _, share = pattern[len("presence-"):].partition("-")
        out = []
        for name in present:
            try:
                slug, value = parse_presence_experiment(name)
            except ValueError:
                continue
            if feature in ("*", slug) and (share in ("", "*") or math.isclose(value, float(share))):
                out.append(name)
        return out

    def languages(self, experiment: str) -> list[str]:
        """List the languages with scores in an experiment, sorted."""
        if experiment not in self._languages:
            self._languages[experiment] = sorted(pd.unique(
                self.scores.loc[self.scores["experiment"] == experiment, "language"].astype(str)))
        return list(self._languages[experiment])

    def _parts_of(self, frame: pd.DataFrame) -> tuple[dict, set] | None:
        """The rows of :attr:`scores` or :attr:`stab` by (experiment, language, category), and the (experiment,
        language) pairs with any row, split once: the statistics and their intervals ask for them hundreds of times.
        None for any other frame."""
        name = "scores" if frame is self.scores else "stab" if frame is self.stab else None
        if name is None:
            return None
        if name not in self._parts:
            parts = {tuple(key): part for key, part in
                     frame.groupby(["experiment", "language", "category"], sort=False, observed=True)}
            self._parts[name] = parts, set(zip(frame["experiment"], frame["language"]))
        return self._parts[name]

    def rows(self, frame: pd.DataFrame, experiment: str, language: str, category: str) -> pd.DataFrame:
        """Select the rows of ``frame`` (:attr:`scores` or σ, :attr:`stab`) of one experiment, language and category.

        ``category`` is a fine category, or ``overall`` (the mean of the per-category MCCs). Raises ``NotRun`` when the
        experiment, language or category has no rows.
        """
        name = OVERALL if category == "overall" else category
        split = self._parts_of(frame)
        if split is None:
            found = frame[(frame["experiment"] == experiment) & (frame["language"] == language)
                          & (frame["category"] == name)]
            has_runs = found.empty and ((frame["experiment"] == experiment) & (frame["language"] == language)).any()
        else:
            parts, pairs = split
            found = parts.get((experiment, language, name), frame.iloc[:0])
            has_runs = (experiment, language) in pairs
        if found.empty:
            if not has_runs:
                raise NotRun(f"no {experiment} runs in {language}")
            raise NotRun(f"no {category} examples in the {language} diagnostic set")
        return found.copy()

    def sigma(self, experiment: str, language: str, category: str) -> float:
        """Give the σ over seeds of a category (the mean over languages for ``language="all"``).

        Arguments as for :meth:`rows`; NaN when undefined (one seed) or absent.
        """
        languages = self.languages(experiment) if language == "all" else [language]
        values = []
        for lang in languages:
            try:
                values.append(float(self.rows(self.stab, experiment, lang, category)["std"].mean()))
            except NotRun:
                continue
        values = [v for v in values if not math.isnan(v)]
        return float(np.mean(values)) if values else float("nan")

    def mean(self, experiment: str, language: str, category: str) -> float:
        """Give the seed-mean score of a category (the mean over languages for ``language="all"``).

        Arguments as for :meth:`rows`; ``NotRun`` when no language has the category.
        """
        languages = self.languages(experiment) if language == "all" else [language]
        if not languages:
            raise NotRun(f"no {experiment} runs")
        return float(np.mean([self.rows(self.stab, experiment, lang, category)["mean"].mean() for lang in languages]))

    def one(self, pattern: str) -> str:
        """Find the single store experiment a paper experiment (no ``*``) names; ``NotRun`` when the store lacks it."""
        found = self.experiments(pattern)
        if not found:
            raise NotRun(f"no {pattern} runs")
        return found[0]

    def setting(self, experiment: str, column: str):
        """Read one recorded setting of an experiment's runs (the first language's).

        ``column`` is a column of :func:`~diagnostics.paper._settings.run_settings`. Raises ``NotComputed`` when
        no run configs were given, or none for ``experiment``.
        """
        if self.settings is None or self.settings.empty:
            raise NotComputed("needs the runs' configs")
        rows = self.settings[self.settings["experiment"] == experiment]
        if rows.empty:
            raise NotComputed(f"no config recorded for the {experiment} runs")
        return rows[column].iloc[0]
