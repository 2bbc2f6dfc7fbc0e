"""The tiny random model the tests train: a 2-layer BERT with the real XLM-R tokenizer, the same per seed."""

from __future__ import annotations

import json

import pytest

from diagnostics.models import model_fingerprint, tiny_random_model


def test_tiny_model_loads_and_classifies(tiny_model_dir):
    import torch
    import transformers
    model = transformers.AutoModelForSequenceClassification.from_pretrained(tiny_model_dir, num_labels=2).eval()
    tok = transformers.AutoTokenizer.from_pretrained(tiny_model_dir)
    assert model.config.num_hidden_layers == 2 and model.config.hidden_size == 32
    batch = tok(["Кошка спит.", "Le chat dort."], ["Животное спит.", "Un animal dort."],
                padding=True, return_tensors="pt")
    with torch.no_grad():
        logits = model(**batch).logits
    assert logits.shape == (2, 2) and torch.isfinite(logits).all()


@pytest.mark.slow
def test_tiny_model_is_deterministic_per_seed(tmp_path, tiny_model_dir):
    same = tiny_random_model(tmp_path / "same", seed=0)
    other = tiny_random_model(tmp_path / "other", seed=1)
    assert (same / "model.safetensors").read_bytes() == (tiny_model_dir / "model.safetensors").read_bytes()
    assert model_fingerprint(same) == model_fingerprint(tiny_model_dir)
    assert model_fingerprint(other) != model_fingerprint(tiny_model_dir)
    deeper = tiny_random_model(tmp_path / "deeper", seed=0, num_hidden_layers=3)
    assert json.loads((deeper / "config.json").read_text())["num_hidden_layers"] == 3
