"""Hidden-state extraction: padding excluded from mean pooling, one pass = all layers, checkpoint loading."""

from __future__ import annotations

import numpy as np
import pytest

import torch

from diagnostics.probe import encode_sentences, find_model_folder, load_encoder, pair_vectors, pool

TEXTS = ["A man is playing a guitar on the stage tonight while the crowd sings along.",
         "Cats sleep.",
         "Кошка спит на диване.",
         "Le chat dort sur le canapé depuis ce matin, sans bouger."]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from diagnostics.models import tiny_random_model

    torch.set_num_threads(1)
    return tiny_random_model(tmp_path_factory.mktemp("tiny"), seed=3, num_hidden_layers=3)


@pytest.fixture(scope="module")
def loaded(tiny):
    return load_encoder(tiny)


def test_padding_is_excluded_from_mean_pooling(loaded):
    model, tokenizer = loaded
    together = encode_sentences(model, tokenizer, TEXTS, batch_size=len(TEXTS))
    lengths = [len(tokenizer(t)["input_ids"]) for t in TEXTS]
    assert len(set(lengths)) > 1  # the batch really is padded
    for i, text in enumerate(TEXTS):
        alone = encode_sentences(model, tokenizer, [text], batch_size=1)
        np.testing.assert_allclose(together[:, i], alone[:, 0], atol=2e-5, rtol=1e-4)


def test_pool_ignores_masked_positions():
    hidden = torch.tensor([[[1.0, 2.0], [3.0, 4.0], [100.0, -100.0]]])
    mask = torch.tensor([[1, 1, 0]])
    np.testing.assert_allclose(pool(hidden, mask).numpy(), [[2.0, 3.0]])
    np.testing.assert_allclose(pool(hidden, mask, "cls").numpy(), [[1.0, 2.0]])
    with pytest.raises(ValueError, match="unknown pooling"):
        pool(hidden, mask, "max")


def test_one_pass_returns_every_layer_in_input_order(loaded):
    model, tokenizer = loaded
    vectors = encode_sentences(model, tokenizer, TEXTS, batch_size=2)
    assert vectors.shape == (model.config.num_hidden_layers + 1, len(TEXTS), model.config.hidden_size)
    # layers differ from each other, and selecting layers gives the same numbers as the full pass
    assert not np.allclose(vectors[0], vectors[-1])
    picked = encode_sentences(model, tokenizer, TEXTS, batch_size=3, layers=[2, 0])
    np.testing.assert_allclose(picked, vectors[[2, 0]], atol=2e-5, rtol=1e-4)
    # input order is kept although batches are formed by length
    reversed_vectors = encode_sentences(model, tokenizer, TEXTS[::-1], batch_size=2)
    np.testing.assert_allclose(reversed_vectors[:, ::-1], vectors, atol=2e-5, rtol=1e-4)


def test_pair_vectors_concatenate_premise_then_hypothesis():
    sent = np.arange(2 * 3 * 2, dtype=np.float32).reshape(2, 3, 2)
    pairs = pair_vectors(sent, np.array([0, 2]), np.array([1, 1]))
    assert pairs.shape == (2, 2, 4)
    np.testing.assert_array_equal(pairs[1, 0], np.concatenate([sent[1, 0], sent[1, 1]]))
    np.testing.assert_array_equal(pairs[0, 1], np.concatenate([sent[0, 2], sent[0, 1]]))


def test_classification_checkpoint_in_run_folder_loads_as_encoder(tiny, loaded, tmp_path):
    from transformers import AutoModelForSequenceClassification

    run = tmp_path / "runs" / "exp" / "en" / "tiny" / "seed=1"
    clf = AutoModelForSequenceClassification.from_pretrained(tiny, num_labels=2)
    clf.save_pretrained(run / "checkpoint")
    for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        (run / "checkpoint" / name).write_bytes((tiny / name).read_bytes())
    assert find_model_folder(run) == run / "checkpoint"
    model, tokenizer = load_encoder(run)
    base, _ = loaded
    assert torch.equal(model.embeddings.word_embeddings.weight, base.embeddings.word_embeddings.weight)
    np.testing.assert_allclose(encode_sentences(model, tokenizer, TEXTS[:2]),
                               encode_sentences(base, tokenizer, TEXTS[:2]), atol=1e-5)


def test_missing_model_folder_is_a_clear_error(tmp_path):
    (tmp_path / "seed=0").mkdir()
    with pytest.raises(FileNotFoundError, match="save_checkpoint"):
        find_model_folder(tmp_path / "seed=0")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        find_model_folder(tmp_path / "nope")


def _top_layer_tuned_checkpoint(tiny, folder, *, layers_changed: int, scale: float = 1.5):
    """A classification checkpoint of ``tiny`` whose top ``layers_changed`` layers have different weights
    (what a top-k fine-tuned seed looks like), with the same tokenizer files."""
    from transformers import AutoModelForSequenceClassification

    clf = AutoModelForSequenceClassification.from_pretrained(tiny, num_labels=2)
    with torch.no_grad():
        for layer in clf.bert.encoder.layer[len(clf.bert.encoder.layer) - layers_changed:]:
            layer.output.dense.weight.mul_(scale)
    clf.save_pretrained(folder)
    for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        (folder / name).write_bytes((tiny / name).read_bytes())
    return folder


def test_shared_states_counts_identical_embeddings_and_lower_layers(tiny, loaded, tmp_path):
    from diagnostics.models import shared_states

    base, _ = loaded
    assert shared_states(base, base) == base.config.num_hidden_layers + 1
    top1 = load_encoder(_top_layer_tuned_checkpoint(tiny, tmp_path / "top1", layers_changed=1))[0]
    top2 = load_encoder(_top_layer_tuned_checkpoint(tiny, tmp_path / "top2", layers_changed=2))[0]
    assert shared_states(base, top1) == base.config.num_hidden_layers  # embeddings + layers 0, 1
    assert shared_states(base, top2) == base.config.num_hidden_layers - 1
    full = load_encoder(_top_layer_tuned_checkpoint(tiny, tmp_path / "all", layers_changed=3))[0]
    with torch.no_grad():
        full.embeddings.word_embeddings.weight[5] += 1.0
    assert shared_states(base, full) == 0


def test_shared_prefix_encoding_equals_a_full_pass_per_model(tiny, loaded, tmp_path):
    from diagnostics.models import load_tokenizer
    from diagnostics.probe._extract import encode_models

    base, tokenizer = loaded
    seeds = {f"seed={k}": load_encoder(_top_layer_tuned_checkpoint(tiny, tmp_path / f"s{k}", layers_changed=k,
                                                                    scale=1.0 + 0.3 * k))
             for k in (1, 2)}
    for model, model_tokenizer in seeds.values():
        assert model_tokenizer is tokenizer  # one tokenizer object for identical tokenizer files
    assert load_tokenizer(tiny) is tokenizer
    texts = TEXTS * 3
    shared = encode_models({"pretrained": (base, tokenizer), **seeds}, texts, batch_size=4)
    for label, (model, model_tokenizer) in [("pretrained", (base, tokenizer)), *seeds.items()]:
        alone = encode_sentences(model, model_tokenizer, texts, batch_size=4)
        np.testing.assert_allclose(shared[label], alone, atol=1e-6, rtol=1e-5)
    # the changed top layers really change the vectors: the shortcut did not copy the reference
    assert not np.allclose(shared["seed=1"][-1], shared["pretrained"][-1])
    np.testing.assert_array_equal(shared["seed=2"][:2], shared["pretrained"][:2])
