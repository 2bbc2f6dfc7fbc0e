"""How many seeds (and examples) a study needs: a simulation planner fitted on pilot runs.

The question: with ``n`` fine-tuning seeds, how wide will the confidence interval of a category's mean MCC (or of
its seed standard deviation σ) be, and how likely is a study to detect a difference ``delta`` between two settings?
The answer is simulated from a variance-components model fitted on a pilot (a predictions table with a few seeds).

The model, per setting and unit (a fine or coarse category, or the overall MCC = mean of the per-feature MCCs)
    A run's score is ``y_i = mu + theta_i + b + d_i``: ``theta_i`` the seed's own effect (variance ``s2_theta``),
    ``b`` the effect of the finite set of examples, common to every seed evaluated on it (variance ``v_b``), and
    ``d_i`` the seed x example interaction, the luck of seed ``i`` on these particular examples (variance
    ``v_d``). Both example terms shrink as ``1 / m`` with the number of examples ``m``.

Fitting it on the pilot (``k`` seeds on ``m0`` examples), in :func:`variance_components`
    * ``seed_var``: the sample variance of the ``k`` per-seed scores (``ddof=1``), which estimates
      ``s2_theta + v_d`` (on one fixed set ``b`` is a constant);
    * ``example_var`` (``v_b``) and ``interaction_var`` (``v_d``): from a bootstrap of the examples (the resampling
      Multi-Bootstrap uses): across resamples, the covariance of two seeds' scores estimates ``v_b`` and a seed's
      variance ``v_b + v_d`` (their means over seeds and seed pairs are used);
    * ``net_seed_var`` = ``max(seed_var - v_d, 0)`` (``s2_theta``).

Simulating a study of ``n`` seeds on ``f * m0`` examples (``example_scale`` ``f``), in :func:`simulate_plan`
    The seed variance on such a set is ``s2(f) = s2_theta + v_d / f``. A simulated study draws ``n`` standardised
    seed effects (normal, or resampled from the pilot's standardised residuals with ``seed_shape="pilot"``) and
    computes what it would report:

    * ``examples="fixed"`` (the diagnostic set is the population: "how do seeds vary on this set?"): the
      half-width ``t(n-1) * s / sqrt(n)`` of the mean, or of the chi-square interval of σ; the power of a two-sided
      Welch t-test between two settings of ``n`` seeds each;
    * ``examples="resampled"`` (the examples are a sample of a population of such examples, as Multi-Bootstrap
      assumes): the standard error adds the example variance, ``SE^2 = s^2 / n + v_b / f`` (``v_b / f`` treated
      as known, degrees of freedom by Welch-Satterthwaite), so the half-width levels off at ``t * sqrt(v_b / f)``
      however many seeds: past that only more examples help. For a difference between two settings the example
      effects of the two settings are correlated by ``example_correlation`` (``rho``): ``Var(b_A - b_B) = 2 v_b
      (1 - rho) / f``; the default ``rho = 0`` is conservative when the settings find the same examples hard.

    The curve is the mean over ``n_sims`` simulated studies, with its Monte-Carlo standard error. The second
    setting of a power calculation is assumed to have the pilot setting's variance components.

What the pilot cannot tell (the limits)
    With ``k`` pilot seeds, ``seed_var`` has ``k - 1`` degrees of freedom: with 3 seeds its 80% confidence
    interval spans a factor of about 20 in variance (5 seeds: about 7, 10 seeds: about 3.5). The plan therefore also reports the curve at the lower and
    upper confidence limits of the pilot's seed variance (``pilot_level``, chi-square), and the number of seeds
    needed under the upper one (``n_seeds_conservative``): read the plan's ``n_seeds`` as an estimate whose
    uncertainty is that range, and plan a second look after the first seeds. The example components come from
    one set of examples and are taken as known (their bootstrap error is not propagated). The ``1/m`` scaling of
    the example terms is asymptotic (MCC is a ratio): scales far from 1 and small categories are extrapolations,
    and a category with very few examples (or whose pilot seeds all scored the same, ``seed_var = 0``) gets a plan
    only as good as its pilot. The normal seed distribution is an assumption; ``seed_shape="pilot"`` keeps the
    pilot's shape (skew, a seed that collapsed to one class) but can only reuse the ``k`` values it saw.

    ``tests/stats/test_planner.py`` checks the planner against a direct Monte-Carlo of a known generating process
    (per-category seed skills, example difficulties, Bernoulli luck): half-widths, sampling SDs with resampled
    examples, and the power of the Welch test.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as sps

from ..core.errors import UserInputError
from ._categories import category_matrix, dataset_for, dataset_frame, dataset_frames
from ._matrix import SettingMatrix, setting_matrices
from ._mcc import mcc_from_counts
from ._scores import OVERALL
from ._table import SETTING_KEYS, validate_predictions

BY = ("category", "coarse", "overall")
EXAMPLES = ("fixed", "resampled")
SEED_SHAPES = ("normal", "pilot")
_CHUNK = 64


@dataclass
class SeedPlan:
    """A seed plan: the simulated curve, the smallest number of seeds meeting the target, the fitted components.

    Parameters
    ----------
    curve : pandas.DataFrame
        One row per setting x unit x example scale x number of seeds: the setting keys, ``level, category,
        example_scale, n_examples, n_seeds, metric`` (``half_width`` or ``power``), ``quantity`` (``mean``,
        ``sigma`` or ``delta``), ``value`` (expected half-width, or power), ``mc_se`` (its Monte-Carlo standard
        error), ``value_sigma_low`` / ``value_sigma_high`` (the same at the pilot's lower / upper confidence limit
        of the seed variance), ``model_se`` (the model's standard error of the estimate at the plug-in components:
        of the mean over seeds, of the difference of two settings' means, or of σ's estimate), ``meets``
        (``value`` meets the target).
    needed : pandas.DataFrame
        One row per setting x unit x example scale: ``n_seeds`` (smallest number meeting the target, ``<NA>``
        when more than the largest simulated), ``n_seeds_optimistic`` / ``n_seeds_conservative`` (the same at the
        lower / upper confidence limit of the pilot's seed variance), ``limit`` (the value as the number of seeds
        grows without bound: the example floor of the half-width, or the power ceiling) and ``reachable``
        (whether the limit meets the target: if not, no number of seeds will, only more examples).
    components : pandas.DataFrame
        The fitted variance components (see :func:`variance_components`).
    target : dict
        What was planned for: ``metric, quantity, target, examples, level, alpha, delta, seed_shape,
        example_correlation, n_sims, pilot_level``.
    skipped : list of dict
        Settings left out (fewer than 2 pilot seeds).
    """

    curve: pd.DataFrame
    needed: pd.DataFrame
    components: pd.DataFrame
    target: dict[str, Any]
    skipped: list[dict[str, Any]] = field(default_factory=list)

    def summary(self) -> pd.DataFrame:
        """Summarise the plan per setting and example scale over its units (categories).

        Returns
        -------
        pandas.DataFrame
            Setting keys, ``level, example_scale, units, reachable_share`` (units whose target some number of
            seeds can meet), ``within_max_share`` (units meeting it within the simulated seeds), ``n_median``,
            ``n_p90``, ``n_max`` (seeds needed by the median unit, by 90% of the units, by every unit; ``<NA>``:
            more than simulated), ``n_max_conservative`` (every unit, at the upper limit of the pilot's seed
            variance) and ``hardest`` (the unit needing the most seeds).
        """
        keys = [k for k in SETTING_KEYS if k in self.needed.columns] + ["level", "example_scale"]
        rows = []
        for group, part in self.needed.groupby(keys, sort=False, dropna=False):
            n = part["n_seeds"].astype("float64").fillna(np.inf).to_numpy()
            conservative = part["n_seeds_conservative"].astype("float64").fillna(np.inf).to_numpy()
            worst = int(np.argmax(n))
            rows.append(dict(zip(keys, group)) | {
                "units": len(part), "reachable_share": float(part["reachable"].mean()),
                "within_max_share": float(np.isfinite(n).mean()),
                "n_median": _finite_or_na(np.quantile(n, 0.5, method="higher")),
                "n_p90": _finite_or_na(np.quantile(n, 0.9, method="higher")), "n_max": _finite_or_na(n.max()),
                "n_max_conservative": _finite_or_na(conservative.max()), "hardest": part["category"].iat[worst]})
        out = pd.DataFrame(rows)
        for column in ("n_median", "n_p90", "n_max", "n_max_conservative"):
            out[column] = out[column].astype("Int64")
        return out


def _finite_or_na(value: float):
    return int(value) if np.isfinite(value) else pd.NA


# --- fitting ------------------------------------------------------------------------------------------------------


def _check_choice(name: str, value: str, choices: Sequence[str]) -> None:
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(choices)}, found {value!r}")


def _complete_matrix(m: SettingMatrix) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Ids, examples x runs 0/1 predictions and gold labels of one setting, examples sorted by id.

    Raises
    ------
    UserInputError
        When a run lacks predictions for some examples (every pilot run must cover the same examples).
    """
    short = [run for run, complete in zip(m.runs, m.valid.all(axis=0)) if not complete]
    if short:
        raise UserInputError(f"setting {m.setting}: runs {short[:3]} lack predictions for some examples; the "
                             "planner needs every pilot run on the same examples")
    order = np.argsort(m.ids, kind="stable")
    return m.ids[order], m.pred[order].astype(np.float64), m.gold[order].astype(np.float64)


def _unit_scores(weights: np.ndarray, pred: np.ndarray, gold: np.ndarray, members: np.ndarray,
                 overall: bool) -> np.ndarray:
    """MCC of every run in every unit for each row of example weights: (n_weights, n_runs, n_units).

    ``members`` is examples x categories; with ``overall`` the single unit is the mean over the categories present
    (non-zero weight) of their MCCs, as :func:`~diagnostics.stats.category_scores` computes the overall score.
    """
    n_cat, n_run = members.shape[1], pred.shape[1]
    per_run = (members[:, :, None] * np.ones((1, 1, n_run))).reshape(len(members), -1)
    design = np.concatenate([members, members * gold[:, None], per_run * np.tile(pred, (1, n_cat)),
                             per_run * np.tile(pred * gold[:, None], (1, n_cat))], axis=1)
    out = []
    for start in range(0, len(weights), _CHUNK):
        w = weights[start:start + _CHUNK]
        s = w @ design
        size = len(w)
        n = s[:, :n_cat][:, :, None]
        pos = s[:, n_cat:2 * n_cat][:, :, None]
        pred_pos = s[:, 2 * n_cat:2 * n_cat + n_cat * n_run].reshape(size, n_cat, n_run)
        tp = s[:, 2 * n_cat + n_cat * n_run:].reshape(size, n_cat, n_run)
        fp, fn = pred_pos - tp, pos - tp
        value, _ = mcc_from_counts(tp, fp, fn, n - tp - fp - fn)  # (size, n_cat, n_run)
        if overall:
            present = np.broadcast_to(n > 0, value.shape)
            with np.errstate(invalid="ignore"):
                value = (np.where(present, value, 0.0).sum(axis=1) / present.sum(axis=1))[:, None, :]
        out.append(value.transpose(0, 2, 1))
    return np.concatenate(out, axis=0)


def variance_components(predictions: pd.DataFrame, *, by: str = "category", dataset=None, n_boot: int = 200,
                        seed: int = 0, validate: bool = True) -> pd.DataFrame:
    """Fit the planner's variance components on pilot runs: seed variance, example and interaction variances.

    Parameters
    ----------
    predictions : pandas.DataFrame
        The pilot's predictions table (see :mod:`diagnostics.stats._table`); every run of a setting must cover the
        same examples. In nested designs every (pretrain_seed, seed) run counts as one seed.
    by : {"category", "coarse", "overall"}
        Units: the fine categories, the coarse ones, or the overall MCC (mean of the per-feature MCCs).
    dataset : str, DataFrame or mapping, optional
        Where categories come from, as for :func:`~diagnostics.stats.category_scores`.
    n_boot : int
        Bootstrap resamples of the examples for the example components.
    seed : int
        Seed of the resampling.
    validate : bool
        Validate the table first (ids and gold labels checked against the dataset).

    Returns
    -------
    pandas.DataFrame
        One row per setting x unit: setting keys, ``level, category, n_examples`` (the unit's examples in the
        pilot), ``pilot_seeds, mean, seed_var, example_var, interaction_var, net_seed_var`` and ``scores`` (the
        tuple of per-seed scores). Settings with fewer than 2 runs are left out (``attrs["skipped"]`` lists them).

    Raises
    ------
    ValueError
        An unknown ``by``, ``n_boot < 2``, or runs of a setting on different examples.
    """
    _check_choice("by", by, BY)
    if n_boot < 2:
        raise ValueError(f"n_boot must be >= 2, found {n_boot}")
    if validate:
        predictions = validate_predictions(predictions, datasets=dataset_frames(predictions, dataset))
    rng = np.random.default_rng(seed)
    rows, skipped = [], []
    matrices = setting_matrices(predictions, validate=False)
    for m in sorted(matrices, key=lambda m: tuple(m.setting[k] for k in SETTING_KEYS)):
        keys = dict(m.setting)
        ids, pred, gold = _complete_matrix(m)
        if pred.shape[1] < 2:
            skipped.append(keys | {"runs": int(pred.shape[1])})
            continue
        names, members = category_matrix(dataset_frame(dataset_for(dataset, keys["dataset"])),
                                         "coarse" if by == "coarse" else "fine",
                                         ids=ids)
        if not names:
            raise ValueError(f"setting {keys}: the dataset has no diagnostic categories to plan for")
        members = members.astype(np.float64)
        overall = by == "overall"
        point = _unit_scores(np.ones((1, len(ids))), pred, gold, members, overall)[0]  # (runs, units)
        boot = _unit_scores(rng.multinomial(len(ids), np.full(len(ids), 1 / len(ids)), size=n_boot).astype(float),
                            pred, gold, members, overall)  # (n_boot, runs, units)
        sizes = [int(members.any(axis=1).sum())] if overall else members.sum(axis=0).astype(int).tolist()
        k = pred.shape[1]
        off = ~np.eye(k, dtype=bool)
        for u, name in enumerate([OVERALL] if overall else names):
            if sizes[u] == 0:
                continue
            cov = np.cov(boot[:, :, u], rowvar=False)
            total = float(np.mean(np.diag(cov)))
            example = float(np.clip(np.mean(cov[off]), 0.0, total))
            interaction = total - example
            scores = point[:, u]
            seed_var = float(np.var(scores, ddof=1))
            rows.append(keys | {"level": "overall" if overall else ("coarse" if by == "coarse" else "fine"),
                                "category": name, "n_examples": sizes[u], "pilot_seeds": k,
                                "mean": float(scores.mean()), "seed_var": seed_var, "example_var": example,
                                "interaction_var": interaction, "net_seed_var": max(seed_var - interaction, 0.0),
                                "scores": tuple(float(x) for x in scores)})
    out = pd.DataFrame(rows)
    out.attrs["skipped"] = skipped
    return out


# --- simulating ---------------------------------------------------------------------------------------------------


def _standardised(scores: tuple) -> np.ndarray:
    """Pilot residuals scaled to mean 0 and population variance 1 (zeros when the seeds all agree)."""
    y = np.asarray(scores, dtype=np.float64)
    r = y - y.mean()
    scale = np.sqrt(np.mean(r ** 2))
    return r / scale if scale > 0 else np.zeros_like(r)


def _seed_draws(rng: np.random.Generator, n: int, n_sims: int, shape: str, residuals: list[np.ndarray]
                ) -> tuple[np.ndarray, np.ndarray]:
    """Standardised seed means and sample variances of ``n`` draws per simulated study: each (n_rows, n_sims).

    Normal shape: the mean is N(0, 1/n) and the variance chi2(n-1)/(n-1), independent, shared by every row
    (common random numbers). Pilot shape: ``n`` draws with replacement from each row's standardised residuals.
    """
    rows = len(residuals)
    if shape == "normal":
        mean = rng.standard_normal(n_sims) / np.sqrt(n)
        var = rng.chisquare(n - 1, n_sims) / (n - 1)
        return np.broadcast_to(mean, (rows, n_sims)), np.broadcast_to(var, (rows, n_sims))
    means, variances = np.empty((rows, n_sims)), np.empty((rows, n_sims))
    for k in sorted({len(r) for r in residuals}):
        idx = rng.integers(0, k, size=(n_sims, n))
        for i, r in enumerate(residuals):
            if len(r) == k:
                z = r[idx]
                means[i] = z.mean(axis=1)
                variances[i] = z.var(axis=1, ddof=1)
    return means, variances


def _pilot_limits(seed_var: np.ndarray, k: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper ``level`` confidence limits of the pilot's seed variance (chi-square, ``k - 1`` df)."""
    df = k - 1
    return (seed_var * df / sps.chi2.ppf((1 + level) / 2, df), seed_var * df / sps.chi2.ppf((1 - level) / 2, df))


@lru_cache(maxsize=8)
def _t_table(p: float) -> tuple[np.ndarray, np.ndarray]:
    u = np.linspace(0.0, 1.0, 4001)
    with np.errstate(divide="ignore"):
        return u, sps.t.ppf(p, np.where(u > 0, 1 / np.where(u > 0, u, 1.0), np.inf))


def _t_quantile(p: float, df: np.ndarray) -> np.ndarray:
    """``scipy.stats.t.ppf(p, df)`` for ``df >= 1`` (inf allowed), interpolated in ``1/df`` (error below 1e-4)."""
    u, q = _t_table(float(p))
    with np.errstate(divide="ignore"):
        return np.interp(1 / np.asarray(df, dtype=np.float64), u, q)


def _welch_df(a: np.ndarray, b: np.ndarray, known: np.ndarray, n: int) -> np.ndarray:
    """Welch-Satterthwaite degrees of freedom of ``a + b + known`` (``a``, ``b``: estimated from ``n`` seeds each)."""
    num = (a + b + known) ** 2
    den = (a ** 2 + b ** 2) / (n - 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        df = num / den
    return np.where(den > 0, df, np.inf)


def simulate_plan(components: pd.DataFrame, *, half_width: float | None = None, quantity: str = "mean",
                  delta: float | None = None, power: float = 0.8, examples: str = "fixed",
                  example_scales: Sequence[float] = (1.0,), max_seeds: int = 30, min_seeds: int = 2,
                  level: float = 0.95, alpha: float = 0.05, n_sims: int = 2000, pilot_level: float = 0.8,
                  seed_shape: str = "normal", example_correlation: float = 0.0, seed: int = 0,
                  progress: bool = False) -> SeedPlan:
    """Simulate studies from fitted variance components: CI half-width or power as a function of seeds.

    Give either ``half_width`` (plan for a CI half-width) or ``delta`` (plan for the power to detect a difference).

    Parameters
    ----------
    components : pandas.DataFrame
        Output of :func:`variance_components` (or the same columns built by hand: ``seed_var, example_var,
        interaction_var, net_seed_var, pilot_seeds, n_examples``, ``scores`` for ``seed_shape="pilot"``).
    half_width : float, optional
        Target half-width of the ``level`` confidence interval, in MCC units.
    quantity : {"mean", "sigma"}
        With ``half_width``: the interval of the mean over seeds, or of the seed standard deviation σ
        (chi-square interval; only with ``examples="fixed"``).
    delta : float, optional
        Difference of mean MCC between two settings to detect (two-sided test at ``alpha``).
    power : float
        Target power with ``delta``.
    examples : {"fixed", "resampled"}
        Whether the study treats its diagnostic set as the population (``fixed``) or as a sample of examples
        (``resampled``; see the module docstring).
    example_scales : sequence of float
        Study sizes as multiples of the pilot's examples (1: the same set size).
    max_seeds, min_seeds : int
        Range of seeds simulated (``min_seeds >= 2``).
    level : float
        Confidence level of the interval.
    alpha : float
        Significance level of the test.
    n_sims : int
        Simulated studies per point of the curve.
    pilot_level : float
        Confidence level of the pilot's seed-variance limits (the ``*_sigma_low/high`` and optimistic /
        conservative columns).
    seed_shape : {"normal", "pilot"}
        Distribution of the simulated seed effects.
    example_correlation : float
        Correlation of the two settings' example effects (power with ``examples="resampled"`` only).
    seed : int
        Seed of the simulation.
    progress : bool
        Show a progress bar (on stderr) over the numbers of seeds simulated.

    Returns
    -------
    SeedPlan
        The curve, the seeds needed, the components and the target.

    Raises
    ------
    ValueError
        Neither or both targets, or a parameter out of range.
    """
    if (half_width is None) == (delta is None):
        raise ValueError("give either half_width (a CI target) or delta (a power target), not both or neither")
    _check_choice("quantity", quantity, ("mean", "sigma"))
    _check_choice("examples", examples, EXAMPLES)
    _check_choice("seed_shape", seed_shape, SEED_SHAPES)
    if half_width is not None and not half_width > 0:
        raise ValueError(f"half_width must be > 0, found {half_width}")
    if delta is not None and (delta == 0 or not np.isfinite(delta)):
        raise ValueError(f"delta must be a non-zero number, found {delta}")
    if delta is not None and quantity != "mean":
        raise ValueError("a power target is for a difference of means; quantity must be 'mean'")
    if quantity == "sigma" and examples != "fixed":
        raise ValueError("σ is the seed spread on a given set of examples: plan it with examples='fixed'")
    for name, value in (("power", power), ("level", level), ("alpha", alpha), ("pilot_level", pilot_level)):
        if not 0 < value < 1:
            raise ValueError(f"{name} must be in (0, 1), found {value}")
    if not -1 <= example_correlation <= 1:
        raise ValueError(f"example_correlation must be in [-1, 1], found {example_correlation}")
    if min_seeds < 2 or max_seeds < min_seeds:
        raise ValueError(f"expected 2 <= min_seeds <= max_seeds, found {min_seeds} and {max_seeds}")
    if n_sims < 10:
        raise ValueError(f"n_sims must be >= 10, found {n_sims}")
    scales = np.asarray(sorted({float(s) for s in example_scales}), dtype=np.float64)
    if not len(scales) or (scales <= 0).any():
        raise ValueError(f"example_scales must be positive numbers, found {list(example_scales)}")
    if components.empty:
        raise ValueError("no variance components to plan from (no setting has 2 or more pilot seeds)")

    metric = "half_width" if half_width is not None else "power"
    target = half_width if half_width is not None else power
    quantity_name = quantity if metric == "half_width" else "delta"
    comp = components.reset_index(drop=True)
    k = comp["pilot_seeds"].to_numpy(dtype=np.float64)
    v_d = comp["interaction_var"].to_numpy(dtype=np.float64)
    v_b = comp["example_var"].to_numpy(dtype=np.float64)
    low, high = _pilot_limits(comp["seed_var"].to_numpy(dtype=np.float64), k, pilot_level)
    # seed variance at the plug-in estimate and at the pilot's confidence limits: (3 variants, rows)
    net = np.stack([comp["net_seed_var"].to_numpy(dtype=np.float64), np.maximum(low - v_d, 0.0),
                    np.maximum(high - v_d, 0.0)])
    residuals = [_standardised(s) for s in comp["scores"]] if seed_shape == "pilot" else [np.zeros(1)] * len(comp)
    rng = np.random.default_rng(seed)
    q = (1 + level) / 2
    resampled = examples == "resampled"
    ex_factor = 2 * (1 - example_correlation) if metric == "power" else 1.0
    frames = []
    from tqdm.auto import tqdm

    for n in tqdm(range(min_seeds, max_seeds + 1), desc=f"simulate studies ({n_sims} per number of seeds)",
                  unit="n_seeds", leave=False, disable=not progress):
        mean_a, var_a = _seed_draws(rng, n, n_sims, seed_shape, residuals)
        if metric == "power":
            mean_b, var_b = _seed_draws(rng, n, n_sims, seed_shape, residuals)
            e = rng.standard_normal(n_sims)
        for scale in scales:
            s2 = (net + v_d / scale)[:, :, None]  # (3, rows, 1)
            known = (v_b / scale * ex_factor if resampled else np.zeros_like(v_b))[None, :, None]
            if metric == "half_width" and quantity == "mean":
                a = s2 * var_a[None] / n
                crit = _t_quantile(q, _welch_df(a, np.zeros_like(a), known, n)) if resampled else sps.t.ppf(q, n - 1)
                sims = crit * np.sqrt(a + known)
            elif metric == "half_width":
                sd = np.sqrt(s2 * var_a[None])
                spread = (np.sqrt((n - 1) / sps.chi2.ppf((1 - level) / 2, n - 1))
                          - np.sqrt((n - 1) / sps.chi2.ppf((1 + level) / 2, n - 1))) / 2
                sims = sd * spread
            else:
                a, b = s2 * var_a[None] / n, s2 * var_b[None] / n
                diff = delta + np.sqrt(s2) * (mean_b - mean_a)[None] + np.sqrt(known) * e[None, None, :]
                se = np.sqrt(a + b + known)
                crit = _t_quantile(1 - alpha / 2, _welch_df(a, b, known, n))
                with np.errstate(invalid="ignore", divide="ignore"):
                    sims = np.where(se > 0, np.abs(diff) / np.where(se > 0, se, 1.0) > crit, True).astype(float)
            value = sims.mean(axis=2)
            mc_se = sims[0].std(axis=1, ddof=1) / np.sqrt(n_sims)
            plug_in, ex = s2[0, :, 0], known[0, :, 0]
            if metric == "power":
                model_se = np.sqrt(2 * plug_in / n + ex)
            elif quantity == "mean":
                model_se = np.sqrt(plug_in / n + ex)
            else:
                model_se = np.sqrt(plug_in / (2 * (n - 1)))
            frames.append(pd.DataFrame({"_row": np.arange(len(comp)), "example_scale": scale, "n_seeds": n,
                                        "value": value[0], "mc_se": mc_se, "value_sigma_low": value[1],
                                        "value_sigma_high": value[2], "model_se": model_se}))
    curve = pd.concat(frames, ignore_index=True)
    meets = (curve["value"] <= target) if metric == "half_width" else (curve["value"] >= target)
    curve.insert(3, "metric", metric)
    curve.insert(4, "quantity", quantity_name)
    curve["meets"] = meets.to_numpy()
    id_columns = [c for c in SETTING_KEYS if c in comp.columns] + ["level", "category"]
    head = comp[id_columns + ["n_examples"]].assign(_row=np.arange(len(comp)))
    curve = head.merge(curve, on="_row")
    curve["n_examples"] = np.round(curve["n_examples"] * curve["example_scale"]).astype("int64")
    curve = curve[id_columns + ["example_scale", "n_examples", "n_seeds", "metric", "quantity", "value", "mc_se",
                                "value_sigma_low", "value_sigma_high", "model_se", "meets", "_row"]]
    needed = _needed(curve, comp, id_columns, metric, target, level, alpha, delta, resampled, ex_factor)
    curve = curve.sort_values(["_row", "example_scale", "n_seeds"], kind="stable").drop(columns="_row")
    info = {"metric": metric, "quantity": quantity_name, "target": float(target), "examples": examples,
            "level": level, "alpha": alpha, "delta": delta, "seed_shape": seed_shape,
            "example_correlation": example_correlation, "n_sims": n_sims, "pilot_level": pilot_level,
            "example_scales": scales.tolist(), "max_seeds": max_seeds}
    return SeedPlan(curve.reset_index(drop=True), needed, components, info,
                    list(components.attrs.get("skipped", [])))


def _first_meeting(values: np.ndarray, n_seeds: np.ndarray, ok) -> Any:
    hit = np.flatnonzero(ok(values))
    return int(n_seeds[hit[0]]) if len(hit) else pd.NA


def _needed(curve: pd.DataFrame, comp: pd.DataFrame, id_columns: list[str], metric: str, target: float,
            level: float, alpha: float, delta: float | None, resampled: bool, ex_factor: float) -> pd.DataFrame:
    """Smallest number of seeds meeting the target per row x scale, and the limit as seeds grow without bound."""
    ok = (lambda v: v <= target) if metric == "half_width" else (lambda v: v >= target)
    rows = []
    for (row, scale), part in curve.groupby(["_row", "example_scale"], sort=False):
        part = part.sort_values("n_seeds")
        n = part["n_seeds"].to_numpy()
        known = comp["example_var"].iat[row] / scale * ex_factor if resampled else 0.0
        if metric == "half_width":
            limit = sps.norm.ppf((1 + level) / 2) * np.sqrt(known) if part["quantity"].iat[0] == "mean" else 0.0
        elif known > 0:
            z, shift = sps.norm.ppf(1 - alpha / 2), abs(delta) / np.sqrt(known)
            limit = float(sps.norm.cdf(shift - z) + sps.norm.cdf(-shift - z))
        else:
            limit = 1.0
        rows.append({**{c: part[c].iat[0] for c in id_columns}, "example_scale": scale,
                     "n_examples": int(part["n_examples"].iat[0]), "pilot_seeds": int(comp["pilot_seeds"].iat[row]),
                     "n_seeds": _first_meeting(part["value"].to_numpy(), n, ok),
                     "n_seeds_optimistic": _first_meeting(part["value_sigma_low"].to_numpy(), n, ok),
                     "n_seeds_conservative": _first_meeting(part["value_sigma_high"].to_numpy(), n, ok),
                     "limit": float(limit), "reachable": bool(ok(np.asarray([limit]))[0])})
    out = pd.DataFrame(rows)
    for column in ("n_seeds", "n_seeds_optimistic", "n_seeds_conservative"):
        out[column] = out[column].astype("Int64")
    return out


def plan_seeds(predictions: pd.DataFrame, *, half_width: float | None = None, quantity: str = "mean",
               delta: float | None = None, power: float = 0.8, by: str = "category", examples: str = "fixed",
               example_scales: Sequence[float] = (1.0,), max_seeds: int = 30, level: float = 0.95,
               alpha: float = 0.05, n_sims: int = 2000, n_boot: int = 200, pilot_level: float = 0.8,
               seed_shape: str = "normal", example_correlation: float = 0.0, dataset=None, validate: bool = True,
               seed: int = 0, progress: bool = False) -> SeedPlan:
    """Plan the number of seeds (and examples) from pilot runs: fit the components, then simulate studies.

    Parameters
    ----------
    predictions : pandas.DataFrame
        The pilot's predictions table (at least 2 seeds per setting planned).
    half_width : float, optional
        Target CI half-width (MCC units) of the mean over seeds, or of σ with ``quantity="sigma"``.
    quantity : {"mean", "sigma"}
        What the half-width is of.
    delta : float, optional
        Difference between two settings' mean MCC to detect (instead of ``half_width``).
    power : float
        Target power with ``delta``.
    by : {"category", "coarse", "overall"}
        Units planned for.
    examples : {"fixed", "resampled"}
        The study's diagnostic set as the population, or as a sample of examples.
    example_scales : sequence of float
        Study set sizes as multiples of the pilot's.
    max_seeds : int
        Largest number of seeds simulated.
    level : float
        Confidence level.
    alpha : float
        Significance level of the test.
    n_sims : int
        Simulated studies per point.
    n_boot : int
        Bootstrap resamples of the examples when fitting.
    pilot_level : float
        Confidence level of the pilot's seed-variance limits.
    seed_shape : {"normal", "pilot"}
        Distribution of simulated seed effects.
    example_correlation : float
        Correlation of two settings' example effects (power with resampled examples).
    dataset : str, DataFrame or mapping, optional
        Where categories come from, as for :func:`~diagnostics.stats.category_scores`.
    validate : bool
        Validate the table first.
    seed : int
        Seed of the resampling and the simulation.
    progress : bool
        Show a progress bar (on stderr) over the numbers of seeds simulated.

    Returns
    -------
    SeedPlan
        See :func:`simulate_plan`; ``skipped`` lists settings with a single pilot seed.

    Raises
    ------
    ValueError
        Invalid parameters, runs on different examples, or no setting with 2 or more seeds.
    """
    components = variance_components(predictions, by=by, dataset=dataset, n_boot=n_boot, seed=seed,
                                     validate=validate)
    skipped = components.attrs.get("skipped", [])
    if components.empty:
        runs = ", ".join(f"{s['experiment']}/{s['language']}/{s['model']}/{s['dataset']}: {s['runs']}"
                         for s in skipped)
        raise ValueError(f"the planner needs at least 2 pilot seeds per setting; found {runs or 'no runs'}")
    if skipped:
        warnings.warn(f"{len(skipped)} setting(s) with a single seed left out of the plan", stacklevel=2)
    return simulate_plan(components, half_width=half_width, quantity=quantity, delta=delta, power=power,
                         examples=examples, example_scales=example_scales, max_seeds=max_seeds, level=level,
                         alpha=alpha, n_sims=n_sims, pilot_level=pilot_level, seed_shape=seed_shape,
                         example_correlation=example_correlation, seed=seed + 1, progress=progress)
