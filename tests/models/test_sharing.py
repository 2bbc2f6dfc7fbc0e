"""Lower layers shared by encoders: how many hidden states two encoders compute alike, the upper part of an encoder
run on hidden states, and whether two tokenizers give the same input ids."""

from __future__ import annotations

import copy

import pytest
import torch

from diagnostics.models import same_input_ids, shared_states, upper_part

from _e5s1_files import small_e5s1


@pytest.fixture(scope="module")
def base():
    from transformers import BertConfig, BertModel

    torch.manual_seed(0)
    config = BertConfig(vocab_size=20, hidden_size=16, num_hidden_layers=3, num_attention_heads=2,
                        intermediate_size=32, max_position_embeddings=16)
    return BertModel(config).eval()


def test_shared_states_stop_at_the_first_layer_that_differs(base):
    layers = base.config.num_hidden_layers
    assert shared_states(base, copy.deepcopy(base)) == layers + 1
    top = copy.deepcopy(base)
    with torch.no_grad():
        top.encoder.layer[-1].output.dense.bias.add_(0.1)
    assert shared_states(base, top) == layers  # the embeddings and every layer below the top one
    other = copy.deepcopy(base)
    with torch.no_grad():
        other.embeddings.LayerNorm.weight.mul_(1.01)
    assert shared_states(base, other) == 0
    dropout = copy.deepcopy(base)
    dropout.config.hidden_dropout_prob = 0.3  # not architecture: the same computation in eval mode
    assert shared_states(base, dropout) == layers + 1
    wider = copy.deepcopy(base)
    wider.config.intermediate_size += 1
    assert shared_states(base, wider) == 0 and shared_states(base, torch.nn.Linear(2, 2)) == 0


def test_the_upper_part_run_on_a_lower_layers_output_equals_the_whole_model(base):
    input_ids = torch.tensor([[0, 5, 6, 7, 2], [0, 9, 2, 1, 1]])
    attention_mask = (input_ids != 1).long()
    with torch.inference_mode():
        whole = base(input_ids=input_ids, attention_mask=attention_mask, output_hidden_states=True)
        upper = upper_part(base, 2)
        out = upper(inputs_embeds=whole.hidden_states[2], attention_mask=attention_mask)
    torch.testing.assert_close(out.last_hidden_state, whole.last_hidden_state)
    assert len(upper.encoder.layer) == 1 and upper.encoder.layer[0] is base.encoder.layer[2]  # shared, not copied
    assert len(base.encoder.layer) == 3  # the model itself is left whole


def test_same_input_ids_compares_pad_ids_and_truncated_ids():
    from transformers import PreTrainedTokenizerFast

    from diagnostics.models._tokenizer import build_from_pieces

    def tokenizer(**changes):
        return PreTrainedTokenizerFast(tokenizer_object=build_from_pieces(small_e5s1(**changes)), pad_token="<pad>")

    reference = tokenizer()
    premises, hypotheses = ["the cat sat"] * 2, ["the cat", "the cat sat the cat sat"]
    assert same_input_ids(reference, reference, premises, hypotheses, max_length=6)
    other = tokenizer()  # another object, the same vocabulary
    assert other is not reference and same_input_ids(reference, other, premises, hypotheses, max_length=6)
    scores = small_e5s1().scores.copy()
    scores[4] = -40.0  # "▁the" now less likely than "▁" + "t" + "h" + "e": split into pieces
    assert not same_input_ids(reference, tokenizer(scores=scores), premises, hypotheses, max_length=6)
    assert same_input_ids(reference, tokenizer(scores=scores), ["cat"], max_length=6)  # no "the": the same ids
    other.pad_token = "<unk>"
    assert not same_input_ids(reference, other, premises, max_length=6)
