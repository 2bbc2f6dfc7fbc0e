"""Seed stability of per-category scores: mean and sigma over seeds, RS corr, cross-language correlation, deltas.

All functions take the output of :func:`~diagnostics.stats.category_scores` (one row per run x category).
Standard deviations over seeds use ``ddof=1`` by default (the sample standard deviation, pandas' default
``std``); the reference study does not say which it uses, so :func:`stability` and :func:`deltas` take ``ddof``
(``ddof=0`` is the population standard deviation, smaller by a factor ``sqrt((n - 1) / n)``: 0.89 with 5 seeds).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from ._table import SETTING_KEYS

CATEGORY_KEYS = ("level", "category", "coarse")
#: What :func:`rs_corr` does with a seed pair whose correlation is undefined (a constant per-category vector).
CONSTANT_POLICIES = ("drop", "zero", "error")


def _setting_keys(scores: pd.DataFrame) -> list[str]:
    return [k for k in SETTING_KEYS if k in scores.columns]


def _require(scores: pd.DataFrame, columns) -> None:
    missing = [c for c in columns if c not in scores.columns]
    if missing:
        raise ValueError(f"expected the output of category_scores with columns {list(columns)}, missing {missing}")


def stability(scores: pd.DataFrame, value: str = "mcc", ddof: int = 1) -> pd.DataFrame:
    """Per-category mean and standard deviation (the study's sigma) over seeds.

    Parameters
    ----------
    scores : pandas.DataFrame
        Output of :func:`~diagnostics.stats.category_scores`.
    value : str
        Column to aggregate (``mcc`` or ``accuracy``).
    ddof : int
        Delta degrees of freedom of ``std``: the divisor is ``n_seeds - ddof``. The default 1 is the sample
        standard deviation (pandas' default); the reference study does not specify which it reports, 0 gives the
        population standard deviation.

    Returns
    -------
    pandas.DataFrame
        One row per setting x category: setting keys, ``level, category, coarse, n`` (category size; the
        largest over runs), ``n_seeds, mean, std, min, max, degenerate_share``. ``std`` is the standard
        deviation over seeds with ``ddof`` (NaN with ``n_seeds <= ddof``). In nested designs every
        (pretrain_seed, seed) run counts as one seed. ``attrs["ddof"]`` records ``ddof`` (table headers show it).

    Raises
    ------
    ValueError
        For a frame without the columns of :func:`~diagnostics.stats.category_scores` or a negative ``ddof``.
    """
    if not isinstance(ddof, (int, np.integer)) or isinstance(ddof, bool) or ddof < 0:
        raise ValueError(f"ddof must be an integer >= 0, found {ddof!r}")
    _require(scores, ["seed", value, "degenerate", *CATEGORY_KEYS])
    keys = _setting_keys(scores) + list(CATEGORY_KEYS)
    grouped = scores.groupby(keys, sort=False, dropna=False)
    out = grouped.agg(n=("n", "max"), n_seeds=(value, "size"), mean=(value, "mean"),
                      std=(value, lambda s: s.std(ddof=ddof)), min=(value, "min"), max=(value, "max"),
                      degenerate_share=("degenerate", "mean")).reset_index()
    out.attrs["ddof"] = ddof
    return out


def _pairwise_pearson(matrix: np.ndarray) -> np.ndarray:
    """Pearson correlation between the columns of ``matrix`` (NaN for constant columns)."""
    centred = matrix - matrix.mean(axis=0)
    norms = np.sqrt((centred ** 2).sum(axis=0))
    with np.errstate(invalid="ignore", divide="ignore"):
        corr = (centred.T @ centred) / np.outer(norms, norms)
    corr[:, norms == 0] = np.nan
    corr[norms == 0, :] = np.nan
    return np.clip(corr, -1.0, 1.0)


def seed_correlations(scores: pd.DataFrame, level: str = "fine", value: str = "mcc") -> pd.DataFrame:
    """The full seed x seed Pearson correlation matrix of per-category scores, in long form.

    Parameters
    ----------
    scores : pandas.DataFrame
        Output of :func:`~diagnostics.stats.category_scores`.
    level : {"fine", "coarse"}
        Which category vectors to correlate (the paper: the 33 fine features).
    value : str
        Score column.

    Returns
    -------
    pandas.DataFrame
        Setting keys, ``seed_a, seed_b, r, n_categories`` for every ordered pair (diagonal included). A seed whose
        vector is constant (e.g. MCC 0 everywhere) has undefined correlations (NaN). Categories missing for
        some seed are dropped for the whole setting.
    """
    _require(scores, ["seed", "level", "category", value])
    rows = scores[scores["level"] == level]
    seed_cols = ["pretrain_seed", "seed"] if "pretrain_seed" in rows.columns else ["seed"]
    parts = []
    for setting, group in rows.groupby(_setting_keys(rows), sort=False):
        wide = group.pivot_table(index="category", columns=seed_cols, values=value, aggfunc="first").dropna()
        corr = _pairwise_pearson(wide.to_numpy(dtype=np.float64))
        labels = ["/".join(map(str, c)) if isinstance(c, tuple) else c for c in wide.columns]
        k = len(labels)
        part = pd.DataFrame({"seed_a": np.repeat(labels, k), "seed_b": np.tile(labels, k), "r": corr.ravel(),
                             "n_categories": len(wide)})
        for i, key in enumerate(_setting_keys(rows)):
            part.insert(i, key, setting[i])
        parts.append(part)
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def rs_corr(scores: pd.DataFrame, level: str = "fine", value: str = "mcc", constant: str = "drop") -> pd.DataFrame:
    """RS corr: mean pairwise Pearson correlation between seeds' per-category score vectors.

    Parameters
    ----------
    scores : pandas.DataFrame
        Output of :func:`~diagnostics.stats.category_scores`.
    level : {"fine", "coarse"}
        Which category vectors to correlate.
    value : str
        Score column.
    constant : {"drop", "zero", "error"}
        What to do with a pair involving a seed whose vector is constant (e.g. MCC 0 in every category: a
        collapsed run), whose correlation is undefined. ``"drop"`` (default): leave the pair out of the mean
        (RS corr then describes the other seeds; ``n_dropped`` says how many pairs are missing); ``"zero"``:
        count it as 0, no linear relation (a collapsed seed pulls RS corr towards 0; a pair of two collapsed
        seeds counts 0 too); ``"error"``: raise. The study does not say what it does;
        :func:`rs_corr_variants` gives the first two side by side.

    Returns
    -------
    pandas.DataFrame
        One row per setting: setting keys, ``rs_corr`` (mean over seed pairs i < j, per ``constant``),
        ``rs_corr_std`` (their sample std), ``n_pairs`` (pairs in the mean), ``n_undefined`` (pairs involving a
        constant vector), ``n_dropped`` (of those, left out of the mean: ``n_undefined`` with ``"drop"``, else
        0), ``n_constant_seeds``, ``n_seeds``, ``n_categories``, ``constant`` (the policy). The full matrix is
        :func:`seed_correlations`.

    Raises
    ------
    ValueError
        For an unknown policy, or with ``constant="error"`` when a setting has a constant seed vector.
    """
    if constant not in CONSTANT_POLICIES:
        raise ValueError(f"constant must be one of {CONSTANT_POLICIES}, found {constant!r}")
    long = seed_correlations(scores, level, value)
    keys = _setting_keys(scores)
    parts = []
    for setting, group in long.groupby(keys, sort=False):
        labels = list(dict.fromkeys(group["seed_a"]))
        k = len(labels)
        matrix = group["r"].to_numpy().reshape(k, k)
        upper = matrix[np.triu_indices(k, 1)]
        undefined = np.isnan(upper)
        constant_seeds = [label for label, r in zip(labels, np.diag(matrix)) if np.isnan(r)]
        if constant == "error" and constant_seeds:
            raise ValueError(f"setting {dict(zip(keys, setting))}: seeds {constant_seeds} have a constant "
                             f"per-category {value} vector, so their correlations are undefined; use "
                             "constant='drop' or 'zero'")
        used = upper[~undefined] if constant == "drop" else np.where(undefined, 0.0, upper)
        parts.append({**dict(zip(keys, setting)),
                      "rs_corr": used.mean() if len(used) else np.nan,
                      "rs_corr_std": used.std(ddof=1) if len(used) > 1 else np.nan,
                      "n_pairs": len(used), "n_undefined": int(undefined.sum()),
                      "n_dropped": len(upper) - len(used), "n_constant_seeds": len(constant_seeds), "n_seeds": k,
                      "n_categories": int(group["n_categories"].iat[0]), "constant": constant})
    return pd.DataFrame(parts)


def rs_corr_variants(scores: pd.DataFrame, level: str = "fine", value: str = "mcc") -> pd.DataFrame:
    """RS corr with collapsed seeds dropped and with them counted as correlation 0, side by side.

    A collapsed run predicts one class only, so its MCC is 0 in every category; its per-category vector is
    constant (a zero vector) and Pearson's r with it is 0/0, undefined. The study does not say what it did with
    such runs. Two readings give different numbers:

    * dropped: pairs with a collapsed seed leave the mean (what ``DataFrame.corr().mean()`` or ``np.nanmean`` of
      the correlation matrix does without saying so); RS corr then describes the other seeds only;
    * counted as 0: every undefined pair, one collapsed seed or two, contributes correlation 0 ("no linear
      relation") to the mean over all seed pairs (``fillna(0)`` of the matrix). With one collapsed seed of six,
      10 of the 15 pairs are defined and this reading is 10/15 = 2/3 of the dropped one.

    Any constant vector counts as collapsed (in practice: MCC 0 everywhere).

    Parameters
    ----------
    scores : pandas.DataFrame
        Output of :func:`~diagnostics.stats.category_scores`.
    level : {"fine", "coarse"}
        Which category vectors to correlate.
    value : str
        Score column.

    Returns
    -------
    pandas.DataFrame
        One row per setting: setting keys, ``rs_corr_drop`` (collapsed seeds dropped, :func:`rs_corr` with
        ``constant="drop"``), ``rs_corr_zero`` (undefined pairs as 0, ``constant="zero"``), ``n_collapsed``
        (seeds with a constant vector), ``n_seeds``, ``n_pairs`` (all seed pairs), ``n_pairs_drop`` (pairs in
        the dropped mean), ``n_categories``.
    """
    keys = _setting_keys(scores)
    dropped = rs_corr(scores, level, value, constant="drop")
    zero = rs_corr(scores, level, value, constant="zero")
    if dropped.empty:
        return pd.DataFrame(columns=keys + ["rs_corr_drop", "rs_corr_zero", "n_collapsed", "n_seeds", "n_pairs",
                                            "n_pairs_drop", "n_categories"])
    out = dropped[keys].assign(rs_corr_drop=dropped["rs_corr"], rs_corr_zero=zero["rs_corr"].to_numpy(),
                               n_collapsed=dropped["n_constant_seeds"], n_seeds=dropped["n_seeds"],
                               n_pairs=zero["n_pairs"].to_numpy(), n_pairs_drop=dropped["n_pairs"],
                               n_categories=dropped["n_categories"])
    return out.reset_index(drop=True)


#: What the cross-language correlation is computed from (see :func:`cross_language_corr`).
CROSS_LANGUAGE_BASES = ("seed_mean", "one_run")


def _basis_label(basis: str, seed) -> str:
    if basis not in CROSS_LANGUAGE_BASES:
        raise ValueError(f"basis must be one of {CROSS_LANGUAGE_BASES}, found {basis!r}")
    return "seed mean" if basis == "seed_mean" else f"one run (seed {seed})"


def cross_language_corr(scores: pd.DataFrame, level: str = "fine", value: str = "mcc", basis: str = "seed_mean",
                        seed: int = 0) -> pd.DataFrame:
    """Pearson correlation between languages of the per-category scores, from seed means or from one run.

    Parameters
    ----------
    scores : pandas.DataFrame
        Output of :func:`~diagnostics.stats.category_scores` with several languages.
    level : {"fine", "coarse"}
    value : str
    basis : {"seed_mean", "one_run"}
        ``"seed_mean"`` (default): each language's vector is its seed-mean score per category. ``"one_run"``:
        the scores of the run with ``seed`` alone, one run per language, as the study's Fig. 1 shows (in nested
        designs, the smallest ``pretrain_seed`` with that seed).
    seed : int
        The run of ``basis="one_run"``.

    Returns
    -------
    pandas.DataFrame
        For each (experiment, model): ``language_a, language_b, r, n_categories`` over every ordered pair of
        languages, on the categories both languages have, and ``basis`` (``"seed mean"`` or
        ``"one run (seed <k>)"``). With ``"one_run"``, languages without that seed are absent.
    """
    label = _basis_label(basis, seed)
    rows = scores[scores["level"] == level]
    if basis == "one_run":
        rows = rows[rows["seed"] == seed]
        if "pretrain_seed" in rows.columns:
            first = rows.groupby(["experiment", "model", "language"])["pretrain_seed"].transform("min")
            rows = rows[rows["pretrain_seed"] == first]
    means = stability(rows, value)
    parts = []
    for (experiment, model), group in means.groupby(["experiment", "model"], sort=False):
        wide = group.pivot_table(index="category", columns="language", values="mean", aggfunc="first")
        langs = list(wide.columns)
        for la in langs:
            for lb in langs:
                both = wide[[la, lb]].dropna() if la != lb else wide[[la]].dropna()
                if la == lb:
                    r = 1.0 if both[la].std() > 0 else np.nan
                else:
                    r = _pairwise_pearson(both.to_numpy(dtype=np.float64))[0, 1] if len(both) > 1 else np.nan
                parts.append({"experiment": experiment, "model": model, "language_a": la, "language_b": lb,
                              "r": r, "n_categories": len(both), "basis": label})
    return pd.DataFrame(parts, columns=["experiment", "model", "language_a", "language_b", "r", "n_categories",
                                        "basis"])


def mean_cross_language_corr(scores: pd.DataFrame, level: str = "fine", value: str = "mcc",
                             basis: str = "seed_mean", seed: int = 0) -> pd.DataFrame:
    """Mean Pearson correlation over language pairs of the per-category scores.

    The study's summary of how alike the languages' category profiles are (about 0.3 for mBERT, from Fig. 1's
    single run per language): the mean of :func:`cross_language_corr` over the unordered pairs of distinct
    languages.

    Parameters
    ----------
    scores : pandas.DataFrame
        Output of :func:`~diagnostics.stats.category_scores` with several languages.
    level : {"fine", "coarse"}
    value : str
    basis : {"seed_mean", "one_run", "both"}
        What each language's vector is (see :func:`cross_language_corr`); ``"both"`` gives the one-run rows and
        then the seed-mean rows.
    seed : int
        The run of ``basis="one_run"`` (the study's Fig. 1: seed 0).

    Returns
    -------
    pandas.DataFrame
        One row per (experiment, model) and basis: ``mean_r`` (mean over language pairs with a defined
        correlation), ``n_pairs`` (such pairs), ``n_undefined`` (pairs with a constant vector), ``n_languages``,
        ``basis`` (``"seed mean"`` or ``"one run (seed <k>)"``).
    """
    if basis == "both":
        return pd.concat([mean_cross_language_corr(scores, level, value, b, seed) for b in ("one_run", "seed_mean")],
                         ignore_index=True)
    cross = cross_language_corr(scores, level, value, basis, seed)
    pairs = cross[cross["language_a"].astype(str) < cross["language_b"].astype(str)]
    rows = []
    for (experiment, model), group in cross.groupby(["experiment", "model"], sort=False):
        r = pairs.loc[(pairs["experiment"] == experiment) & (pairs["model"] == model), "r"]
        rows.append({"experiment": experiment, "model": model, "mean_r": r.mean() if r.notna().any() else np.nan,
                     "n_pairs": int(r.notna().sum()), "n_undefined": int(r.isna().sum()),
                     "n_languages": group["language_a"].nunique(), "basis": _basis_label(basis, seed)})
    return pd.DataFrame(rows, columns=["experiment", "model", "mean_r", "n_pairs", "n_undefined", "n_languages",
                                       "basis"])


def deltas(scores: pd.DataFrame, a: Mapping, b: Mapping, value: str = "mcc", mcc_threshold: float = 0.1,
           sigma_threshold: float = -0.05, ddof: int = 1) -> pd.DataFrame:
    """Per-category change of the seed mean and of sigma between two settings (b minus a).

    Parameters
    ----------
    scores : pandas.DataFrame
        Output of :func:`~diagnostics.stats.category_scores`.
    a, b : mapping
        Column -> value selecting the baseline and the compared setting, e.g. ``{"experiment": "rte"}`` and
        ``{"experiment": "rte+mnli"}``. Rows are matched on the remaining setting keys and the category.
    value : str
    mcc_threshold : float
        ``mcc_up`` flags ``mcc_delta > mcc_threshold`` (paper: 0.1).
    sigma_threshold : float
        ``sigma_down`` flags ``sigma_delta < sigma_threshold`` (paper: -0.05).
    ddof : int
        Delta degrees of freedom of the standard deviations, as in :func:`stability` (default 1).

    Returns
    -------
    pandas.DataFrame
        Matching keys, ``level, category, coarse, mean_a, mean_b, std_a, std_b, mcc_delta, sigma_delta,
        mcc_up, sigma_down`` (std with ``ddof``).

    Raises
    ------
    ValueError
        When the settings share no (setting, category) or select no rows.
    KeyError
        When a selection names a column the scores do not have.
    """
    stab = stability(scores, value, ddof)
    sel = [_subset(stab, a, "a"), _subset(stab, b, "b")]
    match = [k for k in _setting_keys(stab) if k not in set(a) | set(b)] + list(CATEGORY_KEYS)
    merged = sel[0].merge(sel[1], on=match, suffixes=("_a", "_b"), how="inner")
    if merged.empty:
        raise ValueError(f"settings {dict(a)} and {dict(b)} share no (setting, category) to compare on {match}")
    out = merged[match + ["mean_a", "mean_b", "std_a", "std_b"]].copy()
    out["mcc_delta"] = out["mean_b"] - out["mean_a"]
    out["sigma_delta"] = out["std_b"] - out["std_a"]
    out["mcc_up"] = out["mcc_delta"] > mcc_threshold
    out["sigma_down"] = out["sigma_delta"] < sigma_threshold
    return out


def _subset(frame: pd.DataFrame, selection: Mapping, name: str) -> pd.DataFrame:
    mask = np.ones(len(frame), dtype=bool)
    for key, val in selection.items():
        if key not in frame.columns:
            raise KeyError(f"setting {name}: column {key!r} not in scores")
        mask &= (frame[key].astype(str) == str(val)).to_numpy()
    if not mask.any():
        raise ValueError(f"setting {name} = {dict(selection)} selects no rows")
    return frame[mask].drop(columns=list(selection))


def delta_summary(delta_frame: pd.DataFrame, level: str = "fine", pooled: bool = False) -> pd.DataFrame:
    """Share of categories past the delta thresholds, per remaining setting keys (and pooled over languages).

    Parameters
    ----------
    delta_frame : pandas.DataFrame
        Output of :func:`deltas`.
    level : str
        Category level to summarise.
    pooled : bool
        Also count the (language, category) pairs of all languages together, as the study's shares are defined:
        one more row per group of the other keys, with ``language`` (and ``dataset``, which follows the
        language) set to ``"all"``, after the per-language rows. Needs a ``language`` column.

    Returns
    -------
    pandas.DataFrame
        ``n_categories, share_mcc_up, share_sigma_down, share_both`` per group of the non-category keys;
        ``n_categories`` counts (language, category) pairs in a pooled row.
    """
    rows = delta_frame[delta_frame["level"] == level]
    rows = rows.assign(_both=rows["mcc_up"] & rows["sigma_down"])
    keys = [k for k in SETTING_KEYS if k in rows.columns]
    shares = {"n_categories": ("category", "size"), "share_mcc_up": ("mcc_up", "mean"),
              "share_sigma_down": ("sigma_down", "mean"), "share_both": ("_both", "mean")}
    return _with_pooled(rows, keys, shares) if pooled else _aggregate(rows, keys, shares)


def _aggregate(rows: pd.DataFrame, keys: list[str], aggregations: Mapping) -> pd.DataFrame:
    """Named aggregations of ``rows`` per group of ``keys`` (one group of all rows when ``keys`` is empty).

    Groups keep first-appearance order; ``aggregations`` maps output column -> ``(column, function)``, as for
    ``DataFrame.groupby(...).agg``. The result has the ``keys`` and the aggregated columns.
    """
    if not keys:
        return rows.assign(_all="all").groupby("_all").agg(**aggregations).reset_index(drop=True)
    return rows.groupby(keys, sort=False).agg(**aggregations).reset_index()


def _with_pooled(rows: pd.DataFrame, keys: list[str], aggregations: Mapping) -> pd.DataFrame:
    """:func:`_aggregate` per language, then over all languages pooled (``language`` and ``dataset`` = ``"all"``).

    ``keys`` must include ``language``; ``dataset`` (which follows the language) is pooled with it. Returns the
    per-language rows, then one pooled row per group of the other keys.
    """
    if "language" not in keys:
        raise ValueError("pooling over languages needs a language column")
    out = _aggregate(rows, keys, aggregations)
    spread = [k for k in ("language", "dataset") if k in keys]
    pooled = _aggregate(rows, [k for k in keys if k not in spread], aggregations).assign(**{k: "all" for k in spread})
    return pd.concat([out, pooled[out.columns]], ignore_index=True)
