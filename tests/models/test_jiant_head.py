"""jiant v1's pair classifier (``classifier_head: jiant``) on a tiny random BERT.

The expected structure is read off jiant v1's source (``models.py::build_pair_sentence_module`` with a BERT input
module under fine-tuning: ``SingleClassifier(Pooler(project=False, pool_type="first"), Classifier("log_reg"))``;
``simple_modules.py``): below the task module ``<task>_mdl`` jiant has exactly two parameters,
``classifier.classifier.weight`` (n_classes x hidden) and ``classifier.classifier.bias``, and the pooler has none.
"""

from __future__ import annotations

import pytest
import torch

from diagnostics.models import (JiantPairClassifier, is_jiant_checkpoint, load_jiant_checkpoint, tiny_random_model)

HIDDEN = 32
#: jiant v1's parameters of an RTE-style task module on a BERT encoder of this hidden size (task prefix removed).
JIANT_HEAD = {"classifier.classifier.weight": (2, HIDDEN), "classifier.classifier.bias": (2,)}


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return tiny_random_model(tmp_path_factory.mktemp("tiny") / "model", seed=0, hidden_size=HIDDEN,
                             num_hidden_layers=2)


def _classifier(tiny, seed=0, dropout=0.1):
    from diagnostics.finetune._modeling import load_classifier

    return load_classifier(tiny, seed=seed, dropout=dropout, head="jiant")


def _batch():
    return {"input_ids": torch.tensor([[0, 17, 23, 2, 2, 40, 2], [0, 9, 2, 2, 11, 2, 1]]),
            "attention_mask": torch.tensor([[1, 1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1, 0]])}


def test_head_parameters_are_jiants_and_no_pooler_is_used(tiny):
    from safetensors.torch import load_file

    model = _classifier(tiny)
    assert isinstance(model, JiantPairClassifier)
    head = {name: tuple(p.shape) for name, p in model.named_parameters() if not name.startswith("encoder.")}
    assert head == JIANT_HEAD
    assert not [name for name, _ in model.named_parameters() if "pooler" in name]
    # every encoder weight is the pretrained one (nothing initialised at random below the head)
    pretrained = load_file(str(tiny / "model.safetensors"))
    encoder = model.encoder.state_dict()
    for name, tensor in encoder.items():
        stored = pretrained.get(name, pretrained.get(f"bert.{name}"))
        assert stored is not None, name
        assert torch.equal(stored, tensor), name


def test_logits_are_one_linear_layer_on_the_first_tokens_top_state(tiny):
    model = _classifier(tiny).eval()
    batch = _batch()
    with torch.no_grad():
        states = model.encoder(**batch).last_hidden_state
        expected = states[:, 0] @ model.classifier.classifier.weight.T + model.classifier.classifier.bias
        assert torch.allclose(model(**batch).logits, expected, atol=1e-6)


def test_head_is_torchs_linear_initialisation_from_the_seed(tiny):
    a, b, c = _classifier(tiny, seed=3), _classifier(tiny, seed=3), _classifier(tiny, seed=4)
    weight = a.classifier.classifier.weight
    assert torch.equal(weight, b.classifier.classifier.weight)
    assert not torch.equal(weight, c.classifier.classifier.weight)
    bound = 1 / HIDDEN ** 0.5  # nn.Linear's default: U(-1/sqrt(fan_in), 1/sqrt(fan_in)), not transformers' N(0, 0.02)
    assert weight.abs().max() <= bound and weight.std() > 0.05


def test_dropout_is_on_in_training_and_off_in_eval(tiny):
    model = _classifier(tiny, dropout=0.5)
    batch = _batch()
    torch.manual_seed(0)
    train_logits = model.train()(**batch).logits
    eval_logits = model.eval()(**batch).logits
    assert not torch.allclose(train_logits, eval_logits)
    assert torch.equal(eval_logits, model(**batch).logits)


def test_checkpoint_round_trip(tiny, tmp_path):
    from transformers import AutoTokenizer

    from diagnostics.finetune._modeling import save_checkpoint

    model = _classifier(tiny).eval()
    with torch.no_grad():
        model.classifier.classifier.weight.add_(0.5)  # a "trained" head, unlike any fresh one
    save_checkpoint(model, tiny, tmp_path / "checkpoint", AutoTokenizer.from_pretrained(str(tiny)))
    assert is_jiant_checkpoint(tmp_path / "checkpoint") and not is_jiant_checkpoint(tiny)
    loaded = load_jiant_checkpoint(tmp_path / "checkpoint")
    with torch.no_grad():
        assert torch.allclose(loaded(**_batch()).logits, model(**_batch()).logits, atol=1e-6)
