"""Synthetic predictions on the real bundled diagnostics, and how the predictions stage's tests import them back."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from diagnostics import data
from diagnostics.predictions import ImportRefusedError, import_with_report
from diagnostics.stats import validate_predictions

from _stats_fixtures import synthetic_table

#: A label map of codes, as a colleague's file writes labels.
CODES = "0=entailment,1=not_entailment"
#: Pairs of each bundled diagnostic set (AX-b, LiDiRus, SweDiagnostics).
N = 1104


def predictions_table(dataset: str, seeds=range(2), probability: bool = True, seed: int = 0) -> pd.DataFrame:
    """Two runs of synthetic predictions on the real dataset (probability consistent with the prediction)."""
    frame = synthetic_table(dataset, (("base", 0.75),), seeds=seeds, language=data.get_spec(dataset).language,
                            seed=seed, model="m")
    if probability:
        rng = np.random.default_rng(seed)
        p = rng.uniform(0.0, 0.5, len(frame))
        frame["probability"] = np.where(frame["prediction"] == "entailment", 1.0 - p, p)
        frame.loc[frame.index[:3], "probability"] = [0.0, 1.0, 0.5]  # the extremes and a tie survive the trip
        frame.loc[frame.index[:3], "prediction"] = ["not_entailment", "entailment", "not_entailment"]
    return validate_predictions(frame)


def import_options(dataset: str) -> dict:
    """The run coordinates an import of ``predictions_table(dataset)`` names."""
    return {"experiment": "base", "model": "m", "language": data.get_spec(dataset).language}


def refused_import(path, dataset, **options):
    """The result of an import that must be refused (its unmatched rows, its report)."""
    with pytest.raises(ImportRefusedError) as caught:
        import_with_report(path, dataset, **{**import_options(dataset), **options})
    return caught.value.result
