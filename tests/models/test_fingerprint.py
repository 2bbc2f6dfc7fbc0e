"""A model's fingerprint: its content, not its place or the formatting of its config."""

from __future__ import annotations

import json
import shutil

from diagnostics.models import model_fingerprint


def test_fingerprint_ignores_location_and_formatting_but_not_config(tmp_path, tiny_model_dir):
    copy = tmp_path / "copy"
    shutil.copytree(tiny_model_dir, copy)
    assert model_fingerprint(copy) == model_fingerprint(tiny_model_dir)
    config = json.loads((copy / "config.json").read_text())
    (copy / "config.json").write_text(json.dumps(config))  # same content, other formatting
    assert model_fingerprint(copy) == model_fingerprint(tiny_model_dir)
    config["hidden_dropout_prob"] = 0.2
    (copy / "config.json").write_text(json.dumps(config))
    assert model_fingerprint(copy) != model_fingerprint(tiny_model_dir)
