"""Convert a model folder's pickled weights (``pytorch_model.bin``) to safetensors, the only format this toolkit loads.

The pickle is read with ``torch.load(weights_only=True)``: only tensors and plain containers are rebuilt, so a file
that would run code when unpickled is refused rather than executed. A sharded checkpoint (``pytorch_model.bin.index
.json`` and its shards) becomes a sharded safetensors checkpoint with the same split.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from diagnostics.core.errors import UserInputError
from diagnostics.core.io_utils import atomic_path

from ._folders import MODEL_CONFIG, PICKLED_WEIGHTS, SAFETENSORS_WEIGHTS, TOKENIZER_FILES


@dataclass(frozen=True)
class Conversion:
    """What :func:`convert_pickled` reads and writes.

    Parameters
    ----------
    sources : tuple of Path
        The pickled weight files.
    targets : tuple of Path
        The safetensors files written (with the index of a sharded checkpoint last).
    """

    sources: tuple[Path, ...]
    targets: tuple[Path, ...]


def plan_conversion(folder: str | Path, out: str | Path | None = None, *, force: bool = False) -> Conversion:
    """Say which pickled files of ``folder`` become which safetensors files, before anything is read.

    Parameters
    ----------
    folder : str or Path
        A Hugging Face model folder with ``pytorch_model.bin`` (or a sharded one with its index).
    out : str or Path, optional
        Where to write; default ``folder`` itself (the pickled files stay).
    force : bool
        Replace safetensors weights already in ``out``.

    Returns
    -------
    Conversion

    Raises
    ------
    UserInputError
        No model folder, no pickled weights, or safetensors weights already there without ``force``.
    """
    folder = Path(folder)
    target = Path(out) if out is not None else folder
    if not (folder / MODEL_CONFIG).is_file():
        raise UserInputError(f"{folder}: expected a model folder with {MODEL_CONFIG}, found none")
    single, index = (folder / name for name in PICKLED_WEIGHTS)
    if index.is_file():
        shards = sorted(set(_weight_map(index).values()))
        sources = tuple(folder / shard for shard in shards)
        targets = tuple(target / _safetensors_name(shard) for shard in shards) + (target / SAFETENSORS_WEIGHTS[1],)
    elif single.is_file():
        sources, targets = (single,), (target / SAFETENSORS_WEIGHTS[0],)
    else:
        raise UserInputError(f"{folder}: expected {' or '.join(PICKLED_WEIGHTS)} to convert, found neither")
    missing = [str(s) for s in sources if not s.is_file()]
    if missing:
        raise UserInputError(f"{index}: names shards that are missing: {', '.join(missing)}")
    present = [str(target / name) for name in SAFETENSORS_WEIGHTS if (target / name).is_file()]
    if present and not force:
        raise UserInputError(f"{present[0]} exists: the folder already has safetensors weights (pass --force to "
                             "replace them)")
    return Conversion(sources, targets)


def convert_pickled(folder: str | Path, out: str | Path | None = None, *, force: bool = False) -> Conversion:
    """Write ``folder``'s pickled weights as safetensors (into ``out``, with its config and tokenizer files).

    Parameters
    ----------
    folder : str or Path
        A model folder with ``pytorch_model.bin`` (or a sharded checkpoint).
    out : str or Path, optional
        Another folder to write the converted model to (config and tokenizer files copied); default: beside the
        pickled files in ``folder``.
    force : bool
        Replace safetensors weights already there.

    Returns
    -------
    Conversion
        The files read and written.

    Raises
    ------
    UserInputError
        See :func:`plan_conversion`; also a pickle holding anything but tensors (refused by
        ``weights_only=True``: it could run code) or a file that is not a torch checkpoint.
    """
    import torch
    from safetensors.torch import save_file

    folder = Path(folder)
    conversion = plan_conversion(folder, out, force=force)
    target = conversion.targets[0].parent
    target.mkdir(parents=True, exist_ok=True)
    if target.resolve() != folder.resolve():
        for name in (MODEL_CONFIG, *TOKENIZER_FILES):
            if (folder / name).is_file():
                shutil.copy2(folder / name, target / name)
    weight_map = {}
    for source, destination in zip(conversion.sources, conversion.targets):
        try:
            state = torch.load(source, map_location="cpu", weights_only=True)
        except Exception as err:  # UnpicklingError for code in the pickle, RuntimeError for a damaged file
            raise UserInputError(f"{source}: not loadable as tensors only (torch.load weights_only=True): "
                                 f"{str(err).splitlines()[0]}; convert only a checkpoint you trust, with "
                                 "transformers' save_pretrained(safe_serialization=True)") from None
        if not isinstance(state, dict) or not all(isinstance(v, torch.Tensor) for v in state.values()):
            raise UserInputError(f"{source}: expected a state dict of tensors, found {type(state).__name__}")
        # safetensors stores no shared memory: tied weights (input and output embeddings) become separate copies
        tensors = {name: tensor.detach().contiguous().clone() for name, tensor in state.items()}
        with atomic_path(destination) as tmp:
            save_file(tensors, str(tmp), metadata={"format": "pt"})
        weight_map.update(dict.fromkeys(tensors, destination.name))
    if len(conversion.sources) > 1 or (folder / PICKLED_WEIGHTS[1]).is_file():
        index = json.loads((folder / PICKLED_WEIGHTS[1]).read_text(encoding="utf-8"))
        with atomic_path(conversion.targets[-1]) as tmp:
            tmp.write_text(json.dumps({"metadata": index.get("metadata", {}), "weight_map": weight_map}, indent=2),
                           encoding="utf-8")
    return conversion


def _weight_map(index: Path) -> dict[str, str]:
    try:
        payload = json.loads(index.read_text(encoding="utf-8"))
        mapping = payload["weight_map"]
    except (ValueError, KeyError, TypeError) as err:
        raise UserInputError(f"{index}: expected a JSON index with a weight_map, found {err}") from None
    if not isinstance(mapping, dict) or not all(isinstance(v, str) and "/" not in v for v in mapping.values()):
        raise UserInputError(f"{index}: expected weight_map to name shard files of this folder")
    return mapping


def _safetensors_name(shard: str) -> str:
    """``pytorch_model-00001-of-00002.bin`` -> ``model-00001-of-00002.safetensors``."""
    stem = shard[:-len(".bin")] if shard.endswith(".bin") else shard
    return stem.replace("pytorch_model", "model", 1) + ".safetensors"
