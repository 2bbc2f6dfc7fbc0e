"""What a model folder is: a configuration and a weights file; folders found below a path; a configuration checked."""

import json

import pytest

from diagnostics.core.errors import UserInputError
from diagnostics.models._folders import has_model_config, is_model_folder, model_folders_below, read_model_config


def _folder(path, *files):
    path.mkdir(parents=True)
    for name in files:
        (path / name).write_text("{}" if name.endswith(".json") else "w")
    return path


def test_a_model_folder_has_a_config_and_weights(tmp_path):
    safe = _folder(tmp_path / "safe", "config.json", "model.safetensors")
    pickled = _folder(tmp_path / "pickled", "config.json", "pytorch_model.bin")
    sharded = _folder(tmp_path / "sharded", "config.json", "model.safetensors.index.json")
    bare = _folder(tmp_path / "bare", "config.json")
    assert is_model_folder(safe) and is_model_folder(sharded) and is_model_folder(pickled)
    assert not is_model_folder(pickled, safetensors_only=True) and is_model_folder(safe, safetensors_only=True)
    assert has_model_config(bare) and not is_model_folder(bare) and not has_model_config(tmp_path)


def test_model_folders_below_up_to_a_depth(tmp_path):
    one = _folder(tmp_path / "a", "config.json", "model.safetensors")
    two = _folder(tmp_path / "runs" / "seed=0", "config.json", "model.safetensors")
    three = _folder(tmp_path / "x" / "y" / "z", "config.json", "model.safetensors")
    _folder(tmp_path / "runs" / "seed=1", "config.json")  # no weights: not a model
    _folder(tmp_path / "top", "model.safetensors")
    (tmp_path / "config.json").write_text("{}")  # the path itself is never listed
    (tmp_path / "model.safetensors").write_text("w")
    assert model_folders_below(tmp_path) == [one, two]
    assert model_folders_below(tmp_path, depth=3) == [one, two, three]
    assert model_folders_below(tmp_path, depth=1) == [one]


def test_read_model_config_wants_a_json_object(tmp_path):
    folder = _folder(tmp_path / "m")
    (folder / "config.json").write_text(json.dumps({"model_type": "bert"}))
    assert read_model_config(folder) == {"model_type": "bert"}
    (folder / "config.json").write_text("[]")
    with pytest.raises(UserInputError, match=r"config\.json: expected a model configuration \(a JSON object\)"):
        read_model_config(folder)
    (folder / "config.json").write_text("{\"model_type\": ")  # cut short
    with pytest.raises(UserInputError, match=r"config\.json: expected a model configuration"):
        read_model_config(folder)
