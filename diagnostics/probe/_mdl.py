"""Minimum description length probing: the online code of Voita & Titov (2020), "Information-Theoretic Probing with
Minimum Description Length".

A probe's accuracy says how well it fits the labels, not how much effort the fit took: two layers (or a pretrained and
a fine-tuned model) can reach the same accuracy while one of them makes the labels far easier to learn. The online
code measures that effort as the number of bits needed to transmit the labels given the representations:

* the pairs are put in a seeded order and cut at the portions 0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 6.25, 12.5, 25, 50 and
  100 % (:data:`MDL_PORTIONS`);
* the first block is sent with the uniform code, ``first_block_size * log2(n_classes)`` bits;
* every next block is sent with a probe trained on all earlier blocks: its cross-entropy on the block, in bits;
* the online codelength is the sum, the uniform codelength ``n * log2(n_classes)``, and the compression
  ``uniform / online``: 1 for a probe that learns nothing, higher the more regular the labels are given the vectors.

The probe is the accuracy probes' (L2-regularised logistic regression on standardised pair vectors,
:func:`diagnostics.probe.probe_estimator`), with one fixed L2 strength (default :data:`MDL_ALPHA`) or the strength the
accuracy probe chose for the same task and layer (its control's for the control task). The control task codes the
accuracy probes' control labels (the same labels shuffled across pairs, so the same label prior); the MDL selectivity
is the control codelength minus the task codelength, in bits.
"""

from __future__ import annotations

import hashlib
import json
import math
import warnings
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd

from ._layers import layer_digest
from ._linear import ALPHAS, control_labels, majority_accuracy, probe_estimator, standardise
from ._tasks import DEFAULT_TASKS

#: Voita & Titov's block boundaries, in percent of the pairs.
MDL_PORTIONS = (0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 6.25, 12.5, 25.0, 50.0, 100.0)
#: The default L2 strength of the MDL probes: the strongest of the study's grid (see :func:`probe_mdl`).
MDL_ALPHA = 0.1
#: The sets the online code can transmit: the accuracy probes' training pairs or the gold-tagged diagnostic pairs.
MDL_DATA = ("train", "test")
MDL_COLUMNS = ["model", "seed", "language", "task", "layer", "data", "online_codelength", "uniform_codelength",
               "compression", "control_codelength", "control_compression", "mdl_selectivity", "prior_codelength",
               "majority", "positive_rate", "first_block_size", "n_blocks", "n_pairs", "n_classes", "alpha",
               "control_alpha", "alpha_source", "feature_list"]
_LN2 = math.log(2.0)


@dataclass(frozen=True)
class OnlineCode:
    """Outcome of :func:`online_codelength`.

    Parameters
    ----------
    online_codelength : float
        Bits to transmit the labels with the online code (the sum of ``block_codelengths``).
    uniform_codelength : float
        ``n * log2(n_classes)`` bits: the labels sent with no model.
    compression : float
        ``uniform_codelength / online_codelength``.
    first_block_size : int
        Pairs of the first block (sent with the uniform code).
    n_classes : int
        Size of the label alphabet.
    block_ends : tuple of int
        The cumulative pair counts at which the blocks end (the last is ``n``).
    block_codelengths : numpy.ndarray
        Bits of each block: the uniform code of the first, then each block's cross-entropy under the probe
        trained on the earlier blocks.
    prior_blocks : tuple of int
        Indices of the blocks coded with the add-one label frequencies of the earlier blocks, because those held
        fewer classes than the data, or one class only (no probe can be fit on one class).
    """

    online_codelength: float
    uniform_codelength: float
    compression: float
    first_block_size: int
    n_classes: int
    block_ends: tuple[int, ...]
    block_codelengths: np.ndarray = field(repr=False, compare=False)
    prior_blocks: tuple[int, ...] = ()


def block_ends(n: int, portions: tuple[float, ...] = MDL_PORTIONS) -> np.ndarray:
    """Cumulative pair counts at which the online code's blocks end.

    Block ``i`` ends at ``floor(n * portions[i] / 100)`` (computed exactly: 6.25 % of 10,000 is 625), at least 1;
    counts equal to the previous one are dropped, so small sets get fewer, non-empty blocks.

    Parameters
    ----------
    n : int
        Number of pairs, at least 2.
    portions : tuple of float
        Strictly increasing percentages in (0, 100], the last 100 (default :data:`MDL_PORTIONS`).

    Returns
    -------
    numpy.ndarray
        Strictly increasing int64 ends, the last ``n``; the first is the first block's size, and consecutive
        differences are the other blocks' sizes (together ``n``).

    Raises
    ------
    ValueError
        Fewer than 2 pairs, or portions that do not increase strictly up to 100.
    """
    if n < 2:
        raise ValueError(f"the online code needs at least 2 pairs, found {n}")
    steps = [Fraction(str(p)) for p in portions]
    if not steps or steps[-1] != 100 or steps[0] <= 0 or any(b <= a for a, b in zip(steps, steps[1:])):
        raise ValueError(f"portions must increase strictly from above 0 to 100 (percent), found {list(portions)}")
    ends = [max(1, int(step * n / 100)) for step in steps]
    return np.array(sorted(set(ends)), dtype=np.int64)


def online_codelength(x: np.ndarray, y: np.ndarray, *, alpha: float, portions: tuple[float, ...] = MDL_PORTIONS,
                      n_classes: int | None = None, seed: int | None = None, max_iter: int = 300,
                      class_weight: str | None = None) -> OnlineCode:
    """Online codelength of labels given features (Voita & Titov 2020, section 3.2).

    The pairs are taken in their given order (or a seeded permutation of it) and cut into blocks at
    :func:`block_ends`. The first block costs ``size * log2(n_classes)`` bits. Each later block costs its
    cross-entropy in bits, ``-sum(log2 p(y | x))``, under the probe of :func:`diagnostics.probe.probe_estimator`
    fit with L2 strength ``alpha`` on all earlier blocks. While the earlier blocks lack one of the data's
    classes or hold one class only (no logistic regression can be fit on one class), a block is coded with their
    add-one label frequencies, ``p(c) = (count(c) + 1) / (m + n_classes)`` over the ``m`` earlier pairs.
    Log-probabilities come from the probe's decision function (``log p = -log(1 + exp(-z))``), exact however
    confident the probe is.

    Parameters
    ----------
    x : numpy.ndarray
        ``[n, d]`` features, standardised already (see :func:`diagnostics.probe.standardise`).
    y : numpy.ndarray
        ``n`` binary labels (two distinct values at most, as the probing tasks' presence labels).
    alpha : float
        L2 strength of every block's probe (weight of the squared norm against the mean log-loss).
    portions : tuple of float
        Block boundaries in percent (default :data:`MDL_PORTIONS`).
    n_classes : int, optional
        Size of the label alphabet the uniform and frequency codes assume; default 2.
    seed : int, optional
        Seed of a permutation applied to the pairs first; None keeps the given order.
    max_iter : int
    class_weight : {None, "balanced"}
        See :func:`diagnostics.probe.fit_probe`.

    Returns
    -------
    OnlineCode
        The online and uniform codelengths (bits), the compression and the per-block codelengths.

    Raises
    ------
    ValueError
        Features and labels of different lengths, fewer than 2 pairs, more than two distinct labels, ``n_classes``
        below 2, or a non-positive ``alpha``.
    """
    from sklearn.exceptions import ConvergenceWarning

    x, y = np.asarray(x), np.asarray(y)
    if len(x) != len(y):
        raise ValueError(f"{len(x)} feature rows but {len(y)} labels")
    classes = np.unique(y)
    if classes.size > 2:
        raise ValueError(f"the online code's probe is binary, but the labels hold {classes.size} classes")
    n_classes = 2 if n_classes is None else int(n_classes)
    if n_classes < 2:
        raise ValueError(f"n_classes must be at least 2, found {n_classes}")
    if not alpha > 0:
        raise ValueError(f"alpha must be > 0, found {alpha}")
    ends = block_ends(len(y), portions)
    if seed is not None:
        order = np.random.default_rng(seed).permutation(len(y))
        x, y = x[order], y[order]
    bits = [float(ends[0]) * math.log2(n_classes)]
    prior_blocks = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for block, (start, stop) in enumerate(zip(ends[:-1], ends[1:]), start=1):
            seen, target = y[:start], y[start:stop]
            if np.unique(seen).size < max(2, classes.size):
                bits.append(_frequency_bits(seen, target, classes, n_classes))
                prior_blocks.append(block)
                continue
            probe = probe_estimator(alpha, start, class_weight=class_weight, max_iter=max_iter).fit(x[:start], seen)
            bits.append(_probe_bits(probe, x[start:stop], target))
    block_bits = np.array(bits)
    online = float(block_bits.sum())
    uniform = len(y) * math.log2(n_classes)
    return OnlineCode(online_codelength=online, uniform_codelength=uniform,
                      compression=uniform / online if online > 0 else float("inf"),
                      first_block_size=int(ends[0]), n_classes=n_classes, block_ends=tuple(int(e) for e in ends),
                      block_codelengths=block_bits, prior_blocks=tuple(prior_blocks))


def _frequency_bits(seen: np.ndarray, target: np.ndarray, classes: np.ndarray, n_classes: int) -> float:
    """Bits of ``target`` under the add-one frequencies of ``seen`` over an alphabet of ``n_classes``."""
    counts = {c: int(np.sum(seen == c)) for c in classes}
    probability = np.array([(counts[c] + 1) / (len(seen) + n_classes) for c in target])
    return float(-np.log2(probability).sum())


def _probe_bits(probe, x: np.ndarray, y: np.ndarray) -> float:
    """Cross-entropy in bits of binary labels ``y`` under a fitted logistic regression."""
    z = probe.decision_function(x)
    sign = np.where(y == probe.classes_[1], 1.0, -1.0)
    return float(np.logaddexp(0.0, -sign * z).sum() / _LN2)


def label_entropy_bits(y: np.ndarray) -> float:
    """Count the bits that send labels with their own empirical frequencies: ``n * H(labels)``.

    No code that ignores the pairs' vectors does better (it is the hindsight-optimal code of the label prior),
    so ``uniform / (n * H)`` is the compression a probe reaches by learning the class balance alone.

    Parameters
    ----------
    y : numpy.ndarray
        Labels.

    Returns
    -------
    float
        ``n * H`` in bits; 0 for no labels or a single class.
    """
    y = np.asarray(y)
    if y.size == 0:
        return 0.0
    counts = np.unique(y, return_counts=True)[1]
    shares = counts / y.size
    return float(max(0.0, -(counts * np.log2(shares)).sum()))


def mdl_layers(vectors: np.ndarray, labels: dict[str, np.ndarray], *, alpha, portions: tuple[float, ...] = MDL_PORTIONS,
               seed: int = 0, control: dict[str, np.ndarray] | None = None, max_iter: int = 300,
               class_weight: str | None = None, fallback_alpha: float = max(ALPHAS),
               memo: dict | None = None) -> pd.DataFrame:
    """Online codelength of every task (and its control task) on every layer.

    Each layer's vectors are standardised on all the pairs (no label is involved), then coded with
    :func:`online_codelength`: the same seeded order of the pairs for every task, layer and control.

    Parameters
    ----------
    vectors : numpy.ndarray
        ``[layers, n, d]`` pair vectors.
    labels : dict
        Task name -> ``n`` labels.
    alpha : float or callable
        One L2 strength for every probe, or ``alpha(task, layer) -> (task alpha, control alpha)``.
    portions : tuple of float
        Block boundaries in percent (default :data:`MDL_PORTIONS`).
    seed : int
        Seed of the pairs' order (:func:`online_codelength`) and, without ``control``, of the control
        permutations (:func:`diagnostics.probe.control_labels` with ``seed + 1``, the accuracy probes' training
        controls).
    control : dict, optional
        Task name -> control labels; default each task's labels permuted as above.
    max_iter : int
    class_weight : {None, "balanced"}
        See :func:`diagnostics.probe.fit_probe`.
    fallback_alpha : float
        Strength used for a NaN one (an accuracy probe that saw one class, e.g. on a constant task): default the
        strongest of the study's grid, as ties go to the stronger regularisation in the accuracy probes' selection.
    memo : dict, optional
        Shared across calls with the same labels and settings: a layer bit-identical to one coded before (with the
        same strengths) reuses its rows.

    Returns
    -------
    pandas.DataFrame
        One row per (task, layer): the columns of :data:`MDL_COLUMNS` from ``task`` to ``control_alpha``, less
        ``data``. Codelengths are in bits; ``mdl_selectivity = control_codelength - online_codelength``;
        ``prior_codelength`` is :func:`label_entropy_bits` and ``majority`` the majority-class share.
    """
    if set(labels) != set(control or labels):
        raise ValueError("control labels name different tasks")
    control = control or {task: control_labels(y, seed + 1) for task, y in labels.items()}
    strength = alpha if callable(alpha) else (lambda task, layer: (alpha, alpha))
    rows = []
    for layer in range(vectors.shape[0]):
        x, digest = None, layer_digest([vectors[layer]]) if memo is not None else None
        for task, y in labels.items():
            chosen = tuple(float(a) if a == a else float(fallback_alpha) for a in strength(task, layer))
            key = (digest, task, chosen) if memo is not None else None
            if key is not None and key in memo:
                rows.append({**memo[key], "layer": layer})
                continue
            if x is None:
                x = standardise(vectors[layer])[0]
            row = {"task": task, "layer": layer,
                   **_code_row(x, np.asarray(y), np.asarray(control[task]), chosen, portions=portions, seed=seed,
                               max_iter=max_iter, class_weight=class_weight)}
            if key is not None:
                memo[key] = row
            rows.append(row)
    return pd.DataFrame(rows)


def _code_row(x, y, y_control, alphas: tuple[float, float], **settings) -> dict:
    n_classes = 2
    task_alpha, control_alpha = alphas
    code = online_codelength(x, y, alpha=task_alpha, n_classes=n_classes, **settings)
    ctrl = online_codelength(x, y_control, alpha=control_alpha, n_classes=n_classes, **settings)
    return {"online_codelength": code.online_codelength, "uniform_codelength": code.uniform_codelength,
            "compression": code.compression, "control_codelength": ctrl.online_codelength,
            "control_compression": ctrl.compression,
            "mdl_selectivity": ctrl.online_codelength - code.online_codelength,
            "prior_codelength": label_entropy_bits(y), "majority": majority_accuracy(y),
            "positive_rate": float(np.mean(y == 1)), "first_block_size": code.first_block_size,
            "n_blocks": len(code.block_ends), "n_pairs": len(y), "n_classes": n_classes,
            "alpha": alphas[0], "control_alpha": alphas[1]}


def _accuracy_by_model(accuracy: pd.DataFrame, models: dict) -> dict[str, pd.DataFrame]:
    """The rows of an accuracy table per model label (every model of ``models`` must be there)."""
    missing = [str(label) for label in models if not (accuracy["model"].astype(str) == str(label)).any()]
    if missing:
        raise ValueError(f"the accuracy table has no rows for model(s) {', '.join(missing)}: pass the table "
                         f"probe_models returned for the same models, or accuracy=None")
    return {label: accuracy[accuracy["model"].astype(str) == str(label)] for label in models}


def _lookup(chosen: dict, task: str, layer: int, label: str) -> tuple[float, float]:
    if (task, layer) not in chosen:
        raise ValueError(f"the accuracy table has no row for model {label!r}, task {task!r}, layer {layer}: pass the "
                         f"table probe_models returned for the same models, tasks and options")
    return chosen[(task, layer)]


def probe_mdl(models: dict[str, str | Path], lang: str, tasks=DEFAULT_TASKS, cache_dir: str | Path | None = None, *,
              alpha: float | str = MDL_ALPHA, accuracy: pd.DataFrame | None = None, data: str = "train",
              portions: tuple[float, ...] = MDL_PORTIONS, **options) -> pd.DataFrame:
    """MDL probing of every layer of each model: the online codelength of each task and of its control task.

    The pairs, labels, control labels, probe family and vectors are those of :func:`diagnostics.probe.probe_models`
    called with the same ``options``: the cached vectors are read (no model runs when ``probe_models`` ran
    before with the same cache). Every block's probe has one fixed L2 strength by default, so that codelengths differ
    between layers and models only by their vectors; with ``alpha="probe"`` each probe's strength is the one the
    accuracy probe of that model, task and layer chose (its control's for the control task): read from ``accuracy``
    when given, else from the accuracy probes' cached results, else fitted here (as
    :func:`diagnostics.probe.probe_models` would).

    Parameters
    ----------
    models : dict
        Label -> model folder or fine-tuned run folder (see :func:`diagnostics.probe.probe_models`).
    lang : str
    tasks : str or sequence of str
        Coarse or fine category names/slugs.
    cache_dir : str or Path, optional
        Vector and result cache (results as ``mdl-<key>.json``).
    alpha : float or "probe"
        One fixed L2 strength for every block's probe (default :data:`MDL_ALPHA`, 0.1: the strongest of the study's
        grid, which gave the shortest codes on every layer of the embedded model and its fine-tuned seeds at the
        demo's scale; the accuracy probes' choices, made by accuracy on nearly one-class labels where most
        strengths tie, jump between 0.1 and 1e-3 from layer to layer and with them the codelength), or
        ``"probe"``: the accuracy probes' choice. A NaN choice (an accuracy probe that saw one class) counts as
        the strongest of ``alphas``, as ties do in the accuracy probes' selection.
    accuracy : pandas.DataFrame, optional
        With ``alpha="probe"``: the table :func:`diagnostics.probe.probe_models` returned for the same models, tasks
        and ``options`` (its ``model``, ``task``, ``layer``, ``alpha``, ``control_alpha`` columns are read); saves
        refitting the accuracy probes when their results are not cached. Unused otherwise.
    data : {"train", "test"}
        The pairs whose labels are transmitted: ``"train"`` (default; as Voita & Titov: the probing task's
        training data, here the rule-annotated RTE-style pairs and the accuracy probes' training controls) or
        ``"test"`` (the diagnostic set's gold tags and the accuracy probes' test controls).
    portions : tuple of float
        Block boundaries in percent (default :data:`MDL_PORTIONS`).
    **options : dict
        Any keyword argument of :func:`diagnostics.probe.probe_models` (subsets, frames, columns, protocol,
        extraction, caching; ``seed`` also orders the pairs of the online code).

    Returns
    -------
    pandas.DataFrame
        Columns :data:`MDL_COLUMNS`: one row per (model, task, layer); codelengths in bits,
        ``mdl_selectivity = control_codelength - online_codelength`` (bits), ``alpha_source`` ``"fixed"`` or
        ``"probe"`` (the accuracy probes' choice).

    Raises
    ------
    ValueError
        An unknown ``data``, an ``alpha`` neither ``"probe"`` nor a number > 0, or any argument
        :func:`diagnostics.probe.probe_models` refuses.
    """
    import inspect

    from ._runner import label_tables, plan_probes, probe_models

    if data not in MDL_DATA:
        raise ValueError(f"data must be one of {', '.join(MDL_DATA)}, found {data!r}")
    by_probe = isinstance(alpha, str) and alpha == "probe"
    if not by_probe and (isinstance(alpha, (str, bool)) or alpha is None or not alpha > 0):
        raise ValueError(f"alpha must be 'probe' or a number > 0, found {alpha!r}")
    block_ends(100, portions)  # checks the portions before any work
    arguments = inspect.signature(probe_models).bind(models, lang, tasks, cache_dir, **options)
    arguments.apply_defaults()
    plan = plan_probes(**arguments.arguments)
    seed, o = plan.settings["seed"], plan.options
    frame_labels = plan.sets[data][1]
    control = {task: control_labels(y, seed + (1 if data == "train" else 2)) for task, y in frame_labels.items()}
    chosen: dict = {}
    if by_probe:
        tables = _accuracy_by_model(accuracy, models) if accuracy is not None else plan.run(plan.accuracy_fit, "probe")
        for label, table in tables.items():
            chosen[label] = {(str(row.task), int(row.layer)): (float(row.alpha), float(row.control_alpha))
                             for row in table.itertuples(index=False)}
    fallback = max(float(a) for a in o["alphas"])

    def fit(vectors: dict, memo: dict, label: str) -> pd.DataFrame:
        strength = (lambda task, layer: _lookup(chosen[label], task, layer, label)) if by_probe else float(alpha)
        return mdl_layers(vectors[data], frame_labels, alpha=strength, portions=portions, seed=seed, control=control,
                          max_iter=o["max_iter"], class_weight=o["class_weight"], fallback_alpha=fallback, memo=memo)

    chosen_digest = hashlib.sha256(json.dumps({label: sorted(map(list, c.items()), key=str) for label, c in
                                               chosen.items()}, default=str).encode()).hexdigest()
    settings = {"mdl": {"alpha": "probe" if by_probe else float(alpha), "chosen": chosen_digest, "data": data,
                        "portions": [float(p) for p in portions]}}
    tables = plan.run(fit, "mdl", settings)
    table = label_tables(models, tables, lang).assign(data=data, alpha_source="probe" if by_probe else "fixed",
                                                      feature_list=plan.feature_list)
    return table[MDL_COLUMNS]
