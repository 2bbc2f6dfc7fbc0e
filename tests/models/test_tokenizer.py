"""The embedded model's tokenizer: rebuilt from the E5S1 pieces and scores; a tokenizer.json checked against them."""

from __future__ import annotations

import json

import numpy as np
import pytest

from diagnostics.models._tokenizer import TokenizerMismatchError, build_from_pieces, check_matches

from _e5s1_files import PIECES, small_e5s1


def test_rebuilt_tokenizer_segments_by_the_pieces_scores_and_adds_the_specials():
    tok = build_from_pieces(small_e5s1())
    encoded = tok.encode("the\u00a0cat  sat")  # a non-breaking space and a double space read as one space
    assert encoded.tokens == ["<s>", "\u2581the", "\u2581cat", "\u2581sat", "</s>"]
    assert encoded.ids == [0, 4, 5, 6, 2]
    assert tok.encode("the", "cat").ids == [0, 4, 2, 2, 5, 2]  # pairs as XLM-R writes them
    assert tok.encode("ths").tokens[1:-1] == ["\u2581", "t", "h", "s"]  # no piece "▁ths": the likeliest split
    assert tok.decode(encoded.ids) == "the cat sat"


def test_check_matches_accepts_its_own_vocabulary_and_names_each_mismatch():
    src = small_e5s1()
    good = json.loads(build_from_pieces(src).to_str())
    check_matches(good, src)

    def changed(**model):
        return {**good, "model": {**good["model"], **model}}

    vocab = good["model"]["vocab"]
    cases = [(changed(type="BPE"), "expected a Unigram tokenizer, got 'BPE'"),
             (changed(vocab=vocab[:-1]), f"{len(PIECES) - 1} pieces in tokenizer.json, {len(PIECES)} in the E5S1"),
             (changed(vocab=[vocab[0], ["<nope>", 0.0], *vocab[2:]]), "1 pieces differ, first at id 1: '<nope>'"),
             (changed(vocab=[*vocab[:4], [vocab[4][0], -0.5], *vocab[5:]]), "piece scores differ by up to 0.5"),
             (changed(unk_id=0), "unk id 0 vs 3 in the E5S1 file")]
    for tokenizer_json, message in cases:
        with pytest.raises(TokenizerMismatchError, match=message.replace("(", r"\(")):
            check_matches(tokenizer_json, src)
    check_matches(changed(vocab=[*vocab[:4], [vocab[4][0], -1.00005], *vocab[5:]]), src)  # within atol
    assert np.isclose(vocab[4][1], src.scores[4])
