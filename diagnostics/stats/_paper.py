"""A run store's numbers beside every number the reference study prints.

The study's numbers (Tikhonova et al., 2022, "Ad astra or astray") are package data, ``paper_numbers.csv``: one
row per printed number, with its section, figure or table, experiment, language, category and seed, the statistic
it is and its kind:

* ``value``: a measured number (an MCC, a σ, a correlation, a share); flagged when it lies further from ours than
  our seed σ of that category;
* ``claim``: a sentence that can be checked mechanically, as 1 (true) or 0 (false), e.g. "positive for every seed";
* ``design``, ``setting``, ``count``: the study's design (sizes, shares), training settings and data counts;
  flagged when ours differs beyond the printed precision.

:func:`against_paper` computes our value of each row (:mod:`diagnostics.stats._paper_values`), and whether the
comparison means anything (:mod:`diagnostics.stats._paper_settings`): only runs of mBERT trained with the study's
recipe on the study's data, scored on the study's diagnostic sets, are comparable. :func:`paper_verdict` says so in
one line.
"""

from __future__ import annotations

import io
import math
from collections.abc import Iterable, Mapping
from decimal import Decimal
from importlib import resources

import numpy as np
import pandas as pd

from ._paper_settings import STUDY_DIAGNOSTICS, diagnostic_reason, run_settings, setting_reasons
from ._paper_values import STATISTICS, NotComputed, NotRun, StoreView
from ._scores import category_scores

PAPER_FILE = "paper_numbers.csv"
#: Columns of ``paper_numbers.csv``.
PAPER_COLUMNS = ["section", "source", "experiment", "reference", "language", "category", "seed", "statistic", "kind",
                 "value", "note"]
#: Kinds of the paper's numbers (see the module docstring).
NUMBER_KINDS = ("value", "claim", "design", "setting", "count")
#: Columns of :func:`against_paper`.
RESULT_COLUMNS = ["model", "section", "source", "experiment", "reference", "language", "category", "seed",
                  "statistic", "kind", "paper", "ours", "difference", "sigma", "flag", "status", "comparable",
                  "reason", "note"]


def _half_unit(text: str) -> float:
    """Half a unit of the last printed digit: ``"0.42"`` -> 0.005, ``"10"`` -> 0.5."""
    exponent = Decimal(text).as_tuple().exponent
    return 0.5 * 10.0 ** min(int(exponent), 0)


def paper_numbers() -> pd.DataFrame:
    """Read every number the reference study prints, one row each (package data ``paper_numbers.csv``).

    Returns
    -------
    pandas.DataFrame
        The columns of :data:`PAPER_COLUMNS` plus ``tolerance`` (half a unit of the printed value's last digit).
        ``section`` is ``§4``, ``§5.1`` ... ``§5.4``, ``§5.4 probing`` or ``data``; ``experiment`` is a run store
        experiment (``base``: RTE / TERRa alone, ``extra-<n>``: plus n MNLI pairs, ``presence-<feature>-<share>``)
        or a pattern of them (``extra-*``, ``presence-negation-*``); ``reference`` the experiment a change is
        measured from; ``language`` a code or ``all`` (pooled or averaged over languages); ``category`` a
        canonical fine or coarse category or ``overall``; ``seed`` an integer or missing (seed mean or all seeds).
    """
    text = resources.files("diagnostics.stats").joinpath(PAPER_FILE).read_text(encoding="utf-8")
    frame = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    frame["tolerance"] = frame["value"].map(_half_unit)
    frame["value"] = frame["value"].astype(float)
    frame["seed"] = pd.to_numeric(frame["seed"].replace("", None)).astype("Int64")
    frame["reference"] = frame["reference"].map(lambda text: text or None).astype(object)
    return frame


def _diagnostic_per_language(scores: pd.DataFrame, study: Mapping) -> dict[str, str]:
    """The diagnostic set each language is compared on: the study's when scored, else the first with categories."""
    fine = scores[scores["level"] == "fine"] if "level" in scores.columns else scores
    chosen = {}
    for language, group in fine.groupby("language", sort=True):
        names = sorted(pd.unique(group["dataset"].astype(str)))
        own = [n for n in names if n in study.get(language, ())]
        chosen[str(language)] = (own or names)[0]
    return chosen


def _reasons(view: StoreView, row, datasets: Mapping[str, str], study: Mapping, settings) -> list[str]:
    """Why the store's numbers behind one paper row are not the study's (empty: comparable)."""
    experiments = [e for pattern in (row.experiment, row.reference) if pattern for e in view.experiments(pattern)]
    reasons = []
    for experiment in experiments:
        languages = view.languages(experiment) if row.language == "all" else [row.language]
        for language in languages:
            if language not in view.languages(experiment):
                continue
            if settings is None:
                reasons.append("run settings unknown (no run configs given)")
            else:
                match = settings[(settings["experiment"] == experiment) & (settings["language"] == language)
                                 & (settings["model"] == view.model)]
                reasons.extend(setting_reasons(match.iloc[0].to_dict()) if len(match)
                               else [f"no config recorded for the {experiment} {language} runs"])
            found = diagnostic_reason(language, datasets[language], study) if language in datasets else None
            reasons.extend([found] if found else [])
    return list(dict.fromkeys(reasons))


def _flag(kind: str, paper: float, ours: float, sigma: float, tolerance: float):
    if math.isnan(ours):
        return pd.NA
    if kind == "value":
        return pd.NA if math.isnan(sigma) else bool(abs(ours - paper) > sigma)
    return bool(abs(ours - paper) > max(tolerance, 1e-12))


def against_paper(table: pd.DataFrame, configs: Iterable[Mapping] | None = None, *,
                  dataset: str | pd.DataFrame | Mapping | None = None,
                  study_diagnostics: Mapping[str, Iterable[str]] | None = None, validate: bool = True,
                  ddof: int = 1, probes: pd.DataFrame | None = None) -> pd.DataFrame:
    """Put our value of every number the reference study prints beside the study's.

    Parameters
    ----------
    table : pandas.DataFrame
        The predictions table of a run store (:func:`diagnostics.finetune.collect_predictions`), or its
        :func:`~diagnostics.stats.category_scores` (then the label shares of the data rows are not computed).
    configs : iterable of mapping, optional
        The recorded ``config.json`` of the store's runs, e.g.
        ``[run.config() for run in diagnostics.finetune._store.list_runs(runs_dir, state="done")]``: they say which
        model, recipe and data each experiment used. Without them nothing counts as comparable.
    dataset : str, DataFrame or mapping, optional
        Where categories come from, as for :func:`~diagnostics.stats.category_scores` (user-supplied sets).
    study_diagnostics : mapping, optional
        Language -> diagnostic set names to take for the study's own, besides AX-b (en) and LiDiRus (ru)
        (:data:`~diagnostics.stats._paper_settings.STUDY_DIAGNOSTICS`): e.g. ``{"fr": ["diagnostic_fr"]}`` for
        the study's own French translation supplied as a user file.
    validate : bool
        Validate a predictions table against its datasets first.
    ddof : int
        Delta degrees of freedom of σ over seeds (see :func:`~diagnostics.stats.stability`).
    probes : pandas.DataFrame, optional
        Layer-wise probing results (:func:`diagnostics.probe.probe_models`, with a ``run_model`` column naming
        the run store's model when the table holds several) for the §5.4 probing rows; without it those rows are
        ``not computed``.

    Returns
    -------
    pandas.DataFrame
        One row per paper number and model in the table (:data:`RESULT_COLUMNS`, in the order of
        :func:`paper_numbers`): ``paper`` (the study's value), ``ours``, ``difference`` (ours - paper),
        ``sigma`` (our σ over seeds of the row's category, averaged over languages for ``all``; NaN where no
        category σ applies), ``flag`` (``value`` rows: |difference| > sigma; other kinds: ours differs beyond the
        printed precision; NA when undetermined), ``status`` (``compared``, ``not run``: the store lacks the
        experiment, language or seed; ``not computed``: the number is not about predictions; ``undefined``: e.g.
        a correlation of constant vectors), ``comparable`` (NA unless compared) and ``reason``
        (``"comparable"``, ``"not comparable: embedded model, demo recipe"``, or why the row was not compared).
        Rows about the overall MCC use the mean of the run's per-category MCCs.
    """
    study = {**STUDY_DIAGNOSTICS, **{k: frozenset(v) for k, v in (study_diagnostics or {}).items()}}
    is_scores = {"level", "category", "mcc"} <= set(table.columns)
    predictions = None if is_scores else table
    scores = table if is_scores else category_scores(table, dataset, levels=("fine", "overall", "all"),
                                                     validate=validate)
    datasets = _diagnostic_per_language(scores, study)
    keep = scores["dataset"].astype(str) == scores["language"].astype(str).map(datasets)
    scores = scores[keep]
    if predictions is not None:
        predictions = predictions[predictions["dataset"].astype(str)
                                  == predictions["language"].astype(str).map(datasets)]
    settings = run_settings(configs) if configs is not None else None
    paper = paper_numbers()
    parts = []
    for model, model_scores in scores.groupby("model", sort=True):
        view = StoreView(model_scores, None if predictions is None else predictions[predictions["model"] == model],
                         settings, ddof, model=model, probes=_probes_of(probes, model))
        parts.append(_compare(view, paper, datasets, study, settings).assign(model=model))
    if not parts:
        parts.append(_compare(StoreView(scores, predictions, settings, ddof), paper, datasets, study, settings)
                     .assign(model=None))
    return pd.concat(parts, ignore_index=True)[RESULT_COLUMNS]


def _probes_of(probes: pd.DataFrame | None, model: str) -> pd.DataFrame | None:
    """The probing rows of one run-store model (all of them when the table names no model)."""
    if probes is None or "run_model" not in probes.columns:
        return probes
    return probes[probes["run_model"] == model]


def _compare(view: StoreView, paper: pd.DataFrame, datasets, study, settings) -> pd.DataFrame:
    out = []
    for row in paper.itertuples(index=False):
        ours, sigma, comparable, status = float("nan"), float("nan"), pd.NA, "compared"
        try:
            with np.errstate(all="ignore"):
                ours, sigma = STATISTICS[row.statistic](view, row)
            reasons = _reasons(view, row, datasets, study, settings)
            comparable = not reasons
            reason = "comparable" if comparable else "not comparable: " + ", ".join(reasons)
            if math.isnan(ours):
                status, comparable = "undefined", pd.NA
                reason = "undefined in our runs (e.g. a correlation of constant vectors)"
        except NotRun as err:
            status, reason = "not run", f"not run: {err}"
        except NotComputed as err:
            status, reason = "not computed", f"not computed here: {err}"
        out.append({"section": row.section, "source": row.source, "experiment": row.experiment,
                    "reference": row.reference, "language": row.language, "category": row.category,
                    "seed": row.seed, "statistic": row.statistic, "kind": row.kind, "paper": row.value,
                    "ours": ours, "difference": ours - row.value, "sigma": sigma,
                    "flag": _flag(row.kind, row.value, ours, sigma, row.tolerance), "status": status,
                    "comparable": comparable, "reason": reason, "note": row.note})
    frame = pd.DataFrame(out)
    frame["seed"] = frame["seed"].astype("Int64")
    for column in ("flag", "comparable"):
        frame[column] = frame[column].astype("boolean")
    return frame


def paper_verdict(frame: pd.DataFrame) -> str:
    """Say in one line whether a comparison with the paper means anything.

    Parameters
    ----------
    frame : pandas.DataFrame
        Output of :func:`against_paper`.

    Returns
    -------
    str
        ``"comparable: ..."`` when every compared number comes from the study's model, recipe, data and
        diagnostic sets; ``"not comparable: <reasons>"`` (e.g. ``"not comparable: embedded model, demo
        recipe"``) when none does; ``"partly comparable (k of n numbers): <reasons>"`` in between;
        ``"nothing to compare: ..."`` when no row could be computed.
    """
    compared = frame[frame["status"] == "compared"]
    if compared.empty:
        return "nothing to compare: the run store has none of the study's experiments, languages and seeds"
    good = compared["comparable"].fillna(False).astype(bool)
    reasons = [r for text in compared.loc[~good, "reason"] for r in text.removeprefix("not comparable: ").split(", ")]
    reasons = ", ".join(dict.fromkeys(reasons))
    flagged = int(compared.loc[good, "flag"].fillna(False).astype(bool).sum())
    if good.all():
        return (f"comparable: {len(compared)} numbers from mBERT with the study's recipe, data and diagnostic sets; "
                f"{flagged} differ from the paper beyond our seed σ or the printed precision")
    if not good.any():
        return f"not comparable: {reasons}"
    return f"partly comparable ({int(good.sum())} of {len(compared)} numbers): the others differ by {reasons}"
