"""Quick learning checks of one run on a diagnostic set: per-category MCC and categories with constant predictions.

A run that has not learned predicts one class for whole categories; the demo recipe must keep those few
(at most a third of the 33 fine categories). The statistics stage (:mod:`diagnostics.stats`) does the full
analysis from the predictions table; this is the small per-run summary written to ``metrics.json``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from diagnostics.core.schema import ENTAILMENT
from diagnostics.stats import mcc as _mcc


def category_summary(frame: pd.DataFrame, proba: np.ndarray) -> dict:
    """Per fine category of a diagnostic table: size, MCC, whether predictions are constant.

    ``frame`` is loaded by :func:`diagnostics.data.load` (``label`` and ``features`` columns); ``proba`` is
    P(entailment) per row. Returns ``{"categories": n, "constant_categories": n, "constant": [names],
    "mean_category_mcc": x, "overall_mcc": x}``, an empty dict when the set has no labels or no ``features``.
    """
    if "features" not in frame or frame["label"].isna().any():
        return {}
    pred = (np.asarray(proba) >= 0.5).astype(np.int64)
    gold = (frame["label"].to_numpy() == ENTAILMENT).astype(np.int64)
    rows = pd.DataFrame({"row": np.arange(len(frame)), "feature": frame["features"].to_numpy()}).explode("feature")
    rows = rows.dropna(subset=["feature"])
    per = {}
    for name, group in rows.groupby("feature", sort=True):
        idx = group["row"].to_numpy(dtype=np.int64)
        per[name] = {"n": len(idx), "mcc": _mcc(gold[idx], pred[idx]), "constant": bool(len(set(pred[idx])) == 1)}
    constant = sorted(k for k, v in per.items() if v["constant"])
    return {"categories": len(per), "constant_categories": len(constant), "constant": constant,
            "mean_category_mcc": float(np.mean([v["mcc"] for v in per.values()])) if per else None,
            "overall_mcc": _mcc(gold, pred)}
