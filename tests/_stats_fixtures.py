"""Shared builders for the stats tests: synthetic predictions on the real bundled diagnostic sets."""

from __future__ import annotations

import numpy as np
import pandas as pd

from diagnostics import data

FLIP = {"entailment": "not_entailment", "not_entailment": "entailment"}


def synthetic_table(dataset: str = "axb", experiments=(("rte", 0.7),), seeds=range(4), language: str = "en",
                    seed: int = 0, model: str = "mbert") -> pd.DataFrame:
    """Predictions of several seeds: each run copies the gold label with probability ``acc`` (real ids, labels)."""
    frame = data.load(dataset)
    rng = np.random.default_rng(seed)
    parts = []
    for experiment, acc in experiments:
        for s in seeds:
            keep = rng.random(len(frame)) < acc
            pred = np.where(keep, frame["label"], frame["label"].map(FLIP))
            parts.append(pd.DataFrame({"experiment": experiment, "language": language, "model": model, "seed": s,
                                       "dataset": dataset, "example_id": frame["id"].astype(str),
                                       "label": frame["label"], "prediction": pred}))
    return pd.concat(parts, ignore_index=True)
