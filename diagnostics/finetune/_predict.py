"""The predictions table of an evaluation set, and what a run's predictions of its sets cost."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from diagnostics.core.schema import CLASS_LABELS



def prediction_table(run_columns: dict[str, Any], name: str, frame: pd.DataFrame, proba: np.ndarray,
                     pretrain_seed: int | None = None) -> pd.DataFrame:
    """Build the predictions table of one evaluation set (see :data:`diagnostics.core.schema.TRAINER_COLUMNS`).

    Parameters
    ----------
    run_columns : dict
        The constant columns identifying the run, in table order: ``experiment``, ``language``, ``model``,
        ``seed``.
    name : str
        The ``dataset`` column.
    frame : pandas.DataFrame
        The set's examples (``id`` and ``label`` columns).
    proba : numpy.ndarray of float
        P(entailment) of each example; the prediction is entailment where it is at least 0.5.
    pretrain_seed : int, optional
        Added as a last column when given.

    Returns
    -------
    pandas.DataFrame
        One row per example of ``frame``.
    """
    table = pd.DataFrame({
        **run_columns, "dataset": name, "example_id": frame["id"].astype(str).to_numpy(),
        "label": frame["label"].to_numpy(dtype=object),
        "prediction": np.where(proba >= 0.5, CLASS_LABELS[1], CLASS_LABELS[0]), "probability": proba,
    })
    if pretrain_seed is not None:
        table["pretrain_seed"] = pretrain_seed
    return table


@dataclass
class SetPredictions:
    """Predictions of every evaluation set but validation, with what they cost.

    Parameters
    ----------
    tables : list of pandas.DataFrame
        One predictions table per set (see :func:`prediction_table`).
    categories : dict of str to dict
        Per set, its summary per diagnostic category (see :func:`diagnostics.finetune._quality.category_summary`).
    records : int
        Rows predicted.
    seconds : float
        Wall time of the predictions.
    """

    tables: list[pd.DataFrame] = field(default_factory=list)
    categories: dict[str, dict] = field(default_factory=dict)
    records: int = 0
    seconds: float = 0.0
