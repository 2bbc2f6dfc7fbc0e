"""Score the rules against gold diagnostic tags, and feature distributions of training sets (Table 7)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ._engine import annotate, supported_features

#: Diagnostic set per language (fr/de: no public copy; pass a file in AX-b/LiDiRus JSONL format).
DIAGNOSTIC_SETS = {"en": "axb", "ru": "lidirus", "sv": "swediagnostics"}


def diagnostic_set(lang: str, path: str | Path | None = None) -> pd.DataFrame:
    """Load the gold-tagged diagnostic set of a language, or a user file in AX-b / LiDiRus JSONL format.

    Parameters
    ----------
    lang : str
        Language code (``en``, ``ru`` and ``sv`` have bundled sets).
    path : str or Path, optional
        A user file, read as ``diagnostic_format`` in language ``lang``.

    Returns
    -------
    pandas.DataFrame
        The diagnostic set as :func:`diagnostics.data.load` returns it (gold ``features`` and ``coarse``).

    Raises
    ------
    ValueError
        Without ``path``, for a language without a bundled set.
    """
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
             batch_size: int = 64, progress: bool = False, presence: bool = False) -> pd.DataFrame:
    """Score a language's rules against the gold tags of its diagnostic set.

    Parameters
    ----------
    lang : str
        ``en`` (AX-b), ``ru`` (LiDiRus), ``sv`` (SweDiagnostics); ``fr``/``de`` need ``path``.
    path : str or Path, optional
        A diagnostic file in AX-b / LiDiRus JSONL format (overrides the bundled set).
    rules : str or Path, optional
        A rules file to use instead of ``annotators/<lang>.yaml``.
    batch_size : int
        Texts per spaCy batch.
    progress : bool
    presence : bool
        Score the one-sentence reading (a feature counts when either sentence shows it, as the probes' labels of
        the study) instead of the rules' pair reading. The gold tags mark what a pair's inference hinges on, so
        this reading's precision is low by design: it shows what the detectors find, not what the pairs test.

    Returns
    -------
    pandas.DataFrame
        See :func:`score`; only features the rules support are scored.
    """
    frame = diagnostic_set(lang, path)
    annotated = annotate(frame, rules or lang, batch_size=batch_size, progress=progress, presence=presence)
    return score(annotated["features"], annotated["auto_features"], supported_features(rules or lang))


#: Training sets of the study's Table 7 and their languages.
DISTRIBUTION_SETS = {"rte": "en", "terra": "ru", "sick": "en"}


def feature_distribution(names=("rte", "terra", "sick"), *, split: str | None = "train", limit: int | None = None,
                         presence: bool = True, progress: bool = False, frames=None) -> pd.DataFrame:
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
    progress : bool
    frames : mapping, optional
        More columns from tables already loaded: ``{column name: (DataFrame, language)}`` (e.g. the MNLI subset
        of a presence experiment).

    Returns
    -------
    pandas.DataFrame
        Index: features (union over the languages' rules, taxonomy order); one column per dataset with the
        share of pairs (0..1); the attribute ``attrs["pairs"]`` holds the number of pairs per dataset.
    """
    from .. import data
    from ..core.taxonomy import FINE

    sources = {}
    for name in names:
        spec = data.get_spec(name)
        sources[name] = (data.load(name, split=split if split in spec.splits else None), spec.language)
    sources.update(frames or {})
    columns, pairs = {}, {}
    for name, (frame, language) in sources.items():
        if limit is not None:
            frame = frame.head(limit)
        annotated = annotate(frame, language, presence=presence, progress=progress)
        counts = pd.Series([f for fs in annotated["auto_features"] for f in fs], dtype=object).value_counts()
        features = supported_features(language)
        columns[name] = pd.Series({f: counts.get(f, 0) / max(len(frame), 1) for f in features})
        pairs[name] = len(frame)
    table = pd.DataFrame(columns)
    table = table.loc[[f for f in FINE if f in table.index]]
    table.index.name = "feature"
    table.attrs["pairs"] = pairs
    return table


def _halves(frame: pd.DataFrame, split: str) -> pd.Series:
    """Boolean mask of the *fit* half: even ids (``split="id"``), or, for ``split="group"``, every other group of
    pairs that share a sentence (mirrored and re-used premises stay on one side, so nothing leaks)."""
    ids = pd.to_numeric(frame["id"], errors="coerce")
    order = ids.fillna(pd.Series(range(len(frame)), index=frame.index)).astype(int)
    if split == "id":
        return (order % 2 == 0).to_numpy()
    if split != "group":
        raise ValueError(f"split must be 'id' or 'group', found {split!r}")
    parent: dict[str, str] = {}

    def find(x):
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for p, h in zip(frame["premise"].str.strip(), frame["hypothesis"].str.strip()):
        parent[find(p)] = find(h)
    roots = [find(p) for p in frame["premise"].str.strip()]
    first: dict[str, int] = {}
    for root, i in sorted(zip(roots, order), key=lambda t: t[1]):
        first.setdefault(root, len(first))
    return pd.Series([first[r] % 2 == 0 for r in roots]).to_numpy()


def split_half(lang: str, path: str | Path | None = None, *, rules: str | Path | None = None,
               split: str = "id") -> pd.DataFrame:
    """Honest check of per-feature tuning: choose each feature's ``pair`` mode on one half, score on the other.

    Every pair is annotated under each combination mode (``either``/``differ``/``swap``); per feature the mode
    with the best F1 on the fit half (even ids) is chosen and scored on the held-out half (odd ids). The rules'
    own modes are scored on the held-out half too, and on the full set, for comparison.

    Parameters
    ----------
    lang : str
        Language code, as for :func:`evaluate`.
    path : str or Path, optional
        A diagnostic file instead of the bundled set.
    rules : str or Path, optional
        A rules file instead of ``annotators/<lang>.yaml``.
    split : str
        ``id``: fit on even ids, score on odd ids. ``group``: pairs sharing a sentence (the mirrored pair
        2k/2k+1, several hypotheses of one premise) form a group; alternate groups are fit/held out, so no
        sentence appears on both sides of the split.

    Returns
    -------
    pandas.DataFrame
        Columns ``feature, rules_mode, chosen_mode, fit_f1, heldout_f1, heldout_f1_rules, full_f1_rules``;
        the last row ``macro`` holds the unweighted means.
    """
    from ._engine import get_annotator
    from ._rules import PAIR_MODES

    frame = diagnostic_set(lang, path).reset_index(drop=True)
    annotator = get_annotator(rules or lang)
    premises = frame["premise"].fillna("").astype(str).tolist()
    hypotheses = frame["hypothesis"].fillna("").astype(str).tolist()
    unique = list(dict.fromkeys(premises + hypotheses))
    analyses = annotator.analyse_texts(unique)
    features = annotator.features
    predicted = {mode: pd.Series([list(annotator.combine(analyses[p], analyses[h], modes=dict.fromkeys(features, mode)))
                                  for p, h in zip(premises, hypotheses)]) for mode in PAIR_MODES}
    own = pd.Series([list(annotator.combine(analyses[p], analyses[h])) for p, h in zip(premises, hypotheses)])
    fit = _halves(frame, split)
    gold = frame["features"]

    def f1(pred, mask, feature):
        return float(score(gold[mask], pred[mask], [feature])["f1"].iloc[0])

    rows = []
    for feature in features:
        rule_mode = annotator.rules.features[feature].pair
        ranked = sorted(PAIR_MODES, key=lambda m: (-f1(predicted[m], fit, feature), m != rule_mode))
        chosen = ranked[0]
        rows.append({"feature": feature, "rules_mode": rule_mode, "chosen_mode": chosen,
                     "fit_f1": f1(predicted[chosen], fit, feature), "heldout_f1": f1(predicted[chosen], ~fit, feature),
                     "heldout_f1_rules": f1(own, ~fit, feature), "full_f1_rules": f1(own, fit | ~fit, feature)})
    table = pd.DataFrame(rows)
    macro = {"feature": "macro", "rules_mode": "", "chosen_mode": "",
             **{c: table[c].mean() for c in ("fit_f1", "heldout_f1", "heldout_f1_rules", "full_f1_rules")}}
    return pd.concat([table, pd.DataFrame([macro])], ignore_index=True)
