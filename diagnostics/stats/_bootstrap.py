"""Multi-Bootstrap (Sellam et al., 2022, "The MultiBERTs", ICLR): resample seeds and test examples jointly.

One bootstrap sample draws ``n_examples`` examples and ``n_seeds`` seeds with replacement, computes the metric
of each drawn seed on the drawn examples, and averages over the drawn seeds. Nested designs (pretraining seed x
fine-tuning seed) resample the outer seeds and average the inner ones, as the reference implementation does
for rows sharing a seed.

The implementation is vectorised: a chunk of bootstrap samples becomes a matrix of example *counts*
(``n_chunk x n_examples``), and every metric's sufficient statistics (correct counts; confusion counts per
category) are one matrix product of those counts with an examples x (categories x runs) indicator matrix
(sparse when categories are; over distinct row patterns instead of examples when there are few).
Seed resampling becomes a matrix of seed counts applied to the per-run metrics. Resampling uses
``numpy.random.default_rng(seed)``: a seed fully determines the samples.

Sampling designs (``resample``), as the reference's ``sample_seeds`` / ``sample_examples`` switches and the
MultiBERTs paper's Table 2: ``"both"`` (default) resamples seeds and examples; ``"seeds"`` keeps the examples fixed
(the variation due to seeds alone); ``"examples"`` keeps the seeds fixed (every sample averages all seeds).

Per-category samples are stratified by default (``stratify=True``): each category's examples are resampled within
the category, so a category keeps its size in every sample. ``stratify=False`` resamples the whole set once per
sample and scores each category on its drawn members (a 14-example category then sees about 3 to 28 examples).
Stratified resampling is the same computation on a longer axis: the examples of each category, one block per
category, with the draws of a block confined to it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np
from scipy import sparse
from threadpoolctl import ThreadpoolController

from ..core.schema import ENTAILMENT, LABELS
from ._mcc import mcc_from_counts

Metric = str | Callable[[np.ndarray, np.ndarray], float]
METRICS = ("accuracy", "mcc")
#: Sampling designs: seeds and examples, seeds only (examples fixed), examples only (seeds fixed).
RESAMPLE = ("both", "seeds", "examples")
#: Bootstrap samples drawn and evaluated together; fixed, so that results never depend on memory settings.
CHUNK = 64
_CONTROLLER: list[ThreadpoolController] = []


def _one_blas_thread():
    """Context limiting BLAS to one thread (the controller is built once: building it scans loaded libraries)."""
    if not _CONTROLLER:
        _CONTROLLER.append(ThreadpoolController())
    return _CONTROLLER[0].limit(limits=1, user_api="blas")


def as_binary(values, name: str) -> np.ndarray:
    """Convert booleans, 0/1 numbers or ``entailment``/``not_entailment`` strings to 0/1 (1 = entailment).

    The strings are those of :data:`diagnostics.core.schema.LABELS`. Returns int8 of the shape of ``values``.
    ``ValueError`` (naming ``name``) when a value is none of these (another string, a number other than 0 and 1,
    another dtype).
    """
    arr = np.asarray(values)
    if arr.dtype.kind in "OUS":
        flat = arr.astype(str)
        ok = np.isin(flat, LABELS)
        if not ok.all():
            raise ValueError(f"{name} must hold 0/1, booleans or 'entailment'/'not_entailment', "
                             f"found {flat[~ok].ravel()[0]!r}")
        return (flat == ENTAILMENT).astype(np.int8)
    if arr.dtype.kind == "b":
        return arr.astype(np.int8)
    if arr.dtype.kind in "iuf":
        ok = (arr == 0) | (arr == 1)
        if not ok.all():
            raise ValueError(f"{name} must hold 0/1 for the built-in metrics, found {arr[~ok].ravel()[0]!r}")
        return arr.astype(np.int8)
    raise ValueError(f"{name} must be a numeric, boolean or string array, found dtype {arr.dtype}")


def check_resample(resample: str) -> None:
    """Refuse an unknown sampling design (one not in :data:`RESAMPLE`) with a ``ValueError``."""
    if resample not in RESAMPLE:
        raise ValueError(f"resample must be one of {RESAMPLE}, found {resample!r}")


def _check(predictions, labels, metric, n_boot, categories):
    pred = np.asarray(predictions)
    if pred.ndim not in (2, 3):
        raise ValueError("predictions must be (n_examples, n_seeds) or (n_examples, n_seeds, n_inner_seeds), "
                         f"found shape {pred.shape}")
    if pred.shape[0] == 0 or pred.shape[1] == 0 or (pred.ndim == 3 and pred.shape[2] == 0):
        raise ValueError(f"predictions must have at least one example and one seed, found shape {pred.shape}")
    lab = np.asarray(labels)
    if lab.ndim != 1 or len(lab) != pred.shape[0]:
        raise ValueError(f"labels must be 1-D with one entry per example ({pred.shape[0]}), found shape {lab.shape}")
    if not (callable(metric) or metric in METRICS):
        raise ValueError(f"metric must be one of {METRICS} or a callable(y_true, y_pred), found {metric!r}")
    if not isinstance(n_boot, (int, np.integer)) or n_boot < 1:
        raise ValueError(f"n_boot must be a positive integer, found {n_boot!r}")
    cats = None
    if categories is not None:
        cats = np.asarray(categories)
        if cats.ndim != 2 or cats.shape[0] != pred.shape[0]:
            raise ValueError(f"categories must be an (n_examples={pred.shape[0]}, n_categories) boolean matrix, "
                             f"found shape {cats.shape}")
        if cats.dtype.kind != "b":
            if not np.isin(cats, (0, 1)).all():
                raise ValueError("categories must be a boolean (or 0/1) matrix")
            cats = cats.astype(bool)
    if not callable(metric):
        pred, lab = as_binary(pred, "predictions"), as_binary(lab, "labels")
    return pred, lab, cats


def _counts(idx: np.ndarray, size: int) -> np.ndarray:
    """Row-wise occurrence counts of the indices in ``idx`` (n_rows, k) -> (n_rows, size)."""
    rows = idx.shape[0]
    flat = (idx + (np.arange(rows) * size)[:, None]).ravel()
    return np.bincount(flat, minlength=rows * size).reshape(rows, size)


def resample_indices(rng: np.random.Generator, n_boot: int, n_examples: int,
                     seed_sizes: tuple[int, ...], shared_seeds: bool = False, resample: str = "both",
                     strata=None) -> Iterator[tuple[np.ndarray | None, list[np.ndarray]]]:
    """Draw Multi-Bootstrap resamples, chunk by chunk.

    ``n_boot`` samples are drawn from ``n_examples`` rows; ``seed_sizes`` is the number of (outer) seeds of each
    setting. ``shared_seeds`` is the paired design: every setting uses the seeds drawn for the first one (sizes must be
    equal). ``resample`` (``both`` / ``seeds`` / ``examples``: :data:`RESAMPLE`) is what is resampled; what is not stays
    as it is (all examples, or all seeds once each). ``strata`` are sizes of consecutive blocks of rows (summing to
    ``n_examples``): each row is drawn within its block, so every block keeps its size. Without it, rows are drawn from
    all ``n_examples``.

    Yields ``(example_idx, seed_idx)`` for each chunk of at most :data:`CHUNK` samples; examples are drawn first, then
    each setting's seeds. ``example_idx`` holds the drawn rows of each sample of the chunk, int of shape
    ``(n_chunk, n_examples)``, or None with ``resample="seeds"`` (the rows are fixed); ``seed_idx`` one int array of
    shape ``(n_chunk, n_seeds_i)`` per setting (with ``resample="examples"``, every seed once).
    """
    bounds = None
    if strata is not None:
        sizes = np.asarray(strata, dtype=np.int64)
        if sizes.sum() != n_examples:
            raise ValueError(f"strata sizes sum to {sizes.sum()}, expected {n_examples}")
        low = np.repeat(np.cumsum(sizes) - sizes, sizes)
        bounds = (low, low + np.repeat(sizes, sizes))
    done = 0
    while done < n_boot:
        size = min(CHUNK, n_boot - done)
        example_idx = None
        if resample != "seeds":
            example_idx = rng.integers(0, n_examples, size=(size, n_examples)) if bounds is None else \
                rng.integers(bounds[0], bounds[1], size=(size, n_examples))
        if resample == "examples":
            seeds = [np.broadcast_to(np.arange(k), (size, k)) for k in seed_sizes]
        else:
            seeds = [rng.integers(0, seed_sizes[0], size=(size, seed_sizes[0]))]
            for k in seed_sizes[1:]:
                seeds.append(seeds[0] if shared_seeds else rng.integers(0, k, size=(size, k)))
        yield example_idx, seeds
        done += size


class _Design:
    """Sufficient statistics of a built-in metric as columns of an examples x statistics matrix.

    Built once per call; every chunk of resamples is then one product ``weights @ matrix``.
    Columns: category sizes, then for accuracy the correct predictions per (category, run); for MCC the
    positives per category, predicted positives and true positives per (category, run).
    """

    def __init__(self, predictions: np.ndarray, labels: np.ndarray, metric: str, members: np.ndarray,
                 compress: bool = True):
        n_examples, self.n_runs = predictions.shape
        self.metric = metric
        self.n_cat = members.shape[1]
        m = members.astype(np.float64)
        per_run = (m[:, :, None] * np.ones((1, 1, self.n_runs))).reshape(n_examples, -1)
        if metric == "accuracy":
            correct = (predictions == labels[:, None]).astype(np.float64)
            blocks = [m, per_run * np.tile(correct, (1, self.n_cat))]
            key = [members, correct]
        else:
            y = labels.astype(np.float64)
            pred = predictions.astype(np.float64)
            blocks = [m, m * y[:, None], per_run * np.tile(pred, (1, self.n_cat)),
                      per_run * np.tile(pred * y[:, None], (1, self.n_cat))]
            key = [members, labels[:, None], predictions]
        matrix = np.concatenate(blocks, axis=1)
        self.n_examples = n_examples
        # Examples with identical rows (same correctness pattern over runs and categories) are interchangeable:
        # when there are few distinct rows, a resample is summarised by how often it drew each row pattern
        # (not worth finding for a single evaluation: ``compress=False``). A row is a function of its narrow key
        # (membership, and correctness or label and predictions): equal keys, equal rows.
        self.codes = None
        if compress:
            narrow = np.ascontiguousarray(np.concatenate([np.asarray(k, dtype=np.int8) for k in key], axis=1))
            _, first, codes = np.unique(narrow, axis=0, return_index=True, return_inverse=True)
            if 4 * len(first) <= n_examples:
                self.codes, matrix = codes.ravel(), matrix[first]
        # Diagnostic categories are sparse (an example has one or two of 33 features): a CSC product then
        # costs O(nnz x n_samples) instead of a dense GEMM. Entries are small integers: both paths are exact.
        self.matrix = sparse.csc_array(matrix) if np.count_nonzero(matrix) < 0.2 * matrix.size else matrix

    def evaluate(self, example_idx: np.ndarray) -> np.ndarray:
        """Metric per resample, run and category: (n_samples, n_runs, n_categories)."""
        if self.codes is None:
            weights = _counts(example_idx, self.n_examples)
        else:
            weights = _counts(self.codes[example_idx], self.matrix.shape[0])
        # The products are small (one chunk of resamples): BLAS threads cost more than they save, a lot more
        # on a shared machine, so they run on one thread.
        with _one_blas_thread():
            stats = np.asarray(weights.astype(np.float64) @ self.matrix)
        g, r, s = self.n_cat, self.n_runs, len(weights)
        n = stats[:, :g][:, :, None]
        if self.metric == "accuracy":
            with np.errstate(invalid="ignore", divide="ignore"):
                out = stats[:, g:].reshape(s, g, r) / n
            return out.transpose(0, 2, 1)
        pos = stats[:, g:2 * g][:, :, None]
        pred_pos = stats[:, 2 * g:2 * g + g * r].reshape(s, g, r)
        tp = stats[:, 2 * g + g * r:].reshape(s, g, r)
        fp = pred_pos - tp
        fn = pos - tp
        value, _ = mcc_from_counts(tp, fp, fn, n - tp - fp - fn)
        return value.transpose(0, 2, 1)


def per_run_metric(predictions: np.ndarray, labels: np.ndarray, metric: Metric, example_idx: np.ndarray,
                   categories: np.ndarray | None = None) -> np.ndarray:
    """Metric of every run on every resample (and category), from example counts.

    ``metric`` is ``accuracy``, ``mcc`` or a callable; ``predictions`` (n_examples, n_runs) are 0/1 (any values for a
    callable ``metric``). ``example_idx`` (n_samples, n_examples) holds the drawn examples of each resample
    (``arange(n_examples)[None]``: the original data); ``categories`` is a bool (n_examples, n_categories) mask. Returns
    shape (n_samples, n_runs, n_categories), ``n_categories`` being 1 without ``categories``. Accuracy over zero
    examples is NaN; MCC follows sklearn (0 when undefined).
    """
    return _evaluator(predictions, labels, metric, categories, compress=len(example_idx) > 1)(example_idx)


def _evaluator(predictions, labels, metric, categories, compress: bool = True):
    members = np.ones((predictions.shape[0], 1), dtype=bool) if categories is None else categories
    if callable(metric):
        return lambda example_idx: _callable_metric(predictions, labels, metric, members, example_idx)
    return _Design(predictions, labels, metric, members, compress).evaluate


def _callable_metric(predictions, labels, metric, members, example_idx) -> np.ndarray:
    out = np.empty((len(example_idx), predictions.shape[1], members.shape[1]))
    for s, idx in enumerate(example_idx):
        for g in range(members.shape[1]):
            keep = idx[members[idx, g]]
            for r in range(predictions.shape[1]):
                out[s, r, g] = metric(labels[keep], predictions[keep, r])
    return out


def _setting_samples(per_run: np.ndarray, shape: tuple[int, ...], seed_idx: np.ndarray) -> np.ndarray:
    """Average per-run metrics over inner seeds, then over the resampled outer seeds: (S, G)."""
    n_samples, _, n_cat = per_run.shape
    values = per_run.reshape(n_samples, *shape, n_cat)
    if len(shape) == 2:
        values = values.mean(axis=2)
    seed_counts = _counts(seed_idx, shape[0]).astype(np.float64)
    return np.einsum("sk,skg->sg", seed_counts, values) / shape[0]


def _flat(pred: np.ndarray) -> np.ndarray:
    return pred.reshape(pred.shape[0], -1)


def _stratified(cats: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows of each category as one block: (example of each row, block sizes, block membership of each row)."""
    rows = [np.flatnonzero(cats[:, g]) for g in range(cats.shape[1])]
    sizes = np.array([len(r) for r in rows], dtype=np.int64)
    index = np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64)
    members = np.zeros((len(index), cats.shape[1]), dtype=bool)
    members[np.arange(len(index)), np.repeat(np.arange(cats.shape[1]), sizes)] = True
    return index, sizes, members


def _bootstrap(preds: list[np.ndarray], lab: np.ndarray, metric: Metric, cats: np.ndarray | None, n_boot: int,
               seed: int, paired: bool, resample: str, stratify: bool) -> list[np.ndarray]:
    """Samples (n_boot, n_categories) of each setting of ``preds`` (checked arrays) on shared example draws."""
    flats = [_flat(p) for p in preds]
    flat = np.concatenate(flats, axis=1) if len(flats) > 1 else flats[0]
    members = np.ones((len(lab), 1), dtype=bool) if cats is None else cats
    strata = None
    # (categories without any member: nothing to stratify, and the whole-set path handles them)
    if stratify and cats is not None and resample != "seeds" and cats.any():
        index, strata, members = _stratified(cats)
        flat, lab = flat[index], lab[index]
    evaluate = _evaluator(flat, lab, metric, members)
    fixed = evaluate(np.arange(len(lab))[None]) if resample == "seeds" else None
    edges = np.cumsum([0] + [f.shape[1] for f in flats])
    sizes = tuple(p.shape[1] for p in preds)
    outs: list[list[np.ndarray]] = [[] for _ in preds]
    rng = np.random.default_rng(seed)
    for example_idx, seed_idx in resample_indices(rng, n_boot, len(lab), sizes, paired, resample, strata):
        if example_idx is None:
            per_run = np.broadcast_to(fixed, (len(seed_idx[0]), *fixed.shape[1:]))
        else:
            per_run = evaluate(example_idx)
        for i, pred in enumerate(preds):
            outs[i].append(_setting_samples(per_run[:, edges[i]:edges[i + 1]], pred.shape[1:], seed_idx[i]))
    return [np.concatenate(out) for out in outs]


def multibootstrap(predictions, labels, metric: Metric = "accuracy", n_boot: int = 1000, seed: int = 0,
                   categories=None, resample: str = "both", stratify: bool = True) -> np.ndarray:
    """Multi-Bootstrap samples of a seed-averaged metric.

    Parameters
    ----------
    predictions : array_like, shape (n_examples, n_seeds) or (n_examples, n_seeds, n_inner)
        Predictions of each run: 0/1, booleans or ``entailment``/``not_entailment`` (1 = entailment). A 3-D array
        is a nested design (e.g. pretraining seed x fine-tuning seed): the outer seeds are resampled, the inner
        ones averaged.
    labels : array_like, shape (n_examples,)
        Gold labels, same encoding.
    metric : {"accuracy", "mcc"} or callable
        Built-ins are vectorised; a callable ``metric(y_true, y_pred) -> float`` is evaluated per resample, run
        and category (slow, but any metric).
    n_boot : int
        Number of bootstrap samples.
    seed : int
        Seed of ``numpy.random.default_rng``; the same seed gives the same samples.
    categories : array_like of bool, shape (n_examples, n_categories), optional
        Category membership: one column of samples per category, all on the same resampled seeds.
    resample : {"both", "seeds", "examples"}
        Sampling design, as the reference's ``sample_seeds`` / ``sample_examples``: ``"both"`` (default)
        resamples seeds and examples; ``"seeds"`` keeps every example (the variation due to seeds alone);
        ``"examples"`` keeps every seed (each sample averages all seeds: the variation due to examples alone).
    stratify : bool
        With ``categories``: resample each category's examples within the category, so that it keeps its size
        (default), or resample the whole set once per sample and score each category on the drawn examples that
        belong to it (its size then varies from sample to sample; the categories share the drawn examples).
        Stratified is the default because a diagnostic's category sizes are fixed by its design and every
        per-category score is computed on exactly that many examples; whole-set resampling scores a 14-example
        category on about 3 to 28 examples, which widens its interval and often makes MCC degenerate. Strata are
        resampled independently: the correlation between categories through examples that belong to several is
        not kept (statistics of the whole set should use ``stratify=False``). Ignored without ``categories`` and
        with ``resample="seeds"``.

    Returns
    -------
    numpy.ndarray
        Shape (n_boot,) without ``categories``, else (n_boot, n_categories).

    Raises
    ------
    ValueError
        For inputs of the wrong shape or encoding, an unknown metric or design, or ``n_boot < 1``.

    Examples
    --------
    >>> import numpy as np
    >>> labels = np.array([1, 0, 1, 1, 0, 0])
    >>> preds = np.array([[1, 1], [0, 1], [1, 1], [0, 1], [0, 0], [1, 0]])
    >>> multibootstrap(preds, labels, "accuracy", n_boot=5, seed=0).shape
    (5,)
    """
    check_resample(resample)
    pred, lab, cats = _check(predictions, labels, metric, n_boot, categories)
    (out,) = _bootstrap([pred], lab, metric, cats, n_boot, seed, False, resample, stratify)
    return out[:, 0] if categories is None else out


def multibootstrap_pair(predictions_a, predictions_b, labels, metric: Metric = "accuracy", n_boot: int = 1000,
                        seed: int = 0, categories=None, paired: bool = True, resample: str = "both",
                        stratify: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Joint Multi-Bootstrap samples of two settings evaluated on the same examples.

    Parameters
    ----------
    predictions_a, predictions_b : array_like
        (n_examples, n_seeds[, n_inner]) predictions of the baseline (a) and the intervention (b), rows aligned
        to the same examples.
    labels : array_like, shape (n_examples,)
        Gold labels, same encoding as the predictions.
    metric : {"accuracy", "mcc"} or callable
        As in :func:`multibootstrap`.
    n_boot : int
        Number of bootstrap samples.
    seed : int
        Seed of ``numpy.random.default_rng``; the same seed gives the same samples.
    categories : array_like of bool, shape (n_examples, n_categories), optional
        Category membership, as in :func:`multibootstrap`.
    paired : bool
        Paired design (True): seed ``k`` of a and of b share something (e.g. the same pretraining checkpoint);
        one seed resample is used for both sides and the seed counts must match (unless seeds are not
        resampled). Unpaired (False): seeds are resampled independently per side. Examples are always resampled
        jointly (the reference's ``paired_seeds``).
    resample : {"both", "seeds", "examples"}
        Sampling design, as in :func:`multibootstrap`.
    stratify : bool
        Resample within each category, as in :func:`multibootstrap` (both sides share the draws).

    Returns
    -------
    samples_a, samples_b : numpy.ndarray
        Each (n_boot,) or (n_boot, n_categories); ``samples_b - samples_a`` are the delta samples.
        With the same ``seed`` and a paired design, ``samples_a`` equals ``multibootstrap(predictions_a, ...)``
        (same ``resample`` and ``stratify``).

    Raises
    ------
    ValueError
        For inputs as in :func:`multibootstrap`, or a paired design whose sides have different seed shapes.
    """
    check_resample(resample)
    pred_a, lab, cats = _check(predictions_a, labels, metric, n_boot, categories)
    pred_b, _, _ = _check(predictions_b, labels, metric, n_boot, categories)
    if paired and resample != "examples" and pred_a.shape[1:] != pred_b.shape[1:]:
        raise ValueError("a paired design needs the same seeds on both sides, found seed shapes "
                         f"{pred_a.shape[1:]} and {pred_b.shape[1:]}; use paired=False")
    a, b = _bootstrap([pred_a, pred_b], lab, metric, cats, n_boot, seed, paired, resample, stratify)
    return (a[:, 0], b[:, 0]) if categories is None else (a, b)


def point_estimate(predictions, labels, metric: Metric = "accuracy", categories=None) -> np.ndarray:
    """Compute the seed-averaged metric on the original data (no resampling).

    Parameters
    ----------
    predictions : array_like, shape (n_examples, n_seeds) or (n_examples, n_seeds, n_inner)
        Predictions of each run, encoded as in :func:`multibootstrap` (a 3-D array averages the inner seeds first).
    labels : array_like, shape (n_examples,)
        Gold labels, same encoding.
    metric : {"accuracy", "mcc"} or callable
        As in :func:`multibootstrap`.
    categories : array_like of bool, shape (n_examples, n_categories), optional
        Category membership; the metric is then computed per category.

    Returns
    -------
    numpy.float64 or numpy.ndarray
        The mean over seeds of each run's metric: a scalar without ``categories``, else shape (n_categories,).
    """
    pred, lab, cats = _check(predictions, labels, metric, 1, categories)
    per_run = per_run_metric(_flat(pred), lab, metric, np.arange(len(lab))[None], cats)
    values = per_run.reshape(1, *pred.shape[1:], per_run.shape[-1])
    if pred.ndim == 3:
        values = values.mean(axis=2)
    out = values.mean(axis=1)[0]
    return out[0] if categories is None else out
