"""Truncation of sentence pairs: the joined pair (transformers' ``longest_first``) or each sentence on its own, as
jiant v1's ``tokenize_and_truncate`` does (``max_seq_len - 2`` subword tokens per sentence, then joined uncut)."""

from __future__ import annotations

import pandas as pd
import pytest

from diagnostics.finetune._batching import encode_pairs

LONG = " ".join(f"word{i}" for i in range(60))
SHORT = "a short one"


@pytest.fixture(scope="module")
def tokenizer(tiny_model_dir):
    from diagnostics.models import load_tokenizer

    return load_tokenizer(tiny_model_dir)


def _pieces(tokenizer, text):
    return tokenizer(text, add_special_tokens=False)["input_ids"]


def test_per_sentence_cuts_each_sentence_to_max_length_minus_two(tokenizer):
    frame = pd.DataFrame({"premise": [LONG, SHORT, LONG], "hypothesis": [SHORT, LONG, LONG]})
    max_length = 16
    encoded = encode_pairs(tokenizer, frame, max_length, "per_sentence")
    for row, (premise, hypothesis) in enumerate(zip(frame["premise"], frame["hypothesis"])):
        a = _pieces(tokenizer, premise)[:max_length - 2]
        b = _pieces(tokenizer, hypothesis)[:max_length - 2]
        # the pair as the tokenizer joins two (already short) sentences, special tokens included
        assert encoded.input_ids[row] == _joined(tokenizer, a, b)
    # two long sentences keep max_length - 2 tokens each: longer than max_length, as in jiant
    assert len(encoded.input_ids[2]) == 2 * (max_length - 2) + _specials(tokenizer) > max_length


def test_pair_truncation_cuts_the_joined_pair_longest_side_first(tokenizer):
    frame = pd.DataFrame({"premise": [LONG], "hypothesis": [SHORT]})
    encoded = encode_pairs(tokenizer, frame, 16, "pair")
    assert len(encoded.input_ids[0]) == 16
    short = _pieces(tokenizer, SHORT)
    assert encoded.input_ids[0][-len(short) - 1:-1] == short  # the short side is kept whole


def test_pairs_that_fit_are_the_same_under_both(tokenizer):
    frame = pd.DataFrame({"premise": ["the cat sat", SHORT], "hypothesis": ["a cat sat", "another one"]})
    assert encode_pairs(tokenizer, frame, 64, "pair").input_ids == \
        encode_pairs(tokenizer, frame, 64, "per_sentence").input_ids


def _specials(tokenizer) -> int:
    return len(tokenizer("x", "y")["input_ids"]) - len(_pieces(tokenizer, "x")) - len(_pieces(tokenizer, "y"))


def _joined(tokenizer, a, b):
    """[special before] a [specials between] b [special after], as the tokenizer frames a pair of one-piece sides."""
    x, y = _pieces(tokenizer, "x"), _pieces(tokenizer, "y")
    frame = tokenizer("x", "y")["input_ids"]
    i, j = frame.index(x[0]), frame.index(y[0])
    return frame[:i] + a + frame[i + len(x):j] + b + frame[j + len(y):]
