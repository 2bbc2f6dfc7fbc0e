"""Judging a language's rules without gold tags: agreement with the English rules on parallel pairs.

A diagnostic set and its translation (AX-b and LiDiRus; a user's translation of AX-b; XNLI-style parallel files)
hold the same pairs in two languages, aligned by id. Where one language's rules are trusted, the share of the new
language's detections that the reference rules also make on the aligned pair estimates the new rules' precision,
and the share of the reference detections they recover their recall, with no gold tags in the new language. Where
gold tags exist in both (AX-b / LiDiRus), the table also gives the new rules' real precision, so one can see how far
agreement tracks it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._engine import annotate, supported_features
from ._evaluation import score

#: Columns of :func:`agreement`, in order.
AGREEMENT_COLUMNS = ("feature", "n_target", "n_reference", "n_both", "agreement_precision", "agreement_recall",
                     "agreement_f1", "kappa", "gold_precision", "gold_recall", "gold_f1")


def _kappa(a: np.ndarray, b: np.ndarray) -> float:
    """Cohen's kappa of two boolean vectors (NaN when both raters are constant and agree on it)."""
    observed = float(np.mean(a == b))
    pa, pb = float(np.mean(a)), float(np.mean(b))
    expected = pa * pb + (1 - pa) * (1 - pb)
    return float("nan") if expected == 1 else (observed - expected) / (1 - expected)


def align(target: pd.DataFrame, reference: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The pairs of ``target`` and ``reference`` with the same ``id``, in the same order.

    Raises
    ------
    ValueError
        When no id is shared (the two files are not translations of one set).
    """
    ids = pd.Index(target["id"].astype(str)).intersection(pd.Index(reference["id"].astype(str)), sort=False)
    if ids.empty:
        raise ValueError("the two sets share no pair id: agreement needs a set and its translation with the same ids")
    pick = lambda frame: frame.assign(id=frame["id"].astype(str)).drop_duplicates("id").set_index("id").loc[ids]
    return pick(target).reset_index(), pick(reference).reset_index()


def agreement(target: pd.DataFrame, reference: pd.DataFrame, lang: str, reference_lang: str = "en", *,
              rules=None, reference_rules=None, presence: bool = False, progress: bool = False) -> pd.DataFrame:
    """Per feature, how the ``lang`` rules' detections agree with the reference rules' on the aligned pairs.

    Parameters
    ----------
    target, reference : pandas.DataFrame
        A diagnostic set and its translation (``id``, ``premise``, ``hypothesis``; ``features`` when gold tags
        exist), aligned by ``id`` (:func:`align`).
    lang, reference_lang : str
        Their languages (rules files ``annotators/<lang>.yaml`` unless ``rules`` / ``reference_rules``).
    rules, reference_rules : str or Path, optional
        Rules files to use instead.
    presence : bool
        Compare the one-sentence reading (either sentence shows the feature) instead of the pair reading.
    progress : bool
        Show annotation progress bars.

    Returns
    -------
    pandas.DataFrame
        :data:`AGREEMENT_COLUMNS`, one row per feature both rules files detect, then a ``macro`` row (means).
        ``agreement_precision`` = ``n_both / n_target`` (the new rules' detections the reference rules confirm),
        ``agreement_recall`` = ``n_both / n_reference``, ``kappa`` = Cohen's kappa over all aligned pairs;
        ``gold_*`` score the target's detections against its own gold tags (NaN without them).

    Raises
    ------
    ValueError
        No shared pair id, or no feature both rules files detect.
    """
    target, reference = align(target, reference)
    features = [f for f in supported_features(rules or lang) if f in set(supported_features(reference_rules
                                                                                              or reference_lang))]
    if not features:
        raise ValueError(f"the rules of {lang!r} and {reference_lang!r} detect no feature in common")
    found = annotate(target, rules or lang, progress=progress, presence=presence)["auto_features"].map(set)
    expected = annotate(reference, reference_rules or reference_lang, progress=progress,
                        presence=presence)["auto_features"].map(set)
    has_gold = "features" in target and target["features"].map(len).sum() > 0
    gold = (score(target["features"], found.map(list), features).set_index("feature") if has_gold else None)
    rows = []
    for feature in features:
        a = found.map(lambda s: feature in s).to_numpy()
        b = expected.map(lambda s: feature in s).to_numpy()
        both, n_a, n_b = int((a & b).sum()), int(a.sum()), int(b.sum())
        precision = both / n_a if n_a else float("nan")
        recall = both / n_b if n_b else float("nan")
        f1 = 2 * both / (n_a + n_b) if n_a + n_b else float("nan")
        row = {"feature": feature, "n_target": n_a, "n_reference": n_b, "n_both": both,
               "agreement_precision": precision, "agreement_recall": recall, "agreement_f1": f1,
               "kappa": _kappa(a, b)}
        for key in ("precision", "recall", "f1"):
            row[f"gold_{key}"] = float(gold.loc[feature, key]) if gold is not None and n_a else float("nan")
        rows.append(row)
    table = pd.DataFrame(rows, columns=list(AGREEMENT_COLUMNS))
    macro = {"feature": "macro", **{c: int(table[c].sum()) for c in ("n_target", "n_reference", "n_both")},
             **{c: float(table[c].mean()) for c in AGREEMENT_COLUMNS[4:]}}
    return pd.concat([table, pd.DataFrame([macro])], ignore_index=True)


def tracking(table: pd.DataFrame) -> tuple[float, int]:
    """Measure how far agreement tracks real precision, over the features whose gold precision is known.

    Parameters
    ----------
    table : pandas.DataFrame
        The per-feature table of :func:`agreement` (its ``macro`` row is left out).

    Returns
    -------
    tuple of (float, int)
        Spearman's rho between ``agreement_precision`` and ``gold_precision`` over the features with both, and
        their number; rho is NaN when they are fewer than three.
    """
    rows = table[table["feature"] != "macro"].dropna(subset=["agreement_precision", "gold_precision"])
    if len(rows) < 3:
        return float("nan"), len(rows)
    from scipy.stats import spearmanr

    return float(spearmanr(rows["agreement_precision"], rows["gold_precision"]).statistic), len(rows)
