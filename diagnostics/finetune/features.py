"""Hidden states of the frozen lower layers, computed once per sweep and shared by every seed (top-k training).

Cached as safetensors under ``<output_dir>/.cache/features/<language>/<model>/<key>/<set>.safetensors``
where ``key`` hashes the model fingerprint, the number of frozen layers, ``max_seq_length``, the storage dtype and
the exact token ids of the set: any change gives a new key, never a stale reuse.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np
import torch

from .batching import FeatureInputs, TokenInputs, length_sorted_batches

DTYPES = {"float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32}


def model_fingerprint(folder: str | Path) -> str:
    """Fingerprint of a model folder (config, weights and tokenizer), see :func:`diagnostics.models.model_fingerprint`."""
    from diagnostics.models import model_fingerprint as fingerprint

    return fingerprint(folder)


def inputs_key(inputs: TokenInputs) -> str:
    """Hash of the token ids (and types) of a set."""
    digest = hashlib.sha256()
    for ids in inputs.input_ids:
        digest.update(np.asarray(ids, dtype=np.int64).tobytes() + b"|")
    if inputs.token_type_ids is not None:
        for types in inputs.token_type_ids:
            digest.update(np.asarray(types, dtype=np.int8).tobytes() + b"|")
    return digest.hexdigest()[:16]


@torch.no_grad()
def compute_features(frozen: torch.nn.Module, inputs: TokenInputs, *, batch_size: int = 64, dtype: str = "float16",
                     device: str = "cpu", progress: bool = False, desc: str = "features") -> FeatureInputs:
    """Run the frozen part over ``inputs`` (length-sorted batches, dynamic padding) and keep real tokens only."""
    from tqdm.auto import tqdm

    frozen = frozen.to(device).eval()
    lengths = inputs.lengths
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    hidden_size = frozen.config.hidden_size
    flat = torch.empty((int(offsets[-1]), hidden_size), dtype=DTYPES[dtype])
    autocast = device.startswith("cuda")
    for batch in tqdm(length_sorted_batches(lengths, batch_size), desc=desc, leave=False, disable=not progress):
        kwargs = {k: v.to(device) for k, v in inputs.batch(batch).items()}
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=autocast):
            states = frozen(**kwargs).last_hidden_state.float().cpu()
        for row, i in enumerate(batch):
            flat[offsets[i]:offsets[i + 1]] = states[row, :lengths[i]].to(flat.dtype)
    return FeatureInputs(flat, offsets)


def save_features(features: FeatureInputs, path: Path, meta: dict) -> None:
    """Write features atomically (safetensors + metadata)."""
    from safetensors.torch import save_file

    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    save_file({"flat": features.flat.contiguous(), "offsets": torch.from_numpy(features.offsets)}, str(tmp),
              metadata={"meta": json.dumps(meta, sort_keys=True)})
    os.replace(tmp, path)


def load_features(path: Path) -> FeatureInputs:
    """Read features written by :func:`save_features`."""
    from safetensors.torch import load_file

    tensors = load_file(str(path))
    return FeatureInputs(tensors["flat"], tensors["offsets"].numpy())


class FeatureCache:
    """Frozen-layer features of one (experiment, language, model): in memory within a process, on disk across.

    Parameters
    ----------
    folder : Path
        ``<output_dir>/.cache/features/<language>/<model>``.
    model_path : Path
        The pretrained folder.
    top_k : int
        Number of trained layers (the frozen part is the rest).
    max_seq_length : int
    dtype : str
        Storage dtype: float16 (default; half the memory), bfloat16 or float32.
    """

    _memory: dict[str, FeatureInputs] = {}

    def __init__(self, folder: Path, model_path: Path, top_k: int, max_seq_length: int, dtype: str = "float16",
                 device: str = "cpu", batch_size: int = 64, progress: bool = False):
        self.folder = Path(folder)
        self.model_path = Path(model_path)
        self.top_k = top_k
        self.dtype = dtype
        self.device = device
        self.batch_size = batch_size
        self.progress = progress
        self.max_seq_length = max_seq_length
        self._frozen = None
        self._prefix = hashlib.sha256(json.dumps(
            [model_fingerprint(model_path), top_k, max_seq_length, dtype]).encode()).hexdigest()[:12]

    def path_for(self, name: str, inputs: TokenInputs) -> Path:
        return self.folder / f"{self._prefix}-{inputs_key(inputs)}" / f"{name}.safetensors"

    def get(self, name: str, inputs: TokenInputs) -> tuple[FeatureInputs, bool]:
        """Features of a set, and whether they had to be computed now (``False``: cache hit)."""
        path = self.path_for(name, inputs)
        key = str(path)
        if key in self._memory:
            return self._memory[key], False
        for other in [k for k in self._memory if not k.startswith(str(self.folder))]:
            del self._memory[other]  # keep one (language, model) in memory: sweeps run language by language
        computed = False
        if path.exists():
            features = load_features(path)
        else:
            if self._frozen is None:
                from .modeling import load_frozen_part

                self._frozen, _ = load_frozen_part(self.model_path, self.top_k)
            features = compute_features(self._frozen, inputs, batch_size=self.batch_size, dtype=self.dtype,
                                        device=self.device, progress=self.progress, desc=f"frozen layers: {name}")
            save_features(features, path, {"set": name, "model": str(self.model_path), "top_k": self.top_k,
                                           "max_seq_length": self.max_seq_length, "dtype": self.dtype})
            computed = True
        if len(features) != len(inputs) or not np.array_equal(features.lengths, inputs.lengths):
            raise RuntimeError(f"cached features {path} do not match the inputs; delete the folder and rerun")
        self._memory[key] = features
        return features, computed

    @classmethod
    def clear_memory(cls) -> None:
        """Drop the in-process copies (disk copies stay)."""
        cls._memory.clear()
