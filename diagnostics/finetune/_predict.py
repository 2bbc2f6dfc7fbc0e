"""Predictions of a fine-tuned classifier: P(entailment) per example and the predictions table of each set."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import torch

from diagnostics.schema import CLASS_LABELS

from ._batching import length_sorted_batches
from ._quality import category_summary


@torch.no_grad()
def predict_proba(model, inputs, batch_size: int, device: str, amp: torch.dtype | None) -> np.ndarray:
    """P(entailment) per example, in input order (batches sorted by length internally).

    ``model`` is switched to eval mode; ``inputs`` (encoded pairs or cached features) have ``lengths`` and
    ``batch(indices)``; ``amp`` is the autocast dtype, ``None`` for full precision. Returns the softmax probability of
    class 1 as float64, shape (len(inputs),).
    """
    model.eval()
    out = np.empty(len(inputs), dtype=np.float64)
    for batch in length_sorted_batches(inputs.lengths, batch_size):
        kwargs = {k: v.to(device) for k, v in inputs.batch(batch).items()}
        with torch.autocast(device.split(":")[0], dtype=amp or torch.float32, enabled=amp is not None):
            logits = model(**kwargs).logits.float()
        out[batch] = torch.softmax(logits, dim=-1)[:, 1].cpu().numpy()
    return out


def prediction_table(run_columns: dict[str, Any], name: str, frame: pd.DataFrame, proba: np.ndarray,
                     pretrain_seed: int | None = None) -> pd.DataFrame:
    """The predictions table of one evaluation set (see :data:`diagnostics.schema.TRAINER_COLUMNS`).

    One row per example of ``frame`` (``id`` and ``label`` columns), ``proba`` its P(entailment). ``run_columns`` are
    the constant columns identifying the run, in table order: ``experiment``, ``language``, ``model``, ``seed``;
    ``name`` fills the ``dataset`` column; ``pretrain_seed``, when given, is added as a last column.
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


def predict_sets(model, eval_frames: dict[str, pd.DataFrame], inputs: dict[str, Any], run_columns: dict[str, Any],
                 *, batch_size: int, device: str, amp: torch.dtype | None,
                 pretrain_seed: int | None = None) -> SetPredictions:
    """Predict every evaluation set except ``validation`` and summarise each per diagnostic category.

    The tables follow the order of ``eval_frames``; ``inputs`` holds the model inputs by set name (see
    :class:`diagnostics.finetune._inputs.RunInputs`); ``run_columns`` and ``pretrain_seed`` are columns of the
    tables (see :func:`prediction_table`); ``amp`` is the autocast dtype, ``None`` for full precision. The result
    holds one table per set, category summaries by set name, the number of rows predicted and the seconds taken.
    """
    started, out = time.perf_counter(), SetPredictions()
    for name, frame in eval_frames.items():
        if name == "validation":
            continue
        proba = predict_proba(model, inputs[name], batch_size, device, amp)
        out.records += len(frame)
        out.tables.append(prediction_table(run_columns, name, frame, proba, pretrain_seed))
        out.categories[name] = category_summary(frame, proba)
    out.seconds = time.perf_counter() - started
    return out
