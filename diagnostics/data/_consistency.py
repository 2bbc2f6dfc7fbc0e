"""Cross-language consistency of aligned diagnostic sets (translations share ids 0..1103)."""

from __future__ import annotations

import pandas as pd

from ._registry import load


def compare_diagnostics(reference: str = "axb", others: tuple[str, ...] = ("axb_superglue", "lidirus", "swediagnostics")) -> pd.DataFrame:
    """List every id where an aligned diagnostic differs from the reference in label or categories.

    Parameters
    ----------
    reference : str
        Registered diagnostic set taken as the reference (English ``axb``).
    others : tuple of str
        Registered diagnostic sets aligned with it by ``id``.

    Returns
    -------
    pandas.DataFrame
        One row per difference: ``dataset, id, field, reference, other`` where ``field`` is ``label``,
        ``missing categories`` (in the reference, not in the other set) or ``extra categories``.
        Ids present in only one of the two sets are reported with field ``id``.
    """
    ref = load(reference).set_index("id")
    rows = []
    for name in others:
        other = load(name).set_index("id")
        for ident in ref.index.symmetric_difference(other.index):
            rows.append({"dataset": name, "id": ident, "field": "id",
                         "reference": ident in ref.index, "other": ident in other.index})
        common = ref.index.intersection(other.index, sort=False)
        for ident in common:
            a, b = ref.loc[ident], other.loc[ident]
            if a["label"] != b["label"]:
                rows.append({"dataset": name, "id": ident, "field": "label", "reference": a["label"], "other": b["label"]})
            missing = [f for f in a["features"] if f not in b["features"]]
            extra = [f for f in b["features"] if f not in a["features"]]
            if missing:
                rows.append({"dataset": name, "id": ident, "field": "missing categories", "reference": missing, "other": []})
            if extra:
                rows.append({"dataset": name, "id": ident, "field": "extra categories", "reference": [], "other": extra})
    return pd.DataFrame(rows, columns=["dataset", "id", "field", "reference", "other"])
