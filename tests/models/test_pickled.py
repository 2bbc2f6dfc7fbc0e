"""``diagnostics models convert``: pickled weights become safetensors through ``torch.load(weights_only=True)``;
a pickle that would run code is refused; the converted folder loads with the same outputs."""

from __future__ import annotations

import json
import pickle

import pytest
import torch
from safetensors.torch import load_file
from typer.testing import CliRunner

from diagnostics.cli import app
from diagnostics.models import PICKLED_WEIGHTS, plan_conversion


@pytest.fixture
def pickled(tmp_path):
    """A tiny BERT classifier saved as pytorch_model.bin (no safetensors)."""
    from transformers import BertConfig, BertForSequenceClassification

    torch.manual_seed(0)
    config = BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=32, max_position_embeddings=32, num_labels=2)
    model = BertForSequenceClassification(config).eval()
    folder = tmp_path / "pickled"
    model.config.save_pretrained(folder)
    torch.save(model.state_dict(), folder / "pytorch_model.bin")  # as older transformers saved by default
    assert (folder / "pytorch_model.bin").is_file() and not (folder / "model.safetensors").exists()
    return folder, model


def test_convert_in_place_says_what_it_does_and_the_model_is_the_same(pickled):
    from transformers import BertForSequenceClassification

    folder, model = pickled
    result = CliRunner().invoke(app, ["models", "convert", str(folder)])
    assert result.exit_code == 0, result.output
    assert "weights_only=True" in result.output.splitlines()[0] and "model.safetensors" in result.output
    assert (folder / "pytorch_model.bin").is_file()  # the user's file stays
    state = load_file(folder / "model.safetensors")
    assert set(state) >= {k for k in model.state_dict() if "position_ids" not in k}
    loaded = BertForSequenceClassification.from_pretrained(folder, use_safetensors=True).eval()
    ids = torch.tensor([[1, 5, 7, 2]])
    torch.testing.assert_close(loaded(ids).logits, model(ids).logits)
    again = CliRunner().invoke(app, ["models", "convert", str(folder)])
    assert again.exit_code == 2 and "--force" in again.output


def test_convert_to_another_folder_copies_the_config(pickled, tmp_path):
    folder, _ = pickled
    out = tmp_path / "converted"
    result = CliRunner().invoke(app, ["models", "convert", str(folder), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert (out / "model.safetensors").is_file() and json.loads((out / "config.json").read_text())
    assert not (out / "pytorch_model.bin").exists()


class _Payload:
    def __reduce__(self):
        return (print, ("this ran",))


def test_a_pickle_that_would_run_code_is_refused(tmp_path):
    folder = tmp_path / "hostile"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    with open(folder / "pytorch_model.bin", "wb") as handle:
        pickle.dump({"weight": _Payload()}, handle, protocol=2)
    result = CliRunner().invoke(app, ["models", "convert", str(folder)])
    assert result.exit_code == 2 and "weights_only=True" in result.output and "this ran" not in result.output
    assert not (folder / "model.safetensors").exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "config.json").write_text("{}")
    result = CliRunner().invoke(app, ["models", "convert", str(empty)])
    assert result.exit_code == 2 and "pytorch_model.bin" in result.output and result.output.count("\n") == 1


def test_sharded_checkpoint_keeps_its_split(tmp_path):
    folder = tmp_path / "sharded"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    torch.save({"a": torch.ones(2)}, folder / "pytorch_model-00001-of-00002.bin")
    torch.save({"b": torch.zeros(3)}, folder / "pytorch_model-00002-of-00002.bin")
    (folder / "pytorch_model.bin.index.json").write_text(json.dumps(
        {"metadata": {"total_size": 20}, "weight_map": {"a": "pytorch_model-00001-of-00002.bin",
                                                        "b": "pytorch_model-00002-of-00002.bin"}}))
    result = CliRunner().invoke(app, ["models", "convert", str(folder)])
    assert result.exit_code == 0, result.output
    index = json.loads((folder / "model.safetensors.index.json").read_text())
    assert index["weight_map"] == {"a": "model-00001-of-00002.safetensors", "b": "model-00002-of-00002.safetensors"}
    assert load_file(folder / "model-00002-of-00002.safetensors")["b"].shape == (3,)
    assert [p.name for p in plan_conversion(folder, force=True).sources] == [
        "pytorch_model-00001-of-00002.bin", "pytorch_model-00002-of-00002.bin"]
    assert PICKLED_WEIGHTS[1] == "pytorch_model.bin.index.json"

