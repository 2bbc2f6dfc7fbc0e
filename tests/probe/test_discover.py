"""The models a probe command names: run stores expanded to their finished seeds, model folders, seeds read from
labels and paths."""

from __future__ import annotations

import pytest

from diagnostics.probe import resolve_models, seed_of


def test_seed_parsing_and_model_resolution(tiny_model_dir, tmp_path):
    assert seed_of("seed=3") == 3
    assert seed_of("ft", "runs/e/en/m/seed=12/checkpoint") == 12
    assert seed_of("pretrained", tiny_model_dir) is None
    assert resolve_models([str(tiny_model_dir)]) == {tiny_model_dir.name: tiny_model_dir}
    with pytest.raises(FileNotFoundError):
        resolve_models([str(tmp_path / "missing" / "folder")])


def _seed(store, seed, model_dir, done=True):
    run = store / "exp" / "en" / "tiny" / f"seed={seed}"
    (run / "checkpoint").mkdir(parents=True)
    for f in model_dir.iterdir():
        (run / "checkpoint" / f.name).write_bytes(f.read_bytes())
    if done:
        (run / "DONE").write_text("{}")
    return run


def test_a_run_store_expands_to_its_finished_seeds(tiny_model_dir, tmp_path):
    from diagnostics.probe import discover_runs

    store = tmp_path / "runs"
    ten, four = _seed(store, 10, tiny_model_dir), _seed(store, 4, tiny_model_dir)
    _seed(store, 7, tiny_model_dir, done=False)
    assert discover_runs(store) == {"seed=4": four / "checkpoint", "seed=10": ten / "checkpoint"}  # by seed
    assert list(discover_runs(store, require_done=False)) == ["seed=4", "seed=7", "seed=10"]
    assert resolve_models([str(store), str(tiny_model_dir)]) == {"seed=4": four / "checkpoint",
                                                                 "seed=10": ten / "checkpoint",
                                                                 tiny_model_dir.name: tiny_model_dir}
    assert discover_runs(tmp_path / "empty") == {}
