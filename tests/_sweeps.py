"""Sweep configs written as a user would (a small sweep on a tiny model; a line-per-key file for checks that name
lines), a stand-in model folder for checks that never load weights, and the key order to compare two sweeps' tables."""

from __future__ import annotations

import json
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


#: The smallest sweep the config checks accept, as YAML texts (``MODEL``: the model folder).
LINE_CONFIG = {"experiment": "s", "models": "[{name: tiny, path: MODEL}]", "languages": "[en]", "seeds": "[0]",
               "train_size": "16", "max_seq_length": "32", "progress": "false"}


def stub_model_folder(folder: Path) -> Path:
    """A 2-layer BERT folder as the model resolver sees it (configuration + an empty weights file), for config checks
    and dry runs, which never load weights."""
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({"model_type": "bert", "num_hidden_layers": 2,
                                                    "max_position_embeddings": 512}))
    (folder / "model.safetensors").write_bytes(b"")
    return folder


def write_line_config(path: Path, model: Path, changes: dict[str, str | None]) -> dict[str, int]:
    """Write :data:`LINE_CONFIG` with ``output_dir`` beside ``path`` and ``changes`` (YAML texts; ``None`` drops a
    key) one key per line, ``MODEL`` replaced by ``model``; return the line of each key."""
    values = {**LINE_CONFIG, "output_dir": str(path.parent / "runs"), **changes}
    values = {k: v.replace("MODEL", str(model)) for k, v in values.items() if v is not None}
    path.write_text("".join(f"{k}: {v}\n" for k, v in values.items()), encoding="utf-8")
    return {k: i for i, k in enumerate(values, start=1)}


def write_keyed_config(folder: Path, model: Path, name: str = "sweep.yaml", **changes: str | None
                       ) -> tuple[Path, dict[str, int]]:
    """A YAML config ``folder / name``, one key per line (see :func:`write_line_config`); the file and the line of
    each key."""
    path = folder / name
    return path, write_line_config(path, model, changes)
