"""Instability explorer: which examples flip between seeds in the least stable categories, and what they share.

A category x seed heat map of per-seed MCC (one column block per experiment x language x model); choosing a cell
lists the category's examples of that setting with premise, hypothesis, gold label, every seed's prediction and
P(entailment), the flip rate (share of seed pairs that disagree, :mod:`diagnostics.stats.instances`), Δσ (the
leave-one-example-out change of the category's σ) and the features of the pair: the gold ones and the rule
annotator's (:mod:`diagnostics.annotate`, cached on disk). Filters: language, experiment, model, flipping only.

Three front ends share one plain-Python state, :class:`ExplorerModel` (tested without any front end):

* :class:`ExplorerWidget`: the notebook widget.
* :meth:`ExplorerModel.to_html`: static tables (the five least stable categories per language and their
  flipping examples, then the heat map), shown where no widget front end runs: papermill runs, the HTML report,
  nbconvert, GitHub.
* :meth:`ExplorerModel.payload`: the compact JSON that ``diagnostics.report.explorer`` embeds in the report's
  self-contained ``explorer.html``.

Widget stack: ipywidgets 8, core controls only (``Dropdown``, ``Checkbox``, a ``GridBox`` of ``Button`` cells as
the clickable heat map, an ``HTML`` listing). Core controls are rendered by the widget manager that every
current front end ships: JupyterLab 3 / 4 (``jupyterlab_widgets``, a prebuilt extension installed with
ipywidgets, no Node build), Notebook 7 and the classic Notebook 6 (``widgetsnbextension``), VS Code and Colab
(their own managers render core widgets without ``enable_custom_widget_manager``). A custom front end
(anywidget, or CheckList's classic-Notebook-only viewer) would add JavaScript that has to be loaded in each of
those and keep the state in the browser, where it cannot be tested from Python; here every click goes to
:class:`ExplorerModel` and the listing is HTML rendered in Python. :class:`Explorer` (what :func:`explore`
returns) displays as one output holding both the widget view and the static HTML: a front end with a widget
manager renders the widget, anything else (no ipywidgets installed, papermill, nbconvert, the report) the HTML.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from ..io_utils import write_text_atomic
from ..schema import ENTAILMENT, LABELS
from ..stats.categories import category_matrix, dataset_for, dataset_frame, dataset_frames
from ..stats.instances import category_instability, instance_stability, sigma_drivers
from ..stats.scores import category_scores
from ..stats.table import SETTING_KEYS, validate_predictions
from ..taxonomy import COARSE, FINE

#: File name of the explorer's data (written by the notebook next to its figures, read by the report).
PAYLOAD_NAME = "explorer.json"
#: Filters of the explorer, in display order.
FILTERS = ("language", "experiment", "model")
#: Examples listed at first (and added by each "show more") in the widget and on the report's page.
ROW_LIMIT = 25
_UNSET = object()
# compact tables in every front end (JupyterLab's and the classic Notebook's widget styles set a tall line height)
_TABLE_STYLE = ("<style>.dx-explorer table{border-collapse:collapse;font-size:12px;line-height:1.35}"
                ".dx-explorer td,.dx-explorer th{border:1px solid #ddd;padding:2px 5px;vertical-align:top}"
                ".dx-explorer td{max-width:30em}</style>")


def run_label(run) -> str:
    """Name one seed of a setting: ``"3"``, or ``"1/3"`` for (pretrain_seed, seed) in nested designs.

    Parameters
    ----------
    run : int or tuple of int
        A seed, or a (pretrain_seed, seed) pair.

    Returns
    -------
    str
        The label used in column names (``prediction_<label>``) and headers.
    """
    return "/".join(str(int(x)) for x in run) if isinstance(run, tuple) else str(int(run))


def mcc_color(value: float | None) -> str:
    """Map an MCC in [-1, 1] to a diverging colour (blue below 0, white at 0, red above; grey when missing).

    Parameters
    ----------
    value : float or None
        The MCC.

    Returns
    -------
    str
        A ``#rrggbb`` colour (the same scale as the report page's).
    """
    if value is None or not np.isfinite(value):
        return "#dddddd"
    v = float(np.clip(value, -1.0, 1.0))
    low, mid, high = np.array([33, 102, 172]), np.array([247, 247, 247]), np.array([178, 24, 43])
    rgb = mid + (high - mid) * v if v >= 0 else mid + (low - mid) * (-v)
    return "#" + "".join(f"{int(round(c)):02x}" for c in rgb)


def legend_html() -> str:
    """The heat map's colour legend: MCC from -1 (blue) through 0 (white) to +1 (red), blank when undefined.

    Returns
    -------
    str
        An HTML fragment (the widget, the static tables and the report's ``explorer.html`` show the same).
    """
    stops = ", ".join(f"{mcc_color(v)} {round((v + 1) * 50)}%" for v in (-1.0, -0.5, 0.0, 0.5, 1.0))
    return ("<div class='dx-legend' style='display:flex;align-items:center;gap:.4em;font-size:12px;"
            "margin:.3em 0'><span>per-seed MCC:</span><span>−1</span><span style='display:inline-block;"
            f"width:12em;height:.8em;border:1px solid #bbb;background:linear-gradient(to right, {stops})'></span>"
            "<span>+1</span><span style='color:#666'>(white: 0; blank: undefined, e.g. one class predicted)"
            "</span></div>")


def display_round(value, digits: int):
    """Round once, the way every view of the explorer shows a number (``f"{value:.{digits}f}"``).

    Parameters
    ----------
    value : float
        The number.
    digits : int
        Decimals shown.

    Returns
    -------
    float or None
        Python's correctly rounded ``round(value, digits)``; None for NaN or a missing value. The report's page
        stores these values and prints them with as many decimals, so it shows the notebook's digits.
    """
    try:
        value = float(value)
    except (TypeError, ValueError):
        return None
    return round(value, digits) if np.isfinite(value) else None


def _annotator_features(frame: pd.DataFrame, language: str | None, annotations, cache_dir) -> list | None:
    """The rule annotator's features of every pair of a dataset (cached on disk), or None when unavailable."""
    if annotations is False or annotations is None or language is None:
        return None
    try:
        from ..annotate.cache import annotate_cached
        from ..annotate.rules import available_languages
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
        The predictions table (see :mod:`diagnostics.stats.table`); ``probability`` optional.
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


class ExplorerModel:
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
            Category name.
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

    # --- static HTML -------------------------------------------------------------------------------------------

    def _setting_name(self, setting: int) -> str:
        s = self.settings[setting]
        many_models = len({x.get("model") for x in self.settings}) > 1
        parts = [s.get("language"), s.get("experiment")] + ([s.get("model")] if many_models else [])
        return " · ".join(str(p) for p in parts if p is not None)

    def examples_html(self, setting: int | None = None, category: str | None = None,
                      flipping_only: bool | None = None, limit: int | None = None) -> str:
        """Render :meth:`examples` as an HTML table (predictions coloured, the chosen seed highlighted).

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
        if (setting is None or category is None) and self.selection is None:
            return "<p><i>Choose a cell of the heat map.</i></p>"
        setting = self.selection[0] if setting is None else setting
        category = self.selection[1] if category is None else category
        chosen = self.selection[2] if self.selection is not None and self.selection[:2] == (setting, category) \
            else None
        frame = self.examples(setting, category, flipping_only)
        labels = [run_label(r) for r in self.runs[setting]]
        stats = self._categories.get(setting)
        line = ""
        if stats is not None and category in stats.index:
            row = stats.loc[category]
            line = (f"n = {int(row['n'])}, σ = {row['sigma']:.3f}, mean MCC = {row['mean']:.3f}, "
                    f"flipping {int(row['n_flipping'])} ({row['flip_share']:.0%})")
        outline = " style='outline:2px solid #000'"
        head = "".join(f"<th{outline if lab == chosen else ''}>seed {html.escape(lab)}</th>" for lab in labels)
        body = []
        shown = frame if limit is None else frame.head(limit)
        for r in shown.itertuples(index=False):
            r = r._asdict()
            cells = []
            for lab in labels:
                pred = r.get(f"prediction_{lab}")
                prob = r.get(f"probability_{lab}")
                text = "–" if pred is None else ("E" if pred == ENTAILMENT else "N")
                if prob is not None and np.isfinite(prob):
                    text += f" {prob:.3f}"
                colour = "#eee" if pred is None else ("#cfe3f7" if pred == ENTAILMENT else "#fbe0c8")
                code = "" if pred is None else ("1" if pred == ENTAILMENT else "0")
                cells.append(f"<td class='pred' data-seed='{html.escape(lab)}' data-pred='{code}' "
                             f"style='background:{colour};white-space:nowrap'>{text}</td>")
            auto = r["auto_features"]
            body.append(
                f"<tr data-id='{html.escape(str(r['example_id']))}'><td>{html.escape(str(r['example_id']))}</td>"
                "<td style='text-align:left'>"
                f"{html.escape(r['premise'])}</td><td style='text-align:left'>{html.escape(r['hypothesis'])}</td>"
                f"<td>{'E' if r['label'] == ENTAILMENT else 'N'}</td>{''.join(cells)}"
                f"<td>{r['flip_rate']:.2f}</td><td>{r['delta_sigma']:+.3f}</td>"
                f"<td style='text-align:left'>{html.escape(', '.join(r['features']))}</td>"
                f"<td style='text-align:left'>{html.escape(', '.join(auto)) if auto is not None else '–'}</td>"
                "</tr>")
        more = f"<p>… and {len(frame) - len(shown)} more</p>" if len(shown) < len(frame) else ""
        title = (f"<b>{html.escape(category)}</b> · {html.escape(self._setting_name(setting))}"
                 + (f" · seed {html.escape(chosen)}" if chosen is not None else ""))
        if not len(frame):
            return (f"{_TABLE_STYLE}<div class='dx-explorer dx-listing' data-total='0'><p>{title}<br><small>{line}"
                    f"</small></p><p><i>No {'flipping ' if flipping_only or self.flipping_only else ''}examples."
                    "</i></p></div>")
        return (f"{_TABLE_STYLE}<div class='dx-explorer dx-listing' data-total='{len(frame)}' "
                f"data-shown='{len(shown)}'><p>{title}<br><small>{line}</small></p>"
                "<table><thead><tr><th>id</th><th>premise</th><th>hypothesis</th><th>gold</th>"
                f"{head}<th>flip rate</th><th>Δσ</th><th>features (gold)</th><th>features (annotator)</th></tr>"
                f"</thead><tbody>{''.join(body)}</tbody></table>{more}</div>")

    def heatmap_html(self) -> str:
        """Render :meth:`heatmap` as a coloured HTML table.

        Returns
        -------
        str
            An HTML fragment.
        """
        frame = self.heatmap()
        columns = self.columns()
        head = "".join(f"<th>{html.escape(self._setting_name(i))}<br>seed {html.escape(lab)}</th>"
                       for i, lab in columns)
        rows = []
        for category, values in frame.iterrows():
            cells = "".join(f"<td style='background:{mcc_color(v)}'>{_two_decimals(v)}</td>"
                            for v in values.to_numpy(dtype=float))
            rows.append(f"<tr><th style='text-align:left'>{html.escape(category)}</th>{cells}</tr>")
        return (f"{_TABLE_STYLE}<div class='dx-explorer'>{legend_html()}<table><thead><tr><th></th>{head}</tr>"
                f"</thead><tbody>{''.join(rows)}</tbody></table></div>")

    def to_html(self, n: int = 5, limit: int = 20) -> str:
        """Render the static explorer: the ``n`` least stable categories per language with their flipping examples,
        then the heat map of the current filters.

        Parameters
        ----------
        n : int
            Categories per language.
        limit : int
            Flipping examples shown per category.

        Returns
        -------
        str
            An HTML fragment (what papermill runs, the HTML report and front ends without widgets show).
        """
        parts = [f"<h3>The {n} least stable categories per language ({html.escape(str(self.lead_experiment))})</h3>"]
        lead = self.least_stable(n)
        for setting, group in lead.groupby("setting", sort=False):
            parts.append(f"<h4>{html.escape(self._setting_name(setting))}</h4>")
            for row in group.itertuples(index=False):
                parts.append(self.examples_html(setting, row.category, flipping_only=True, limit=limit))
        parts.append("<h3>Per-seed MCC</h3>" + self.heatmap_html())
        return "\n".join(parts)

    # --- the report's payload ----------------------------------------------------------------------------------

    def payload(self, n: int = 5) -> dict:
        """Pack everything the report's ``explorer.html`` shows into compact JSON-ready structures.

        Sentences are stored once per dataset (``texts``; ``premise`` / ``hypothesis`` index them); predictions as
        one string per setting (``"1"`` entailment, ``"0"`` not, ``"."`` missing; example-major, seeds in order);
        probabilities as integers in per mille (-1 missing); categories as lists of row indices.

        Parameters
        ----------
        n : int
            Least stable categories per language in the page's lead section.

        Returns
        -------
        dict
            ``version, level, labels, keys, categories, features, datasets, settings, lead``.
        """
        cat_index = {c: j for j, c in enumerate(self.category_names)}
        features = sorted({f for t in self.texts.values() for col in ("features", "auto_features")
                           for fs in t[col] if fs is not None for f in fs},
                          key=lambda f: (FINE.index(f) if f in FINE else len(FINE), f))
        feature_index = {f: j for j, f in enumerate(features)}
        datasets, dataset_index, rows_of = [], {}, {}
        for i, s in enumerate(self.settings):
            name = str(s["dataset"])
            if name not in dataset_index:
                dataset_index[name] = len(datasets)
                datasets.append(name)
        packed_datasets = []
        for name in datasets:
            used = set().union(*(self._instances[i]["example_id"] for i, s in enumerate(self.settings)
                                 if str(s["dataset"]) == name))
            texts = self.texts[name]
            texts = texts[texts["id"].isin(used)]
            rows_of[name] = pd.Index(texts["id"])
            gold_labels = {}
            for i, s in enumerate(self.settings):
                if str(s["dataset"]) == name:
                    gold_labels.update(zip(self._instances[i]["example_id"], self._instances[i]["label"]))
            names, members = category_matrix(texts.reset_index(drop=True), self.level, ids=texts["id"].to_numpy())
            member_lists = [[] for _ in self.category_names]
            for j, c in enumerate(names):
                if c in cat_index:
                    member_lists[cat_index[c]] = np.flatnonzero(members[:, j]).tolist()
            has_auto = texts["auto_features"].notna().any()
            # diagnostic sets hold most sentences twice (a pair and its mirror): each sentence is stored once
            sentences = list(dict.fromkeys([*texts["premise"], *texts["hypothesis"]]))
            sentence_index = {t: j for j, t in enumerate(sentences)}
            packed_datasets.append({
                "name": name, "ids": texts["id"].tolist(), "texts": sentences,
                "premise": [sentence_index[t] for t in texts["premise"]],
                "hypothesis": [sentence_index[t] for t in texts["hypothesis"]],
                "label": "".join("1" if gold_labels[x] == ENTAILMENT else "0" for x in texts["id"]),
                "gold": [[feature_index[f] for f in fs] for fs in texts["features"]],
                "auto": [[feature_index[f] for f in (fs or [])] for fs in texts["auto_features"]] if has_auto
                else None,
                "members": member_lists})
        packed_settings = []
        for i, s in enumerate(self.settings):
            name = str(s["dataset"])
            index = rows_of[name]
            inst = self._instances[i]
            row = index.get_indexer(inst["example_id"])
            n_runs = len(self.runs[i])
            pred = np.full((len(index), n_runs), ".", dtype="<U1")
            codes = np.array([[("." if p is None else "1" if p == ENTAILMENT else "0") for p in ps]
                              for ps in inst["predictions"]], dtype="<U1").reshape(len(inst), n_runs)
            pred[row] = codes
            prob = None
            if "probabilities" in inst:
                values = np.full((len(index), n_runs), -1, dtype=np.int64)
                p = np.array(list(inst["probabilities"]), dtype=float).reshape(len(inst), n_runs)
                # per mille of the correctly rounded 3-decimal value: the page prints the listing's digits
                values[row] = np.array([round(round(float(x), 3) * 1000) if np.isfinite(x) else -1 for x in p.ravel()],
                                       dtype=np.int64).reshape(p.shape)
                prob = values.ravel().tolist()
            flip = [None] * len(index)
            for r, v in zip(row, inst["flip_rate"].to_numpy()):
                flip[r] = display_round(v, 2)
            labels = [run_label(r) for r in self.runs[i]]
            wide = self._mcc.get(i, pd.DataFrame())
            table = self._categories.get(i, pd.DataFrame())
            mcc, sigma, mean, flip_share, n_cat, dsig = [], [], [], [], [], []
            members = packed_datasets[dataset_index[name]]["members"]
            for j, c in enumerate(self.category_names):
                present = c in wide.index and c in table.index
                # rounded once, to the decimals every view shows (the page prints them as they are)
                mcc.append([display_round(wide.at[c, lab], 2) if lab in wide.columns else None for lab in labels]
                           if present else None)
                sigma.append(display_round(table.at[c, "sigma"], 3) if present else None)
                mean.append(display_round(table.at[c, "mean"], 3) if present else None)
                flip_share.append(_num(table.at[c, "flip_share"], 4) if present else None)
                n_cat.append(int(table.at[c, "n"]) if present else 0)
                delta = self._drivers.get((i, c))
                ids = packed_datasets[dataset_index[name]]["ids"]
                dsig.append([display_round(delta.get(ids[r], np.nan), 3) for r in members[j]] if delta is not None
                            else None)
            packed_settings.append({**{k: _plain(v) for k, v in s.items() if k != "dataset"},
                                    "dataset": dataset_index[name], "seeds": labels, "pred": "".join(pred.ravel()),
                                    "prob": prob, "flip": flip, "mcc": mcc, "sigma": sigma, "mean": mean,
                                    "flipShare": flip_share, "n": n_cat, "dsig": dsig})
        lead = self.least_stable(n)
        return {"version": 1, "level": self.level, "labels": list(LABELS), "keys": [k for k in self.keys
                                                                                    if k != "dataset"],
                "leadExperiment": _plain(self.lead_experiment), "categories": self.category_names,
                "features": features, "datasets": packed_datasets, "settings": packed_settings,
                "lead": [[int(r.setting), cat_index[r.category]] for r in lead.itertuples(index=False)]}

    def save_payload(self, path: str | Path, n: int = 5) -> Path:
        """Write :meth:`payload` as compact JSON (what ``diagnostics report`` turns into ``explorer.html``).

        Parameters
        ----------
        path : str or Path
            A ``.json`` file, or a folder (created) to write :data:`PAYLOAD_NAME` into.
        n : int
            Least stable categories per language in the opening section.

        Returns
        -------
        Path
            The written file.
        """
        path = Path(path)
        if path.is_dir() or path.suffix.lower() != ".json":
            path = path / PAYLOAD_NAME
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(path, json.dumps(self.payload(n), ensure_ascii=False, separators=(",", ":"),
                                           allow_nan=False))
        return path


def _two_decimals(value: float) -> str:
    """``0.12``; blank for NaN, never ``-0.00``."""
    if not np.isfinite(value):
        return ""
    text = f"{value:.2f}"
    return text[1:] if text == "-0.00" else text


def _num(value, digits: int):
    """A float rounded for JSON, None for NaN / missing."""
    try:
        value = float(value)
    except (TypeError, ValueError):
        return None
    return round(value, digits) if np.isfinite(value) else None


def _plain(value):
    return value.item() if isinstance(value, np.generic) else value


class ExplorerWidget:
    """The notebook widget (ipywidgets 8 core controls) over an :class:`ExplorerModel`.

    The heat map sits in a box of bounded height with its colour legend above it and the listing right below it,
    so the examples of a clicked cell appear where the user looks; the chosen cell is outlined, and a long
    listing shows ``row_limit`` examples at a time ("show more").

    Parameters
    ----------
    model : ExplorerModel
        The state; every click and filter change goes through it.
    row_limit : int
        Examples listed at first and added by each "show more".

    Raises
    ------
    ImportError
        When ipywidgets is not installed.
    """

    def __init__(self, model: ExplorerModel, row_limit: int = ROW_LIMIT):
        import ipywidgets as w

        self.model = model
        self._w = w
        options = model.options()
        self.dropdowns = {}
        for name in model.filters:
            choices = [("all", None)] + [(str(v), v) for v in options[name]]
            dropdown = w.Dropdown(options=choices, value=model.filters[name], description=name,
                                  layout=w.Layout(width="220px"))
            dropdown.observe(self._on_filter, names="value")
            self.dropdowns[name] = dropdown
            if len(options[name]) < 2 and name == "model":
                dropdown.layout.display = "none"
        self.flipping = w.Checkbox(value=model.flipping_only, description="flipping only", indent=False)
        self.flipping.observe(self._on_filter, names="value")
        self.grid = w.GridBox()
        # bounded: the listing below stays within a screen of any clicked cell
        self.grid_box = w.Box([self.grid], layout=w.Layout(max_height="380px", overflow="auto",
                                                           display="block"))
        self.row_limit = self.limit = row_limit
        self.listing = w.HTML(model.examples_html(limit=self.limit))
        self.listing.add_class("dx-listing-widget")
        self.more = w.Button(description="show more", layout=w.Layout(display="none", width="auto"))
        self.more.add_class("dx-more")
        self.more.on_click(self._show_more)
        self.widget = w.VBox([w.HBox([*self.dropdowns.values(), self.flipping]), w.HTML(legend_html()),
                              self.grid_box, self.listing, self.more])
        self.widget.add_class("dx-explorer-widget")
        self.buttons: dict[tuple[int, str, str], object] = {}
        self._chosen = None
        self._draw_grid()

    def _on_filter(self, _change=None) -> None:
        self.model.set_filters(**{name: d.value for name, d in self.dropdowns.items()},
                               flipping_only=self.flipping.value)
        self._draw_grid()
        self._show_listing(reset=True)

    def _draw_grid(self) -> None:
        w, model = self._w, self.model
        frame = model.heatmap()
        columns = model.columns()
        self.buttons = {}
        self._chosen = None
        selected = model.selection
        children = [w.Label("")]
        for i, label in columns:
            children.append(w.HTML(f"<small>{html.escape(model._setting_name(i))}<br>seed {label}</small>"))
        for category, values in frame.iterrows():
            children.append(w.Label(category, layout=w.Layout(width="auto")))
            for (i, label), value in zip(columns, values.to_numpy(dtype=float)):
                finite = np.isfinite(value)
                button = w.Button(description=_two_decimals(value), disabled=not finite,
                                  tooltip=f"{category} · {model._setting_name(i)} · seed {label}",
                                  layout=w.Layout(width="64px", height="22px", padding="0"))
                button.style.button_color = mcc_color(value if finite else None)
                button.add_class("dx-cell")
                button.add_class(cell_class(i, model.category_names.index(category), label))
                button.on_click(lambda _b, i=i, c=category, s=label: self.choose(i, c, s))
                self.buttons[(i, category, label)] = button
                children.append(button)
        self.grid.children = children
        self.grid.layout = w.Layout(grid_template_columns=f"minmax(180px, max-content) repeat({len(columns)}, 64px)",
                                    grid_gap="1px")
        if selected is not None:
            self._highlight((selected[0], selected[1], selected[2]))

    def _highlight(self, key) -> None:
        if self._chosen is not None and self._chosen in self.buttons:
            old = self.buttons[self._chosen]
            old.layout.border = ""
            old.style.font_weight = ""
            old.remove_class("dx-chosen")
        self._chosen = key
        button = self.buttons.get(key)
        if button is not None:
            button.layout.border = "2px solid #000"
            button.style.font_weight = "bold"
            button.add_class("dx-chosen")

    def _show_listing(self, reset: bool = False) -> None:
        if reset:
            self.limit = self.row_limit
        self.listing.value = self.model.examples_html(limit=self.limit)
        total = len(self.model.examples()) if self.model.selection is not None else 0
        rest = total - min(self.limit, total)
        self.more.description = f"show {min(rest, self.row_limit)} more (of {rest} not shown)"
        self.more.layout.display = "" if rest > 0 else "none"

    def _show_more(self, _button=None) -> None:
        self.limit += self.row_limit
        self._show_listing()

    def choose(self, setting: int, category: str, seed: str) -> None:
        """Select a cell (what clicking its button does): outline it and list its first examples below the map.

        Parameters
        ----------
        setting : int
            Index into the model's settings.
        category : str
            Category.
        seed : str
            Seed label.
        """
        self.model.select(category, seed, setting=setting)
        self._highlight((setting, category, seed))
        self._show_listing(reset=True)


def cell_class(setting: int, category_index: int, seed: str) -> str:
    """The CSS class naming one heat-map cell of the widget (``dx-cell-<setting>-<category>-<seed>``).

    Parameters
    ----------
    setting : int
        Index into the model's settings.
    category_index : int
        Index into the model's ``category_names``.
    seed : str
        Seed label (``"1/3"`` becomes ``1_3``).

    Returns
    -------
    str
        A class name a browser test (or a user's CSS) can select the cell by.
    """
    return f"dx-cell-{setting}-{category_index}-" + "".join(ch if ch.isalnum() else "_" for ch in str(seed))


class Explorer:
    """What :func:`explore` returns: displays as the widget where a widget front end runs, else static HTML.

    Parameters
    ----------
    model : ExplorerModel
        The state.
    static : bool
        Show the static HTML only (no widget).
    """

    def __init__(self, model: ExplorerModel, static: bool = False):
        self.model = model
        self.static = static
        self.widget = None
        if not static:
            try:
                self.widget = ExplorerWidget(model)
            except ImportError:  # no ipywidgets: the static tables are the explorer
                self.widget = None

    def _repr_mimebundle_(self, include=None, exclude=None):
        bundle = {"text/plain": f"instability explorer: {len(self.model.settings)} settings, "
                                f"{len(self.model.category_names)} categories",
                  "text/html": self.model.to_html()}
        if self.widget is not None:
            view = self.widget.widget._repr_mimebundle_()
            if view and "application/vnd.jupyter.widget-view+json" in view:
                bundle["application/vnd.jupyter.widget-view+json"] = view["application/vnd.jupyter.widget-view+json"]
        return bundle


def explore(predictions: pd.DataFrame | ExplorerModel, dataset=None, *, static: bool = False, **options) -> Explorer:
    """Open the instability explorer on a predictions table (or an already built model).

    Parameters
    ----------
    predictions : pandas.DataFrame or ExplorerModel
        The predictions table, or the result of :func:`build_explorer`.
    dataset : str, DataFrame or mapping, optional
        Where texts and categories come from (see :func:`build_explorer`).
    static : bool
        Static HTML only, no widget.
    **options
        Passed to :func:`build_explorer` (``level``, ``annotations``, ``cache_dir`` ...).

    Returns
    -------
    Explorer
        Display it (last expression of a cell, or ``IPython.display.display``).
    """
    model = predictions if isinstance(predictions, ExplorerModel) else build_explorer(predictions, dataset,
                                                                                      **options)
    return Explorer(model, static=static)


def _short(text: str, width: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[:width - 1] + "…"


def focus(premise: str, hypothesis: str, width: int = 60, context: int = 3) -> tuple[str, str]:
    """Shorten a premise and hypothesis to the words where they differ, with a little context around.

    Diagnostic pairs are often one edit apart ("is" / "isn't"); cutting both at the same place shows the edit.

    Parameters
    ----------
    premise, hypothesis : str
        The pair.
    width : int
        Characters at most per side.
    context : int
        Words kept before the first differing word.

    Returns
    -------
    tuple of str
        The shortened premise and hypothesis (``…`` where cut).
    """
    a, b = str(premise).split(), str(hypothesis).split()
    start = 0
    while start < min(len(a), len(b)) and a[start] == b[start]:
        start += 1
    begin = max(0, start - context)

    def cut(words: list[str]) -> str:
        text = ("… " if begin > 0 else "") + " ".join(words[begin:])
        return _short(text, width)

    return cut(a), cut(b)


def flipping_figure(model: ExplorerModel, setting: int, category: str, max_examples: int = 12,
                    width: int = 64) -> Figure:
    """Draw one category's flipping examples: every seed's prediction and P(entailment), gold label, Δσ.

    Parameters
    ----------
    model : ExplorerModel
        The explorer's state.
    setting : int
        Index into ``model.settings``.
    category : str
        Category.
    max_examples : int
        Examples shown (largest flip rate, then Δσ, first).
    width : int
        Characters of premise / hypothesis shown per example (cut around the words where they differ).

    Returns
    -------
    matplotlib.figure.Figure
    """
    frame = model.examples(setting, category, flipping_only=True).head(max_examples)
    labels = [run_label(r) for r in model.runs[setting]]
    stats = model.category_table(setting).loc[category]
    wide = model._mcc[setting]
    per_seed = ", ".join(f"{wide.at[category, lab]:+.2f}" for lab in labels if lab in wide.columns)
    text_units, cell, stat_units = 6.2, 1.0, 1.5
    columns = labels + ["gold"]
    rows = max(len(frame), 1)
    units = text_units + cell * len(columns) + 0.3 + stat_units
    fig = Figure(figsize=(0.95 * units, 1.35 + 0.5 * rows))
    ax = fig.subplots()
    ax.set_xlim(-text_units, units - text_units)
    ax.set_ylim(rows - 0.5, -0.9)
    ax.axis("off")
    for x, name in enumerate(columns):
        ax.text(x + (0.3 if name == "gold" else 0), -0.65, name if name == "gold" else f"seed {name}",
                ha="center", va="center", fontsize=8.5, color="#333")
    for y, r in enumerate(frame.itertuples(index=False)):
        r = r._asdict()
        premise, hypothesis = focus(r["premise"], r["hypothesis"], width)
        ax.text(-text_units + 0.05, y - 0.17, f"#{r['example_id']}  P: {premise}", ha="left", va="center",
                fontsize=7.5)
        ax.text(-text_units + 0.05, y + 0.19, f"{' ' * (len(str(r['example_id'])) + 1)}  H: {hypothesis}",
                ha="left", va="center", fontsize=7.5, color="#1a1a1a")
        for x, name in enumerate(columns):
            gold = name == "gold"
            pred = r["label"] if gold else r.get(f"prediction_{name}")
            prob = None if gold else r.get(f"probability_{name}")
            colour = "#eeeeee" if pred is None else ("#9ecae1" if pred == ENTAILMENT else "#fdae6b")
            left = x + (0.3 if gold else 0) - 0.46
            ax.add_patch(Rectangle((left, y - 0.42), 0.92, 0.84, color=colour, lw=0))
            text = "–" if pred is None else ("E" if pred == ENTAILMENT else "N")
            if prob is not None and np.isfinite(prob):
                text += f" {prob:.2f}"
            ax.text(left + 0.46, y, text, ha="center", va="center", fontsize=8, fontweight="bold" if gold else None)
        ax.text(len(columns) + 0.05, y, f"flip rate {r['flip_rate']:.2f}\nΔσ {r['delta_sigma']:+.3f}", va="center",
                fontsize=7.5, color="#444")
    if frame.empty:
        ax.text(-text_units + 0.05, 0, "no flipping examples", fontsize=9)
    name = model._setting_name(setting)
    ax.set_title(f"{category} ({name}): σ of MCC over seeds = {stats['sigma']:.3f}; per-seed MCC {per_seed}\n"
                 f"{int(stats['n_flipping'])} of {int(stats['n'])} examples flip between seeds "
                 "(E = entailment, N = not; numbers: P(entailment); Δσ: change of σ without the example)",
                 fontsize=9, loc="left")
    fig.tight_layout()
    return fig


__all__ = ["Explorer", "ExplorerModel", "ExplorerWidget", "FILTERS", "PAYLOAD_NAME", "build_explorer", "explore",
           "flipping_figure", "focus", "mcc_color", "run_label"]
