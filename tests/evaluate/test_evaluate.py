"""``diagnostics evaluate``: label maps of tiny random heads, premise / hypothesis order, seeds, the run store."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from _cli import invoke_cli
from _nli_heads import PAIRS, classifier as _classifier, evaluate_pairs as _evaluate, permuted as _permuted, write_pairs

from diagnostics.core.errors import UserInputError
from diagnostics.core.schema import ENTAILMENT, NOT_ENTAILMENT
from diagnostics.evaluate import evaluate_models

@pytest.fixture(scope="module")
def pairs_file(tmp_path_factory) -> Path:
    """Six crafted English pairs in the RTE JSONL format (``rte_en=PATH``)."""
    return write_pairs(tmp_path_factory.mktemp("data") / "pairs.jsonl")


@pytest.fixture(scope="module")
def three_way(tiny_model_dir, tmp_path_factory) -> Path:
    return _classifier(tiny_model_dir, tmp_path_factory.mktemp("m") / "nli3",
                       ["contradiction", "neutral", "entailment"], seed=1)


# --- models -----------------------------------------------------------------------------------------------------


def test_three_way_heads_in_every_order_and_spelling_score_alike(three_way, pairs_file, tmp_path):
    orders = {"a": ([2, 0, 1], ["ENTAILMENT", "CONTRADICTION", "NEUTRAL"]),
              "b": ([1, 2, 0], ["Neutral", "Entailment", "Contradiction"])}
    models = [three_way] + [_permuted(three_way, tmp_path / k, o, n) for k, (o, n) in orders.items()]
    result = _evaluate(models, pairs_file, tmp_path / "runs")
    table = result.predictions
    assert set(result.runs["state"]) == {"done"} and len(table) == 3 * len(PAIRS)
    probability = table.pivot(index="example_id", columns="model", values="probability")
    assert np.allclose(probability.to_numpy(), probability.iloc[:, [0]].to_numpy(), atol=1e-6)
    assert probability.iloc[:, 0].std() > 0.01  # the pairs differ
    decided = table["prediction"] == np.where(table["probability"] >= 0.5, ENTAILMENT, NOT_ENTAILMENT)
    assert decided.all()
    config = json.loads((Path(result.runs["path"][1]) / "config.json").read_text())
    assert config["evaluation"]["label_rule"] == {"0=ENTAILMENT": ENTAILMENT, "1=CONTRADICTION": NOT_ENTAILMENT,
                                                  "2=NEUTRAL": NOT_ENTAILMENT}


def test_a_two_way_head_with_generic_names_needs_a_map(tiny_model_dir, pairs_file, tmp_path):
    generic = _classifier(tiny_model_dir, tmp_path / "generic", ["LABEL_0", "LABEL_1"], seed=2)
    with pytest.raises(UserInputError, match="LABEL_0"):
        _evaluate([generic], pairs_file, tmp_path / "runs")
    forward = _evaluate([generic], pairs_file, tmp_path / "a", label_map="0=not_entailment,1=entailment")
    backward = _evaluate([generic], pairs_file, tmp_path / "b", label_map="0=entailment,1=not_entailment")
    assert np.allclose(forward.predictions["probability"], 1 - backward.predictions["probability"])


def test_checkpoints_as_seeds_form_one_setting_and_are_not_evaluated_twice(tiny_model_dir, pairs_file, tmp_path):
    from diagnostics.finetune import collect_predictions, verify_run
    from diagnostics.stats import instance_stability, validate_predictions

    names = ["entailment", "not_entailment"]
    models = [_classifier(tiny_model_dir, tmp_path / "ckpt" / f"seed{s}" / "model", names, seed=s)
              for s in (13, 14, 15)]
    first = _evaluate(models, pairs_file, tmp_path / "runs", seed_pattern=r"seed(\d+)")
    assert first.runs["seed"].tolist() == [13, 14, 15] and set(first.runs["model"]) == {"model"}
    assert all(verify_run(path) == [] for path in first.runs["path"])
    done = [(Path(p) / "DONE").stat().st_mtime_ns for p in first.runs["path"]]
    again = _evaluate(models, pairs_file, tmp_path / "runs", seed_pattern=r"seed(\d+)")
    assert set(again.runs["state"]) == {"skipped"}
    assert [(Path(p) / "DONE").stat().st_mtime_ns for p in again.runs["path"]] == done
    with pytest.raises(UserInputError, match="label_rule"):
        _evaluate(models, pairs_file, tmp_path / "runs", seed_pattern=r"seed(\d+)",
                  label_map="0=not_entailment,1=entailment")
    table = collect_predictions(tmp_path / "runs")
    assert len(table) == 3 * len(PAIRS)
    from diagnostics.data import DataRef

    checked = validate_predictions(table, datasets={"rte_en": DataRef("rte_en", "test", str(pairs_file)).load()})
    flips = instance_stability(checked, validate=False)
    assert len(flips) == len(PAIRS) and "flip_rate" in flips.columns


def test_the_command_line_scores_and_refuses_in_one_line(tiny_model_dir, three_way, pairs_file, tmp_path):
    result = invoke_cli("evaluate", three_way, "--dataset", f"rte_en={pairs_file}", "--out", tmp_path / "runs",
                        "--no-progress")
    assert result.returncode == 0, result.stderr
    assert "labels of" in result.stdout and "2=entailment -> entailment" in result.stdout
    table = pd.read_parquet(tmp_path / "runs" / "evaluated" / "predictions.parquet")
    assert len(table) == len(PAIRS)
    generic = _classifier(tiny_model_dir, tmp_path / "generic", ["LABEL_0", "LABEL_1"], seed=2)
    refused = invoke_cli("evaluate", generic, "--dataset", f"rte_en={pairs_file}", "--out", tmp_path / "runs2")
    assert refused.returncode == 2
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "0=LABEL_0, 1=LABEL_1" in lines[0]
    missing = invoke_cli("evaluate", three_way, "--dataset", "rte", "--out", tmp_path / "runs3")
    assert missing.returncode == 2 and "rte:validation" in missing.stderr


def test_a_language_without_bundled_training_data_is_stored_as_a_sound_run(three_way, pairs_file, tmp_path):
    from diagnostics.finetune import verify_run

    result = evaluate_models([str(three_way)], [f"rte_sv={pairs_file}"], out=tmp_path / "runs", progress=False)
    assert result.runs["language"].tolist() == ["sv"]
    assert verify_run(result.runs["path"][0]) == []
