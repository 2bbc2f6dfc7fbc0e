"""Tokenizers loaded once per content and saved as their model's bytes; damaged model folders refused, naming the
file."""

from __future__ import annotations

import json
import shutil
import struct
from pathlib import Path

import pytest

TEXTS = ["The cat sat on the mat.", "Кошка спит на ковре.", "Le chat dort."]


def test_a_saved_tokenizer_copies_its_models_files_or_is_written_by_transformers(tiny_model_dir, tmp_path):
    """``save_tokenizer`` keeps the source's bytes (one cache entry for both); without a source it saves anew."""
    from diagnostics.models import load_tokenizer, save_tokenizer

    tokenizer = load_tokenizer(tiny_model_dir)
    copied, written = tmp_path / "copied", tmp_path / "written"
    copied.mkdir()
    written.mkdir()
    save_tokenizer(tokenizer, copied, tiny_model_dir)
    save_tokenizer(tokenizer, written)
    names = sorted(p.name for p in Path(tiny_model_dir).iterdir() if p.name.startswith(("tokenizer", "special_tokens")))
    assert names and sorted(p.name for p in copied.iterdir()) == names
    assert all((copied / n).read_bytes() == (Path(tiny_model_dir) / n).read_bytes() for n in names)
    assert load_tokenizer(copied) is tokenizer
    assert (written / "tokenizer.json").is_file()
    assert load_tokenizer(written)(TEXTS)["input_ids"] == tokenizer(TEXTS)["input_ids"]


def test_the_digest_follows_the_tokenizer_files_content(tiny_model_dir, tmp_path):
    from diagnostics.models._loading import tokenizer_digest

    copy = tmp_path / "copy"
    shutil.copytree(tiny_model_dir, copy)
    assert tokenizer_digest(copy) == tokenizer_digest(tiny_model_dir)
    names = [name for name, _ in tokenizer_digest(copy)]
    assert names[0] == "tokenizer.json" and "config.json" not in names
    config = json.loads((copy / "tokenizer_config.json").read_text())
    (copy / "tokenizer_config.json").write_text(json.dumps({**config, "model_max_length": 7}))
    assert tokenizer_digest(copy) != tokenizer_digest(tiny_model_dir)
    with pytest.raises(FileNotFoundError, match="holds no tokenizer files"):
        tokenizer_digest(tmp_path)


def _safetensors(path, header: dict, data: bytes):
    encoded = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(encoded)) + encoded + data)
    return path


def test_damaged_config_or_weights_are_refused_naming_the_file(tiny_model_dir, tmp_path):
    from diagnostics.core.errors import UserInputError
    from diagnostics.models._loading import check_model_folder, check_safetensors

    check_model_folder(tiny_model_dir)  # the real folder passes
    good = {"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}
    check_safetensors(_safetensors(tmp_path / "ok.safetensors", good, bytes(8)))
    cases = {"short.safetensors": (good, bytes(4), "the header names 8"),
             "offsets.safetensors": ({"w": {"dtype": "F32"}}, b"", "without data offsets")}
    for name, (header, data, needle) in cases.items():
        with pytest.raises(UserInputError, match=rf"{name}: expected safetensors weights, found .*{needle}"):
            check_safetensors(_safetensors(tmp_path / name, header, data))
    (tmp_path / "tiny.safetensors").write_bytes(b"\x01\x02")
    (tmp_path / "huge.safetensors").write_bytes(struct.pack("<Q", 10**9) + b"{}")
    (tmp_path / "text.safetensors").write_bytes(struct.pack("<Q", 4) + b"nope")
    for name in ("tiny", "huge", "text"):
        with pytest.raises(UserInputError, match=rf"{name}\.safetensors: expected safetensors weights"):
            check_safetensors(tmp_path / f"{name}.safetensors")
    folder = tmp_path / "model"
    shutil.copytree(tiny_model_dir, folder)
    (folder / "config.json").write_text("[1, 2]")
    with pytest.raises(UserInputError, match=r"config\.json: expected a model configuration"):
        check_model_folder(folder)
