"""Our value of each statistic the reference study prints, computed from per-category scores.

One function per statistic name of ``paper_numbers.csv`` (:data:`STATISTICS`), each taking a :class:`StoreView`
(the scores of one model, with σ over seeds) and one row of the paper's numbers, and returning our value and the
seed σ that goes with it. They only call the statistics of :mod:`diagnostics.stats`
(:func:`~diagnostics.stats.stability`, :func:`~diagnostics.stats.rs_corr`, :func:`~diagnostics.stats.deltas` ...).
A statistic that the store cannot give raises :class:`NotRun` (the experiment or language is missing) or
:class:`NotComputed` (it needs something other than predictions and probes: annotation, hardware).

A number the study printed for one seed is a draw from its distribution of runs; our seed with the same index
is not its counterpart (the random streams differ). Its statistics (:data:`SEED_VALUES`) give our value in each
of our runs, and "ours" is their mean; :mod:`diagnostics.paper._intervals` places the study's number
among them. A number of one run per language (the cross-language correlation of Fig. 1) is computed for every
combination of one of our runs per language: the study's design pairs no run of one language with a run of another
(each language is trained on its own data), so runs with the same seed index are no more a pair than any other.
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Callable

import numpy as np
import pandas as pd

from diagnostics.core.schema import ENTAILMENT
from diagnostics.stats import (ALL, average_sigma_decrease, delta_summary, deltas, feature_slug,
                               improvement_correlation, mean_cross_language_corr, parse_presence_experiment,
                               presence_table, rs_corr)

from ._draws import StoreValues
from ._samplers import RUN_VALUES
from ._view import NotComputed, NotRun, StoreView

_EXTRA = re.compile(r"extra-(\d+)")


def _seed_rows(view: StoreView, row) -> pd.DataFrame:
    return view.rows(view.scores, view.one(row.experiment), row.language, row.category)


def _mcc_per_seed(view, row) -> np.ndarray:
    """Our MCC of the row's category in each of our runs (the study's seed index plays no part)."""
    return _seed_rows(view, row).sort_values("seed")["mcc"].to_numpy(dtype=np.float64)


def _mcc(view, row):
    with np.errstate(all="ignore"):
        ours = float(np.nanmean(_mcc_per_seed(view, row)))
    return ours, view.sigma(view.one(row.experiment), row.language, row.category)


def _mean_mcc(view, row):
    experiment = view.one(row.experiment)
    return view.mean(experiment, row.language, row.category), view.sigma(experiment, row.language, row.category)


def _all_seeds_positive(view, row):
    found = _seed_rows(view, row)
    return float((found["mcc"] > 0).all()), view.sigma(view.one(row.experiment), row.language, row.category)


def _mostly_negative(view, row):
    found = _seed_rows(view, row)
    return float((found["mcc"] < 0).mean() > 0.5), view.sigma(view.one(row.experiment), row.language, row.category)


def _scores_of(view: StoreView, *experiments: str) -> pd.DataFrame:
    return view.scores[view.scores["experiment"].isin(experiments)]


def _cross_language_corr(view, row):
    experiment = view.one(row.experiment)
    if len(view.languages(experiment)) < 2:
        raise NotRun("needs at least two languages")
    if not pd.isna(row.seed):
        # one run per language (Fig. 1): nothing pairs runs of different languages, so every combination of one run
        # per language is such a number, and ours is their mean

        key = ("cross_language_runs", experiment)
        if key not in view.cache:
            view.cache[key] = RUN_VALUES["cross_language_corr"](StoreValues(view.scores), view, row).values[0]
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return float(np.nanmean(view.cache[key])), float("nan")
    table = mean_cross_language_corr(_scores_of(view, experiment), basis="seed_mean")
    return float(table["mean_r"].iloc[0]), float("nan")


def _rs_by_language(view: StoreView, experiment: str) -> pd.Series:
    key = ("rs_by_language", experiment)
    if key not in view.cache:
        view.cache[key] = rs_corr(_scores_of(view, experiment)).groupby("language")["rs_corr"].mean()
    return view.cache[key].copy()


def _rs_corr_range(view, row):
    rs = _rs_by_language(view, view.one(row.experiment)).dropna()
    if len(rs) < 2:
        raise NotRun("needs RS corr in at least two languages")
    return float(rs.max() - rs.min()), float("nan")


def _sigma_range(which: str) -> Callable:
    def compute(view, row):
        experiment = view.one(row.experiment)
        values = []
        for language in view.languages(experiment):
            try:
                values.append(float(view.rows(view.stab, experiment, language, row.category)["std"].mean()))
            except NotRun:
                continue
        values = [v for v in values if not math.isnan(v)]
        if not values:
            raise NotRun(f"no σ of {row.category}: needs two seeds")
        return (min(values) if which == "low" else max(values)), float("nan")
    return compute


def _delta_frame(view: StoreView, row) -> pd.DataFrame:
    experiment, reference = view.one(row.experiment), view.one(row.reference)
    frame = deltas(_scores_of(view, reference, experiment), {"experiment": reference}, {"experiment": experiment},
                   ddof=view.ddof)
    return frame[frame["level"] == "fine"]


def _share(column: str) -> Callable:
    def compute(view, row):
        summary = delta_summary(_delta_frame(view, row), pooled=True)
        found = summary[summary["language"] == row.language]
        if found.empty:
            raise NotRun(f"no {row.experiment} and {row.reference} runs in {row.language}")
        return float(found[column].iloc[0]), float("nan")
    return compute


def _category_deltas(view: StoreView, row) -> pd.Series:
    frame = _delta_frame(view, row)
    found = frame.loc[frame["category"] == row.category, "mcc_delta"]
    if found.empty:
        raise NotRun(f"no {row.category} examples in the compared languages")
    return found


def _delta_gt(threshold: float, how: str) -> Callable:
    def compute(view, row):
        found = _category_deltas(view, row)
        value = (found > threshold).all() if how == "all" else found.mean() <= threshold
        return float(value), view.sigma(view.one(row.experiment), "all", row.category)
    return compute


def _negative_mean_mcc(view, row):
    experiment = view.one(row.experiment)
    return float(view.mean(experiment, "all", row.category) < 0), view.sigma(experiment, "all", row.category)


def _relative_change_mean_mcc(view, row):
    before = view.mean(view.one(row.reference), "all", row.category)
    after = view.mean(view.one(row.experiment), "all", row.category)
    return (after / before - 1 if before else float("nan")), float("nan")


def _sigma_decrease(view, row):
    experiment, reference = view.one(row.experiment), view.one(row.reference)
    table = average_sigma_decrease(_scores_of(view, reference, experiment), {"experiment": reference},
                                   {"experiment": experiment}, ddof=view.ddof)
    found = table[table["language"] == row.language]
    return float(found["sigma_decrease"].iloc[0]) if len(found) else float("nan"), float("nan")


def _mean_rs_corr(view, row):
    return float(_rs_by_language(view, view.one(row.experiment)).mean()), float("nan")


def _relative_change_mean_rs_corr(view, row):
    before = _rs_by_language(view, view.one(row.reference)).mean()
    after = _rs_by_language(view, view.one(row.experiment)).mean()
    return (float(after / before - 1) if before else float("nan")), float("nan")


def _design_n_languages(view, row):
    return float(len(view.languages(view.one(row.experiment)))), float("nan")


def _design_present(view, row):
    if not view.experiments(row.experiment):
        raise NotRun(f"no {row.experiment} runs")
    return float(row.value), float("nan")


def _design_presence_extra_size(view, row):
    experiments = view.experiments(row.experiment)
    if not experiments:
        raise NotRun("no presence runs")
    return float(view.setting(experiments[0], "extra_size") or 0), float("nan")


def _size_of(view: StoreView, experiment: str) -> int:
    try:
        return int(view.setting(experiment, "extra_size") or 0)
    except NotComputed:
        match = _EXTRA.fullmatch(experiment)
        return int(match.group(1)) if match else 0


def _curve(view: StoreView, languages: list[str], value: str) -> pd.DataFrame:
    """Per extra-data size: mean overall MCC (or RS corr) over ``languages`` and the seed σ of the overall MCC."""
    rows = []
    for experiment in view.experiments("extra-*"):
        present = [lang for lang in languages if lang in view.languages(experiment)]
        if len(present) < len(languages):
            continue
        if value == "mcc":
            score = np.mean([view.mean(experiment, lang, "overall") for lang in present])
        else:
            score = _rs_by_language(view, experiment).reindex(present).mean()
        sigma = np.nanmean([view.sigma(experiment, lang, "overall") for lang in present] + [np.nan])
        rows.append({"size": _size_of(view, experiment), "score": score, "sigma": sigma})
    curve = pd.DataFrame(rows, columns=["size", "score", "sigma"]).groupby("size").mean().reset_index()
    if len(curve) < 2:
        raise NotRun("needs runs at two or more extra-data sizes")
    return curve


def _plateau(view: StoreView, languages: list[str]) -> float:
    curve = _curve(view, languages, "mcc")
    noise = curve["sigma"].mean()
    noise = 0.0 if math.isnan(noise) else noise
    scores = curve["score"].to_numpy()
    for i, size in enumerate(curve["size"]):
        if scores[i:].max() - scores[i] <= noise:
            return float(size)
    return float(curve["size"].iloc[-1])


def _study_languages(view: StoreView, row) -> list[str]:
    if row.language != "all":
        return [row.language]
    present = set(view.languages("base")) | {lang for e in view.experiments("extra-*") for lang in view.languages(e)}
    return [lang for lang in ("en", "ru") if lang in present]


def _plateau_size(view, row):
    return _plateau(view, _study_languages(view, row)), float("nan")


def _rs_corr_rises_with_size(view, row):
    curve = _curve(view, _study_languages(view, row), "rs_corr").dropna()
    if len(curve) < 2:
        raise NotRun("needs RS corr at two or more extra-data sizes")
    rho = curve["size"].rank().corr(curve["score"].rank())
    return float(rho > 0), float("nan")


def _needs_more_data_than_en(view, row):
    return float(_plateau(view, [row.language]) > _plateau(view, ["en"])), float("nan")


def _improvement_corr(view, row):
    experiment, reference = view.one(row.experiment), view.one(row.reference)
    for language in ("en", "ru"):
        if language not in view.languages(experiment) or language not in view.languages(reference):
            raise NotRun(f"needs {reference} and {experiment} runs in en and ru")
    scores = _scores_of(view, reference, experiment)
    return improvement_correlation(scores, {"experiment": reference}, {"experiment": experiment}), float("nan")


def _presence(view: StoreView, row) -> pd.DataFrame:
    experiments = view.experiments(row.experiment)
    if not experiments:
        raise NotRun(f"no {row.experiment} runs")
    table = presence_table(_scores_of(view, *experiments), row.category,
                           {e: parse_presence_experiment(e) for e in experiments})
    table = table[table["language"] == row.language]
    if table["share"].nunique() < 2:
        raise NotRun(f"needs {feature_slug(row.category)} presence runs at two or more shares in {row.language}")
    return table


def _best_share(view, row):
    table = _presence(view, row)
    return float(table.loc[table["mcc"].idxmax(), "share"]), float("nan")


def _sigma_rises_with_share(view, row):
    table = _presence(view, row).dropna(subset=["sigma"])
    if table.empty:
        raise NotRun("needs two seeds per share")
    return float(table.loc[table["sigma"].idxmin(), "share"] < table["share"].max()), float("nan")


def _setting(column: str) -> Callable:
    def compute(view, row):
        experiment = view.one(row.experiment)
        if column == "n_seeds":
            return float(_scores_of(view, experiment)["seed"].nunique()), float("nan")
        value = view.setting(experiment, column)
        return (float("nan") if value is None else float(value)), float("nan")
    return compute


def _n_pairs(view, row):
    if row.category == "overall":
        found = view.scores[(view.scores["experiment"] == view.one(row.experiment))
                            & (view.scores["language"] == row.language) & (view.scores["category"] == ALL)]
        if found.empty:
            raise NotComputed("needs the all-examples level of category_scores")
        return float(found["n"].max()), float("nan")
    return float(_seed_rows(view, row)["n"].max()), float("nan")


def _label_share(label_is_entailment: bool) -> Callable:
    def compute(view, row):
        if view.predictions is None:
            raise NotComputed("needs the predictions table, not scores")
        table = view.predictions
        table = table[(table["experiment"] == view.one(row.experiment)) & (table["language"] == row.language)]
        if table.empty:
            raise NotRun(f"no {row.experiment} runs in {row.language}")
        gold = table.drop_duplicates("example_id")["label"] == ENTAILMENT
        return float(gold.mean() if label_is_entailment else 1 - gold.mean()), float("nan")
    return compute


def _not_computed(reason: str) -> Callable:
    def compute(view, row):
        raise NotComputed(reason)
    return compute


#: A probe is "near chance" when its best layer's accuracy beats the majority class by at most this much.
NEAR_CHANCE = 0.02


def _probes(view: StoreView, row) -> pd.DataFrame:
    """The probing rows of the paper row's language and task (all languages for ``all``)."""
    if view.probes is None or view.probes.empty:
        raise NotComputed("no probing results given (notebook 05 writes them; against_paper(probes=...))")
    table = view.probes
    if row.language != "all":
        table = table[table["language"] == row.language]
    if row.category != "overall":
        table = table[table["task"] == feature_slug(row.category)]
    if table.empty:
        raise NotRun(f"no probe of {row.category} in {row.language}")
    return table


def _best_layers(table: pd.DataFrame) -> pd.DataFrame:
    """Per probed model, language and task: the row of the layer with the highest accuracy."""
    return table.loc[table.groupby(["language", "model", "task"])["accuracy"].idxmax()]


def _design_probe_tasks(view, row):
    return float(_probes(view, row)["task"].nunique()), float("nan")


def _design_probed_finetuned_models(view, row):
    table = _probes(view, row)
    return float(table[table["seed"].notna()].groupby("language")["model"].nunique().max()), float("nan")


def _probe_accuracy(view, row):
    """Mean accuracy of every probe (each model, task and layer), the study's "overall quality"."""
    return float(_probes(view, row)["accuracy"].mean()), float("nan")


def _best_in_lower_layers(view, row):
    """1 when the task's best layer lies in the lower half of the layers on average over the probed models."""
    table = _probes(view, row)
    top = table["layer"].max()
    return float(_best_layers(table)["layer"].mean() < top / 2), float("nan")


def _near_or_below_chance(view, row):
    """1 when the task's best layer beats the majority class by at most :data:`NEAR_CHANCE` on average."""
    best = _best_layers(_probes(view, row))
    return float((best["accuracy"] - best["majority"]).mean() <= NEAR_CHANCE), float("nan")


def _finetuning_helps_probe(view, row):
    """1 when the fine-tuned seeds' best-layer accuracy (their mean) beats the pretrained model's."""
    best = _best_layers(_probes(view, row))
    tuned, pretrained = best[best["seed"].notna()], best[best["seed"].isna()]
    if tuned.empty or pretrained.empty:
        raise NotRun(f"needs the pretrained model and fine-tuned seeds probed in {row.language}")
    return float(tuned["accuracy"].mean() > pretrained["accuracy"].mean()), float("nan")


#: Statistics about the probing results (comparable only with the study's feature list).
PROBE_STATISTICS = frozenset({"design_probe_tasks", "design_probed_finetuned_models", "probe_accuracy",
                              "best_in_lower_layers", "near_or_below_chance", "finetuning_helps_probe"})

#: Statistics printed for single runs -> function ``(StoreView, row) -> our value in each of our runs``.
SEED_VALUES: dict[str, Callable] = {"mcc": _mcc_per_seed}

#: Statistic name (``paper_numbers.csv``) -> function ``(StoreView, row) -> (ours, sigma)``.
STATISTICS: dict[str, Callable] = {
    "mcc": _mcc, "mean_mcc": _mean_mcc, "cross_language_corr": _cross_language_corr,
    "all_seeds_positive": _all_seeds_positive, "mostly_negative": _mostly_negative, "rs_corr_range": _rs_corr_range,
    "sigma_range_low": _sigma_range("low"), "sigma_range_high": _sigma_range("high"),
    "share_delta_mcc_gt_0.1": _share("share_mcc_up"), "share_delta_sigma_lt_-0.05": _share("share_sigma_down"),
    "delta_mcc_gt_0.2_all_languages": _delta_gt(0.2, "all"), "no_improvement": _delta_gt(0.0, "mean"),
    "improved_all_languages": _delta_gt(0.0, "all"), "negative_mean_mcc": _negative_mean_mcc,
    "relative_change_mean_mcc": _relative_change_mean_mcc, "sigma_decrease": _sigma_decrease,
    "mean_rs_corr": _mean_rs_corr, "relative_change_mean_rs_corr": _relative_change_mean_rs_corr,
    "design_n_languages": _design_n_languages, "design_extra_size": _design_present,
    "design_presence_share": _design_present, "design_presence_extra_size": _design_presence_extra_size,
    "plateau_size": _plateau_size, "rs_corr_rises_with_size": _rs_corr_rises_with_size,
    "needs_more_data_than_en": _needs_more_data_than_en, "improvement_corr": _improvement_corr,
    "best_share": _best_share, "sigma_rises_with_share": _sigma_rises_with_share,
    "setting_n_seeds": _setting("n_seeds"), "setting_batch_size": _setting("batch_size"),
    "setting_lr": _setting("lr"), "setting_dropout": _setting("dropout"), "setting_max_epochs": _setting("max_epochs"),
    "setting_gpus": _not_computed("hardware is not recorded with the runs"),
    "setting_gpu_memory_gb": _not_computed("hardware is not recorded with the runs"),
    "annotated_features": _not_computed("annotation, not predictions: see notebooks 00 and 07"),
    "n_pairs": _n_pairs, "entailment_share": _label_share(True), "not_entailment_share": _label_share(False),
    "design_probe_tasks": _design_probe_tasks, "design_probed_finetuned_models": _design_probed_finetuned_models,
    "probe_accuracy": _probe_accuracy, "best_in_lower_layers": _best_in_lower_layers,
    "near_or_below_chance": _near_or_below_chance, "finetuning_helps_probe": _finetuning_helps_probe,
}
