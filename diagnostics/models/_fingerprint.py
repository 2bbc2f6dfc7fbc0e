"""A content fingerprint of a model folder, for caches keyed by model (e.g. probing's hidden states)."""

from __future__ import annotations

import hashlib
import json
import os
import re
from functools import lru_cache
from pathlib import Path

from ._cache import MANIFEST, sha256_file

CONTENT_FILES = ("config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json")
_SHA256_NAME = re.compile(r"^[0-9a-f]{64}$")


@lru_cache(maxsize=256)
def _file_digest(path: str, size: int, mtime_ns: int) -> str:
    return sha256_file(path)


def _digest(path: Path, manifest: dict) -> str:
    """sha256 of a file, from the manifest, from a Hugging Face blob name, or computed (memoised)."""
    rec = manifest.get(path.name)
    if rec and rec.get("bytes") == path.stat().st_size:
        return rec["sha256"]
    if path.is_symlink():  # Hugging Face cache: snapshots/<rev>/<file> -> blobs/<sha256> for LFS files
        target = Path(os.path.realpath(path)).name
        if _SHA256_NAME.match(target):
            return target
    st = path.stat()
    return _file_digest(str(path.resolve()), st.st_size, st.st_mtime_ns)


def model_fingerprint(folder: str | os.PathLike) -> str:
    """Hex sha256 over a model's configuration, weights and tokenizer files.

    Two folders with the same files get the same fingerprint wherever they lie; changing any weight, the
    configuration or the tokenizer changes it. ``config.json`` enters in canonical form (sorted keys), so
    formatting does not matter. Weight hashes come from ``MANIFEST.json`` when present (the converted
    model), from blob names in a Hugging Face cache, or are computed once per process.

    Parameters
    ----------
    folder : str or PathLike
        A model folder (or a :class:`~diagnostics.models.ModelRef`).

    Returns
    -------
    str
        64 hex characters.
    """
    folder = Path(os.fspath(folder))
    config_path = folder / "config.json"
    if not config_path.is_file():
        raise FileNotFoundError(f"{folder} is not a model folder: it has no config.json")
    manifest_path = folder / MANIFEST
    manifest = json.loads(manifest_path.read_text(encoding="utf-8")).get("files", {}) if manifest_path.is_file() else {}
    h = hashlib.sha256()
    config = json.loads(config_path.read_text(encoding="utf-8"))
    config.pop("transformers_version", None)
    h.update(b"config\0" + json.dumps(config, sort_keys=True, separators=(",", ":")).encode() + b"\0")
    weights = sorted(p for p in folder.iterdir() if p.name.endswith(".safetensors"))
    if not weights:
        raise FileNotFoundError(f"{folder} has no .safetensors weights to fingerprint")
    for path in weights + [folder / n for n in CONTENT_FILES[1:] if (folder / n).is_file()]:
        h.update(path.name.encode() + b"\0" + _digest(path, manifest).encode() + b"\0")
    return h.hexdigest()
