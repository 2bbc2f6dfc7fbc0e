"""The reference study's tables, from the per-category scores.

* Table 1 for diagnostic sets (pairs, label shares, pairs per category): :func:`diagnostic_table`
* Table 3 (§5.2, per language: mean MCC, mean σ, RS corr with collapsed seeds dropped and counted as 0):
  :func:`seed_stability_table`
* Table 4 (§5.3, extra English data): :func:`extra_data_table`, :func:`consistent_gains`,
  :func:`average_sigma_decrease`
* Fig. 5 / Table 5 (§5.4): :func:`improvement_correlation`, :func:`presence_table` (experiments named by
  :func:`presence_experiment` and read back by :func:`parse_presence_experiment`)
* Table 6 (σ over seeds per category and language, with the cross-language average): :func:`sigma_table`;
  with the seed-mean MCC beside σ: :func:`mcc_sigma_table`
* display headers (σ with its ddof, RS corr's policy, language labels naming a substitute diagnostic set):
  :func:`display_table`, :func:`language_labels`

Settings are selected as in :func:`~diagnostics.stats.deltas`: a mapping column -> value, e.g.
``{"experiment": "base"}`` and ``{"experiment": "extra-10000"}``; rows are matched on the remaining setting keys.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

import numpy as np
import pandas as pd

from ..core.taxonomy import COARSE, FINE, slug
from ..data import display_language
from ._stability import (_pairwise_pearson, _setting_keys, _subset, _with_pooled, deltas, rs_corr, rs_corr_variants,
                        stability)
from ._table import SETTING_KEYS

_RANK = {name: i for i, name in enumerate(FINE + COARSE)}
#: Keys that follow the language (each language has its own diagnostic set).
_PER_LANGUAGE = ("language", "dataset")
_PRESENCE = re.compile(r"presence-(?P<feature>[0-9a-z_]+)-(?P<share>[^-].*)")


def ordered_categories(categories) -> list:
    """Sort category names in taxonomy order (fine categories, then coarse ones; anything else last, sorted).

    Parameters
    ----------
    categories : iterable of str
        Category names.

    Returns
    -------
    list
        The same names, reordered.
    """
    return sorted(categories, key=lambda c: (_RANK.get(c, len(_RANK)), str(c)))


def _by_language(frame: pd.DataFrame, value: str) -> pd.DataFrame:
    """Category x language table of ``value``; setting keys that still vary (e.g. model) join the index."""
    keys = [k for k in SETTING_KEYS if k in frame.columns and k not in _PER_LANGUAGE]
    index = [k for k in keys if frame[k].nunique() > 1] + ["coarse", "category"]
    clash = frame.duplicated(index + ["language"])
    if clash.any():
        raise ValueError(f"several rows per {index + ['language']} (e.g. two datasets for one language): "
                         "narrow the selection")
    wide = frame.pivot(index=index, columns="language", values=value)
    position = {c: i for i, c in enumerate(ordered_categories(frame["category"].unique()))}
    rows = wide.index.to_frame(index=False).assign(_position=lambda f: f["category"].map(position))
    return wide.iloc[rows.sort_values(index[:-2] + ["_position"], kind="stable").index]


def language_labels(frame: pd.DataFrame) -> dict:
    """Language code -> its column label in tables and figures (:func:`diagnostics.data.display_language`).

    Parameters
    ----------
    frame : pandas.DataFrame
        Rows with ``language`` and, where known, ``dataset`` (the diagnostic set it was scored on).

    Returns
    -------
    dict
        ``{"en": "en", "sv": "sv (SweDiagnostics)", ...}``; a language scored on several sets takes the label of
        the first one that substitutes the study's set.
    """
    if "language" not in frame.columns:
        return {}
    if "dataset" not in frame.columns:
        return {lang: display_language(lang) for lang in pd.unique(frame["language"])}
    labels: dict = {}
    for lang, dataset in frame[["language", "dataset"]].drop_duplicates().itertuples(index=False):
        label = display_language(lang, dataset)
        if labels.get(lang, lang) == lang:
            labels[lang] = label
    return labels


def _sigma_header(ddof) -> str:
    return f"σ (ddof={ddof})"


def _frame_ddof(frame: pd.DataFrame, ddof: int | None) -> int:
    """The ddof a table's σ was computed with: given, else recorded by :func:`~diagnostics.stats.stability`."""
    if ddof is not None:
        return ddof
    return frame.attrs.get("ddof", 1)


def sigma_table(stability_frame: pd.DataFrame, level: str = "fine", setting: Mapping | None = None,
                labels: bool = True, ddof: int | None = None) -> pd.DataFrame:
    """Tabulate σ over seeds per category and language, with the cross-language average (the study's Table 6).

    Parameters
    ----------
    stability_frame : pandas.DataFrame
        Output of :func:`~diagnostics.stats.stability`.
    level : {"fine", "coarse"}
        Category level.
    setting : mapping, optional
        Column -> value selecting one setting (e.g. ``{"experiment": "base"}``) when the frame holds several.
    labels : bool
        Name the language columns by :func:`language_labels` (``"sv (SweDiagnostics)"`` for Swedish scored on
        SweDiagnostics); False keeps the language codes.
    ddof : int, optional
        The ddof of the frame's σ, for the header; by default the one :func:`~diagnostics.stats.stability`
        recorded in the frame (``attrs["ddof"]``), else 1.

    Returns
    -------
    pandas.DataFrame
        Indexed by ``coarse, category`` in taxonomy order (preceded by any setting key that still varies, e.g.
        ``experiment``), one column per language (the std over seeds) and ``Average``: the mean of the
        languages' σ (languages without the category skipped). The columns' name is the header
        ``"σ (ddof=<k>)"``.
    """
    header = _sigma_header(_frame_ddof(stability_frame, ddof))
    rows = stability_frame[stability_frame["level"] == level]
    if setting:
        rows = _subset(rows, setting, "setting")
    wide = _by_language(rows, "std")
    names = language_labels(rows) if labels else {}
    wide.columns = [names.get(c, c) for c in wide.columns]
    wide = wide.assign(Average=wide.mean(axis=1))
    wide.columns.name = header
    return wide


def mcc_sigma_table(scores: pd.DataFrame, level: str = "fine", setting: Mapping | None = None, ddof: int = 1,
                    labels: bool = True) -> pd.DataFrame:
    """Seed-mean MCC and σ over seeds per category and language, with the cross-language ``Average`` (Table 6).

    Parameters
    ----------
    scores : pandas.DataFrame
        Output of :func:`~diagnostics.stats.category_scores`.
    level : {"fine", "coarse"}
        Category level.
    setting : mapping, optional
        Column -> value selecting one setting (e.g. ``{"experiment": "base"}``) when the scores hold several.
    ddof : int
        Delta degrees of freedom of σ (see :func:`~diagnostics.stats.stability`).
    labels : bool
        Name the languages by :func:`language_labels`; False keeps the codes.

    Returns
    -------
    pandas.DataFrame
        Indexed as :func:`sigma_table`; two column levels: the language (then ``Average``, the mean over the
        languages that have the category) and the quantity, ``MCC`` (mean over seeds) and ``σ (ddof=<k>)``.
    """
    rows = scores[scores["level"] == level]
    if setting:
        rows = _subset(rows, setting, "setting")
    stab = stability(rows, ddof=ddof)
    header = _sigma_header(ddof)
    parts = {"MCC": _by_language(stab, "mean"), header: _by_language(stab, "std")}
    names = language_labels(stab) if labels else {}
    languages = list(parts["MCC"].columns)
    columns = {}
    for lang in languages:
        for quantity, wide in parts.items():
            columns[(names.get(lang, lang), quantity)] = wide[lang]
    for quantity, wide in parts.items():
        columns[("Average", quantity)] = wide[languages].mean(axis=1)
    table = pd.DataFrame(columns)
    table.columns.names = ["language", "quantity"]
    return table


def seed_stability_table(scores: pd.DataFrame, level: str = "fine", ddof: int = 1) -> pd.DataFrame:
    """Per language: mean MCC, mean σ over seeds and RS corr in its two readings (the study's Table 3).

    Parameters
    ----------
    scores : pandas.DataFrame
        Output of :func:`~diagnostics.stats.category_scores`.
    level : {"fine", "coarse"}
        Categories averaged over and correlated (the study: the fine ones).
    ddof : int
        Delta degrees of freedom of σ (see :func:`~diagnostics.stats.stability`).

    Returns
    -------
    pandas.DataFrame
        One row per setting (experiment, language, model, dataset): ``n_categories``, ``mcc`` (mean over
        categories of the seed-mean MCC), ``sigma`` (mean over categories of σ over seeds, NaN-σ categories
        skipped), ``rs_corr_drop`` and ``rs_corr_zero`` (RS corr with collapsed seeds dropped / counted as
        correlation 0, see :func:`~diagnostics.stats.rs_corr_variants`), ``n_collapsed`` (seeds with a constant
        per-category vector), ``n_seeds``. ``attrs["ddof"]`` records ``ddof``; :func:`display_table` names the
        columns for display.
    """
    rows = scores[scores["level"] == level]
    if rows.empty:
        raise ValueError(f"no {level!r} categories in the scores")
    stab = stability(rows, ddof=ddof)
    keys = _setting_keys(stab)
    table = stab.groupby(keys, sort=False).agg(n_categories=("category", "size"), mcc=("mean", "mean"),
                                               sigma=("std", "mean")).reset_index()
    rs = rs_corr_variants(rows, level)[keys + ["rs_corr_drop", "rs_corr_zero", "n_collapsed", "n_seeds"]]
    table = table.merge(rs, on=keys, how="left")
    table.attrs["ddof"] = ddof
    return table


def _matched(scores: pd.DataFrame, without: Mapping, with_: Mapping, level: str,
             ddof: int = 1) -> tuple[pd.DataFrame, list[str]]:
    """Per-category deltas at ``level`` and the setting keys the two selections are matched on."""
    frame = deltas(scores, without, with_, ddof=ddof)
    frame = frame[frame["level"] == level]
    if frame.empty:
        raise ValueError(f"no {level!r} categories to compare")
    return frame, [k for k in SETTING_KEYS if k in frame.columns]


def extra_data_table(scores: pd.DataFrame, without: Mapping, with_: Mapping, level: str = "fine",
                     ddof: int = 1) -> pd.DataFrame:
    """Mean MCC, mean σ and RS corr per language without and with extra training data (the study's Table 4).

    Parameters
    ----------
    scores : pandas.DataFrame
        Output of :func:`~diagnostics.stats.category_scores`.
    without, with_ : mapping
        Column -> value selecting the setting without and with the extra data (``{"experiment": "base"}``,
        ``{"experiment": "extra-10000"}``).
    level : {"fine", "coarse"}
        Categories averaged over (the study: the fine ones).
    ddof : int
        Delta degrees of freedom of σ (see :func:`~diagnostics.stats.stability`).

    Returns
    -------
    pandas.DataFrame
        One row per matched setting (language, model, dataset): ``n_categories`` (categories both settings
        have), ``mcc_without, mcc_with, mcc_diff`` (mean over categories of the seed-mean MCC, and with minus
        without), ``sigma_without, sigma_with, sigma_diff`` (mean over categories of σ over seeds),
        ``rs_corr_without, rs_corr_with, rs_corr_diff`` (:func:`~diagnostics.stats.rs_corr` at ``level``,
        collapsed seeds dropped), ``rs_corr_zero_without, rs_corr_zero_with, rs_corr_zero_diff`` (collapsed
        seeds counted as correlation 0, see :func:`~diagnostics.stats.rs_corr_variants`) and
        ``n_collapsed_without, n_collapsed_with`` (seeds with a constant per-category vector).
        ``attrs["ddof"]`` records ``ddof``; :func:`display_table` names the columns for display.
    """
    frame, keys = _matched(scores, without, with_, level, ddof)
    table = frame.groupby(keys, sort=False).agg(
        n_categories=("category", "size"), mcc_without=("mean_a", "mean"), mcc_with=("mean_b", "mean"),
        sigma_without=("std_a", "mean"), sigma_with=("std_b", "mean")).reset_index()
    rs = rs_corr_variants(scores[scores["level"] == level], level).rename(
        columns={"rs_corr_drop": "rs_corr", "rs_corr_zero": "rs_corr_zero"})
    parts = ["rs_corr", "rs_corr_zero", "n_collapsed"]
    both = _subset(rs, without, "without")[keys + parts].merge(
        _subset(rs, with_, "with_")[keys + parts], on=keys, suffixes=("_without", "_with"))
    table = table.merge(both, on=keys, how="left")
    for name in ("mcc", "sigma", "rs_corr", "rs_corr_zero"):
        table[f"{name}_diff"] = table[f"{name}_with"] - table[f"{name}_without"]
    columns = ["n_categories"] + [f"{name}_{part}" for name in ("mcc", "sigma", "rs_corr", "rs_corr_zero")
                                 for part in ("without", "with", "diff")] + ["n_collapsed_without",
                                                                            "n_collapsed_with"]
    table = table[keys + columns]
    table.attrs["ddof"] = ddof
    return table


def consistent_gains(scores: pd.DataFrame, without: Mapping, with_: Mapping, threshold: float = 0.2,
                     level: str = "fine") -> pd.DataFrame:
    """Find the categories whose seed-mean MCC rises by more than ``threshold`` in every language.

    Parameters
    ----------
    scores : pandas.DataFrame
        Output of :func:`~diagnostics.stats.category_scores`.
    without, with_ : mapping
        Selections of the setting without and with the extra data (see :func:`extra_data_table`).
    threshold : float
        A category qualifies when ``mean(with_) - mean(without) > threshold`` in each language present.
    level : {"fine", "coarse"}

    Returns
    -------
    pandas.DataFrame
        The qualifying categories (index ``coarse, category`` in taxonomy order, preceded by any setting key
        that still varies, e.g. ``model``), one column per language with the rise of the seed-mean MCC. A
        category missing in some language does not qualify.
    """
    frame, _ = _matched(scores, without, with_, level)
    wide = _by_language(frame, "mcc_delta")
    wide.columns = list(wide.columns)
    return wide[(wide > threshold).all(axis=1)]


def average_sigma_decrease(scores: pd.DataFrame, without: Mapping, with_: Mapping,
                           level: str = "fine", ddof: int = 1) -> pd.DataFrame:
    """Mean over categories of σ(without) − σ(with), per language and over all languages pooled.

    Parameters
    ----------
    scores : pandas.DataFrame
        Output of :func:`~diagnostics.stats.category_scores`.
    without, with_ : mapping
        Selections of the setting without and with the extra data (see :func:`extra_data_table`).
    level : {"fine", "coarse"}
    ddof : int
        Delta degrees of freedom of σ (see :func:`~diagnostics.stats.stability`).

    Returns
    -------
    pandas.DataFrame
        The matched setting keys, ``n_categories`` (categories with σ defined in both settings) and
        ``sigma_decrease`` (positive: the extra data made the categories more stable). After the per-language
        rows, one row per group of the other keys with ``language`` (and ``dataset``) ``"all"``: the mean over
        all (language, category) pairs.
    """
    frame, keys = _matched(scores, without, with_, level, ddof)
    frame = frame.assign(sigma_decrease=frame["std_a"] - frame["std_b"]).dropna(subset=["sigma_decrease"])
    table = _with_pooled(frame, keys, {"n_categories": ("category", "size"),
                                       "sigma_decrease": ("sigma_decrease", "mean")})
    table.attrs["ddof"] = ddof
    return table


def improvement_correlation(scores: pd.DataFrame, without: Mapping, with_: Mapping,
                            languages: tuple[str, str] = ("en", "ru"), level: str = "fine") -> float:
    """Pearson correlation between two languages' per-category improvements of the seed-mean MCC (Fig. 5).

    Parameters
    ----------
    scores : pandas.DataFrame
        Output of :func:`~diagnostics.stats.category_scores`.
    without, with_ : mapping
        Selections of the two settings; the improvement is ``mean(with_) - mean(without)`` per category.
    languages : pair of str
        The two languages to correlate (the study: English and Russian, r = 0.94).
    level : {"fine", "coarse"}

    Returns
    -------
    float
        Pearson r over the categories both languages have; NaN with fewer than two such categories or a
        constant improvement vector.
    """
    frame, _ = _matched(scores, without, with_, level)
    wide = _by_language(frame, "mcc_delta")
    if wide.index.nlevels > 2:
        raise ValueError(f"several settings per language ({wide.index.names[:-2]}): narrow the selections")
    missing = [lang for lang in languages if lang not in wide.columns]
    if missing:
        raise ValueError(f"languages {missing} not in the compared settings (have {list(wide.columns)})")
    pair = wide[list(languages)].dropna().to_numpy(dtype=np.float64)
    return float(_pairwise_pearson(pair)[0, 1]) if len(pair) > 1 else float("nan")


def feature_slug(name: str) -> str:
    """The feature's identifier in experiment names: lower case, non-alphanumerics as ``_``.

    Parameters
    ----------
    name : str
        A category name (``"Anaphora/Coreference"``) or a slug already.

    Returns
    -------
    str
        ``"anaphora_coreference"`` (:func:`diagnostics.core.taxonomy.slug`: runs of other characters become one
        ``_``, none at the ends).
    """
    return slug(name)


def presence_experiment(feature: str, share: float) -> str:
    """Name of the experiment training on ``share`` of pairs with ``feature``: ``presence-<slug>-<share>``.

    Parameters
    ----------
    feature : str
        Category name or slug.
    share : float
        Share of training pairs with the feature, written with ``:g`` (``0.25``, ``1``).

    Returns
    -------
    str
        E.g. ``presence-negation-0.25``; :func:`parse_presence_experiment` reads it back.
    """
    return f"presence-{feature_slug(feature)}-{share:g}"


def parse_presence_experiment(name: str) -> tuple[str, float]:
    """Feature slug and share of a ``presence-<feature slug>-<share>`` experiment name.

    Parameters
    ----------
    name : str
        E.g. ``"presence-negation-0.25"`` or ``"presence-anaphora_coreference-0.5"``.

    Returns
    -------
    tuple of (str, float)
        ``("negation", 0.25)``.

    Raises
    ------
    ValueError
        The name does not have that form.
    """
    match = _PRESENCE.fullmatch(name)
    try:
        return match["feature"], float(match["share"])
    except (TypeError, ValueError):
        raise ValueError(f"{name!r} is not a presence experiment name 'presence-<feature slug>-<share>' "
                         "(e.g. 'presence-negation-0.25')") from None


def presence_table(scores: pd.DataFrame, feature: str,
                   experiments: Mapping[str, tuple[str, float]] | None = None, ddof: int = 1) -> pd.DataFrame:
    """MCC, σ and RS corr of a feature per share of training pairs carrying it (the study's Table 5).

    Parameters
    ----------
    scores : pandas.DataFrame
        Output of :func:`~diagnostics.stats.category_scores`.
    feature : str
        The fine category (name or slug, e.g. ``"Negation"`` or ``"negation"``).
    experiments : mapping, optional
        Experiment -> (feature, share) of its training configuration. By default every experiment named
        ``presence-<feature slug>-<share>`` (:func:`parse_presence_experiment`); pass the mapping to add a
        reference (``{"base": ("Negation", 0.0), ...}``) or for other names. Experiments for other features
        are left out.
    ddof : int
        Delta degrees of freedom of σ (see :func:`~diagnostics.stats.stability`).

    Returns
    -------
    pandas.DataFrame
        One row per setting, sorted by language and share: the setting keys, ``share``, ``category``,
        ``n_seeds``, ``mcc`` (the feature's seed-mean MCC), ``sigma`` (its σ over seeds with ``ddof``) and
        ``rs_corr`` (RS corr of the setting over the fine categories, collapsed seeds dropped).
        ``attrs["ddof"]`` records ``ddof``.
    """
    if experiments is None:
        experiments = {name: parse_presence_experiment(name) for name in pd.unique(scores["experiment"])
                       if str(name).startswith("presence-")}
    target = feature_slug(feature)
    shares = {name: float(share) for name, (feat, share) in experiments.items() if feature_slug(feat) == target}
    rows = scores[scores["experiment"].isin(list(shares))]
    if rows.empty:
        raise ValueError(f"no scores for presence experiments of {feature!r} (experiments: {sorted(shares)})")
    stab = stability(rows[rows["level"] == "fine"], ddof=ddof)
    stab = stab[stab["category"].map(feature_slug) == target]
    if stab.empty:
        raise ValueError(f"category {feature!r} not among the fine categories of the presence experiments")
    keys = _setting_keys(stab)
    table = stab[keys + ["category", "n_seeds", "mean", "std"]].rename(columns={"mean": "mcc", "std": "sigma"})
    table = table.merge(rs_corr(rows, "fine")[keys + ["rs_corr"]], on=keys, how="left")
    table.insert(len(keys), "share", table["experiment"].map(shares))
    table = table.sort_values(["language", "share"], kind="stable").reset_index(drop=True)
    table.attrs["ddof"] = ddof
    return table


def _headers(ddof) -> dict:
    """Column -> (display name, qualifier) of the study tables' numeric columns."""
    sigma = f"ddof={ddof}"
    return {"mcc": ("MCC", ""), "mean": ("MCC", ""), "sigma": ("σ", sigma), "std": ("σ", sigma),
            "sigma_decrease": ("σ decrease", sigma), "rs_corr": ("RS corr", "collapsed seeds dropped"),
            "rs_corr_drop": ("RS corr", "collapsed seeds dropped"), "rs_corr_zero": ("RS corr", "collapsed seeds as 0"),
            "n_collapsed": ("collapsed runs", ""), "n_seeds": ("seeds", ""), "n_categories": ("categories", "")}


_PARTS = {"_without": " without", "_with": " with", "_diff": " with − without"}


def display_table(table: pd.DataFrame, ddof: int | None = None) -> pd.DataFrame:
    """A study table with display headers: σ with its ddof, RS corr with its policy, languages by their labels.

    Parameters
    ----------
    table : pandas.DataFrame
        Output of :func:`seed_stability_table`, :func:`extra_data_table`, :func:`average_sigma_decrease` or
        :func:`presence_table` (machine column names such as ``sigma_without``).
    ddof : int, optional
        The ddof of the table's σ; by default the one the table recorded (``attrs["ddof"]``), else 1.

    Returns
    -------
    pandas.DataFrame
        The same rows; ``language`` values replaced by :func:`language_labels` (``"sv (SweDiagnostics)"``),
        columns renamed: ``sigma_without`` -> ``"σ without (ddof=1)"``, ``rs_corr_zero_with`` ->
        ``"RS corr with (collapsed seeds as 0)"``, ``mcc_diff`` -> ``"MCC with − without"``, ``n_collapsed`` ->
        ``"collapsed runs"``; other columns unchanged.
    """
    headers = _headers(_frame_ddof(table, ddof))
    out = table.copy()
    if "language" in out.columns:
        names = language_labels(out)
        out["language"] = out["language"].map(lambda lang: names.get(lang, lang))
    renamed = {}
    for column in out.columns:
        base, part = str(column), ""
        for suffix, text in _PARTS.items():
            if base.endswith(suffix) and base[: -len(suffix)] in headers:
                base, part = base[: -len(suffix)], text
                break
        if base in headers:
            name, qualifier = headers[base]
            renamed[column] = f"{name}{part}" + (f" ({qualifier})" if qualifier else "")
    return out.rename(columns=renamed)


def diagnostic_table(frames: Mapping[str, pd.DataFrame] | Iterable[pd.DataFrame]) -> pd.DataFrame:
    """Pairs, label shares and pairs per category of diagnostic sets (the study's Table 1 for diagnostic data).

    Works for bundled sets and for user-supplied ones (``diagnostics.data.load("diagnostic_format", path=...,
    language="fr")``) alike.

    Parameters
    ----------
    frames : mapping of str to DataFrame, or iterable of DataFrame
        Diagnostic sets as :func:`diagnostics.data.load` returns them (``label``, ``features``). A mapping's keys
        name the columns; otherwise each set is named by :func:`diagnostics.data.display_language` of
        its ``language`` and ``dataset``.

    Returns
    -------
    pandas.DataFrame
        One column per set (object dtype: counts stay integers); index ``section, row``: ``("pairs", "pairs")``,
        ``("label share", <label>)`` for ``entailment`` and ``not_entailment`` (shares of the labelled pairs) and
        ``(<coarse>, <category>)`` with the pairs carrying each of the 33 fine categories, in taxonomy order
        (zeros included).
    """
    from ..core.schema import ENTAILMENT, NOT_ENTAILMENT
    from ..data import category_counts

    if not isinstance(frames, Mapping):
        frames = {display_language(frame["language"].iat[0], frame["dataset"].iat[0]) if len(frame) else str(i): frame
                  for i, frame in enumerate(frames)}
    columns = {}
    for name, frame in frames.items():
        labelled = frame["label"].dropna()
        values = {("pairs", "pairs"): len(frame)}
        for label in (ENTAILMENT, NOT_ENTAILMENT):
            values[("label share", label)] = float((labelled == label).mean()) if len(labelled) else np.nan
        if "features" in frame.columns:
            for row in category_counts(frame).itertuples(index=False):
                values[(row.coarse, row.category)] = row.n
        columns[name] = values
    order = list(dict.fromkeys(key for values in columns.values() for key in values))
    index = pd.MultiIndex.from_tuples(order, names=["section", "row"])
    # object columns keep counts as integers beside the shares
    return pd.DataFrame({name: pd.Series([values.get(key, np.nan) for key in order], index=index, dtype=object)
                         for name, values in columns.items()})
