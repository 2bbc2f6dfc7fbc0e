"""Compare two systems (or settings) on the same diagnostic set: per category, the delta B - A with its interval.

Each side is one setting of a predictions table (its seeds, possibly nested under pretraining seeds). Per category
(then for all examples, and the mean over fine categories):

* the Multi-Bootstrap delta of the seed-averaged metric, B - A, with its percentile interval and a two-sided
  p-value (:func:`diagnostics.stats.compare`; seeds are resampled together when both sides have the same seeds,
  independently otherwise), adjusted over the categories with Holm or Benjamini-Hochberg
  (:func:`diagnostics.stats.adjust_pvalues`);
* when each side is a single run, McNemar's exact test on the examples one side gets right and the other wrong
  (a two-sided binomial test on the discordant pairs), adjusted the same way;
* on request (``aso=True``), Almost Stochastic Order of the runs' scores (:func:`diagnostics.stats.aso_matrices`):
  ``eps_min`` of A over B and of B over A, and which side is almost stochastically dominant at ``aso_tau`` after
  the same adjustment over the categories.

:func:`diagnostics.plots.write_comparison` writes the table (CSV), the figure (PNG, drawn by
:func:`diagnostics.plots.delta_figure`) and a short markdown summary.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from ..core.errors import UserInputError
from ..stats import ADJUSTMENTS, ALTERNATIVES, PAIRINGS  # noqa: F401 - the options, re-exported



@dataclass
class Comparison:
    """The result of :func:`compare_tables`.

    Parameters
    ----------
    table : pandas.DataFrame
        One row per category, then ``All examples`` and (fine categories) ``Overall (mean of fine)``:
        ``category, level`` (``fine`` / ``coarse`` / ``all`` / ``overall``), ``n`` (examples),
        ``estimate_a, ci_low_a, ci_high_a, estimate_b, ci_low_b, ci_high_b, delta, delta_ci_low, delta_ci_high,
        p_value`` (bootstrap, as ``alternative``), ``p_adjusted`` (over the categories; a summary row is a family of one),
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
    alternative : str
        The hypothesis of the bootstrap p-values (:data:`~diagnostics.stats.ALTERNATIVES`).
    aso_tau : float or None
        The dominance threshold of the ASO columns; None when ASO was not computed.
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
    alternative: str = "two-sided"
    aso_tau: float | None = None

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
        from ..stats import markdown_table

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
                 f"{self.alternative} p-values, {method} over the categories (alpha = {self.alpha})."]
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
        if self.aso_tau is not None:
            lines += self._aso_lines(family, method)
        shown = ["category", "n", "estimate_a", "estimate_b", "delta", "delta_ci_low", "delta_ci_high", "p_value",
                 "p_adjusted"] + (["a_only", "b_only", "mcnemar_p", "mcnemar_p_adjusted"] if self.single_runs else [])
        shown += ["aso_eps_min", "aso_eps_min_ba"] if self.aso_tau is not None else []
        lines += ["", "## Table", "", markdown_table(t[shown]), ""]
        return "\n".join(lines)

    def _aso_lines(self, family: pd.Series, method: str) -> list[str]:
        """The summary's section on Almost Stochastic Order."""
        t, (a, b) = self.table, self.names
        lines = ["", "## Almost Stochastic Order of the runs' scores", "",
                 f"eps_min bounds the share of the order {a} >= {b} that is violated ({self.level:.0%} upper "
                 f"bound; 0: {a} better at every quantile of the runs' {self.metric.upper()}, 0.5: no order); "
                 f"a side is almost stochastically dominant where its eps_min is below tau = {self.aso_tau:g} "
                 f"after {method} over the categories ({len(self.seeds_a)} vs {len(self.seeds_b)} runs: with few "
                 "runs the bootstrap sees few distinct resamples and eps_min can reach 0 on chance alone).", ""]
        for row in t[~family].itertuples(index=False):
            lines.append(f"- {row.category}: eps_min({a} over {b}) = {row.aso_eps_min:.3f}, "
                         f"eps_min({b} over {a}) = {row.aso_eps_min_ba:.3f}")
        for side, column, other in ((a, "aso_a_dominant", b), (b, "aso_b_dominant", a)):
            hits = t[family & t[column]]
            lines.append(f"- {side} almost stochastically dominant over {other} in {len(hits)} categor"
                         f"{'y' if len(hits) == 1 else 'ies'}" + (": " + ", ".join(hits["category"]) if len(hits)
                                                                   else "") + ".")
        return lines

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


def compare_tables(table_a: pd.DataFrame, table_b: pd.DataFrame, *, select_a: Mapping | None = None,
                   select_b: Mapping | None = None, metric: str = "mcc", by: str = "category", n_boot: int = 1000,
                   seed: int = 0, level: float = 0.95, pairing: str = "auto", alternative: str = "two-sided",
                   adjust: str = "holm", alpha: float = 0.05, names: tuple[str, str] | None = None,
                   datasets: Mapping | None = None, aso: bool = False, aso_tau: float = 0.5) -> Comparison:
    """Compare two systems or settings on one diagnostic set, per category, as a report.

    The comparison is :func:`diagnostics.stats.compare_settings` (same defaults: two-sided, Holm) of the setting
    ``select_a`` picks in ``table_a`` and the one ``select_b`` picks in ``table_b``; this adds McNemar's exact test
    when each side is a single run, and the :class:`Comparison` that holds the table and writes the summary.

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
    alternative : {"two-sided", "greater", "less"}
        The hypothesis of the bootstrap p-values (B - A differs from 0, is above it, is below it); McNemar's test
        is always two-sided.
    adjust : {"holm", "bh", "none"}
        Adjustment of the p-values over the categories.
    alpha : float
        Level at which an adjusted p-value counts as significant.
    names : tuple of str, optional
        Names of the sides in the summary and figure (default: the setting values that differ, else A and B).
    datasets : mapping, optional
        Dataset name -> its source (a ``DataRef`` carrying a user file) for names that are not bundled sets.
    aso : bool
        Also compare the runs' per-category scores with Almost Stochastic Order
        (:func:`diagnostics.stats.aso_matrices`: ``level`` as its confidence, ``n_boot`` resamples, ``seed``, the
        adjustment ``adjust`` over the categories, dominance where the adjusted p-value is below ``1 - level``).
        Adds ``aso_violation_ratio, aso_eps_min, aso_p_adjusted, aso_a_dominant`` (A over B), ``aso_eps_min_ba,
        aso_p_adjusted_ba, aso_b_dominant`` (B over A) and ``aso_tau``. Needs at least 2 runs per side.
    aso_tau : float
        The dominance threshold of ASO (0.5, the original and lenient one; 0.2 or below for a confident claim).

    Returns
    -------
    Comparison
        The per-category table and how it was computed.

    Raises
    ------
    UserInputError
        A side that is not one setting, sides on different examples or gold labels, a paired design without the
        same seeds, an unknown option value, or ASO with a single run on a side.
    """
    from ..stats import compare_settings, setting_arrays
    from ..stats import ALL, OVERALL

    for option, value, allowed in (("metric", metric, ("mcc", "accuracy")), ("by", by, ("category", "coarse")),
                                   ("pairing", pairing, PAIRINGS)):
        if value not in allowed:
            raise UserInputError(f"{option}: expected one of {', '.join(allowed)}, found {value!r}")
    if not isinstance(n_boot, (int, np.integer)) or n_boot < 1:
        raise UserInputError(f"n_boot: expected a positive integer, found {n_boot!r}")
    if not 0 < level < 1 or not 0 < alpha < 1:
        raise UserInputError(f"level and alpha must lie in (0, 1), found {level} and {alpha}")
    arr_a = setting_arrays(table_a, select_a, datasets, by=by, what="A", hint="--select-a KEY=VALUE")
    arr_b = setting_arrays(table_b, select_b, datasets, by=by, what="B", hint="--select-b KEY=VALUE")
    if arr_a.nested != arr_b.nested:
        raise UserInputError("A and B: one side has pretraining seeds and the other not; compare like designs")
    raw = compare_settings(table_a, select_a, select_b, metric, by, pairing, int(n_boot), seed, level, None,
                           datasets, alternative=alternative, adjust=adjust, alpha=alpha, predictions_b=table_b)
    paired = bool(raw["paired"].iat[0])
    notes = []
    if arr_a.setting["dataset"] != arr_b.setting["dataset"]:
        notes.append(f"datasets {arr_a.setting['dataset']} (A) and {arr_b.setting['dataset']} (B), aligned by "
                     f"example id; categories of {arr_a.setting['dataset']}")
    if pairing == "auto":
        notes.append("seeds paired (both sides have the same seeds)" if paired else
                     "seeds resampled independently (the sides have different seeds)")
    family = raw["in_family"].to_numpy()
    summary_level = {ALL: "all", OVERALL: "overall"}
    out = pd.DataFrame({"category": raw["category"],
                        "level": [("fine" if by == "category" else "coarse") if f else summary_level[c]
                                  for c, f in zip(raw["category"], family)],
                        "n": raw["n"].astype(int)})
    for column in ("estimate_a", "ci_low_a", "ci_high_a", "estimate_b", "ci_low_b", "ci_high_b", "delta",
                   "delta_ci_low", "delta_ci_high", "p_value", "p_adjusted"):
        out[column] = raw[column].to_numpy(dtype=np.float64)
    out["significant"] = raw["significant"].to_numpy(dtype=bool)
    pred_a = arr_a.predictions
    pos = pd.Index(arr_b.ids).get_indexer(arr_a.ids)
    pred_b, labels = arr_b.predictions[pos], arr_a.labels
    if pred_a.ndim == 2 and pred_b.ndim == 2 and pred_a.shape[1] == 1 and pred_b.shape[1] == 1:
        _add_mcnemar(out, pred_a[:, 0] == labels, pred_b[:, 0] == labels, arr_a, family, adjust, alpha)
        notes.append("each side is a single run: McNemar's exact test on the discordant examples (correctness)")
    out["metric"], out["n_boot"], out["confidence"], out["adjust"], out["paired"] = (metric, int(n_boot), level,
                                                                                     adjust, paired)
    out["alternative"] = alternative
    if aso:
        _add_aso(out, arr_a, arr_b, metric, by, level, int(n_boot), seed, aso_tau, adjust)
        notes.append(f"Almost Stochastic Order of the runs' scores per category (tau = {aso_tau:g}); ASO ignores "
                     "the pairing of seeds")
    return Comparison(out, dict(arr_a.setting), dict(arr_b.setting), arr_a.runs, arr_b.runs, paired, metric,
                      int(n_boot), seed, level, adjust, alpha, names or _side_names(arr_a.setting, arr_b.setting),
                      notes, alternative, aso_tau if aso else None)


def _add_aso(out: pd.DataFrame, arr_a, arr_b, metric: str, by: str, level: float, n_boot: int, seed: int,
             tau: float, adjust: str) -> None:
    """The ASO columns, matched to the comparison's rows by category (B's runs scored on A's categories, as the
    Multi-Bootstrap delta is)."""
    from ..stats import aso_matrices

    if n_boot < 2:
        raise UserInputError(f"n_boot: ASO needs at least 2 bootstrap samples, found {n_boot}")
    pos = pd.Index(arr_b.ids).get_indexer(arr_a.ids)
    arr_b = replace(arr_b, ids=arr_a.ids, gold=arr_b.gold[pos], pred=arr_b.pred[pos], probability=None,
                    categories=arr_a.categories, category_names=list(arr_a.category_names))
    result = aso_matrices(arr_a, arr_b, metric, by, level, n_boot, seed, tau, adjust).set_index("category")
    result = result.reindex(out["category"])
    columns = {"aso_violation_ratio": "violation_ratio", "aso_eps_min": "eps_min", "aso_p_adjusted": "p_adjusted",
               "aso_a_dominant": "dominant", "aso_eps_min_ba": "eps_min_ba", "aso_p_adjusted_ba": "p_adjusted_ba",
               "aso_b_dominant": "dominant_ba"}
    for column, source in columns.items():
        values = result[source].to_numpy()
        out[column] = (pd.Series(values).fillna(False).to_numpy(dtype=bool) if source.startswith("dominant")
                       else values.astype(np.float64))
    out["aso_tau"] = tau


def _add_mcnemar(out: pd.DataFrame, correct_a: np.ndarray, correct_b: np.ndarray, arr, family: np.ndarray,
                 adjust: str, alpha: float) -> None:
    """McNemar's exact test per category and for all examples (none for the overall mean), adjusted as ``adjust``."""
    from ..stats import adjust_pvalues
    from ..stats import ALL

    members = {**{n: arr.categories[:, j] for j, n in enumerate(arr.category_names)},
               ALL: np.ones(len(correct_a), dtype=bool)}
    tests = {n: mcnemar_exact(correct_a[m], correct_b[m]) for n, m in members.items()}
    out["a_only"] = pd.array([tests[n][0] if n in tests else pd.NA for n in out["category"]], dtype="Int64")
    out["b_only"] = pd.array([tests[n][1] if n in tests else pd.NA for n in out["category"]], dtype="Int64")
    p = np.asarray([tests[n][2] if n in tests else np.nan for n in out["category"]], dtype=np.float64)
    adjusted = p.copy()
    if adjust != "none" and family.any():
        adjusted[family] = adjust_pvalues(p[family], adjust)
    out["mcnemar_p"], out["mcnemar_p_adjusted"] = p, adjusted
    out["mcnemar_significant"] = adjusted <= alpha


def _side_names(a: Mapping, b: Mapping) -> tuple[str, str]:
    differing = [k for k in a if a[k] != b[k]]
    if not differing:
        return "A", "B"
    return tuple(" ".join(str(s[k]) for k in differing) for s in (a, b))  # type: ignore[return-value]
