"""The models of a run in ``_modeling``: a classifier whose new head is a function of the seed while the encoder is
the checkpoint's, its top ``k`` layers alone (on cached hidden states) or its embeddings frozen, the frozen lower
part that computes those hidden states (checked against transformers' own hidden states), the AdamW parameter
groups, and the copy of the trainable tensors kept for the best check."""

import pytest
import torch
from torch import nn

from diagnostics.finetune._modeling import (encoder_layers, load_classifier, load_frozen_part, parameter_groups,
                                            trainable_state)
from diagnostics.models import PassThroughEmbeddings


@pytest.fixture(scope="module")
def encoder_dir(tmp_path_factory):
    """A 3-layer random BERT encoder without a classification head (as pretrained checkpoints come)."""
    from transformers import BertConfig, BertModel

    folder = tmp_path_factory.mktemp("encoder")
    torch.manual_seed(0)
    BertModel(BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=3, num_attention_heads=2,
                         intermediate_size=32, max_position_embeddings=32)).save_pretrained(folder)
    return folder


def _equal(a: nn.Module, b: nn.Module) -> bool:
    sa, sb = a.state_dict(), b.state_dict()
    return sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)


def test_the_head_is_a_function_of_the_seed_and_the_encoder_is_the_checkpoints(encoder_dir):
    a, b, c = (load_classifier(encoder_dir, seed=s, dropout=0.0) for s in (1, 1, 2))
    assert _equal(a.classifier, b.classifier) and not _equal(a.classifier, c.classifier)
    assert _equal(a.bert.encoder, c.bert.encoder) and _equal(a.bert.embeddings, c.bert.embeddings)
    assert a.config.id2label == {0: "not_entailment", 1: "entailment"}
    assert a.config.hidden_dropout_prob == 0.0 and load_classifier(encoder_dir, seed=1, dropout=0.3).dropout.p == 0.3


def test_top_k_keeps_the_top_layers_on_pass_through_embeddings(encoder_dir):
    full = load_classifier(encoder_dir, seed=0, dropout=0.0)
    top = load_classifier(encoder_dir, seed=0, dropout=0.0, top_k=2)
    assert len(encoder_layers(top)) == 2 and top.config.num_hidden_layers == 2 and top.top_k_of == 3
    assert _equal(encoder_layers(top)[0], encoder_layers(full)[1]) and _equal(encoder_layers(top)[1],
                                                                                encoder_layers(full)[2])
    assert isinstance(top.bert.embeddings, PassThroughEmbeddings)
    assert len(encoder_layers(load_classifier(encoder_dir, seed=0, dropout=0.0, top_k=10))) == 3


def test_frozen_embeddings_are_left_out_of_the_trainable_state(encoder_dir):
    model = load_classifier(encoder_dir, seed=0, dropout=0.0, freeze_embeddings=True)
    state = trainable_state(model)
    assert state and not any(name.startswith("bert.embeddings.") for name in state)
    assert set(state) == {n for n, p in model.named_parameters() if not n.startswith("bert.embeddings.")}
    before = state["classifier.weight"].clone()
    with torch.no_grad():
        model.classifier.weight.add_(1.0)
    assert torch.equal(state["classifier.weight"], before)  # a copy, not the live tensor


def test_the_frozen_part_computes_the_hidden_states_below_the_top_layers(encoder_dir):
    from transformers import BertModel

    frozen, kept = load_frozen_part(encoder_dir, top_k=2)
    assert kept == 1 and len(frozen.encoder.layer) == 1 and frozen.pooler is None
    assert not frozen.training and not any(p.requires_grad for p in frozen.parameters())
    ids = torch.tensor([[2, 7, 9, 11, 3, 0]])
    mask = torch.tensor([[1, 1, 1, 1, 1, 0]])
    reference = BertModel.from_pretrained(encoder_dir).eval()
    with torch.no_grad():
        expected = reference(input_ids=ids, attention_mask=mask, output_hidden_states=True).hidden_states[1]
        found = frozen(input_ids=ids, attention_mask=mask).last_hidden_state
    torch.testing.assert_close(found, expected)
    assert load_frozen_part(encoder_dir, top_k=5)[1] == 0


def test_parameter_groups_keep_decay_off_biases_and_layer_norms_and_give_the_head_its_rate(encoder_dir):
    model = load_classifier(encoder_dir, seed=0, dropout=0.0)
    names = {id(p): n for n, p in model.named_parameters()}
    groups = parameter_groups(model, 1e-5, 1e-3, 0.01)
    by_name = {names[id(p)]: (g["lr"], g["weight_decay"]) for g in groups for p in g["params"]}
    assert by_name["bert.encoder.layer.0.attention.self.query.weight"] == (1e-5, 0.01)
    assert by_name["bert.encoder.layer.0.attention.self.query.bias"] == (1e-5, 0.0)
    assert by_name["bert.embeddings.LayerNorm.weight"] == (1e-5, 0.0)
    assert by_name["bert.pooler.dense.weight"] == by_name["classifier.weight"] == (1e-3, 0.01)
    assert by_name["classifier.bias"] == (1e-3, 0.0)
    assert len(by_name) == len(names)
    every = parameter_groups(model, 1e-5, None, 0.01, decay_all=True)
    assert {(g["lr"], g["weight_decay"]) for g in every} == {(1e-5, 0.01)}
    model.bert.embeddings.requires_grad_(False)
    assert not any(names[id(p)].startswith("bert.embeddings.") for g in parameter_groups(model, 1e-5, None, 0.01)
                   for p in g["params"])


def test_a_model_without_bert_layers_is_refused_for_top_k():
    class NotBert(nn.Module):
        base_model = nn.Linear(2, 2)

    with pytest.raises(ValueError, match="NotBert is not BERT-like"):
        encoder_layers(NotBert())
