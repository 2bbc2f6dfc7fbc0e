"""A small finished run store on a tiny random BERT (for the tests of the store and of its integrity checks), built
once per test process, a copy of it to damage, and the damages: a truncated file, a JSON file with one key
changed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Callable


def build_tiny_store(root: Path, model_dir: Path) -> Path:
    """A real sweep in ``root``: ``base`` en + ru x seeds 0, 1 of model ``tiny``, checkpoints kept; one more run
    (en, seed 7) that failed."""
    from diagnostics.finetune import SweepConfig, run_dir, run_sweep

    cfg = SweepConfig(output_dir=str(root), experiment="base", languages=["en", "ru"], seeds=[0, 1],
                      models=[{"name": "tiny", "path": str(model_dir)}], train_size=32, max_seq_length=32,
                      batch_size=16, max_epochs=1, max_steps=1, eval_batch_size=256, warmup_ratio=0.0,
                      num_threads=1, progress=False, save_checkpoint=True)
    assert run_sweep(cfg)["state"].tolist() == ["done"] * 4
    failed = run_dir(root, "base", "en", "tiny", 7)
    failed.mkdir(parents=True)
    (failed / "FAILED").write_text("Traceback ...")
    return root


_BUILT: dict[str, Path] = {}


def shared_tiny_store(tmp_path_factory, model_dir: Path) -> Path:
    """:func:`build_tiny_store` once per test process and model: for modules that only read the store or damage
    copies of it (:func:`copy_store`)."""
    key = str(model_dir)
    if key not in _BUILT or not _BUILT[key].is_dir():
        _BUILT[key] = build_tiny_store(tmp_path_factory.mktemp("store") / "runs", model_dir)
    return _BUILT[key]


def copy_store(store: Path, tmp_path: Path) -> Path:
    """A copy of ``store`` as ``tmp_path / "runs"``, to damage."""
    return Path(shutil.copytree(store, tmp_path / "runs"))


def truncate_half(path: Path) -> None:
    """Cut ``path`` to its first half (a write that stopped midway)."""
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def edit_json(key: str, value) -> Callable[[Path], None]:
    """A damage that leaves a valid JSON file with ``key`` set to ``value``."""
    def edit(path: Path) -> None:
        stored = json.loads(path.read_text())
        stored[key] = value
        path.write_text(json.dumps(stored))

    return edit
