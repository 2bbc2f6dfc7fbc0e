"""Human-readable summaries of a dataset (used by ``diagnostics data show`` and the notebooks)."""

from __future__ import annotations

import re
from collections.abc import Mapping

import pandas as pd

from diagnostics.core.taxonomy import COARSE_OF, FINE

from ._registry import load

#: A word: a maximal run of Unicode word characters (letters, digits, underscore), Python's ``\w+``.
WORD = re.compile(r"\w+")


def category_counts(frame: pd.DataFrame) -> pd.DataFrame:
    """Count the rows carrying each fine category.

    Parameters
    ----------
    frame : pandas.DataFrame
        A diagnostic set as :func:`~diagnostics.data.load` returns it (a ``features`` column of lists).

    Returns
    -------
    pandas.DataFrame
        ``coarse, category, n``, one row per fine category in taxonomy order (zeros included).
    """
    counts = frame["features"].explode().value_counts()
    return pd.DataFrame({"coarse": [COARSE_OF[f] for f in FINE], "category": list(FINE),
                         "n": [int(counts.get(f, 0)) for f in FINE]})


def summarise(name: str, path=None) -> str:
    """Write a text report: rows and label balance per split, and rows per category for diagnostic sets.

    ``name`` is a registered dataset; a ``path`` is read in the dataset's format instead of the bundled copy. The
    report is a header line, then tables separated by blank lines.

    Parameters
    ----------
    name : str
        A registered dataset name.
    path : str or Path, optional
        A file to read in the dataset's format instead of the bundled copy.

    Returns
    -------
    str
        The report.
    """
    frame = load(name, path=path)
    parts = [f"{name}: {len(frame)} rows, language {frame['language'].iloc[0]}"]
    labels = frame["label"].fillna("(unlabelled)")
    parts.append(pd.crosstab(frame["split"], labels, margins=True, margins_name="total").to_string())
    if "label3" in frame:
        parts.append(pd.crosstab(frame["split"], frame["label3"].fillna("(none)")).to_string())
    if "features" in frame:
        parts.append(category_counts(frame).to_string(index=False))
    return "\n\n".join(parts)


def words(text: str) -> list[str]:
    """Lower-cased word tokens of a text: the maximal runs of Unicode word characters (:data:`WORD`).

    Parameters
    ----------
    text : str
        Any text.

    Returns
    -------
    list of str
        Punctuation and spaces separate words: ``"Don't stop-gap"`` gives ``["don", "t", "stop", "gap"]``.
        Letters of any script count (Cyrillic, å, ä, ö), as do digits.
    """
    return WORD.findall(text.lower())


def dataset_statistics(frames: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Size, vocabulary and mean length of NLI datasets (the study's Table 1).

    Words are the lower-cased tokens of :func:`words` (the regular expression ``\\w+`` over Unicode word
    characters, so punctuation splits words), counted over premise and hypothesis together.

    Parameters
    ----------
    frames : mapping of str to pandas.DataFrame
        Name -> a table with ``premise`` and ``hypothesis`` columns (e.g. ``{"rte train": load("rte", "train")}``);
        a missing text counts as no words.

    Returns
    -------
    pandas.DataFrame
        Indexed by name (``dataset``), in the mapping's order: ``language`` (the first value of the frame's
        ``language`` column, where it has one), ``size`` (pairs), ``vocabulary`` (distinct lower-cased words)
        and ``mean_words`` (mean over pairs of the words in premise plus hypothesis).
    """
    rows = {}
    for name, frame in frames.items():
        premises, hypotheses = (frame[c].fillna("").astype(str) for c in ("premise", "hypothesis"))
        tokens = [words(p) + words(h) for p, h in zip(premises, hypotheses)]
        language = frame["language"].iloc[0] if "language" in frame.columns and len(frame) else None
        rows[name] = {"language": language, "size": len(frame),
                      "vocabulary": len({w for pair in tokens for w in pair}),
                      "mean_words": sum(map(len, tokens)) / len(tokens) if tokens else float("nan")}
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("dataset")
