"""Compare two systems (or settings) on the same diagnostic set: per category, the delta B - A with its interval.

Each side is one setting of a predictions table (its seeds, possibly nested under pretraining seeds). Per category
(then for all examples, and the mean over fine categories):

* the Multi-Bootstrap delta of the seed-averaged metric, B - A, with its percentile interval and a two-sided
  p-value (:func:`diagnostics.stats.compare`; seeds are resampled together when both sides have the same seeds,
  independently otherwise), adjusted over the categories with Holm or Benjamini-Hochberg
  (:func:`diagnostics.stats.multiple.adjust_pvalues`);
* when each side is a single run, McNemar's exact test on the examples one side gets right and the other wrong
  (a two-sided binomial test on the discordant pairs), adjusted the same way.

:func:`write_comparison` writes the table (CSV), the figure (PNG) and a short markdown summary.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import UserInputError
from ..io_utils import output_folder
from ..tables import write_table_to

#: Adjustments for multiple comparisons (``none`` keeps the raw p-values).
ADJUSTMENTS = ("holm", "bh", "none")
#: How the seeds of the two sides are resampled.
PAIRINGS = ("auto", "paired", "unpaired")
#: Files :func:`write_comparison` writes.
OUTPUTS = ("comparison.csv", "comparison.png", "summary.md")


@dataclass
class Comparison:
    """The result of :func:`compare_tables`.

    Parameters
    ----------
    table : pandas.DataFrame
        One row per category, then ``All examples`` and (fine categories) ``Overall (mean of fine)``:
        ``category, level`` (``fine`` / ``coarse`` / ``all`` / ``overall``), ``n`` (examples),
        ``estimate_a, ci_low_a, ci_high_a, estimate_b, ci_low_b, ci_high_b, delta, delta_ci_low, delta_ci_high,
        p_value`` (two-sided bootstrap), ``p_adjusted`` (over the categories; a summary row is a family of one),
        ``significant`` (``p_adjusted <= alpha``) and, when both sides are single runs, ``a_only`` (examples A
        gets right and B wrong), ``b_only``, ``mcnemar_p``, ``mcnemar_p_adjusted``, ``mcnemar_significant``.
    setting_a, setting_b : dict
        The setting keys (experiment, language, model, dataset) of each side.
    seeds_a, seeds_b : list
        The runs of each side (``(pretrain_seed, seed)`` pairs in nested designs).
    paired : bool
        Whether the seed resamples were shared.
    metric : str
        ``mcc`` or ``accuracy``.
    n_boot : int
        Bootstrap samples.
    seed : int
        Seed of the resampling.
    level : float
        Confidence level of the intervals.
    adjust : str
        The adjustment (:data:`ADJUSTMENTS`).
    alpha : float
        Level of ``significant``.
    names : tuple of str
        How the sides are called in the summary and figure.
    notes : list of str
        Remarks on the comparison (pairing chosen, datasets that differ ...).
    """

    table: pd.DataFrame
    setting_a: dict
    setting_b: dict
    seeds_a: list
    seeds_b: list
    paired: bool
    metric: str
    n_boot: int
    seed: int
    level: float
    adjust: str
    alpha: float
    names: tuple[str, str] = ("A", "B")
    notes: list[str] = field(default_factory=list)

    @property
    def single_runs(self) -> bool:
        """Whether each side is a single run (McNemar's test is reported).

        Returns
        -------
        bool
            ``True`` when the table has the McNemar columns.
        """
        return "mcnemar_p" in self.table.columns

    def summary(self) -> str:
        """Write the comparison as a short markdown document.

        Returns
        -------
        str
            The sides, the design, the summary rows, the categories that differ after adjustment, the table.
        """
        from ..stats.report import markdown_table

        t = self.table
        a, b = self.names
        family = t["level"].isin(["fine", "coarse"])
        method = {"holm": "Holm", "bh": "Benjamini-Hochberg", "none": "no adjustment"}[self.adjust]
        lines = [f"# {b} vs {a}: {self.metric.upper()} per category", "",
                 f"- **{a}**: " + ", ".join(f"{k}={v}" for k, v in self.setting_a.items())
                 + f"; {len(self.seeds_a)} run(s)",
                 f"- **{b}**: " + ", ".join(f"{k}={v}" for k, v in self.setting_b.items())
                 + f"; {len(self.seeds_b)} run(s)",
                 f"- {int(t.loc[t['level'] == 'all', 'n'].iat[0])} shared examples, {int(family.sum())} categories; "
                 f"delta = {b} - {a}; Multi-Bootstrap with {self.n_boot} samples (seed {self.seed}), seeds "
                 f"{'paired' if self.paired else 'resampled independently'}, {self.level:.0%} percentile intervals, "
                 f"two-sided p-values, {method} over the categories (alpha = {self.alpha})."]
        lines += [f"- {note}" for note in self.notes]
        lines += ["", "## Whole set", ""]
        for row in t[~family].itertuples(index=False):
            lines.append(f"- {row.category}: {a} {row.estimate_a:.3f}, {b} {row.estimate_b:.3f}, delta "
                         f"{row.delta:+.3f} [{row.delta_ci_low:+.3f}, {row.delta_ci_high:+.3f}], p = {row.p_value:.3g}"
                         + (f"; McNemar p = {row.mcnemar_p:.3g} ({row.a_only} vs {row.b_only} discordant)"
                            if self.single_runs and pd.notna(row.mcnemar_p) else ""))
        lines += ["", "## Categories that differ", ""]
        hits = t[family & t["significant"]].sort_values("delta")
        if hits.empty:
            lines.append(f"None after {method} at alpha = {self.alpha} (bootstrap).")
        for row in hits.itertuples(index=False):
            lines.append(f"- {row.category} (n = {row.n}): delta {row.delta:+.3f} "
                         f"[{row.delta_ci_low:+.3f}, {row.delta_ci_high:+.3f}], adjusted p = {row.p_adjusted:.3g}")
        if self.single_runs:
            mc = t[family & t["mcnemar_significant"]]
            lines.append("")
            lines.append(f"McNemar's exact test (single runs): {len(mc)} categor{'y' if len(mc) == 1 else 'ies'} "
                         f"differ after {method}" + (": " + ", ".join(mc["category"]) if len(mc) else "") + ".")
        shown = ["category", "n", "estimate_a", "estimate_b", "delta", "delta_ci_low", "delta_ci_high", "p_value",
                 "p_adjusted"] + (["a_only", "b_only", "mcnemar_p", "mcnemar_p_adjusted"] if self.single_runs else [])
        lines += ["", "## Table", "", markdown_table(t[shown]), ""]
        return "\n".join(lines)

    def figure(self):
        """Draw the per-category delta with its interval (a forest plot), the whole-set rows on top.

        Returns
        -------
        matplotlib.figure.Figure
            The figure (not attached to pyplot; save it with ``fig.savefig``).
        """
        return delta_figure(self.table, self.names, self.metric, self.level, self.adjust, self.alpha)


def mcnemar_exact(correct_a, correct_b) -> tuple[int, int, float]:
    """Test two classifiers on the same examples with McNemar's exact test.

    Parameters
    ----------
    correct_a, correct_b : array_like of bool, shape (n_examples,)
        Whether each side predicts each example correctly.

    Returns
    -------
    a_only : int
        Examples A gets right and B wrong.
    b_only : int
        Examples B gets right and A wrong.
    p_value : float
        Two-sided exact binomial test of ``b_only`` out of ``a_only + b_only`` discordant examples with
        probability 1/2 (1.0 without discordant examples); the p-value of
        ``statsmodels.stats.contingency_tables.mcnemar(table, exact=True)``.
    """
    from scipy.stats import binomtest

    a = np.asarray(correct_a, dtype=bool)
    b = np.asarray(correct_b, dtype=bool)
    if a.shape != b.shape:
        raise ValueError(f"correct_a and correct_b must have the same shape, found {a.shape} and {b.shape}")
    a_only, b_only = int(np.sum(a & ~b)), int(np.sum(~a & b))
    if a_only + b_only == 0:
        return a_only, b_only, 1.0
    return a_only, b_only, float(binomtest(b_only, a_only + b_only, 0.5, alternative="two-sided").pvalue)


def _select(table: pd.DataFrame, selection: Mapping | None, side: str) -> pd.DataFrame:
    from ..stats.table import SETTING_KEYS

    rows = table
    for key, value in (selection or {}).items():
        if key not in table.columns:
            raise UserInputError(f"selection of {side}: no column {key!r} (columns: {', '.join(table.columns)})")
        rows = rows[rows[key].astype(str) == str(value)]
    if rows.empty:
        raise UserInputError(f"selection of {side} {dict(selection or {})}: no row")
    settings = rows[list(SETTING_KEYS)].drop_duplicates()
    if len(settings) != 1:
        shown = "; ".join(", ".join(f"{k}={v}" for k, v in r.items()) for r in settings.head(4).to_dict("records"))
        raise UserInputError(f"{side}: {len(settings)} settings ({shown}{' ...' if len(settings) > 4 else ''}); "
                             f"select one (--select-{side.lower()} KEY=VALUE)")
    return rows


def _runs(arr) -> list:
    return [(o, i) for o in arr.seeds for i in arr.inner_seeds] if arr.inner_seeds else list(arr.seeds)


def compare_tables(table_a: pd.DataFrame, table_b: pd.DataFrame, *, select_a: Mapping | None = None,
                   select_b: Mapping | None = None, metric: str = "mcc", by: str = "category", n_boot: int = 1000,
                   seed: int = 0, level: float = 0.95, pairing: str = "auto", adjust: str = "holm",
                   alpha: float = 0.05, names: tuple[str, str] | None = None) -> Comparison:
    """Compare two systems or settings on one diagnostic set, per category.

    Parameters
    ----------
    table_a, table_b : pandas.DataFrame
        Validated predictions tables (:func:`diagnostics.stats.read_predictions`); after ``select_*`` each holds
        one setting (experiment, language, model, dataset). A is the baseline: deltas are B - A.
    select_a, select_b : mapping, optional
        Column -> value filters that pick one setting of a table holding several.
    metric : {"mcc", "accuracy"}
        The metric compared (McNemar's test is on correctness, whatever the metric).
    by : {"category", "coarse"}
        Fine (with the mean over them, the study's overall score) or coarse categories.
    n_boot : int
        Multi-Bootstrap samples (at least 1).
    seed : int
        Seed of the resampling.
    level : float
        Confidence level of the intervals.
    pairing : {"auto", "paired", "unpaired"}
        Resample the seeds of both sides together (``paired``: seed k of A and of B share something, such as a
        pretraining checkpoint) or independently; ``auto`` pairs when both sides have the same seeds.
    adjust : {"holm", "bh", "none"}
        Adjustment of the p-values over the categories.
    alpha : float
        Level at which an adjusted p-value counts as significant.
    names : tuple of str, optional
        Names of the sides in the summary and figure (default: the setting values that differ, else A and B).

    Returns
    -------
    Comparison
        The per-category table and how it was computed.

    Raises
    ------
    UserInputError
        A side that is not one setting, sides on different examples or gold labels, a paired design without the
        same seeds, or an unknown option value.
    """
    from ..stats import compare, setting_arrays
    from ..stats.multiple import adjust_pvalues
    from ..stats.scores import ALL, OVERALL, overall_n

    for option, value, allowed in (("metric", metric, ("mcc", "accuracy")), ("by", by, ("category", "coarse")),
                                   ("pairing", pairing, PAIRINGS), ("adjust", adjust, ADJUSTMENTS)):
        if value not in allowed:
            raise UserInputError(f"{option}: expected one of {', '.join(allowed)}, found {value!r}")
    if not isinstance(n_boot, (int, np.integer)) or n_boot < 1:
        raise UserInputError(f"n_boot: expected a positive integer, found {n_boot!r}")
    if not 0 < level < 1 or not 0 < alpha < 1:
        raise UserInputError(f"level and alpha must lie in (0, 1), found {level} and {alpha}")
    arr_a = setting_arrays(_select(table_a, select_a, "A"), {}, by=by)
    arr_b = setting_arrays(_select(table_b, select_b, "B"), {}, by=by)
    notes = []
    if set(arr_a.example_ids) != set(arr_b.example_ids):
        only_a = len(set(arr_a.example_ids) - set(arr_b.example_ids))
        only_b = len(set(arr_b.example_ids) - set(arr_a.example_ids))
        raise UserInputError(f"A and B cover different examples ({only_a} only in A, {only_b} only in B, of "
                             f"{len(arr_a.example_ids)} and {len(arr_b.example_ids)}); a comparison needs both sides "
                             "on the same examples")
    pos = pd.Index(arr_b.example_ids).get_indexer(arr_a.example_ids)
    pred_a, pred_b, labels = arr_a.predictions, arr_b.predictions[pos], arr_a.labels
    if not np.array_equal(arr_b.labels[pos], labels):
        bad = int(np.sum(arr_b.labels[pos] != labels))
        raise UserInputError(f"A and B disagree on the gold labels of {bad} example(s) with the same id; compare "
                             "predictions of one dataset (or of translations whose labels agree)")
    if arr_a.setting["dataset"] != arr_b.setting["dataset"]:
        notes.append(f"datasets {arr_a.setting['dataset']} (A) and {arr_b.setting['dataset']} (B), aligned by "
                     f"example id; categories of {arr_a.setting['dataset']}")
    runs_a, runs_b = _runs(arr_a), _runs(arr_b)
    same_design = pred_a.shape[1:] == pred_b.shape[1:] and runs_a == runs_b
    if pairing == "paired" and pred_a.shape[1:] != pred_b.shape[1:]:
        raise UserInputError(f"pairing paired: the sides have different seeds ({runs_a} and {runs_b}); use unpaired")
    paired = pairing == "paired" or (pairing == "auto" and same_design)
    if pairing == "auto":
        notes.append("seeds paired (both sides have the same seeds)" if paired else
                     "seeds resampled independently (the sides have different seeds)")
    cats, cat_names = arr_a.categories, list(arr_a.category_names)
    common = dict(metric=metric, n_boot=int(n_boot), seed=seed, paired=paired, level=level, threshold=None,
                  two_sided=True)
    parts = []
    if cat_names:
        parts.append(compare(pred_a, pred_b, labels, categories=cats, category_names=cat_names,
                             overall=by == "category", **common))
    parts.append(compare(pred_a, pred_b, labels, **common).assign(category=ALL))
    raw = pd.concat(parts, ignore_index=True)
    level_of = {**{n: ("fine" if by == "category" else "coarse") for n in cat_names}, ALL: "all", OVERALL: "overall"}
    counts = {**dict(zip(cat_names, cats.sum(axis=0).astype(int))), ALL: len(labels)}
    if cat_names:
        counts[OVERALL] = overall_n(cats)
    out = pd.DataFrame({"category": raw["category"], "level": raw["category"].map(level_of),
                        "n": raw["category"].map(counts).astype(int)})
    for column in ("estimate_a", "ci_low_a", "ci_high_a", "estimate_b", "ci_low_b", "ci_high_b", "delta",
                   "delta_ci_low", "delta_ci_high", "p_value"):
        out[column] = raw[column].to_numpy(dtype=np.float64)
    order = [n for n in cat_names] + [ALL] + ([OVERALL] if OVERALL in set(out["category"]) else [])
    out = out.set_index("category").loc[order].reset_index()
    family = out["level"].isin(["fine", "coarse"]).to_numpy()

    def adjusted(p: np.ndarray) -> np.ndarray:
        result = p.copy()
        if adjust != "none" and family.any():
            result[family] = adjust_pvalues(p[family], adjust)
        return result

    out["p_adjusted"] = adjusted(out["p_value"].to_numpy())
    out["significant"] = out["p_adjusted"] <= alpha
    single = pred_a.ndim == 2 and pred_b.ndim == 2 and pred_a.shape[1] == 1 and pred_b.shape[1] == 1
    if single:
        correct_a, correct_b = pred_a[:, 0] == labels, pred_b[:, 0] == labels
        members = {**{n: cats[:, j] for j, n in enumerate(cat_names)}, ALL: np.ones(len(labels), dtype=bool)}
        tests = [mcnemar_exact(correct_a[members[n]], correct_b[members[n]]) if n in members else (0, 0, np.nan)
                 for n in out["category"]]
        out["a_only"] = [t[0] if n in members else pd.NA for t, n in zip(tests, out["category"])]
        out["b_only"] = [t[1] if n in members else pd.NA for t, n in zip(tests, out["category"])]
        out["a_only"], out["b_only"] = out["a_only"].astype("Int64"), out["b_only"].astype("Int64")
        out["mcnemar_p"] = np.asarray([t[2] for t in tests], dtype=np.float64)
        out["mcnemar_p_adjusted"] = adjusted(out["mcnemar_p"].to_numpy())
        out["mcnemar_significant"] = out["mcnemar_p_adjusted"] <= alpha
        notes.append("each side is a single run: McNemar's exact test on the discordant examples (correctness)")
    out["metric"], out["n_boot"], out["confidence"], out["adjust"], out["paired"] = (metric, int(n_boot), level,
                                                                                     adjust, paired)
    return Comparison(out, dict(arr_a.setting), dict(arr_b.setting), runs_a, runs_b, paired, metric, int(n_boot),
                      seed, level, adjust, alpha, names or _side_names(arr_a.setting, arr_b.setting), notes)


def _side_names(a: Mapping, b: Mapping) -> tuple[str, str]:
    differing = [k for k in a if a[k] != b[k]]
    if not differing:
        return "A", "B"
    return tuple(" ".join(str(s[k]) for k in differing) for s in (a, b))  # type: ignore[return-value]


def delta_figure(table: pd.DataFrame, names: tuple[str, str] = ("A", "B"), metric: str = "mcc",
                 level: float = 0.95, adjust: str = "holm", alpha: float = 0.05):
    """Draw a forest plot of the per-category deltas with their intervals.

    Parameters
    ----------
    table : pandas.DataFrame
        The table of a :class:`Comparison` (``category, level, n, delta, delta_ci_low, delta_ci_high,
        significant``).
    names : tuple of str
        Names of A and B (the axis reads ``B - A``).
    metric : str
        The metric's name, for the axis.
    level : float
        Confidence level of the intervals, for the title.
    adjust : str
        The adjustment, for the legend.
    alpha : float
        Level of ``significant``, for the legend.

    Returns
    -------
    matplotlib.figure.Figure
        Whole-set rows on top, then the categories in taxonomy order; significant deltas in colour (blue: B
        higher, red: B lower), the others grey; a dashed line at 0.
    """
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

    rows = pd.concat([table[~table["level"].isin(["fine", "coarse"])], table[table["level"].isin(["fine", "coarse"])]])
    n = len(rows)
    fig = Figure(figsize=(7.5, 1.6 + 0.24 * n), layout="constrained")
    ax = fig.add_subplot()
    y = np.arange(n)[::-1]
    colours = np.where(~rows["significant"].to_numpy(dtype=bool), "#9a9a9a",
                       np.where(rows["delta"].to_numpy() > 0, "#1f5fa8", "#b2302b"))
    for yi, row, colour in zip(y, rows.itertuples(index=False), colours):
        ax.plot([row.delta_ci_low, row.delta_ci_high], [yi, yi], color=colour, lw=1.6, solid_capstyle="butt")
        ax.plot([row.delta], [yi], "o", color=colour, ms=4.5)
    ax.axvline(0.0, color="black", lw=0.8, ls="--")
    summary = (~rows["level"].isin(["fine", "coarse"])).sum()
    if 0 < summary < n:
        ax.axhline(n - summary - 0.5, color="#cccccc", lw=0.8)
    ax.set_yticks(y)
    ax.set_yticklabels([f"{c} ({k})" for c, k in zip(rows["category"], rows["n"])], fontsize=7.5)
    ax.set_ylim(-0.7, n - 0.3)
    a, b = names
    ax.set_xlabel(f"delta {metric.upper()} ({b} - {a}), {level:.0%} Multi-Bootstrap interval")
    ax.set_title(f"{b} vs {a} per category", fontsize=10)
    method = {"holm": "Holm", "bh": "BH", "none": "unadjusted"}[adjust]
    fig.legend(handles=[Line2D([], [], color="#1f5fa8", marker="o", label=f"{b} higher ({method} p <= {alpha})"),
                        Line2D([], [], color="#b2302b", marker="o", label=f"{b} lower ({method} p <= {alpha})"),
                        Line2D([], [], color="#9a9a9a", marker="o", label="not significant")],
               fontsize=7, loc="outside lower center", ncol=3, frameon=False)
    ax.grid(axis="x", color="#eeeeee", lw=0.6)
    ax.set_axisbelow(True)
    return fig


def write_comparison(result: Comparison, out: str | Path) -> dict[str, Path]:
    """Write a comparison as ``comparison.csv``, ``comparison.png`` and ``summary.md``, as one set.

    Parameters
    ----------
    result : Comparison
        From :func:`compare_tables`.
    out : str or Path
        The folder (created). The three files replace those of an earlier comparison at once
        (:func:`~diagnostics.io_utils.output_folder`); other files in it are kept.

    Returns
    -------
    dict of str to Path
        ``table``, ``figure`` and ``summary`` -> the written files.
    """
    fig = result.figure()
    with output_folder(out, OUTPUTS) as files:
        with files.file(OUTPUTS[0]) as tmp:
            write_table_to(result.table, tmp, "csv")
        with files.file(OUTPUTS[1]) as tmp:
            fig.savefig(tmp, format="png", dpi=110, bbox_inches="tight")
        with files.file(OUTPUTS[2]) as tmp:
            tmp.write_text(result.summary(), encoding="utf-8")
    return {"table": files.path(OUTPUTS[0]), "figure": files.path(OUTPUTS[1]), "summary": files.path(OUTPUTS[2])}
