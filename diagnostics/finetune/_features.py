"""Hidden states of the frozen lower layers, computed once per example and shared by every seed and experiment.

Cached per example under ``<output_dir>/.cache/features/<model>/<prefix>/shard-*.safetensors``, one store for
every language (the SICK pairs of the English and Russian mixtures are computed once). ``prefix`` hashes the model
fingerprint, the number of frozen layers, ``max_seq_length``, the storage dtype and the compute dtype; each example
is keyed by a hash of its exact token ids, so a training mixture that shares examples with an earlier one (a
subset, another share of a feature, more extra data) only computes the examples not seen before.

An example's features come from the batch that first computed it; batch composition can move the last float bits
(padding changes the matrix shapes), so a store filled in a different order may differ in the last bit of float16.
Within one store (one pipeline), every run reads the same values.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import torch

from diagnostics.core.io_utils import atomic_path

from ._batching import FeatureInputs, TokenInputs, length_sorted_batches

DTYPES = {"float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32}


def model_fingerprint(folder: str | Path) -> str:
    """Fingerprint a model folder (config, weights and tokenizer); see :func:`diagnostics.models.model_fingerprint`."""
    from diagnostics.models import model_fingerprint as fingerprint

    return fingerprint(folder)


def example_keys(inputs: TokenInputs) -> np.ndarray:
    """Key each example by a 64-bit hash of its token ids (and token types).

    An int64 array of shape (n_examples,); equal token ids give equal keys.
    """
    keys = np.empty(len(inputs), dtype=np.int64)
    for i, ids in enumerate(inputs.input_ids):
        digest = hashlib.blake2b(np.asarray(ids, dtype=np.int64).tobytes(), digest_size=8)
        if inputs.token_type_ids is not None:
            digest.update(b"|" + np.asarray(inputs.token_type_ids[i], dtype=np.int8).tobytes())
        keys[i] = np.frombuffer(digest.digest(), dtype=np.int64)[0]
    return keys


def inputs_key(inputs: TokenInputs) -> str:
    """Hash the token ids (and types) of a whole set.

    16 hex digits of the sha256 of the examples' keys, in order.
    """
    return hashlib.sha256(example_keys(inputs).tobytes()).hexdigest()[:16]


@torch.no_grad()
def compute_features(frozen: torch.nn.Module, inputs: TokenInputs, *, batch_size: int = 64, dtype: str = "float16",
                     device: str = "cpu", autocast: torch.dtype | None = None, progress: bool = False,
                     desc: str = "features") -> FeatureInputs:
    """Run the frozen part over ``inputs`` (length-sorted batches, dynamic padding) and keep real tokens only.

    ``frozen`` (embeddings and lower layers) returns ``last_hidden_state``. ``dtype`` (``float16``, ``bfloat16`` or
    ``float32``) is the features' storage dtype; ``autocast`` the compute dtype under ``torch.autocast`` (the sweep's,
    e.g. bf16), ``None`` for float32. Returns the hidden states of every real token, on CPU, in the order of
    ``inputs``.
    """
    from tqdm.auto import tqdm

    frozen = frozen.to(device).eval()
    lengths = inputs.lengths
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    hidden_size = frozen.config.hidden_size
    flat = torch.empty((int(offsets[-1]), hidden_size), dtype=DTYPES[dtype])
    for batch in tqdm(length_sorted_batches(lengths, batch_size), desc=desc, leave=False, disable=not progress):
        kwargs = {k: v.to(device) for k, v in inputs.batch(batch).items()}
        with torch.autocast(device.split(":")[0], dtype=autocast or torch.float32, enabled=autocast is not None):
            states = frozen(**kwargs).last_hidden_state.float().cpu()
        for row, i in enumerate(batch):
            flat[offsets[i]:offsets[i + 1]] = states[row, :lengths[i]].to(flat.dtype)
    return FeatureInputs(flat, offsets)


def save_features(features: FeatureInputs, path: Path, meta: dict, keys: np.ndarray | None = None) -> None:
    """Write features atomically (safetensors + metadata).

    ``path`` is the ``.safetensors`` file (its folder is created); ``meta``, JSON-serialisable, is stored in the
    file's header; ``keys`` holds one example key per row (see :func:`example_keys`).
    """
    from safetensors.torch import save_file

    path.parent.mkdir(parents=True, exist_ok=True)
    tensors = {"flat": features.flat.contiguous(), "offsets": torch.from_numpy(features.offsets)}
    if keys is not None:
        tensors["keys"] = torch.from_numpy(np.ascontiguousarray(keys, dtype=np.int64))
    with atomic_path(path) as tmp:
        save_file(tensors, str(tmp), metadata={"meta": json.dumps(meta, sort_keys=True)})


def load_features(path: Path) -> FeatureInputs:
    """Read features written by :func:`save_features` (``path``: the ``.safetensors`` file)."""
    from safetensors.torch import load_file

    tensors = load_file(str(path))
    return FeatureInputs(tensors["flat"], tensors["offsets"].numpy())


class _Pool:
    """Every cached example of one store prefix: shards (read in name order) and key -> (shard, row)."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.shards: list[FeatureInputs] = []
        self.names: set[str] = set()
        self.index: dict[int, tuple[int, int]] = {}

    def refresh(self) -> None:
        """Read shards written since the last look (by this or another process)."""
        from safetensors.torch import load_file

        if not self.folder.exists():
            return
        for path in sorted(self.folder.glob("shard-*.safetensors")):
            if path.name not in self.names:
                tensors = load_file(str(path))
                self.add(path.name, FeatureInputs(tensors["flat"], tensors["offsets"].numpy()),
                         tensors["keys"].numpy())

    def add(self, name: str, features: FeatureInputs, keys: np.ndarray) -> None:
        shard = len(self.shards)
        self.shards.append(features)
        self.names.add(name)
        for row, key in enumerate(keys.tolist()):
            self.index.setdefault(key, (shard, row))  # the first shard (name order) holding a key wins

    def gather(self, keys: np.ndarray) -> FeatureInputs:
        pieces = []
        for key in keys.tolist():
            shard, row = self.index[key]
            features = self.shards[shard]
            pieces.append(features.flat[features.offsets[row]:features.offsets[row + 1]])
        lengths = np.fromiter((len(p) for p in pieces), dtype=np.int64, count=len(pieces))
        return FeatureInputs(torch.cat(pieces), np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64))


class FeatureCache:
    """Frozen-layer features of one model: per example, in memory within a process, on disk across.

    Parameters
    ----------
    folder : Path
        ``<output_dir>/.cache/features/<model>``.
    model_path : Path
        The pretrained folder.
    top_k : int
        Number of trained layers (the frozen part is the rest).
    max_seq_length : int
        Maximum tokens per pair of the inputs (part of the store's identity).
    dtype : str
        Storage dtype: float16 (default; half the memory), bfloat16 or float32.
    device : str
        Torch device the frozen part runs on.
    batch_size : int
        Examples per batch when computing.
    progress : bool
        Show a progress bar when computing.
    autocast : torch.dtype, optional
        Compute dtype of the frozen part (``torch.autocast``); ``None``: float32.
    """

    _pools: dict[str, _Pool] = {}

    def __init__(self, folder: Path, model_path: Path, top_k: int, max_seq_length: int, dtype: str = "float16",
                 device: str = "cpu", batch_size: int = 64, progress: bool = False,
                 autocast: torch.dtype | None = None):
        self.folder = Path(folder)
        self.autocast = autocast
        self.model_path = Path(model_path)
        self.top_k = top_k
        self.dtype = dtype
        self.device = device
        self.batch_size = batch_size
        self.progress = progress
        self.max_seq_length = max_seq_length
        self._frozen = None
        self._prefix = hashlib.sha256(json.dumps(
            [model_fingerprint(model_path), top_k, max_seq_length, dtype]
            + ([str(autocast)] if autocast is not None else [])).encode()).hexdigest()[:12]

    @property
    def store(self) -> Path:
        """The folder of this model's shards."""
        return self.folder / self._prefix

    def _pool(self) -> _Pool:
        key = str(self.store)
        if key not in self._pools:
            for other in [k for k in self._pools if not k.startswith(str(self.folder))]:
                del self._pools[other]  # keep one model's store in memory
            self._pools[key] = _Pool(self.store)
        pool = self._pools[key]
        pool.refresh()
        return pool

    def get(self, name: str, inputs: TokenInputs) -> tuple[FeatureInputs, bool]:
        """Return the features of a set, and whether any example had to be computed now (``False``: all cached).

        ``name`` labels the set (progress bar, shard metadata). The features are in the order of ``inputs``; examples
        not cached yet are computed and written as a new shard. ``RuntimeError`` when cached features do not match the
        inputs' lengths (a corrupted store).
        """
        pool = self._pool()
        keys = example_keys(inputs)
        _, first = np.unique(keys, return_index=True)
        missing = np.sort(first[[int(k) not in pool.index for k in keys[first]]])
        if len(missing):
            if self._frozen is None:
                from ._modeling import load_frozen_part

                self._frozen, _ = load_frozen_part(self.model_path, self.top_k)
            subset = TokenInputs([inputs.input_ids[i] for i in missing],
                                 None if inputs.token_type_ids is None else [inputs.token_type_ids[i] for i in missing],
                                 inputs.pad_id)
            features = compute_features(self._frozen, subset, batch_size=self.batch_size, dtype=self.dtype,
                                        device=self.device, autocast=self.autocast, progress=self.progress,
                                        desc=f"frozen layers: {name}")
            shard = f"shard-{hashlib.sha256(keys[missing].tobytes()).hexdigest()[:16]}.safetensors"
            save_features(features, self.store / shard,
                          {"set": name, "model": str(self.model_path), "top_k": self.top_k,
                           "max_seq_length": self.max_seq_length, "dtype": self.dtype,
                           "autocast": str(self.autocast)}, keys=keys[missing])
            if shard not in pool.names:
                pool.add(shard, features, keys[missing])
        features = pool.gather(keys)
        if not np.array_equal(features.lengths, inputs.lengths):
            raise RuntimeError(f"cached features under {self.store} do not match the inputs of {name!r}; delete "
                               "the folder and rerun")
        return features, bool(len(missing))

    @classmethod
    def clear_memory(cls) -> None:
        """Drop the in-process copies (disk copies stay)."""
        cls._pools.clear()
