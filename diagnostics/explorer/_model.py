"""The instability explorer's state: which examples flip between seeds, per category, seed and setting.

:func:`build_explorer` computes once everything the explorer shows: the category x seed heat map of per-seed MCC
(one column block per experiment x language x model), and per example premise, hypothesis, gold label, every
seed's prediction and P(entailment), the flip rate (share of seed pairs that disagree,
:mod:`diagnostics.stats._instances`), Δσ (the leave-one-example-out change of the category's σ) and the features
of the pair: the gold ones and the rule annotator's (:mod:`diagnostics.annotate`, cached on disk).
:class:`ExplorerModel` holds it with the filters (language, experiment, model, flipping only) and the chosen
heat-map cell, in plain Python (tested without any front end).

Three front ends share it: the notebook widget (:mod:`diagnostics.explorer._widget`), static HTML tables where no
widget front end runs (:mod:`diagnostics.explorer._html`) and the JSON data of the report's ``explorer.html``
(:mod:`diagnostics.explorer._payload`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from ..core.taxonomy import COARSE, FINE
from ..stats import dataset_for, dataset_frame, dataset_frames
from ..stats import category_instability, instance_stability, sigma_drivers
from ..stats import category_scores
from ..stats import SETTING_KEYS, validate_predictions
from . import _html as _html
from . import _payload as _payload
from ._compare import ComparisonModel
from ._format import run_label

#: Filters of the explorer, in display order.
FILTERS = ("language", "experiment", "model")
_UNSET = object()


def _annotator_features(frame: pd.DataFrame, language: str | None, annotations, cache_dir) -> list | None:
    """The rule annotator's features of every pair of a dataset (cached on disk), or None when unavailable."""
    if annotations is False or annotations is None or language is None:
        return None
    try:
        from ..annotate import annotate_cached
        from ..annotate import available_languages
    except ImportError:  # the annotator stage is optional here: the explorer then shows gold features only
        return None
    if language not in available_languages():
        return None
    pairs = frame[["premise", "hypothesis"]].fillna("").astype(str)
    return [list(f) for f in annotate_cached(pairs, language, cache_dir)["auto_features"]]


def _texts(name: str, source, language: str | None, annotations, cache_dir) -> pd.DataFrame:
    frame = dataset_frame(source)
    out = pd.DataFrame({"id": frame["id"].astype(str).to_numpy()})
    for column in ("premise", "hypothesis"):
        out[column] = frame[column].fillna("").astype(str).to_numpy() if column in frame else ""
    out["features"] = ([list(f) if f is not None else [] for f in frame["features"]] if "features" in frame
                       else [[] for _ in range(len(frame))])
    if isinstance(annotations, Mapping):
        given = annotations.get(name)
        auto = None if given is None else [list(f) for f in given]
    else:
        if "language" in frame and frame["language"].notna().any():
            language = str(frame["language"].dropna().mode().iat[0])
        auto = _annotator_features(frame, language, annotations, cache_dir)
    if auto is not None and len(auto) != len(out):
        raise ValueError(f"{name}: {len(auto)} annotations for {len(out)} pairs")
    out["auto_features"] = auto if auto is not None else None
    return out.drop_duplicates("id").set_index("id", drop=False)


def build_explorer(predictions: pd.DataFrame, dataset: str | pd.DataFrame | Mapping | None = None, *,
                   level: str = "fine", annotations: bool | Mapping = True, cache_dir: str | Path | None = None,
                   validate: bool = True, trust_labels: bool = False) -> ExplorerModel:
    """Compute everything the explorer shows (per-seed MCC, σ, flip rates, Δσ, texts, features) once.

    Parameters
    ----------
    predictions : pandas.DataFrame
        The predictions table (see :mod:`diagnostics.stats._table`); ``probability`` optional.
    dataset : str, DataFrame or mapping, optional
        Where texts and categories come from, as in :func:`~diagnostics.stats.category_scores`.
    level : {"fine", "coarse"}
        Category level of the heat map.
    annotations : bool or mapping
        ``True``: the rule annotator's features of every pair, for datasets whose language has rules (annotated
        once, then read from ``cache_dir``); ``False``: none; a mapping ``dataset name -> list of feature lists``
        (one per dataset row) to use given annotations.
    cache_dir : str or Path, optional
        Annotation cache folder (e.g. ``<run store>/.cache/annotations``); None annotates without caching.
    validate : bool
        Validate the table against the datasets first.
    trust_labels : bool
        With ``validate``, keep gold labels that differ from the dataset's.

    Returns
    -------
    ExplorerModel
        The explorer's state, no front end attached.
    """
    if validate:
        predictions = validate_predictions(predictions, datasets=dataset_frames(predictions, dataset),
                                           trust_labels=trust_labels)
    instances = instance_stability(predictions, validate=False)
    scores = category_scores(predictions, dataset, levels=(level,), validate=False)
    categories = category_instability(predictions, dataset, level=level, validate=False)
    drivers = sigma_drivers(predictions, dataset, level=level, validate=False)
    texts = {}
    for name, group in predictions.groupby("dataset", sort=False):
        language = str(group["language"].iat[0]) if "language" in group else None
        texts[str(name)] = _texts(str(name), dataset_for(dataset, str(name)), language, annotations, cache_dir)
    return ExplorerModel(instances, scores, categories, drivers, texts, level=level)


class ExplorerModel(_payload.StaticPage):
    """State of the explorer: filters, the chosen heat-map cell and the examples it lists (no front end needed).

    Parameters
    ----------
    instances : pandas.DataFrame
        :func:`~diagnostics.stats.instance_stability` of the table.
    scores : pandas.DataFrame
        :func:`~diagnostics.stats.category_scores` of the table at ``level``.
    categories : pandas.DataFrame
        :func:`~diagnostics.stats.category_instability` of the table.
    drivers : pandas.DataFrame
        :func:`~diagnostics.stats.sigma_drivers` of the table.
    texts : dict of str to pandas.DataFrame
        Dataset name -> rows indexed by ``id`` with ``premise, hypothesis, features, auto_features``.
    level : str
        Category level.

    Notes
    -----
    Build it with :func:`build_explorer`. Filters default to the first language and the main experiment (``base``
    when present) so the heat map starts small; ``None`` means all values.
    """

    _views = _html

    def __init__(self, instances: pd.DataFrame, scores: pd.DataFrame, categories: pd.DataFrame,
                 drivers: pd.DataFrame, texts: dict, level: str = "fine"):
        self.level = level
        self.keys = [k for k in SETTING_KEYS if k in instances.columns]
        first = instances.drop_duplicates(self.keys)
        self.settings = [dict(zip(self.keys, values)) for values in first[self.keys].itertuples(index=False)]
        self.runs = [list(seeds) for seeds in first["seeds"]]
        index = {tuple(s.values()): i for i, s in enumerate(self.settings)}

        def setting_of(frame):
            return [index[tuple(v)] for v in frame[self.keys].itertuples(index=False)]

        self._instances = {i: g.set_index("example_id", drop=False)
                           for i, g in instances.assign(_s=setting_of(instances)).groupby("_s")}
        run = (list(zip(scores["pretrain_seed"], scores["seed"])) if "pretrain_seed" in scores.columns
               else scores["seed"].tolist())
        scores = scores.assign(_s=setting_of(scores), _run=[run_label(r) for r in run])
        self._mcc = {i: g.pivot_table(index="category", columns="_run", values="mcc", aggfunc="first")
                     for i, g in scores.groupby("_s")}
        self._categories = {i: g.set_index("category") for i, g in
                            categories.assign(_s=setting_of(categories)).groupby("_s")} if len(categories) else {}
        self._drivers = {}
        if len(drivers):
            for (i, category), g in drivers.assign(_s=setting_of(drivers)).groupby(["_s", "category"], sort=False):
                self._drivers[(i, category)] = g.set_index("example_id")["delta_sigma"]
        self.texts = texts
        order = FINE if level == "fine" else COARSE
        present = set(scores["category"])
        self.category_names = [c for c in order if c in present]
        self.lead_experiment = ("base" if any(s.get("experiment") == "base" for s in self.settings)
                                else self.settings[0].get("experiment"))
        self.filters = {k: None for k in FILTERS if k in self.keys}
        if "language" in self.filters:
            self.filters["language"] = self.options()["language"][0]
        if "experiment" in self.filters:
            self.filters["experiment"] = self.lead_experiment
        self.flipping_only = False
        self.selection: tuple[int, str, str | None] | None = None

    # --- filters and selection ---------------------------------------------------------------------------------

    def options(self) -> dict[str, list]:
        """List the values each filter can take (besides ``None``, all values).

        Returns
        -------
        dict of str to list
            Filter name -> values in order of first appearance.
        """
        return {k: list(dict.fromkeys(s[k] for s in self.settings)) for k in self.filters}

    def set_filters(self, language=_UNSET, experiment=_UNSET, model=_UNSET, flipping_only=_UNSET) -> None:
        """Change filters; a selected cell that the filters now hide is unselected.

        Parameters
        ----------
        language : str or None, optional
            Language to show (``None``: all); unchanged when not given.
        experiment : str or None, optional
            Experiment to show (``None``: all).
        model : str or None, optional
            Model to show (``None``: all).
        flipping_only : bool, optional
            List only the examples whose seeds disagree.

        Raises
        ------
        ValueError
            For a value the table does not hold.
        """
        options = self.options()
        for name, value in (("language", language), ("experiment", experiment), ("model", model)):
            if value is _UNSET or name not in self.filters:
                continue
            if value is not None and value not in options[name]:
                raise ValueError(f"{name} must be one of {options[name]} or None, found {value!r}")
            self.filters[name] = value
        if flipping_only is not _UNSET:
            self.flipping_only = bool(flipping_only)
        if self.selection is not None and self.selection[0] not in self.visible_settings():
            self.selection = None

    def visible_settings(self) -> list[int]:
        """List the settings the filters show.

        Returns
        -------
        list of int
            Indices into :attr:`settings`.
        """
        return [i for i, s in enumerate(self.settings)
                if all(v is None or s[k] == v for k, v in self.filters.items())]

    def columns(self) -> list[tuple[int, str]]:
        """List the heat map's columns: every seed of every visible setting.

        Returns
        -------
        list of tuple
            ``(setting index, seed label)`` in display order.
        """
        return [(i, run_label(r)) for i in self.visible_settings() for r in self.runs[i]]

    def heatmap(self) -> pd.DataFrame:
        """Tabulate the per-seed MCC of every category in the visible settings.

        Returns
        -------
        pandas.DataFrame
            Categories (taxonomy order) x columns ``(experiment, language, model, seed)``; NaN where a setting
            has no example of a category.
        """
        columns = self.columns()
        data = {}
        for i, label in columns:
            wide = self._mcc.get(i)
            values = wide[label] if wide is not None and label in wide.columns else pd.Series(dtype=float)
            data[(*[self.settings[i][k] for k in self.keys if k != "dataset"], label)] = values
        names = [k for k in self.keys if k != "dataset"] + ["seed"]
        frame = pd.DataFrame(data, index=self.category_names, dtype=float)
        frame.columns = pd.MultiIndex.from_tuples(list(data), names=names) if data else frame.columns
        return frame

    def find_setting(self, **setting) -> int:
        """Find the one setting matching the given keys (among all settings, filters ignored).

        Parameters
        ----------
        **setting
            Values of ``experiment``, ``language``, ``model``, ``dataset``; missing keys match any value.

        Returns
        -------
        int
            Index into :attr:`settings`.

        Raises
        ------
        ValueError
            When no setting or more than one matches.
        """
        unknown = set(setting) - set(self.keys)
        if unknown:
            raise ValueError(f"unknown setting keys {sorted(unknown)}; the settings have {self.keys}")
        found = [i for i, s in enumerate(self.settings) if all(s[k] == v for k, v in setting.items())]
        if len(found) != 1:
            raise ValueError(f"{len(found)} settings match {setting}; name more of {self.keys}")
        return found[0]

    def select(self, category: str, seed=None, *, setting: int | None = None, **keys) -> None:
        """Choose a heat-map cell: a category, a setting and (optionally) one seed.

        Filters that would hide the setting are widened to show it.

        Parameters
        ----------
        category : str
        seed : int, tuple or str, optional
            The cell's seed (highlighted in the listing; every seed's prediction is listed anyway).
        setting : int, optional
            Index into :attr:`settings`; by default the setting matching ``keys``, or the only visible one.
        **keys
            Setting keys (``language="ru"``, ``experiment="base"`` ...) identifying the setting.

        Raises
        ------
        ValueError
            For a category, seed or setting the table does not hold.
        """
        if setting is None:
            if keys:
                setting = self.find_setting(**keys)
            elif len(self.visible_settings()) == 1:
                setting = self.visible_settings()[0]
            else:
                raise ValueError("several settings are visible: name one (e.g. language=...) or set the filters")
        if not 0 <= setting < len(self.settings):
            raise ValueError(f"no setting {setting}")
        labels = [run_label(r) for r in self.runs[setting]]
        label = None if seed is None else (seed if isinstance(seed, str) else run_label(seed))
        if label is not None and label not in labels:
            raise ValueError(f"seed {seed!r} is not among the setting's seeds {labels}")
        if (setting, category) not in self._drivers:
            raise ValueError(f"{category!r} has no example in setting {self.settings[setting]}")
        for k, v in self.filters.items():
            if v is not None and v != self.settings[setting][k]:
                self.filters[k] = self.settings[setting][k]
        self.selection = (setting, category, label)

    def compare(self, a: int | Mapping, b: int | Mapping, names: tuple[str, str] | None = None) -> ComparisonModel:
        """Put two settings of this explorer side by side (two experiments or models on one dataset).

        Parameters
        ----------
        a : int or mapping
            The baseline A: an index into :attr:`settings`, or setting keys (``{"experiment": "base",
            "language": "en"}``) naming one setting.
        b : int or mapping
            B, the same way.
        names : tuple of str, optional
            How the sides are called (default: the setting values that differ).

        Returns
        -------
        ComparisonModel
            The comparison (:mod:`diagnostics.explorer._compare`); open it with :func:`explore`.

        Raises
        ------
        ValueError
            When a side names no setting or several, both are the same, or they are on different datasets.
        """
        chosen = [side if isinstance(side, (int, np.integer)) else self.find_setting(**dict(side)) for side in (a, b)]
        return ComparisonModel(self, int(chosen[0]), int(chosen[1]), names)

    @property
    def selected(self) -> dict | None:
        """The chosen cell: the setting's keys, ``category`` and ``seed`` (label or None); None before a choice.

        Returns
        -------
        dict or None
        """
        if self.selection is None:
            return None
        setting, category, label = self.selection
        return {**self.settings[setting], "category": category, "seed": label}

    # --- tables ------------------------------------------------------------------------------------------------

    def instance_rows(self, setting: int) -> pd.DataFrame:
        """The setting's rows of :func:`~diagnostics.stats.instance_stability`, indexed by ``example_id``.

        Parameters
        ----------
        setting : int
            Index into :attr:`settings`.

        Returns
        -------
        pandas.DataFrame
            Without texts (see :meth:`instance_table` for those).
        """
        return self._instances[setting]

    def seed_mcc(self, setting: int) -> pd.DataFrame:
        """Tabulate the setting's per-seed MCC: categories x seed labels.

        Parameters
        ----------
        setting : int
            Index into :attr:`settings`.

        Returns
        -------
        pandas.DataFrame
            Empty when the setting has no score.
        """
        return self._mcc.get(setting, pd.DataFrame())

    def delta_sigma(self, setting: int, category: str) -> pd.Series | None:
        """The Δσ of every example of a category in a setting (:func:`~diagnostics.stats.sigma_drivers`).

        Parameters
        ----------
        setting : int
            Index into :attr:`settings`.
        category : str

        Returns
        -------
        pandas.Series or None
            ``example_id`` -> Δσ; None when the setting has no example of the category.
        """
        return self._drivers.get((setting, category))

    def category_table(self, setting: int) -> pd.DataFrame:
        """Tabulate a setting's categories: size, mean and σ of per-seed MCC, flipping share, top Δσ example.

        Parameters
        ----------
        setting : int
            Index into :attr:`settings`.

        Returns
        -------
        pandas.DataFrame
            Indexed by category, least stable (largest σ) first.
        """
        return self._categories.get(setting, pd.DataFrame()).drop(columns=self.keys, errors="ignore")

    def instance_table(self, setting: int) -> pd.DataFrame:
        """Tabulate every example of a setting: its per-seed stability with its texts and features.

        Parameters
        ----------
        setting : int
            Index into :attr:`settings`.

        Returns
        -------
        pandas.DataFrame
            The setting's rows of :func:`~diagnostics.stats.instance_stability` with ``premise, hypothesis,
            features`` (gold) and ``auto_features`` (the rule annotator's; None without annotations).
        """
        rows = self._instances[setting].reset_index(drop=True)
        texts = self.texts[str(self.settings[setting]["dataset"])].loc[rows["example_id"]]
        return rows.assign(**{c: texts[c].to_numpy() for c in ("premise", "hypothesis", "features", "auto_features")})

    def examples(self, setting: int | None = None, category: str | None = None,
                 flipping_only: bool | None = None) -> pd.DataFrame:
        """List a category's examples in a setting, by default those of the chosen cell under the filters.

        Parameters
        ----------
        setting : int, optional
            Index into :attr:`settings` (default: the selection's).
        category : str, optional
            Category (default: the selection's).
        flipping_only : bool, optional
            Only examples whose seeds disagree (default: the filter).

        Returns
        -------
        pandas.DataFrame
            One row per example, flipping ones first (flip rate, then Δσ, largest first): ``example_id, premise,
            hypothesis, label``, ``prediction_<seed>`` and (with probabilities) ``probability_<seed>`` for every
            seed, ``flip_rate, delta_sigma, features`` (gold) and ``auto_features`` (the rule annotator's; None
            without annotations). Empty before a choice.
        """
        if setting is None or category is None:
            if self.selection is None:
                return pd.DataFrame(columns=["example_id", "premise", "hypothesis", "label", "flip_rate"])
            setting, category = self.selection[0] if setting is None else setting, \
                self.selection[1] if category is None else category
        flipping_only = self.flipping_only if flipping_only is None else flipping_only
        delta = self._drivers.get((setting, category), pd.Series(dtype=float))
        rows = self._instances[setting].loc[delta.index]
        if flipping_only:
            rows = rows[rows["flips"]]
        texts = self.texts[str(self.settings[setting]["dataset"])].loc[rows["example_id"]]
        out = pd.DataFrame({"example_id": rows["example_id"].to_numpy(), "premise": texts["premise"].to_numpy(),
                            "hypothesis": texts["hypothesis"].to_numpy(), "label": rows["label"].to_numpy()})
        labels = [run_label(r) for r in self.runs[setting]]
        predicted = np.array(list(rows["predictions"]), dtype=object).reshape(len(rows), len(labels))
        for j, label in enumerate(labels):
            out[f"prediction_{label}"] = predicted[:, j]
        if "probabilities" in rows:
            probs = np.array(list(rows["probabilities"]), dtype=float).reshape(len(rows), len(labels))
            for j, label in enumerate(labels):
                out[f"probability_{label}"] = probs[:, j]
        out["flip_rate"] = rows["flip_rate"].to_numpy()
        out["delta_sigma"] = delta.loc[rows["example_id"]].to_numpy()
        out["features"] = texts["features"].to_numpy()
        out["auto_features"] = texts["auto_features"].to_numpy()
        order = np.lexsort((-np.nan_to_num(out["delta_sigma"].to_numpy(), nan=-np.inf),
                            -np.nan_to_num(out["flip_rate"].to_numpy(), nan=-1.0)))
        return out.iloc[order].reset_index(drop=True)

    def least_stable(self, n: int = 5, experiment: str | None = None) -> pd.DataFrame:
        """The ``n`` categories with the largest σ of per-seed MCC per language (and model) of one experiment.

        Parameters
        ----------
        n : int
            Categories per setting.
        experiment : str, optional
            Default :attr:`lead_experiment` (``base`` when present).

        Returns
        -------
        pandas.DataFrame
            ``setting`` (index into :attr:`settings`), the setting keys, ``category, n, mean, sigma, n_flipping,
            flip_share, top_driver, top_delta_sigma``.
        """
        experiment = self.lead_experiment if experiment is None else experiment
        parts = []
        for i, s in enumerate(self.settings):
            if s.get("experiment", experiment) != experiment or i not in self._categories:
                continue
            table = self._categories[i].dropna(subset=["sigma"]).head(n).reset_index()
            parts.append(table.assign(setting=i))
        if not parts:
            return pd.DataFrame()
        columns = ["setting", *self.keys, "category", "n", "mean", "sigma", "n_flipping", "flip_share",
                   "top_driver", "top_delta_sigma"]
        return pd.concat(parts, ignore_index=True)[columns]

    # --- names and views --------------------------------------------------------------------------------------

    def setting_name(self, setting: int) -> str:
        """Name a setting as the views do: ``"ru · base"`` (and the model when the table holds several).

        Parameters
        ----------
        setting : int
            Index into :attr:`settings`.

        Returns
        -------
        str
            The heading of the setting's heat-map block and listings.
        """
        s = self.settings[setting]
        many_models = len({x.get("model") for x in self.settings}) > 1
        parts = [s.get("language"), s.get("experiment")] + ([s.get("model")] if many_models else [])
        return " · ".join(str(p) for p in parts if p is not None)

    def examples_html(self, setting: int | None = None, category: str | None = None,
                      flipping_only: bool | None = None, limit: int | None = None) -> str:
        """Render :meth:`examples` as an HTML table (:func:`diagnostics.explorer._html.examples_html`).

        Parameters
        ----------
        setting : int, optional
            Index into :attr:`settings` (default: the selection's).
        category : str, optional
            Category (default: the selection's).
        flipping_only : bool, optional
            Only flipping examples (default: the filter).
        limit : int, optional
            Show at most this many rows (a line counts the rest).

        Returns
        -------
        str
            An HTML fragment.
        """
        return _html.examples_html(self, setting, category, flipping_only, limit)

    def heatmap_html(self) -> str:
        """Render :meth:`heatmap` as a coloured HTML table.

        Returns
        -------
        str
            An HTML fragment.
        """
        return _html.heatmap_html(self)

    def payload(self, n: int = 5) -> dict:
        """Pack everything the report's ``explorer.html`` shows (:func:`diagnostics.explorer.build_payload`).

        Parameters
        ----------
        n : int
            Least stable categories per language in the page's lead section.

        Returns
        -------
        dict
            ``version, level, labels, keys, categories, features, datasets, settings, lead``.
        """
        return _payload.build_payload(self, n)
