"""A run store's numbers beside every number the reference study prints, each placed in our distribution.

The study's numbers (Tikhonova et al., 2022, "Ad astra or astray") are package data, ``paper_numbers.csv`` (read by
:func:`~diagnostics.paper.paper_numbers`): one row per printed number, with its section, figure or table,
experiment, language, category and seed, the statistic it is and its kind:

* ``value``: a measured number (an MCC, a σ, a correlation, a share). It is placed in our distribution
  (:mod:`diagnostics.paper._intervals`), with an interval over our seeds (the examples are the study's, held
  fixed): a number printed for one seed against the prediction interval of one new run of ours; a mean over seeds
  against its t-interval, a σ against its chi-square interval, anything else about all seeds against its jackknife
  t-interval. The verdict is ``inside`` or ``outside`` that interval, ``degenerate (...)`` when it has no width, or
  ``no interval: <why>``;
* ``claim``: a sentence that can be checked mechanically, as 1 (true) or 0 (false), e.g. "positive for every seed";
* ``design``, ``setting``, ``count``: the study's design (sizes, shares), training settings and data counts.
  Claims and these are compared as printed: ours equals the paper's to the paper's last printed digit (0.42 stands
  for anything from 0.415 to 0.425).

:func:`against_paper` computes our value of each row (:mod:`diagnostics.paper._values`), places it, and says
whether the comparison means anything (:mod:`diagnostics.paper._settings`): only runs of mBERT trained with
the study's recipe, validation schedule and classifier head on the study's data, scored on the study's diagnostic
sets (and probes with the study's feature list), are comparable. :func:`paper_verdict` says so in one line;
:func:`paper_chance` says how many numbers would be outside by chance in this store, with the spread of that count
(:mod:`diagnostics.paper._chance`). Each printed number is one row: the one number printed twice (Conditionals,
en, seed 0, in §5.1 and §5.2) is the §5.1 row, whose note says where else it is printed.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

import numpy as np
import pandas as pd

from diagnostics.stats import category_scores

from ._chance import PAPER_SEEDS, count_summary, simulate_outside
from ._draws import StoreValues
from ._intervals import CHI_SQUARE, JACKKNIFE, PREDICTION, T_SEEDS, place
from ._numbers import paper_numbers
from ._settings import (OPEN_READINGS, STUDY_DIAGNOSTICS, diagnostic_reason, probe_reason, run_settings,
                        setting_reasons)
from ._values import PROBE_STATISTICS, STATISTICS
from ._view import NotComputed, NotRun, StoreView

#: The answer columns of :func:`against_paper`, first in its result.
ANSWER_COLUMNS = ["statistic", "paper", "ours", "interval_low", "interval_high", "verdict", "comparable",
                  "why_not_comparable"]
#: Columns of :func:`against_paper`: the answer, then what the row is, then the details.
RESULT_COLUMNS = ANSWER_COLUMNS + ["section", "source", "experiment", "reference", "language", "category", "seed",
                                   "val_schedule", "mixture_order", "kind", "model", "interval", "level", "n_seeds",
                                   "share_below", "share_above", "chance_outside", "as_printed", "sigma", "status",
                                   "note"]
#: Interval kinds, in the order :func:`paper_chance` lists them.
INTERVAL_KINDS = (PREDICTION, T_SEEDS, CHI_SQUARE, JACKKNIFE)
#: Where :func:`against_paper` keeps the simulated outside flags (``frame.attrs``), for :func:`paper_chance`.
NULL_ATTR = "null_outside"


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
    reasons = []
    for experiment, language in _coordinates(view, row):
        if settings is None:
            reasons.append("run settings unknown (no run configs given)")
        else:
            match = _settings_of(settings, experiment, language, view.model)
            reasons.extend(setting_reasons(match.iloc[0].to_dict()) if len(match)
                           else [f"no config recorded for the {experiment} {language} runs"])
        found = diagnostic_reason(language, datasets[language], study) if language in datasets else None
        reasons.extend([found] if found else [])
    if row.statistic in PROBE_STATISTICS:
        found = probe_reason(view.probes)
        reasons.extend([found] if found else [])
    return list(dict.fromkeys(reasons))


def _coordinates(view: StoreView, row) -> list[tuple[str, str]]:
    """The (experiment, language) pairs of the store behind one paper row (its experiment and reference)."""
    experiments = [e for pattern in (row.experiment, row.reference) if pattern for e in view.experiments(pattern)]
    out = []
    for experiment in experiments:
        present = view.languages(experiment)
        out.extend((experiment, lang) for lang in (present if row.language == "all" else [row.language])
                   if lang in present)
    return out


def _settings_of(settings: pd.DataFrame, experiment: str, language: str, model) -> pd.DataFrame:
    chosen = (settings["experiment"] == experiment) & (settings["language"] == language)
    return settings[chosen & (settings["model"] == model)] if model is not None else settings[chosen]


def _reading(view: StoreView, row, settings, column: str) -> str | None:
    """How the runs behind one paper row read a setting the paper leaves open (``column`` of
    :data:`~._settings.OPEN_READINGS`), ``None`` when none records it."""
    if settings is None:
        return None
    found = [value for experiment, language in _coordinates(view, row)
             for value in _settings_of(settings, experiment, language, view.model)[column]
             if isinstance(value, str)]
    return ", ".join(dict.fromkeys(found)) or None


def against_paper(table: pd.DataFrame, configs: Iterable[Mapping] | None = None, *,
                  dataset: str | pd.DataFrame | Mapping | None = None,
                  study_diagnostics: Mapping[str, Iterable[str]] | None = None, validate: bool = True,
                  ddof: int = 1, probes: pd.DataFrame | None = None, level: float = 0.95, n_sim: int = 1000,
                  seed: int = 0) -> pd.DataFrame:
    """Put our value of every number the reference study prints beside the study's, placed in our distribution.

    Parameters
    ----------
    table : pandas.DataFrame
        The predictions table of a run store (:func:`diagnostics.finetune.collect_predictions`), or its
        :func:`~diagnostics.stats.category_scores` (then the label shares of the data rows are not computed).
    configs : iterable of mapping, optional
        The recorded ``config.json`` of the store's runs, e.g.
        ``[run.config() for run in diagnostics.finetune.list_runs(runs_dir, state="done")]``: they say which
        model, recipe, validation schedule, classifier head and data each experiment used. Without them nothing
        counts as comparable.
    dataset : str, DataFrame or mapping, optional
        Where categories come from, as for :func:`~diagnostics.stats.category_scores` (user-supplied sets).
    study_diagnostics : mapping, optional
        Language -> diagnostic set names to take for the study's own, besides AX-b (en) and LiDiRus (ru)
        (:data:`~diagnostics.paper._settings.STUDY_DIAGNOSTICS`): e.g. ``{"fr": ["diagnostic_fr"]}`` for
        the study's own French translation supplied as a user file.
    validate : bool
        Validate a predictions table against its datasets first.
    ddof : int
        Delta degrees of freedom of σ over seeds (see :func:`~diagnostics.stats.stability`).
    probes : pandas.DataFrame, optional
        Layer-wise probing results (:func:`diagnostics.probe.probe_models`, with a ``run_model`` column naming
        the run store's model when the table holds several, and ``feature_list``) for the §5.4 probing rows;
        without it those rows are ``not computed``.
    level : float
        Level of every interval, in (0, 1).
    n_sim : int
        Replications of the simulation of how many numbers lie outside by chance (:func:`paper_chance`).
    seed : int
        Seed of that simulation: the same seed gives the same result (the intervals draw nothing).

    Returns
    -------
    pandas.DataFrame
        One row per paper number and model in the table, in the order of :func:`paper_numbers`, with the columns
        of :data:`RESULT_COLUMNS`. The answer first:

        * ``statistic``, ``paper`` (the study's value), ``ours`` (a number printed for one run: the mean of our
          runs' values; else our statistic);
        * ``interval_low``, ``interval_high``: our interval over seeds at ``level``, the examples held fixed
          (:mod:`~diagnostics.paper._intervals`): the prediction interval of one new run (numbers printed for
          one run), the t-interval of a mean, the chi-square interval of a σ, the jackknife t-interval of any other
          statistic about all seeds. Floating-point noise (below 1e-12) reads as 0;
        * ``verdict``: ``"inside"`` / ``"outside"`` that interval, ``"degenerate (all seeds equal)"`` when it has
          no width, or ``"no interval: <why>"`` (claims, designs, settings and counts say whether ours agrees as
          printed; rows not run or not computed say why);
        * ``comparable`` (NA unless compared), ``why_not_comparable`` (e.g. ``"embedded model, demo recipe"``;
          missing when comparable or not compared).

        Then the row's coordinates (``section, source, experiment, reference, language, category, seed``),
        ``val_schedule`` and ``mixture_order`` (how the runs behind it read what the paper leaves open: the
        validation schedule, missing when not recorded, and the order of the mixture's file; assumptions, never a
        reason against comparing),
        ``kind``, ``model``, and the details: ``interval`` (its kind: ``"prediction over seeds"``, ``"t over
        seeds"``, ``"chi-square over seeds"``, ``"jackknife t over seeds"``), ``level``, ``n_seeds`` (our seeds; the
        fewest of the settings used), ``share_below`` / ``share_above`` (the share of our runs below / above the
        paper's single-run value), ``chance_outside`` (the share of the simulated replications in which this row
        is outside, see :func:`paper_chance`), ``as_printed`` (claims, designs, settings, counts: ours equals the
        paper's value to its last printed digit), ``sigma`` (our σ over seeds of the row's category, averaged over
        languages for ``all``), ``status`` (``compared``; ``not run``: the store lacks the experiment or language;
        ``not computed``: the number is not about predictions; ``undefined``: e.g. a correlation of constant
        vectors) and the paper's ``note``. Rows about the overall MCC use the mean of the run's per-category MCCs.
        ``frame.attrs["null_outside"]`` holds the simulated outside flags (replications x placed rows) that
        :func:`paper_chance` sums.

    Raises
    ------
    ValueError
        For a ``level`` outside (0, 1), ``n_sim < 1`` or a negative ``seed``.
    """
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), found {level!r}")
    if not isinstance(n_sim, (int, np.integer)) or n_sim < 1:
        raise ValueError(f"n_sim must be an integer >= 1, found {n_sim!r}")
    if not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0, found {seed!r}")
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
    models = [(model, group) for model, group in scores.groupby("model", sort=True)] or [(None, scores)]
    parts, flags = [], []
    for number, (model, model_scores) in enumerate(models):
        model_predictions = None if predictions is None or model is None else \
            predictions[predictions["model"] == model]
        view = StoreView(model_scores, model_predictions if model is not None else predictions, settings, ddof,
                         model=model, probes=_probes_of(probes, model) if model is not None else probes)
        store = StoreValues(model_scores)
        part = _compare(view, store, paper, datasets, study, settings, level).assign(model=model)
        outside = _chance(view, store, paper, part, level, n_sim, seed + number)
        parts.append(part)
        flags.append(outside)
    frame = pd.concat(parts, ignore_index=True)[RESULT_COLUMNS]
    offsets = np.cumsum([0] + [len(p) for p in parts[:-1]])
    frame.attrs[NULL_ATTR] = pd.concat([f.rename(columns=lambda c, o=o: c + o) for f, o in zip(flags, offsets)],
                                       axis=1)
    return frame


def _chance(view: StoreView, store: StoreValues, paper: pd.DataFrame, part: pd.DataFrame, level: float,
            n_sim: int, seed: int) -> pd.DataFrame:
    """Simulate the placed rows of one model under the null; set their ``chance_outside``; the flags, by row."""
    placed = part.index[(part["status"] == "compared") & part["verdict"].isin(["inside", "outside"])]
    n_paper = int(paper.loc[paper["statistic"] == "setting_n_seeds", "value"].iloc[0]) if \
        (paper["statistic"] == "setting_n_seeds").any() else PAPER_SEEDS
    rows = [next(paper.iloc[[i]].itertuples(index=False)) for i in placed]
    outside = simulate_outside(view, store, rows, level, n_sim, seed, n_paper) if rows else \
        np.zeros((n_sim, 0), dtype=bool)
    part.loc[placed, "chance_outside"] = outside.mean(axis=0)
    return pd.DataFrame(outside, columns=list(placed))


def _probes_of(probes: pd.DataFrame | None, model: str) -> pd.DataFrame | None:
    """The probing rows of one run-store model (all of them when the table names no model)."""
    if probes is None or "run_model" not in probes.columns:
        return probes
    return probes[probes["run_model"] == model]


def _compare(view: StoreView, store: StoreValues, paper: pd.DataFrame, datasets, study, settings,
             level: float) -> pd.DataFrame:
    out = []
    for row in paper.itertuples(index=False):
        found = {"ours": float("nan"), "sigma": float("nan"), "comparable": pd.NA, "why_not_comparable": None,
                 "status": "compared", "interval_low": float("nan"), "interval_high": float("nan"),
                 "interval": None, "n_seeds": pd.NA, "share_below": float("nan"), "share_above": float("nan"),
                 "chance_outside": float("nan"), "as_printed": pd.NA}
        try:
            with np.errstate(all="ignore"):
                ours, found["sigma"] = STATISTICS[row.statistic](view, row)
            reasons = _reasons(view, row, datasets, study, settings)
            if math.isnan(ours):
                found.update(ours=ours, status="undefined",
                             verdict="no interval: undefined in our runs (e.g. a correlation of constant vectors)")
            else:
                found.update(place(view, store, row, ours, level), comparable=not reasons,
                             why_not_comparable=", ".join(reasons) or None)
        except NotRun as err:
            found.update(status="not run", verdict=f"no interval: not run here ({err})")
        except NotComputed as err:
            found.update(status="not computed", verdict=f"no interval: not computed here ({err})")
        out.append({"statistic": row.statistic, "paper": row.value, **found, "section": row.section,
                    "source": row.source, "experiment": row.experiment, "reference": row.reference,
                    "language": row.language, "category": row.category, "seed": row.seed,
                    **{column: _reading(view, row, settings, column) for column in OPEN_READINGS},
                    "kind": row.kind, "level": level, "note": row.note or None})
    frame = pd.DataFrame(out)
    frame["seed"] = frame["seed"].astype("Int64")
    frame["n_seeds"] = frame["n_seeds"].astype("Int64")
    for column in ("as_printed", "comparable"):
        frame[column] = frame[column].astype("boolean")
    return frame


def paper_verdict(frame: pd.DataFrame) -> str:
    """Say in one line whether a comparison with the paper means anything, and what it found.

    Parameters
    ----------
    frame : pandas.DataFrame
        Output of :func:`against_paper`.

    Returns
    -------
    str
        ``"comparable: n numbers ...; k of m lie outside our 95% interval (about e expected by chance), j of p
        claims, designs, settings and counts differ from the printed value"`` when every compared number comes
        from the study's model, recipe, validation schedule, classifier head, data and diagnostic sets;
        ``"not comparable: <reasons>"`` (e.g. ``"not comparable: embedded model, demo recipe"``) when none does;
        ``"partly comparable (k of n numbers): <reasons>"`` in between; ``"nothing to compare: ..."`` when no row
        could be computed.
    """
    compared = frame[frame["status"] == "compared"]
    if compared.empty:
        return "nothing to compare: the run store has none of the study's experiments and languages"
    good = compared["comparable"].fillna(False).astype(bool)
    reasons = [r for text in compared.loc[~good, "why_not_comparable"].dropna() for r in text.split(", ")]
    reasons = ", ".join(dict.fromkeys(reasons))
    if good.all():
        return (f"comparable: {len(compared)} numbers from mBERT with the study's recipe, validation schedule, "
                f"classifier head, data and diagnostic sets; {_findings(compared)}")
    if not good.any():
        return f"not comparable: {reasons}"
    return f"partly comparable ({int(good.sum())} of {len(compared)} numbers): the others differ by {reasons}"


def _findings(compared: pd.DataFrame) -> str:
    """What the compared rows found: outside counts beside the chance figure, and the numbers checked as printed."""
    placed = compared[compared["verdict"].isin(["inside", "outside"])]
    printed = compared[compared["as_printed"].notna()]
    level = float(compared["level"].iloc[0])
    total = paper_chance(compared).iloc[-1]
    if np.isfinite(total["range_90_low"]):
        chance = (f"by chance about {total['expected_outside']:.1f}, 90% of chance replications "
                  f"{int(total['range_90_low'])}–{int(total['range_90_high'])}")
    else:
        chance = f"by chance about {total['expected_outside']:.1f}"
    return (f"{int((placed['verdict'] == 'outside').sum())} of {len(placed)} lie outside our {level:.0%} interval "
            f"({chance}), {int((~printed['as_printed'].astype(bool)).sum())} of "
            f"{len(printed)} claims, designs, settings and counts differ from the printed value")


def paper_chance(frame: pd.DataFrame) -> pd.DataFrame:
    """How many numbers would lie outside our intervals by chance, with the spread of that count, per interval kind.

    "By chance" means: the paper's numbers come from the same distribution as ours (they differ by their seeds
    only). :func:`against_paper` simulates that (:mod:`~diagnostics.paper._chance`): replications of the study
    and of our store drawn from a normal model of our runs (their mean and covariance across categories, so rows
    about the same runs move together), each row's number placed in its interval, and the rows outside counted.
    Rows are correlated, so the spread of the count is that of the simulation, not of a sum of independent rows.

    Parameters
    ----------
    frame : pandas.DataFrame
        Output of :func:`against_paper` (or some of its rows: the simulated flags travel in ``frame.attrs``).

    Returns
    -------
    pandas.DataFrame
        One row per interval kind (those present, in the order of :data:`INTERVAL_KINDS`) and a last row
        ``"all"``: ``numbers`` (compared rows placed inside or outside an interval), ``outside`` (of those, outside),
        ``chance_outside`` (the mean over those rows of their simulated chance of being outside),
        ``expected_outside`` (the mean simulated count), ``range_90_low`` / ``range_90_high`` and
        ``range_95_low`` / ``range_95_high`` (the ranges holding 90 % and 95 % of the simulated counts),
        ``share_at_least`` (the share of replications with at least ``outside`` rows outside), ``n_sim`` and
        ``level``. Without the simulated flags (a frame built by hand) the counts' spread is NaN and
        ``expected_outside`` is the sum of the rows' ``chance_outside``.
    """
    placed = frame[(frame["status"] == "compared") & frame["verdict"].isin(["inside", "outside"])]
    level = float(placed["level"].iloc[0]) if len(placed) else float(frame["level"].iloc[0]) if len(frame) else 0.95
    flags = frame.attrs.get(NULL_ATTR)
    rows = []
    for kind in [k for k in INTERVAL_KINDS if (placed["interval"] == k).any()] + ["all"]:
        part = placed if kind == "all" else placed[placed["interval"] == kind]
        observed = int((part["verdict"] == "outside").sum())
        row = {"interval": kind, "numbers": len(part), "outside": observed,
               "chance_outside": part["chance_outside"].mean() if part["chance_outside"].notna().any() else np.nan}
        if isinstance(flags, pd.DataFrame) and set(part.index) <= set(flags.columns):
            row.update(count_summary(flags[list(part.index)].to_numpy(dtype=bool), observed))
        else:
            row.update({**count_summary(np.zeros((0, 0), dtype=bool), observed),
                        "expected_outside": float(part["chance_outside"].sum())})
        rows.append({**row, "level": level})
    return pd.DataFrame(rows, columns=["interval", "numbers", "outside", "chance_outside", "expected_outside",
                                       "range_90_low", "range_90_high", "range_95_low", "range_95_high",
                                       "share_at_least", "n_sim", "level"])
