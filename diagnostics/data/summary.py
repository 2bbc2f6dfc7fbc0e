"""Human-readable summaries of a dataset (used by ``diagnostics data show`` and the notebooks)."""

from __future__ import annotations

import pandas as pd

from diagnostics.taxonomy import COARSE_OF, FINE

from .registry import load


def category_counts(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows carrying each fine category: ``coarse, category, n`` in taxonomy order (zeros included)."""
    counts = frame["features"].explode().value_counts()
    return pd.DataFrame({"coarse": [COARSE_OF[f] for f in FINE], "category": list(FINE),
                         "n": [int(counts.get(f, 0)) for f in FINE]})


def summarise(name: str, path=None) -> str:
    """Text report: rows and label balance per split, and rows per category for diagnostic sets."""
    frame = load(name, path=path)
    parts = [f"{name}: {len(frame)} rows, language {frame['language'].iloc[0]}"]
    labels = frame["label"].fillna("(unlabelled)")
    parts.append(pd.crosstab(frame["split"], labels, margins=True, margins_name="total").to_string())
    if "label3" in frame:
        parts.append(pd.crosstab(frame["split"], frame["label3"].fillna("(none)")).to_string())
    if "features" in frame:
        parts.append(category_counts(frame).to_string(index=False))
    return "\n\n".join(parts)
