"""``diagnostics.evaluate._infer``: the device and autocast an evaluation runs under, the refusal of a model without
a sequence-classification head, and the logits of every pair in input order, premise first, as the head itself
gives them."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from _nli_heads import PAIRS, classifier, evaluate_pairs, write_pairs

from diagnostics.core.errors import UserInputError
from diagnostics.evaluate._infer import (autocast_dtype, class_logits, load_classifier_head, pick_device,
                                         require_classifier)


@pytest.fixture(scope="module")
def pairs_file(tmp_path_factory) -> Path:
    """Six crafted English pairs in the RTE JSONL format (``rte_en=PATH``)."""
    return write_pairs(tmp_path_factory.mktemp("data") / "pairs.jsonl")


@pytest.fixture(scope="module")
def three_way(tiny_model_dir, tmp_path_factory) -> Path:
    return classifier(tiny_model_dir, tmp_path_factory.mktemp("m") / "nli3",
                      ["contradiction", "neutral", "entailment"], seed=1)


# --- device and precision ---------------------------------------------------------------------------------------


def _machine(monkeypatch, *, cuda: bool, mps: bool) -> None:
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: cuda)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: mps)


@pytest.mark.parametrize("cuda, mps, expected", [(True, True, "cuda"), (False, True, "mps"), (False, False, "cpu")])
def test_auto_picks_cuda_then_mps_then_the_cpu(monkeypatch, cuda, mps, expected):
    _machine(monkeypatch, cuda=cuda, mps=mps)
    assert pick_device("auto") == expected


def test_a_named_device_is_kept_when_present_and_refused_when_absent_or_unknown(monkeypatch):
    _machine(monkeypatch, cuda=True, mps=False)
    assert pick_device("cpu") == "cpu" and pick_device("cuda:1") == "cuda:1"
    with pytest.raises(UserInputError, match="not available"):
        pick_device("mps")
    _machine(monkeypatch, cuda=False, mps=True)
    assert pick_device("mps") == "mps"
    with pytest.raises(UserInputError, match="no CUDA device"):
        pick_device("cuda")
    with pytest.raises(UserInputError, match="expected one of auto, cpu, cuda, mps"):
        pick_device("tpu")


def test_autocast_is_none_at_fp32_and_half_precision_otherwise():
    import torch

    assert autocast_dtype("fp32", "cpu") is None and autocast_dtype("fp32", "cuda") is None
    assert autocast_dtype("bf16", "cpu") is torch.bfloat16
    assert autocast_dtype("fp16", "cuda") is torch.float16
    with pytest.raises(UserInputError, match="needs a GPU"):
        autocast_dtype("fp16", "cpu")
    with pytest.raises(UserInputError, match="expected one of fp32, bf16, fp16"):
        autocast_dtype("fp8", "cuda")


# --- the classifier -----------------------------------------------------------------------------------------------


def test_a_bare_encoder_is_refused_and_a_classifier_loads_in_eval_mode(tiny_model_dir, three_way):
    with pytest.raises(UserInputError, match="BertModel without a sequence-classification head"):
        require_classifier(tiny_model_dir)
    model = load_classifier_head(three_way)
    assert not model.training and model.config.num_labels == 3


def test_a_bare_encoder_is_refused_before_its_labels_are_read(tiny_model_dir, pairs_file, tmp_path):
    with pytest.raises(UserInputError, match="without a sequence-classification head"):
        evaluate_pairs([tiny_model_dir], pairs_file, tmp_path / "runs")


def test_logits_come_back_in_input_order_whatever_the_batches(three_way):
    """Batches are sorted by length: the rows must still be those of the pairs as given, each as the head scores
    it alone."""
    import torch

    from diagnostics.finetune import encode_pairs
    from diagnostics.models import load_tokenizer

    model, tokenizer = load_classifier_head(three_way), load_tokenizer(three_way)
    frame = pd.DataFrame(PAIRS, columns=["premise", "hypothesis", "label"])
    logits = class_logits(model, encode_pairs(tokenizer, frame, 128), batch_size=4, device="cpu")
    assert logits.shape == (len(PAIRS), 3)
    with torch.no_grad():
        alone = [model(**tokenizer(p, h, return_tensors="pt")).logits[0].double().numpy() for p, h, _ in PAIRS]
    for ours, theirs in zip(logits, alone):
        assert ours == pytest.approx(theirs, abs=1e-5)


def test_probabilities_are_the_heads_own_on_premise_then_hypothesis(three_way, pairs_file, tmp_path):
    """A swapped pair would give other probabilities: the crafted pairs read premise first, as the tokenizer
    expects."""
    import torch
    from transformers import AutoModelForSequenceClassification

    from diagnostics.models import load_tokenizer

    table = evaluate_pairs([three_way], pairs_file, tmp_path / "runs").predictions.set_index("example_id")
    model = AutoModelForSequenceClassification.from_pretrained(str(three_way)).eval()
    tokenizer = load_tokenizer(three_way)

    def p_entailment(first, second):
        with torch.no_grad():
            logits = model(**tokenizer(first, second, return_tensors="pt")).logits
        return torch.softmax(logits.double(), -1)[0, 2].item()

    for i, (premise, hypothesis, _) in enumerate(PAIRS):
        ours = table.loc[str(i), "probability"]
        assert ours == pytest.approx(p_entailment(premise, hypothesis), abs=1e-6)
        assert abs(ours - p_entailment(hypothesis, premise)) > 1e-6
