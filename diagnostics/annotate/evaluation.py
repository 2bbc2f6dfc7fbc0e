"""Score the rules against gold diagnostic tags, and feature distributions of training sets (Table 7)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from .engine import annotate, supported_features

#: Diagnostic set per language (fr/de: no public copy; pass a file in AX-b/LiDiRus JSONL format).
DIAGNOSTIC_SETS = {"en": "axb", "ru": "lidirus", "sv": "swediagnostics"}


def diagnostic_set(lang: str, path: str | Path | None = None) -> pd.DataFrame:
    """The gold-tagged diagnostic set of a language, or a user file in AX-b / LiDiRus JSONL format."""
    from .. import data

    if path is not None:
        return data.load("diagnostic_format", path=path, language=lang)
    if lang not in DIAGNOSTIC_SETS:
        raise ValueError(f"no bundled diagnostic set for {lang!r} (bundled: "
                         f"{', '.join(f'{k}->{v}' for k, v in DIAGNOSTIC_SETS.items())}); pass path= to a file "
                         "in AX-b/LiDiRus JSONL format")
    return data.load(DIAGNOSTIC_SETS[lang])


def score(gold: pd.Series, predicted: pd.Series, features: list[str]) -> pd.DataFrame:
    """Per-feature precision, recall, F1 and support of predicted vs gold feature lists, plus a macro row.

    Parameters
    ----------
    gold, predicted : pandas.Series
        Aligned series of lists of canonical feature names.
    features : list of str
        Features to score (those the rules support).

    Returns
    -------
    pandas.DataFrame
        Columns ``feature, precision, recall, f1, support, predicted``; the last row is ``macro`` (unweighted
        mean of precision, recall and F1; total support). Undefined ratios (no predictions) count as 0.
    """
    gold_sets = [set(g) for g in gold]
    pred_sets = [set(p) for p in predicted]
    rows = []
    for feature in features:
        tp = sum(feature in g and feature in p for g, p in zip(gold_sets, pred_sets))
        n_pred = sum(feature in p for p in pred_sets)
        n_gold = sum(feature in g for g in gold_sets)
        precision = tp / n_pred if n_pred else 0.0
        recall = tp / n_gold if n_gold else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        rows.append({"feature": feature, "precision": precision, "recall": recall, "f1": f1,
                     "support": n_gold, "predicted": n_pred})
    table = pd.DataFrame(rows, columns=["feature", "precision", "recall", "f1", "support", "predicted"])
    macro = {"feature": "macro", "precision": table["precision"].mean(), "recall": table["recall"].mean(),
             "f1": table["f1"].mean(), "support": int(table["support"].sum()), "predicted": int(table["predicted"].sum())}
    return pd.concat([table, pd.DataFrame([macro])], ignore_index=True)


def evaluate(lang: str, path: str | Path | None = None, *, rules: str | Path | None = None,
             batch_size: int = 64, progress: bool = False) -> pd.DataFrame:
    """Score a language's rules against the gold tags of its diagnostic set.

    Parameters
    ----------
    lang : str
        ``en`` (AX-b), ``ru`` (LiDiRus), ``sv`` (SweDiagnostics); ``fr``/``de`` need ``path``.
    path : str or Path, optional
        A diagnostic file in AX-b / LiDiRus JSONL format (overrides the bundled set).
    rules : str or Path, optional
        A rules file to use instead of ``annotators/<lang>.yaml``.

    Returns
    -------
    pandas.DataFrame
        See :func:`score`; only features the rules support are scored.
    """
    frame = diagnostic_set(lang, path)
    annotated = annotate(frame, rules or lang, batch_size=batch_size, progress=progress)
    return score(annotated["features"], annotated["auto_features"], supported_features(rules or lang))


#: Training sets of the study's Table 7 and their languages.
DISTRIBUTION_SETS = {"rte": "en", "terra": "ru", "sick": "en"}


def feature_distribution(names=("rte", "terra", "sick"), *, split: str | None = "train", limit: int | None = None,
                         presence: bool = True, progress: bool = False) -> pd.DataFrame:
    """Share of pairs showing each feature, per dataset (the study's Table 7).

    Parameters
    ----------
    names : sequence of str
        Registered dataset names; each is annotated in its registered language.
    split : str, optional
        Split to annotate (``None`` = all splits).
    limit : int, optional
        Annotate only the first ``limit`` pairs of each dataset (quick looks, tests).
    presence : bool
        Count a feature when either sentence shows it (the study's reading); ``False`` applies the rules'
        ``pair: differ`` conditions.

    Returns
    -------
    pandas.DataFrame
        Index: features (union over the languages' rules, taxonomy order); one column per dataset with the
        share of pairs (0..1); the attribute ``attrs["pairs"]`` holds the number of pairs per dataset.
    """
    from .. import data
    from ..taxonomy import FINE

    columns, pairs = {}, {}
    for name in names:
        spec = data.get_spec(name)
        frame = data.load(name, split=split if split in spec.splits else None)
        if limit is not None:
            frame = frame.head(limit)
        annotated = annotate(frame, spec.language, presence=presence, progress=progress)
        counts = pd.Series([f for fs in annotated["auto_features"] for f in fs], dtype=object).value_counts()
        features = supported_features(spec.language)
        columns[name] = pd.Series({f: counts.get(f, 0) / max(len(frame), 1) for f in features})
        pairs[name] = len(frame)
    table = pd.DataFrame(columns)
    table = table.loc[[f for f in FINE if f in table.index]]
    table.index.name = "feature"
    table.attrs["pairs"] = pairs
    return table
