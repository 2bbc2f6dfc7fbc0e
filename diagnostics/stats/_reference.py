"""A straightforward loop implementation of Multi-Bootstrap, the published algorithm as written.

For each bootstrap sample: resample examples and seeds, then loop over the drawn seeds (and the categories),
computing the metric of each (category, seed) on its own (accuracy, or the scalar
:func:`diagnostics.stats.mcc`), and average over the seeds. It exists to check
:func:`diagnostics.stats.multibootstrap` (tests) and as the baseline of ``benchmarks/bench_stats_multibootstrap.py``.
Use :func:`diagnostics.stats.multibootstrap` for real work: it is the same algorithm, vectorised.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from ._mcc import mcc


def accuracy(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """Compute the share of equal entries (NaN for no examples)."""
    return float(np.mean(y_true == y_pred)) if len(y_true) else float("nan")


def multibootstrap_loop(predictions: np.ndarray, labels: np.ndarray, metric: str = "accuracy",
                        n_boot: int = 1000, seed: int = 0, categories: np.ndarray | None = None,
                        indices: Iterable[tuple[np.ndarray, np.ndarray]] | None = None) -> np.ndarray:
    """Multi-Bootstrap, one sample, seed and category at a time.

    ``predictions`` are 0/1, shape (n_examples, n_seeds) or (n_examples, n_seeds, n_inner): inner seeds of a nested
    design are averaged. ``metric`` is ``accuracy`` or ``mcc``; ``categories`` a bool (n_examples, n_categories) mask.
    ``seed`` seeds ``numpy.random.default_rng`` when ``indices`` is not given; ``indices`` are
    ``(example_idx, seed_idx)`` resamples (one pair per sample) to use instead of drawing: lets tests feed both
    implementations the same draws. Returns shape (n_boot,) or (n_boot, n_categories).
    """
    score = {"accuracy": accuracy, "mcc": mcc}[metric]
    n_examples, n_seeds = predictions.shape[:2]
    nested = predictions.ndim == 3
    rng = np.random.default_rng(seed)
    if indices is None:
        indices = ((rng.choice(n_examples, n_examples), rng.choice(n_seeds, n_seeds)) for _ in range(n_boot))
    cats = None if categories is None else np.asarray(categories, dtype=bool)
    samples = []
    for example_idx, seed_idx in indices:
        y = labels[example_idx]
        masks = [slice(None)] if cats is None else [cats[example_idx, g] for g in range(cats.shape[1])]
        row = []
        for mask in masks:
            per_seed = []
            for k in seed_idx:
                if nested:
                    per_seed.append(np.mean([score(y[mask], predictions[example_idx, k, j][mask])
                                             for j in range(predictions.shape[2])]))
                else:
                    per_seed.append(score(y[mask], predictions[example_idx, k][mask]))
            row.append(np.mean(per_seed))
        samples.append(row)
    out = np.asarray(samples, dtype=np.float64)
    return out[:, 0] if cats is None else out
