"""Skipping padded positions in the token-wise parts of the encoder changes no real token's value."""

import copy

import pytest
import torch

from diagnostics.finetune._modeling import load_classifier
from diagnostics.finetune._unpadding import enable_unpadding
from diagnostics.models import tiny_random_model


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return tiny_random_model(tmp_path_factory.mktemp("tiny") / "model", seed=0, num_hidden_layers=3)


def padded_batch(lengths, width, seed=0):
    generator = torch.Generator().manual_seed(seed)
    mask = (torch.arange(width)[None] < torch.tensor(lengths)[:, None]).long()
    ids = torch.randint(5, 5000, (len(lengths), width), generator=generator) * mask
    return ids, mask


def test_logits_and_gradients_equal_the_plain_model(tiny):
    plain = load_classifier(tiny, seed=0, dropout=0.1).eval()
    unpadded = copy.deepcopy(plain)
    assert enable_unpadding(unpadded) and not enable_unpadding(unpadded)  # a second call installs nothing
    assert list(unpadded.state_dict()) == list(plain.state_dict())  # hooks only: names and checkpoints unchanged
    ids, mask = padded_batch([40, 7, 23, 40, 1], 40)
    rows = []
    layers = unpadded.base_model.encoder.layer
    layers[0].intermediate.dense.register_forward_hook(lambda m, args, out: rows.append(args[0].shape[0]))
    for model in (plain, unpadded):
        model.zero_grad()
        model(input_ids=ids, attention_mask=mask).logits.sum().backward()
    with torch.no_grad():
        expected = plain(input_ids=ids, attention_mask=mask).logits
        got = unpadded(input_ids=ids, attention_mask=mask).logits
    torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-6)
    assert rows == [int(mask.sum())] * 2  # the feed-forward ran on the 111 real tokens, not on 5 x 40 positions
    assert expected.std() > 0  # not a comparison between constants
    grads = [(a.grad, b.grad) for a, b in zip(plain.parameters(), unpadded.parameters()) if a.grad is not None]
    assert len(grads) > 10
    for a, b in grads:
        torch.testing.assert_close(b, a, rtol=1e-4, atol=1e-6)


def test_little_or_no_padding_and_no_mask_run_the_plain_path(tiny):
    plain = load_classifier(tiny, seed=0, dropout=0.0).eval()
    unpadded = copy.deepcopy(plain)
    enable_unpadding(unpadded, min_padding=0.1)
    rows = []
    unpadded.base_model.encoder.layer[0].intermediate.dense.register_forward_hook(
        lambda m, args, out: rows.append(args[0].shape[:-1].numel()))
    with torch.no_grad():
        for lengths, width in (([12, 12], 12), ([12, 11], 12), ([12, 6], 12)):  # 0 %, 4 %, 25 % padding
            ids, mask = padded_batch(lengths, width)
            torch.testing.assert_close(unpadded(input_ids=ids, attention_mask=mask).logits,
                                       plain(input_ids=ids, attention_mask=mask).logits)
        torch.testing.assert_close(unpadded(input_ids=ids).logits, plain(input_ids=ids).logits)
    assert rows == [24, 24, 18, 24]  # only the batch with >= 10 % padding skipped it


def test_models_without_bert_layers_are_left_alone():
    assert enable_unpadding(torch.nn.Linear(3, 2)) is False
