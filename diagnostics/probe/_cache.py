"""On-disk cache of pooled layer vectors, keyed by model fingerprint, text hash, pooling and length.

One entry is two files in the cache folder: ``<key>.npy`` (``[layers, n_texts, hidden]``, float16 or float32,
read back with ``allow_pickle=False``) and ``<key>.json`` (what the key was made of). Both are written through
a temporary file and ``os.replace``; the JSON goes last, so an entry without it is ignored and rebuilt.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Callable

import numpy as np

from diagnostics.core.hashing import text_hash  # noqa: F401  (part of this module's API)
from diagnostics.core.io_utils import atomic_path, write_json_atomic
from diagnostics.models import model_fingerprint

CACHE_VERSION = 1
#: Storage dtypes of the vector cache, by name.
CACHE_DTYPES = {"float16": np.float16, "float32": np.float32}
_FINGERPRINTS: dict[tuple, str] = {}


def fingerprint(folder: str | Path) -> str:
    """Identity of a model folder, as :func:`diagnostics.models.model_fingerprint` computes it.

    Memoised per (path, size, mtime) of the folder's files within the process.

    Parameters
    ----------
    folder : str or Path
        A model folder (config, tokenizer and weights).

    Returns
    -------
    str
        The fingerprint, a hex digest.
    """
    folder = Path(folder).resolve()
    stamp = tuple((p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(folder.iterdir()) if p.is_file())
    key = (str(folder), stamp)
    if key not in _FINGERPRINTS:
        _FINGERPRINTS[key] = str(model_fingerprint(folder))
    return _FINGERPRINTS[key]


def cache_key(model_fingerprint: str, texts_hash: str, *, pooling: str, max_length: int, dtype: str,
              precision: str = "fp32") -> str:
    """Compute the short stable key (24 hex characters) of one cache entry.

    ``model_fingerprint`` is the model folder's :func:`fingerprint`, ``texts_hash`` the hash of the texts in order
    (:func:`diagnostics.core.hashing.text_hash`), ``dtype`` the storage dtype. ``precision`` is the compute precision
    that really ran (``fp32`` keys stay those of earlier caches).
    """
    fields = {"v": CACHE_VERSION, "model": model_fingerprint, "texts": texts_hash, "pooling": pooling,
              "max_length": int(max_length), "dtype": dtype}
    if precision != "fp32":  # fp32 keys stay those of earlier caches
        fields["precision"] = precision
    raw = json.dumps(fields, sort_keys=True)
    return hashlib.sha256(raw.encode()).hexdigest()[:24]


class VectorCache:
    """A folder of cached layer-vector arrays.

    Parameters
    ----------
    root : str or Path
        Created on first write.
    """

    def __init__(self, root: str | Path):
        self.root = Path(root)

    def paths(self, key: str) -> tuple[Path, Path]:
        """Place the two files of one entry.

        Parameters
        ----------
        key : str
            The entry's key (:func:`cache_key`).

        Returns
        -------
        tuple of (Path, Path)
            ``<key>.npy`` (the array) and ``<key>.json`` (its metadata).
        """
        return self.root / f"{key}.npy", self.root / f"{key}.json"

    def get(self, key: str) -> np.ndarray | None:
        """Read a cached array.

        Parameters
        ----------
        key : str
            The entry's key.

        Returns
        -------
        numpy.ndarray or None
            The array, or None when absent, unreadable or incomplete (shape not the recorded one).
        """
        array_path, meta_path = self.paths(key)
        if not (array_path.is_file() and meta_path.is_file()):
            return None
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
            array = np.load(array_path, allow_pickle=False)
        except (OSError, ValueError):
            return None
        if list(array.shape) != meta.get("shape"):
            return None
        return array

    def put(self, key: str, array: np.ndarray, meta: dict) -> None:
        """Store ``array`` (already in its storage dtype) with its metadata, atomically.

        Parameters
        ----------
        key : str
            The entry's key.
        array : numpy.ndarray
            The vectors.
        meta : dict
            JSON-serialisable metadata; ``shape`` and ``dtype`` are added.
        """
        self.root.mkdir(parents=True, exist_ok=True)
        array_path, meta_path = self.paths(key)
        with atomic_path(array_path) as tmp, open(tmp, "wb") as fh:
            np.save(fh, np.ascontiguousarray(array), allow_pickle=False)
        # the JSON last: an entry is complete once its metadata exists
        write_json_atomic(meta_path, {**meta, "shape": list(array.shape), "dtype": str(array.dtype)}, default=None)


def vector_key(model_path: str | Path, texts: list[str], *, pooling: str = "mean", max_length: int = 128,
               dtype: str = "float16", precision: str = "fp32") -> str:
    """Cache key of the vectors :func:`cached_sentence_vectors` would return for these arguments (no model run).

    ``model_path`` is a model folder or a run folder holding one; the other arguments are as for
    :func:`cached_sentence_vectors`, but the key holds the precision that would really run rather than the requested
    ``precision`` (see :func:`cache_key`).
    """
    from diagnostics.models import effective_precision

    from ._extract import find_model_folder

    return cache_key(fingerprint(find_model_folder(model_path)), text_hash(texts), pooling=pooling,
                     max_length=max_length, dtype=dtype, precision=effective_precision(precision))


def cached_sentence_vectors(model_path: str | Path, texts: list[str], cache_dir: str | Path | None, *,
                            pooling: str = "mean", max_length: int = 128, dtype: str = "float16",
                            batch_size: int = 64, progress: bool = False,
                            encoder: Callable | None = None, precision: str = "fp32") -> np.ndarray:
    """Pooled vectors of every layer for ``texts``, from the cache or computed (and then cached).

    Parameters
    ----------
    model_path : str or Path
        A model folder or a run folder holding one (see :func:`diagnostics.probe.find_model_folder`).
    texts : list of str
        Encoded in this order; the cache key includes their hash.
    cache_dir : str or Path, optional
        Cache folder; None computes without caching.
    pooling : {"mean", "cls"}
        Mean over the tokens, or the first token's vector.
    max_length : int
        Maximum tokens per text (longer texts are truncated).
    dtype : {"float16", "float32"}
        Storage (and returned) dtype; float16 halves the disk and memory footprint.
    batch_size : int
        Texts per batch.
    progress : bool
    encoder : callable, optional
        ``encoder(folder) -> (model, tokenizer)``; :func:`diagnostics.probe.load_encoder` by default.
    precision : {"fp32", "bf16"}
        Compute precision (bf16 autocast only where the CPU supports it natively; part of the cache key).

    Returns
    -------
    numpy.ndarray
        ``[layers, len(texts), hidden]`` in ``dtype``.
    """
    return cached_model_vectors({"model": model_path}, texts, cache_dir, pooling=pooling, max_length=max_length,
                                dtype=dtype, batch_size=batch_size, progress=progress, encoder=encoder,
                                precision=precision)["model"]


def cached_model_vectors(model_paths: dict, texts: list[str], cache_dir: str | Path | None, *,
                         pooling: str = "mean", max_length: int = 128, dtype: str = "float16",
                         batch_size: int = 64, progress: bool = False, encoder: Callable | None = None,
                         precision: str = "fp32") -> dict[str, np.ndarray]:
    """:func:`cached_sentence_vectors` for several models: the cache misses are encoded in one pass.

    The first model is the reference of :func:`diagnostics.probe._extract.encode_models`: a later model that
    shares its lower layers (a top-k fine-tuned seed of a pretrained model) runs only its own top layers. The
    reference runs whenever another model misses the cache, since its hidden states are their input.

    ``model_paths`` maps label -> model folder or run folder, the first entry being the reference. The cache key
    includes the hash of ``texts`` (encoded in this order) and ``precision`` (``fp32`` / ``bf16``); ``cache_dir`` None
    computes without caching. ``dtype`` (``float16`` / ``float32``) is the storage and returned dtype; ``pooling``
    (``mean`` / ``cls``) and ``max_length`` as for :func:`cached_sentence_vectors`.
    ``encoder(folder) -> (model, tokenizer)`` defaults to :func:`diagnostics.probe.load_encoder`. Returns label ->
    ``[layers, len(texts), hidden]`` in ``dtype``, in the order of ``model_paths``.
    """
    from diagnostics.models import effective_precision

    from ._extract import encode_models, find_model_folder, load_encoder

    if dtype not in CACHE_DTYPES:
        raise ValueError(f"dtype must be one of {', '.join(CACHE_DTYPES)}, found {dtype!r}")
    precision = effective_precision(precision)
    folders = {label: find_model_folder(path) for label, path in model_paths.items()}
    store = VectorCache(cache_dir) if cache_dir is not None else None
    texts_hash = text_hash(texts) if store is not None else None
    found, keys = {}, {}
    for label, folder in folders.items():
        if store is None:
            continue
        keys[label] = cache_key(fingerprint(folder), texts_hash, pooling=pooling, max_length=max_length,
                                dtype=dtype, precision=precision)
        hit = store.get(keys[label])
        if hit is not None:
            found[label] = hit
    misses = [label for label in folders if label not in found]
    if misses:
        reference = next(iter(folders))
        load = encoder or load_encoder
        encoders = {label: load(folders[label]) for label in dict.fromkeys([reference, *misses])}
        computed = encode_models(encoders, texts, batch_size=batch_size, max_length=max_length, pooling=pooling,
                                 progress=progress, precision=precision)
        for label in misses:
            found[label] = computed[label].astype(CACHE_DTYPES[dtype])
            if store is not None:
                store.put(keys[label], found[label],
                          {"model": str(folders[label]), "model_fingerprint": fingerprint(folders[label]),
                           "texts_sha256": texts_hash, "n_texts": len(texts), "pooling": pooling,
                           "max_length": max_length, "precision": precision, "cache_version": CACHE_VERSION})
    return {label: found[label] for label in folders}
