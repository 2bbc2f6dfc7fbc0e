"""Which per-category conclusions survive another seed: the reading of each seed alone, set against the others'.

A study of one fine-tuned model reads its per-category scores as conclusions: "the model is weak on Negation" (the
category's MCC lies below the MCC of the whole set), "pairs with a conditional are harder" (the pairs that show a
feature score below the pairs that do not). With several seeds of one recipe, each seed read alone gives its own
conclusion; :func:`seed_conclusions` says, per category or feature, what the seeds conclude together and how many of
them, each on its own, would have concluded the same. It answers "would the answer survive another seed?"; whether it
survives another sample of test pairs is what the Multi-Bootstrap comparisons answer
(:func:`~diagnostics.stats.compare_settings`). Pure numpy / pandas.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._slices import FeatureSlices
from ._table import SETTING_KEYS

#: What a seed (or the seeds' mean) concludes from a difference: above ``margin``, below ``-margin``, or neither.
CONCLUSIONS = ("higher", "lower", "no clear difference")
#: What the difference of a category and of a feature is taken against (column ``reference``).
REFERENCES = {"category": "all examples of the set", "feature": "the pairs without the feature"}


def _reading(effect: np.ndarray, margin: float) -> np.ndarray:
    """+1 above ``margin``, -1 below ``-margin``, 0 in between (NaN stays NaN)."""
    return np.where(np.isnan(effect), np.nan, np.where(effect > margin, 1.0, np.where(effect < -margin, -1.0, 0.0)))


def _category_effects(scores: pd.DataFrame, level: str) -> tuple[pd.DataFrame, list[str], str]:
    """Per seed, each category's MCC minus the MCC of all the run's examples (level ``all``)."""
    missing = [c for c in ("seed", "level", "category", "n", "mcc") if c not in scores.columns]
    if missing:
        raise ValueError(f"expected the output of category_scores or a FeatureSlices, missing columns {missing}")
    keys = [k for k in (*SETTING_KEYS, "pretrain_seed") if k in scores.columns]
    whole = scores[scores["level"] == "all"][[*keys, "seed", "mcc"]].rename(columns={"mcc": "reference_mcc"})
    if whole.empty and not scores.empty:
        raise ValueError("the scores hold no level 'all' (MCC over all examples): compute them with "
                         "category_scores(..., levels=(..., 'all'))")
    rows = scores[scores["level"] == level]
    effects = rows.merge(whole, on=[*keys, "seed"], how="inner")
    effects = effects.assign(effect=effects["mcc"] - effects["reference_mcc"])
    return effects[[*keys, "category", "seed", "n", "effect"]], keys, "category"


def _feature_effects(slices: FeatureSlices) -> tuple[pd.DataFrame, list[str], str]:
    """Per seed, each feature's MCC on the pairs with it minus its MCC on the pairs without it."""
    per_seed = slices.per_seed
    if per_seed.empty:
        return pd.DataFrame(columns=["feature", "seed", "n", "effect"]), [], "feature"
    keys = [k for k in (*SETTING_KEYS, "pretrain_seed", "source") if k in per_seed.columns]
    wide = per_seed.pivot_table(index=[*keys, "feature", "seed"], columns="side", values=["mcc", "n"],
                                aggfunc="first", dropna=False).reset_index()
    effects = pd.DataFrame({**{k: wide[k] for k in (*keys, "feature", "seed")},
                            "n": wide[("n", "with")], "effect": wide[("mcc", "with")] - wide[("mcc", "without")]})
    effects.columns = [*keys, "feature", "seed", "n", "effect"]
    return effects, keys, "feature"


def seed_conclusions(results: pd.DataFrame | FeatureSlices, *, margin: float = 0.05, min_n: int = 10,
                     level: str = "fine") -> pd.DataFrame:
    """Per category (or feature): what the seeds conclude together, and how many of them alone conclude the same.

    Each seed's difference is read as a conclusion: ``higher`` when it exceeds ``margin``, ``lower`` below
    ``-margin``, else ``no clear difference``. The seeds' conclusion is the reading of their mean difference; it
    *holds in every seed* when each seed alone reads the same. ``pair_agreement`` is the chance that two different
    seeds, each read alone (two studies of one seed each), draw the same conclusion.

    Parameters
    ----------
    results : pandas.DataFrame or FeatureSlices
        The output of :func:`~diagnostics.stats.category_scores` (with level ``all``): each category's MCC is
        compared with the MCC of all the run's examples of the set; or a :class:`~diagnostics.stats.FeatureSlices`
        (:func:`~diagnostics.stats.feature_slices`, :func:`diagnostics.evaluate.slice_by_feature`): each feature's
        MCC on the pairs with it is compared with the MCC on the pairs without it.
    margin : float
        Differences within ``±margin`` read as no clear difference.
    min_n : int
        Leave out categories (features) with fewer examples (pairs with the feature) than this.
    level : str
        The level of categories to read from category scores (``fine`` or ``coarse``).

    Returns
    -------
    pandas.DataFrame
        One row per setting x category (``category`` for category scores, ``feature`` for slices, with their
        ``source``): the setting keys, ``reference`` (what the difference is taken against, :data:`REFERENCES`),
        ``n``, ``n_seeds``, ``effect`` (mean difference over seeds), ``effect_min``, ``effect_max``,
        ``conclusion`` (:data:`CONCLUSIONS`), ``seeds_agreeing`` (seeds whose own reading is the conclusion),
        ``holds`` (every seed agrees, and there are at least two), ``pair_agreement`` (share of seed pairs that
        read alike; NaN with one seed) and ``margin``. Sorted per setting: conclusions that hold first, then by the
        size of the difference.

    Raises
    ------
    ValueError
        For a frame that is not category scores, scores with rows but none of level ``all``, or a negative
        ``margin``.
    """
    if not margin >= 0:
        raise ValueError(f"margin must be >= 0, found {margin!r}")
    if isinstance(results, FeatureSlices):
        effects, keys, item = _feature_effects(results)
    else:
        effects, keys, item = _category_effects(results, level)
    columns = [*keys, item, "reference", "n", "n_seeds", "effect", "effect_min", "effect_max", "conclusion",
               "seeds_agreeing", "holds", "pair_agreement", "margin"]
    effects = effects[effects["effect"].notna()]
    rows = []
    for values, group in effects.groupby([*keys, item], sort=False, dropna=False):
        n = int(group["n"].max())
        if n < min_n:
            continue
        effect = group["effect"].to_numpy(dtype=float)
        readings = _reading(effect, margin)
        mean = float(effect.mean())
        verdict = float(_reading(np.array([mean]), margin)[0])
        k = len(effect)
        agreeing = int((readings == verdict).sum())
        same = readings[:, None] == readings[None, :]
        pairs = float((same.sum() - k) / (k * (k - 1))) if k >= 2 else np.nan
        rows.append({**dict(zip([*keys, item], values)), "reference": REFERENCES[item], "n": n, "n_seeds": k,
                     "effect": mean, "effect_min": float(effect.min()), "effect_max": float(effect.max()),
                     "conclusion": CONCLUSIONS[{1.0: 0, -1.0: 1, 0.0: 2}[verdict]], "seeds_agreeing": agreeing,
                     "holds": bool(k >= 2 and agreeing == k), "pair_agreement": pairs, "margin": float(margin)})
    out = pd.DataFrame(rows, columns=columns)
    if out.empty:
        return out
    order = out.assign(_size=-out["effect"].abs(), _holds=~out["holds"])
    order = order.sort_values([*keys, "_holds", "_size"], kind="stable")
    return order.drop(columns=["_size", "_holds"]).reset_index(drop=True)
