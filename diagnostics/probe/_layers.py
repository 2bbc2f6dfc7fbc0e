"""Fit one probe function over the layers of a model: each distinct layer once, in parallel processes if asked.

The frozen lower layers of a top-k fine-tuned model are bit-identical to the pretrained model's, so a ``memo``
shared across the models of one call keys each layer's rows by a digest of its vectors: such a layer is fitted once.
The fits are deterministic (liblinear, seeded splits), so ``n_jobs`` changes where they run, not what they return.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence

import numpy as np


def layer_digest(arrays: Sequence[np.ndarray]) -> str:
    """A digest of one layer's vectors (of every set given): equal digests, bit-identical vectors."""
    digest = hashlib.blake2b(digest_size=16)
    for vectors in arrays:
        digest.update(str(vectors.shape).encode())
        digest.update(np.ascontiguousarray(vectors).tobytes())
    return digest.hexdigest()


def fit_layers(inputs: Sequence[tuple[np.ndarray, ...]], fit: Callable[..., list[dict]], *, memo: dict | None,
               n_jobs: int = 1, progress: str | None = None) -> list[dict]:
    """The rows of ``fit(layer, *inputs[layer])`` for every layer, in layer order.

    Parameters
    ----------
    inputs : sequence of tuple of numpy.ndarray
        Per layer, the arrays ``fit`` takes after the layer's index (its vectors of each set).
    fit : callable
        ``fit(layer, *arrays) -> list of dict`` (rows with a ``layer`` key); picklable (a module-level function or
        a ``functools.partial`` of one) when ``n_jobs`` > 1.
    memo : dict, optional
        Digest -> rows, shared across calls with the same labels and settings: a layer seen before reuses its rows
        (with its own ``layer``). None fits every layer.
    n_jobs : int
        Processes fitting distinct layers at once (joblib); 1 fits them here, one after another.
    progress : str, optional
        Show a progress bar (on stderr) with this label, one step per layer fitted; None shows nothing.

    Returns
    -------
    list of dict
        Every layer's rows, layer by layer.
    """
    keys = [layer_digest(arrays) if memo is not None else None for arrays in inputs]
    first: dict[str, int] = {}
    todo = []
    for layer, key in enumerate(keys):
        if key is None or (key not in memo and key not in first):
            todo.append(layer)
            if key is not None:
                first[key] = layer
    if n_jobs > 1 and len(todo) > 1:
        from joblib import Parallel, delayed

        parallel = Parallel(n_jobs=min(n_jobs, len(todo)), return_as="generator")
        results = parallel(delayed(fit)(layer, *inputs[layer]) for layer in todo)
    else:
        results = (fit(layer, *inputs[layer]) for layer in todo)
    if progress is not None and todo:
        from tqdm.auto import tqdm

        results = tqdm(results, total=len(todo), desc=progress, unit="layer", leave=False)
    results = list(results)
    fitted = dict(zip(todo, results))
    for key, layer in first.items():
        memo[key] = fitted[layer]
    rows = []
    for layer, key in enumerate(keys):
        rows += fitted[layer] if layer in fitted else [{**row, "layer": layer} for row in memo[key]]
    return rows
