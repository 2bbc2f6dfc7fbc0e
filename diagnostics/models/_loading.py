"""Load a model folder's tokenizer once per process, shared by every folder holding the same tokenizer files.

transformers 5 parses the 17 MB XLM-R ``tokenizer.json`` of the embedded model for seconds on every
``AutoTokenizer.from_pretrained``. Every fine-tuned checkpoint of a sweep carries a copy of the same files, so the
cache is keyed by their content (sha256, memoised per path, size and mtime), not by folder: probing three seeds or
running the behavioural suite on them loads the tokenizer once. The returned object is shared: callers must not
mutate it (tokenizer calls with ``padding``/``truncation`` arguments do not).

:func:`check_model_folder` reads what a folder's ``config.json`` and safetensors files claim before transformers
loads them, so that a damaged file is refused in one line naming it (``load_tokenizer`` runs it first).
"""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path

from ..core.errors import UserInputError

from ._fingerprint import _file_digest
from ._folders import TOKENIZER_FILES

_MAX_TOKENIZERS = 8
_TOKENIZERS: dict[tuple, object] = {}


def tokenizer_digest(folder: str | os.PathLike) -> tuple[tuple[str, str], ...]:
    """Hash the tokenizer files in ``folder`` (the key of :func:`load_tokenizer`).

    Returns ``(file name, sha256)`` of each of :data:`TOKENIZER_FILES` present, in that order. Raises
    ``FileNotFoundError`` when the folder holds none of them.
    """
    folder = Path(os.fspath(folder))
    found = []
    for name in TOKENIZER_FILES:
        path = folder / name
        if path.is_file():
            st = path.stat()
            found.append((name, _file_digest(str(path.resolve()), st.st_size, st.st_mtime_ns)))
    if not found:
        raise FileNotFoundError(f"{folder} holds no tokenizer files (looked for {', '.join(TOKENIZER_FILES[:4])}…)")
    return tuple(found)


def load_tokenizer(folder: str | os.PathLike):
    """``AutoTokenizer.from_pretrained(folder)``, cached per process by the content of the tokenizer files.

    Parameters
    ----------
    folder : str or PathLike
        A local model folder.

    Returns
    -------
    transformers.PreTrainedTokenizerBase
        The same object for every folder with identical tokenizer files.
    """
    folder = Path(os.fspath(folder))
    check_model_folder(folder)
    digest = tokenizer_digest(folder)
    if digest not in _TOKENIZERS:
        from transformers import AutoTokenizer

        if len(_TOKENIZERS) >= _MAX_TOKENIZERS:
            _TOKENIZERS.pop(next(iter(_TOKENIZERS)))
        _TOKENIZERS[digest] = AutoTokenizer.from_pretrained(str(folder))
    return _TOKENIZERS[digest]


def save_tokenizer(tokenizer, folder: str | os.PathLike, source: str | os.PathLike | None = None) -> None:
    """Write ``tokenizer`` into ``folder``: the tokenizer files of ``source`` copied byte for byte where it has them.

    A tokenizer's ``save_pretrained`` re-serialises its files, so a checkpoint saved that way holds other bytes than
    the model folder it was trained from, and :func:`load_tokenizer` (keyed by content) parses the same 17 MB
    tokenizer twice; copied, every checkpoint of a sweep shares its model's cache entry.

    Parameters
    ----------
    tokenizer : transformers.PreTrainedTokenizerBase
        The tokenizer loaded from ``source`` (saved with ``save_pretrained`` when ``source`` holds no tokenizer file).
    folder : str or PathLike
        An existing folder to write into.
    source : str or PathLike, optional
        The model folder the tokenizer was loaded from.
    """
    import shutil

    folder = Path(os.fspath(folder))
    source = Path(os.fspath(source)) if source is not None else None
    names = [n for n in TOKENIZER_FILES if (source / n).is_file()] if source is not None and source.is_dir() else []
    if not names:
        tokenizer.save_pretrained(str(folder))
        return
    for name in names:
        shutil.copyfile(source / name, folder / name)


def check_model_folder(folder: str | os.PathLike) -> None:
    """Refuse a model folder whose ``config.json`` or safetensors weights are damaged, naming the file.

    Only what the files claim about themselves is read: ``config.json`` must be a JSON object; each
    ``*.safetensors`` file must hold its 8-byte header length, a JSON header of that length, and every tensor's
    bytes (the header's largest data offset) after it. A folder without these files passes (transformers reports
    what it lacks).

    Parameters
    ----------
    folder : str or PathLike
        A local model folder.

    Raises
    ------
    UserInputError
        ``<file>: expected ..., found ...`` for the first damaged file.
    """
    folder = Path(os.fspath(folder))
    if not folder.is_dir():
        return
    from ._folders import has_model_config, read_model_config

    if has_model_config(folder):
        read_model_config(folder)
    for weights in sorted(folder.glob("*.safetensors")):
        check_safetensors(weights)


def check_safetensors(path: str | os.PathLike) -> None:
    """Check a safetensors file's framing: header length, JSON header, tensor bytes present.

    Raises ``UserInputError`` ``<file>: expected safetensors weights, found ...`` (cut short, a header that is
    not JSON ...).
    """
    path = Path(os.fspath(path))
    size = path.stat().st_size
    expected = "safetensors weights"
    if size < 8:
        raise UserInputError(f"{path}: expected {expected}, found a file of {size} bytes")
    with open(path, "rb") as handle:
        (length,) = struct.unpack("<Q", handle.read(8))
        if length > size - 8 or length > 100_000_000:
            raise UserInputError(f"{path}: expected {expected}, found a header length of {length} bytes in a file of "
                                 f"{size} bytes (damaged or cut short)")
        raw = handle.read(length)
    try:
        header = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise UserInputError(f"{path}: expected {expected}, found a header that is not JSON (damaged)") from None
    if not isinstance(header, dict):
        raise UserInputError(f"{path}: expected {expected}, found a header that is not a JSON object (damaged)")
    end = 0
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        offsets = entry.get("data_offsets") if isinstance(entry, dict) else None
        if not (isinstance(offsets, list) and len(offsets) == 2 and all(isinstance(x, int) for x in offsets)):
            raise UserInputError(f"{path}: expected {expected}, found tensor {name!r} without data offsets (damaged)")
        end = max(end, offsets[1])
    if 8 + length + end > size:
        raise UserInputError(f"{path}: expected {expected}, found {size - 8 - length} bytes of tensor data where "
                             f"the header names {end} (cut short?)")
