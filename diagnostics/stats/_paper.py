"""A run store's numbers beside every number the reference study prints, each placed in our distribution.

The study's numbers (Tikhonova et al., 2022, "Ad astra or astray") are package data, ``paper_numbers.csv``: one
row per printed number, with its section, figure or table, experiment, language, category and seed, the statistic
it is and its kind:

* ``value``: a measured number (an MCC, a σ, a correlation, a share). It is placed in our distribution
  (:mod:`diagnostics.stats._paper_intervals`): a number printed for one seed against the prediction interval of one
  new run of ours; a number about all seeds against the bootstrap interval of our statistic. The verdict is
  ``inside`` or ``outside`` that interval, or ``no interval: <why>``;
* ``claim``: a sentence that can be checked mechanically, as 1 (true) or 0 (false), e.g. "positive for every seed";
* ``design``, ``setting``, ``count``: the study's design (sizes, shares), training settings and data counts.
  Claims and these are compared as printed: ours equals the paper's to the paper's last printed digit (0.42 stands
  for anything from 0.415 to 0.425).

:func:`against_paper` computes our value of each row (:mod:`diagnostics.stats._paper_values`), places it, and says
whether the comparison means anything (:mod:`diagnostics.stats._paper_settings`): only runs of mBERT trained with
the study's recipe, validation schedule and classifier head on the study's data, scored on the study's diagnostic
sets (and probes with the study's feature list), are comparable. :func:`paper_verdict` says so in one line;
:func:`paper_chance` says how often "outside" would fire by chance in this store.
"""

from __future__ import annotations

import io
import math
from collections.abc import Iterable, Mapping
from decimal import Decimal
from importlib import resources

import numpy as np
import pandas as pd

from ._paper_draws import StoreDraws
from ._paper_intervals import BOOTSTRAP_BOTH, BOOTSTRAP_SEEDS, PREDICTION, normal_chance_bootstrap, place
from ._paper_settings import STUDY_DIAGNOSTICS, diagnostic_reason, probe_reason, run_settings, setting_reasons
from ._paper_values import PROBE_STATISTICS, STATISTICS, NotComputed, NotRun, StoreView
from ._scores import category_scores

PAPER_FILE = "paper_numbers.csv"
#: Columns of ``paper_numbers.csv``.
PAPER_COLUMNS = ["section", "source", "experiment", "reference", "language", "category", "seed", "statistic", "kind",
                 "value", "note"]
#: Kinds of the paper's numbers (see the module docstring).
NUMBER_KINDS = ("value", "claim", "design", "setting", "count")
#: The answer columns of :func:`against_paper`, first in its result.
ANSWER_COLUMNS = ["statistic", "paper", "ours", "interval_low", "interval_high", "verdict", "comparable",
                  "why_not_comparable"]
#: Columns of :func:`against_paper`: the answer, then what the row is, then the details.
RESULT_COLUMNS = ANSWER_COLUMNS + ["section", "source", "experiment", "reference", "language", "category", "seed",
                                   "val_schedule", "kind", "model", "interval", "level", "n_seeds", "share_below",
                                   "share_above", "chance_outside", "as_printed", "sigma", "status", "note"]

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


def _schedule(view: StoreView, row, settings) -> str | None:
    """The validation-schedule readings of the runs behind one paper row, ``None`` when none is recorded."""
    if settings is None:
        return None
    found = [value for experiment, language in _coordinates(view, row)
             for value in _settings_of(settings, experiment, language, view.model)["val_schedule"]
             if isinstance(value, str)]
    return ", ".join(dict.fromkeys(found)) or None


def against_paper(table: pd.DataFrame, configs: Iterable[Mapping] | None = None, *,
                  dataset: str | pd.DataFrame | Mapping | None = None,
                  study_diagnostics: Mapping[str, Iterable[str]] | None = None, validate: bool = True,
                  ddof: int = 1, probes: pd.DataFrame | None = None, level: float = 0.95, n_boot: int = 1000,
                  seed: int = 0, resample: str = "both") -> pd.DataFrame:
    """Put our value of every number the reference study prints beside the study's, placed in our distribution.

    Parameters
    ----------
    table : pandas.DataFrame
        The predictions table of a run store (:func:`diagnostics.finetune.collect_predictions`), or its
        :func:`~diagnostics.stats.category_scores` (then the label shares of the data rows are not computed, and
        the bootstrap resamples seeds only).
    configs : iterable of mapping, optional
        The recorded ``config.json`` of the store's runs, e.g.
        ``[run.config() for run in diagnostics.finetune.list_runs(runs_dir, state="done")]``: they say which
        model, recipe, validation schedule, classifier head and data each experiment used. Without them nothing
        counts as comparable.
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
        the run store's model when the table holds several, and ``feature_list``) for the §5.4 probing rows;
        without it those rows are ``not computed``.
    level : float
        Level of every interval (prediction and bootstrap), in (0, 1).
    n_boot : int
        Bootstrap draws per setting.
    seed : int
        Seed of the draws: the same seed gives the same result.
    resample : {"both", "seeds", "examples"}
        What the bootstrap resamples: seeds and the diagnostic's examples jointly (Multi-Bootstrap; needs the
        predictions table, else seeds only), seeds only, or examples only.

    Returns
    -------
    pandas.DataFrame
        One row per paper number and model in the table, in the order of :func:`paper_numbers`, with the columns
        of :data:`RESULT_COLUMNS`. The answer first:

        * ``statistic``, ``paper`` (the study's value), ``ours`` (a number printed for one seed: the mean of
          our seeds' values; else our statistic);
        * ``interval_low``, ``interval_high``: the prediction interval of one new run (numbers printed for one
          seed) or the percentile bootstrap interval of our statistic (numbers about all seeds), at ``level``;
        * ``verdict``: ``"inside"`` / ``"outside"`` that interval, or ``"no interval: <why>"`` (claims,
          designs, settings and counts say whether ours agrees as printed; rows not run or not computed say why);
        * ``comparable`` (NA unless compared), ``why_not_comparable`` (e.g. ``"embedded model, demo recipe"``;
          missing when comparable or not compared).

        Then the row's coordinates (``section, source, experiment, reference, language, category, seed``),
        ``val_schedule`` (the validation-schedule reading of the runs behind it, missing when not recorded),
        ``kind``, ``model``, and the details: ``interval`` (``"prediction over seeds"``, ``"bootstrap over
        seeds"``, ``"bootstrap over seeds and examples"``), ``level``, ``n_seeds`` (our seeds; the fewest of the
        settings used), ``share_below`` / ``share_above`` (the share of our seeds below / above the paper's
        single-run value), ``chance_outside`` (how often this row's verdict would be ``outside`` by chance, see
        :func:`paper_chance`), ``as_printed`` (claims, designs, settings, counts: ours equals the paper's value
        to its last printed digit), ``sigma`` (our σ over seeds of the row's category, averaged over languages
        for ``all``), ``status`` (``compared``; ``not run``: the store lacks the experiment or language; ``not
        computed``: the number is not about predictions; ``undefined``: e.g. a correlation of constant vectors)
        and the paper's ``note``. Rows about the overall MCC use the mean of the run's per-category MCCs.

    Raises
    ------
    ValueError
        For a ``level`` outside (0, 1), ``n_boot < 2``, a negative ``seed`` or an unknown ``resample``.
    """
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), found {level!r}")
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
    options = {"dataset": dataset, "n_boot": n_boot, "seed": seed, "resample": resample}
    for model, model_scores in scores.groupby("model", sort=True):
        model_predictions = None if predictions is None else predictions[predictions["model"] == model]
        view = StoreView(model_scores, model_predictions, settings, ddof, model=model,
                         probes=_probes_of(probes, model))
        draws = StoreDraws(model_scores, model_predictions, **options)
        parts.append(_compare(view, draws, paper, datasets, study, settings, level).assign(model=model))
    if not parts:
        view = StoreView(scores, predictions, settings, ddof)
        parts.append(_compare(view, StoreDraws(scores, predictions, **options), paper, datasets, study, settings,
                              level).assign(model=None))
    return pd.concat(parts, ignore_index=True)[RESULT_COLUMNS]


def _probes_of(probes: pd.DataFrame | None, model: str) -> pd.DataFrame | None:
    """The probing rows of one run-store model (all of them when the table names no model)."""
    if probes is None or "run_model" not in probes.columns:
        return probes
    return probes[probes["run_model"] == model]


def _compare(view: StoreView, draws: StoreDraws, paper: pd.DataFrame, datasets, study, settings,
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
                found.update(place(view, draws, row, ours, level), comparable=not reasons,
                             why_not_comparable=", ".join(reasons) or None)
        except NotRun as err:
            found.update(status="not run", verdict=f"no interval: not run here ({err})")
        except NotComputed as err:
            found.update(status="not computed", verdict=f"no interval: not computed here ({err})")
        out.append({"statistic": row.statistic, "paper": row.value, **found, "section": row.section,
                    "source": row.source, "experiment": row.experiment, "reference": row.reference,
                    "language": row.language, "category": row.category, "seed": row.seed,
                    "val_schedule": _schedule(view, row, settings), "kind": row.kind, "level": level,
                    "note": row.note or None})
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
    chance = paper_chance(compared)
    expected = float(chance.loc[chance["interval"] == "all", "expected_outside"].iloc[0])
    return (f"{int((placed['verdict'] == 'outside').sum())} of {len(placed)} lie outside our {level:.0%} interval "
            f"(about {expected:.1f} expected by chance), {int((~printed['as_printed'].astype(bool)).sum())} of "
            f"{len(printed)} claims, designs, settings and counts differ from the printed value")


def paper_chance(frame: pd.DataFrame) -> pd.DataFrame:
    """How often "outside" fires by chance, per kind of interval, for the run store a comparison read.

    "By chance" means: the paper's number comes from the same distribution as ours. For a prediction interval
    (numbers printed for one seed) each of our seeds in turn plays the paper's run and the interval comes from
    the other seeds (leave one seed out; needs three seeds). For a bootstrap interval (numbers about all seeds)
    one bootstrap draw plays the paper's number and another our estimate, with our interval moved along
    (:func:`~diagnostics.stats._paper_intervals.chance_bootstrap`): the paper's number has its own seed noise,
    which our interval of our statistic does not hold, so this chance is larger than ``1 - level``.

    Parameters
    ----------
    frame : pandas.DataFrame
        Output of :func:`against_paper` (or some of its rows).

    Returns
    -------
    pandas.DataFrame
        One row per interval kind (``"prediction over seeds"``, ``"bootstrap over seeds"``, ``"bootstrap over
        seeds and examples"``; those present) and a last row ``"all"``: ``numbers`` (compared rows with an
        interval), ``outside`` (of those, with the verdict ``outside``), ``chance_outside`` (the mean of the
        rows' chance of ``outside`` measured on this store; NaN where none could be measured),
        ``measured_numbers`` (rows with a measured chance), ``normal_chance`` (the chance for a normal statistic:
        ``1 - level`` for a prediction interval, ``2 (1 - Φ(z / √2))`` for a bootstrap interval, 0.166 at 95 %),
        ``expected_outside`` (the sum of the rows' chances, the normal one where none was measured) and ``level``.
        In the ``"all"`` row, ``chance_outside`` is ``expected_outside / numbers`` and ``normal_chance`` is NaN.
    """
    placed = frame[(frame["status"] == "compared") & frame["verdict"].isin(["inside", "outside"])]
    level = float(placed["level"].iloc[0]) if len(placed) else float(frame["level"].iloc[0]) if len(frame) else 0.95
    normal = {PREDICTION: 1 - level, BOOTSTRAP_SEEDS: normal_chance_bootstrap(level),
              BOOTSTRAP_BOTH: normal_chance_bootstrap(level)}
    rows = []
    for kind in (PREDICTION, BOOTSTRAP_SEEDS, BOOTSTRAP_BOTH):
        part = placed[placed["interval"] == kind]
        if part.empty:
            continue
        chance = part["chance_outside"]
        rows.append({"interval": kind, "numbers": len(part), "outside": int((part["verdict"] == "outside").sum()),
                     "chance_outside": chance.mean() if chance.notna().any() else float("nan"),
                     "measured_numbers": int(chance.notna().sum()), "normal_chance": normal[kind],
                     "expected_outside": float(chance.fillna(normal[kind]).sum()), "level": level})
    numbers = sum(r["numbers"] for r in rows)
    expected = float(sum(r["expected_outside"] for r in rows))
    rows.append({"interval": "all", "numbers": numbers, "outside": sum(r["outside"] for r in rows),
                 "chance_outside": expected / numbers if numbers else float("nan"),
                 "measured_numbers": sum(r["measured_numbers"] for r in rows), "normal_chance": float("nan"),
                 "expected_outside": expected, "level": level})
    return pd.DataFrame(rows)
