"""The per-example frozen-layer feature cache on a tiny random BERT and real RTE pairs."""

import numpy as np
import pytest
import torch

from diagnostics import data
from diagnostics.finetune._batching import encode_pairs
from diagnostics.finetune._features import FeatureCache, compute_features, example_keys
from diagnostics.finetune._modeling import load_frozen_part
from diagnostics.models import load_tokenizer, tiny_random_model


@pytest.fixture(scope="module")
def encoded(tmp_path_factory):
    model = tiny_random_model(tmp_path_factory.mktemp("tiny") / "model", seed=0, num_hidden_layers=3)
    rte = data.load("rte", split="train").head(60)
    tokenizer = load_tokenizer(model)
    return model, encode_pairs(tokenizer, rte.iloc[:40], 48), encode_pairs(tokenizer, rte.iloc[20:60], 48)


def cache(folder, model):
    FeatureCache.clear_memory()
    return FeatureCache(folder, model, top_k=1, max_seq_length=48, batch_size=8)


def test_overlapping_sets_compute_only_new_examples(tmp_path, encoded):
    model, first, second = encoded
    a, computed_a = cache(tmp_path, model).get("first", first)
    shards = sorted((tmp_path).rglob("shard-*.safetensors"))
    assert computed_a and len(shards) == 1
    b, computed_b = cache(tmp_path, model).get("second", second)  # fresh process memory: reads the shard from disk
    shards = sorted((tmp_path).rglob("shard-*.safetensors"))
    assert computed_b and len(shards) == 2
    from safetensors.torch import load_file

    assert sorted(len(load_file(str(s))["keys"]) for s in shards) == [20, 40]  # rows 40-59 only were new
    # rows 20-39 are shared: the second set reads exactly the values the first computed
    torch.testing.assert_close(b.flat[: b.offsets[20]], a.flat[a.offsets[20]:], rtol=0, atol=0)
    assert np.array_equal(b.lengths, second.lengths)
    again, computed = cache(tmp_path, model).get("second", second)
    assert not computed
    torch.testing.assert_close(again.flat, b.flat, rtol=0, atol=0)


def test_cached_features_equal_a_direct_computation(tmp_path, encoded):
    model, first, _ = encoded
    got, _ = cache(tmp_path, model).get("first", first)
    frozen, _ = load_frozen_part(model, 1)
    direct = compute_features(frozen, first, batch_size=8)
    torch.testing.assert_close(got.flat, direct.flat, rtol=0, atol=0)


def test_example_keys_follow_token_ids(encoded):
    _, first, second = encoded
    k1, k2 = example_keys(first), example_keys(second)
    assert np.array_equal(k1[20:], k2[:20]) and len(set(k1.tolist())) == len(k1)
