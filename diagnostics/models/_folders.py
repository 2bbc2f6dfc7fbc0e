"""What a model folder is, in one place: its configuration file, its weight files, and how to find one below a path.

Every stage that looks for a model on disk (the sweep's preflight, the run store's checkpoints, probes, behavioural
tests) asks this module, so the file names of a Hugging Face folder are written once.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from diagnostics.core.io_utils import output_folder

#: The model's configuration file.
MODEL_CONFIG = "config.json"
#: Weight files this toolkit loads (safetensors, one file or sharded with an index).
SAFETENSORS_WEIGHTS = ("model.safetensors", "model.safetensors.index.json")
#: Pickled weights: recognised (to say what to convert), never loaded.
PICKLED_WEIGHTS = ("pytorch_model.bin", "pytorch_model.bin.index.json")
#: Files a tokenizer's ``save_pretrained`` (or this toolkit's tokenizer writer) may leave in a model folder.
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "added_tokens.json",
                   "vocab.txt", "sentencepiece.bpe.model", "spiece.model", "merges.txt", "vocab.json")
#: A fine-tuned classifier's own head beside its encoder's weights (jiant's head; safetensors).
CLASSIFIER_HEAD_WEIGHTS = "classifier_head.safetensors"
#: Every file name of a model folder: writing a model replaces all of them as one set.
MODEL_FOLDER_FILES = (MODEL_CONFIG, "generation_config.json", *SAFETENSORS_WEIGHTS, *PICKLED_WEIGHTS,
                      *TOKENIZER_FILES, CLASSIFIER_HEAD_WEIGHTS)


@contextmanager
def model_folder_writer(folder: str | os.PathLike) -> Iterator[Path]:
    """Yield an empty hidden folder to write a model into; on success it becomes ``folder``'s model, as one set.

    The model files of an earlier model in ``folder`` (:data:`MODEL_FOLDER_FILES`) are replaced together, other
    entries stay; a process killed while writing leaves the earlier model (or none), never a mix of two, and a
    link planted in ``folder`` is never written through (see :func:`diagnostics.core.io_utils.output_folder`).

    Parameters
    ----------
    folder : str or PathLike
        The model folder (created with its parents).

    Yields
    ------
    Path
        The staging folder: write ``config.json``, the weights and the tokenizer there (``save_pretrained(path)``).

    Raises
    ------
    OSError
        A disk error, naming the folder; the folder keeps its previous content.
    """
    with output_folder(folder, MODEL_FOLDER_FILES) as out:
        yield out.staging


def has_model_config(path: str | os.PathLike) -> bool:
    """Tell whether ``path`` holds a model configuration file.

    Parameters
    ----------
    path : str or PathLike
        Any path.

    Returns
    -------
    bool
    """
    return (Path(path) / MODEL_CONFIG).is_file()


def is_model_folder(path: str | os.PathLike, *, safetensors_only: bool = False) -> bool:
    """Tell whether ``path`` is a Hugging Face model folder: a configuration and a weights file.

    Parameters
    ----------
    path : str or PathLike
        Any path.
    safetensors_only : bool
        Count only safetensors weights (what the toolkit loads); by default pickled weights count too, so that a
        caller can say what to convert.

    Returns
    -------
    bool
    """
    path = Path(path)
    weights = SAFETENSORS_WEIGHTS if safetensors_only else SAFETENSORS_WEIGHTS + PICKLED_WEIGHTS
    return has_model_config(path) and any((path / name).is_file() for name in weights)


def model_folders_below(path: str | os.PathLike, depth: int = 2) -> list[Path]:
    """Find the model folders up to ``depth`` levels below ``path`` (``path`` itself excluded).

    Parameters
    ----------
    path : str or PathLike
        A folder, e.g. a run directory holding ``checkpoint/``.
    depth : int
        How many levels down to look.

    Returns
    -------
    list of Path
        Sorted, without duplicates.
    """
    root = Path(path)
    patterns = ["/".join(["*"] * level + [MODEL_CONFIG]) for level in range(1, depth + 1)]
    return sorted({found.parent for pattern in patterns for found in root.glob(pattern)
                   if is_model_folder(found.parent)})


def read_model_config(folder: str | os.PathLike) -> dict[str, Any]:
    """Read a model folder's configuration, checked.

    Parameters
    ----------
    folder : str or PathLike
        The model folder.

    Returns
    -------
    dict
        The configuration.

    Raises
    ------
    FileNotFoundError
        When the folder has no configuration file (callers that need one check :func:`has_model_config` first).
    UserInputError
        ``<file>: expected a model configuration (a JSON object), found ...`` for an unreadable or damaged file.
    """
    from diagnostics.core.errors import UserInputError
    from diagnostics.core.file_checks import read_json

    config = Path(folder) / MODEL_CONFIG
    payload = read_json(config, "a model configuration (a JSON object)")
    if not isinstance(payload, dict):
        raise UserInputError(f"{config}: expected a model configuration (a JSON object), found a JSON "
                             f"{type(payload).__name__}")
    return payload
