"""Predictors of saved models: the model's labels mapped to entailment / not_entailment, run folders read."""

import pytest

from diagnostics.behave._predictors import label_order, resolve_model_dir, run_coordinates

E, N = "entailment", "not_entailment"


def test_label_order():
    assert label_order({0: "LABEL_0", 1: "LABEL_1"}, 2) == [E, N]
    assert label_order({0: "not_entailment", 1: "entailment"}, 2) == [N, E]
    assert label_order({0: "contradiction", 1: "neutral", 2: "entailment"}, 3) == [N, N, E]
    with pytest.raises(ValueError, match="cannot map"):
        label_order({0: "positive", 1: "negative"}, 2)
    with pytest.raises(ValueError, match="3 unnamed"):
        label_order(None, 3)


def test_run_coordinates_from_path(tmp_path):
    path = tmp_path / "runs" / "rte_only" / "ru" / "e5-small" / "seed=4"
    assert run_coordinates(path) == {"experiment": "rte_only", "language": "ru", "model": "e5-small", "seed": 4}
    with pytest.raises(FileNotFoundError, match="no such run directory"):
        resolve_model_dir(path)
    path.mkdir(parents=True)
    with pytest.raises(FileNotFoundError, match="config.json"):
        resolve_model_dir(path)
