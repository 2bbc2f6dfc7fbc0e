"""A small sweep config on a tiny model, written as a user would, and the key order to compare two sweeps' tables."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import yaml

#: Sort keys that put two predictions tables of the same sweep row by row in the same order.
KEYS = ["language", "seed", "dataset", "example_id"]


def write_config(folder: Path, tiny: Path, **overrides) -> Path:
    """Write ``folder/sweep.yaml``: en + ru x seeds 0, 1 on ``tiny``, 64 pairs, 2 epochs (``overrides`` win)."""
    values = dict(experiment="s", output_dir=str(folder / "runs"), models=[{"name": "tiny", "path": str(tiny)}],
                  languages=["en", "ru"], seeds=[0, 1], train_size=64, max_seq_length=40, batch_size=16, lr=1e-3,
                  max_epochs=2, warmup_ratio=0.0, num_threads=1, progress=False)
    values.update(overrides)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "sweep.yaml"
    path.write_text(yaml.safe_dump(values))
    return path


def sorted_table(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` in :data:`KEYS` order with a fresh index."""
    return frame.sort_values(KEYS).reset_index(drop=True)
