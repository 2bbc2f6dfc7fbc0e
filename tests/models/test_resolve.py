"""Model resolution (local cache, hub unless offline, never the network in a test) and the models CLI."""

from __future__ import annotations

import shutil
import time

import pytest
from typer.testing import CliRunner

from diagnostics.models import (ModelNotAvailableError, ModelRef, model_fingerprint, resolve_model,
                                tiny_random_model)

HUB_ID = "bert-base-multilingual-cased"


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return tiny_random_model(tmp_path_factory.mktemp("tiny") / "tiny-bert", seed=0)


def _fake_hub_cache(root, repo_id, model_folder, *, weights=True):
    """Lay out ``model_folder`` the way huggingface_hub caches a repo (blobs named by sha256, symlinks)."""
    from diagnostics.models._cache import sha256_file

    repo = root / ("models--" + repo_id.replace("/", "--"))
    snapshot = repo / "snapshots" / ("a" * 40)
    (repo / "blobs").mkdir(parents=True)
    snapshot.mkdir(parents=True)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("a" * 40)
    for path in model_folder.iterdir():
        if path.name == "model.safetensors" and not weights:
            continue
        blob = repo / "blobs" / sha256_file(path)
        shutil.copyfile(path, blob)
        (snapshot / path.name).symlink_to(blob)
    return snapshot


def _closed_port() -> int:
    import socket

    with socket.socket() as probe:  # bound and closed again: nothing listens there
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def online_without_network(monkeypatch):
    """Offline variables unset, the hub endpoint a closed localhost port: a download attempt fails at once."""
    from huggingface_hub import constants

    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)  # huggingface_hub read the variable at import
    endpoint = f"http://127.0.0.1:{_closed_port()}"
    monkeypatch.setenv("HF_ENDPOINT", endpoint)
    monkeypatch.setenv("HF_HUB_ETAG_TIMEOUT", "2")
    return endpoint


def test_hub_name_offline_fails_fast_with_clear_message(tmp_path):
    start = time.perf_counter()
    with pytest.raises(ModelNotAvailableError) as err:
        resolve_model(HUB_ID, hf_cache=tmp_path)
    assert time.perf_counter() - start < 10
    message = str(err.value)
    assert HUB_ID in message and "HF_HUB_OFFLINE" in message and "the hub is not asked" in message
    assert "'embedded'" in message and "`path:`" in message
    assert "hf download" in message and str(tmp_path) in message


def test_hub_name_online_but_unreachable_fails_in_seconds_with_clear_message(tmp_path, online_without_network):
    start = time.perf_counter()
    with pytest.raises(ModelNotAvailableError) as err:
        resolve_model("org/not-cached", hf_cache=tmp_path)
    assert time.perf_counter() - start < 15
    message = str(err.value)
    assert "org/not-cached" in message and "not in the local Hugging Face cache" in message
    assert f"the hub ({online_without_network}) could not provide it" in message
    assert "`path:`" in message and "'embedded'" in message and "\n" not in message


def test_cached_hub_model_loads_by_name_from_hf_home_with_the_hub_allowed(tmp_path, tiny, online_without_network,
                                                                          monkeypatch):
    """A model in the hub-cache layout under HF_HOME resolves by name without asking the (closed) hub."""
    import transformers

    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    snapshot = _fake_hub_cache(tmp_path / "hub", "org/tiny-bert", tiny)
    ref = resolve_model("org/tiny-bert")
    assert ref == ModelRef("org/tiny-bert", snapshot, "hf-cache")
    model = transformers.AutoModelForSequenceClassification.from_pretrained(ref, num_labels=2, use_safetensors=True)
    assert model.config.num_hidden_layers == 2
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))  # the explicit cache variable, same answer
    monkeypatch.setenv("HF_HOME", str(tmp_path / "elsewhere"))
    assert resolve_model("org/tiny-bert").path == snapshot


def test_hub_name_uses_default_hf_cache_without_network(tmp_path, monkeypatch):
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path))
    start = time.perf_counter()
    with pytest.raises(ModelNotAvailableError, match="not in the local Hugging Face cache"):
        resolve_model("google-bert/bert-base-multilingual-cased")
    assert time.perf_counter() - start < 10


def test_hub_name_found_in_local_hf_cache(tmp_path, tiny):
    snapshot = _fake_hub_cache(tmp_path, "org/tiny-bert", tiny)
    ref = resolve_model("org/tiny-bert", hf_cache=tmp_path)
    assert ref == ModelRef("org/tiny-bert", snapshot, "hf-cache")
    assert ref.slug == "org--tiny-bert"
    # Blob names already are sha256 digests: same fingerprint as the original folder.
    assert model_fingerprint(ref) == model_fingerprint(tiny)


def test_cached_hub_model_without_safetensors_is_refused(tmp_path, tiny):
    _fake_hub_cache(tmp_path, "org/pickled", tiny, weights=False)
    with pytest.raises(ModelNotAvailableError, match="incomplete.*no model.safetensors"):
        resolve_model("org/pickled", hf_cache=tmp_path)


def test_local_folder_resolves_to_itself_and_is_validated(tmp_path, tiny):
    ref = resolve_model(tiny)
    assert ref.path == tiny.resolve() and ref.source == "local" and ref.name == "tiny-bert"
    import os

    assert os.fspath(ref) == str(tiny.resolve())
    empty = tmp_path / "not-a-model"
    empty.mkdir()
    with pytest.raises(FileNotFoundError, match="no config.json"):
        resolve_model(empty)
    (empty / "config.json").write_text("{}")
    (empty / "pytorch_model.bin").write_bytes(b"\0")
    with pytest.raises(FileNotFoundError, match="pickle"):
        resolve_model(empty)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        resolve_model(tmp_path / "missing")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        resolve_model("./relative/missing/model")


def test_embedded_not_prepared_is_reported_without_building(tmp_path):
    with pytest.raises(ModelNotAvailableError, match="diagnostics models prepare"):
        resolve_model("embedded", cache=tmp_path, prepare=False)
    assert not (tmp_path / "models").exists()


def _app():
    from diagnostics.cli import app  # reports user errors as one line with exit code 2

    return app


def test_cli_info_reports_model_and_fails_cleanly_for_missing_hub_model(tmp_path, tiny, monkeypatch):
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path))
    runner = CliRunner()
    result = runner.invoke(_app(), ["models", "info", str(tiny)])
    assert result.exit_code == 0, result.output
    assert "source:      local" in result.output and model_fingerprint(tiny) in result.output
    result = runner.invoke(_app(), ["models", "info", HUB_ID])
    assert result.exit_code == 2 and "not in the local Hugging Face cache" in result.output
    assert "Traceback" not in result.output
    result = runner.invoke(_app(), ["models", "info", "embedded", "--cache", str(tmp_path)])
    assert result.exit_code == 2 and "diagnostics models prepare" in result.output
