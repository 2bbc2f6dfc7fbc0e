"""Probe every layer of several models (pretrained + fine-tuned seeds) on one language: the tidy result table."""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path

import numpy as np
import pandas as pd

from .linear import ALPHAS, control_labels, fit_probe, held_out_split, majority_accuracy, standardise
from .tasks import DEFAULT_TASKS, ProbingTask, annotated_training_frame, diagnostic_frame, parse_tasks, task_labels

RESULT_COLUMNS = ["model", "seed", "language", "task", "layer", "accuracy", "control", "selectivity", "majority",
                  "alpha", "control_alpha", "held_out_accuracy", "n_train", "n_test", "train_positive_rate",
                  "test_positive_rate"]
RESULTS_VERSION = 1
_SEED = re.compile(r"seed[=_-]?(\d+)$")


def seed_of(label: str, path: str | Path | None = None) -> int | None:
    """Fine-tuning seed read from a ``seed=<k>`` label or path component; None for a pretrained model."""
    for part in [str(label)] + (list(reversed(Path(path).parts)) if path is not None else []):
        match = _SEED.search(part)
        if match:
            return int(match.group(1))
    return None


def pair_index(frame: pd.DataFrame, texts: dict[str, int]) -> tuple[np.ndarray, np.ndarray]:
    """Rows of each pair's premise and hypothesis in a text -> row mapping (adds unseen texts to it)."""
    def rows(column: str) -> np.ndarray:
        return np.array([texts.setdefault(str(t), len(texts)) for t in frame[column].fillna("")], dtype=np.int64)

    return rows("premise"), rows("hypothesis")


def probe_layers(train_vectors: np.ndarray, train_labels: dict[str, np.ndarray], test_vectors: np.ndarray,
                 test_labels: dict[str, np.ndarray], *, alphas: tuple[float, ...] = ALPHAS, held_out: float = 0.2,
                 seed: int = 0, max_iter: int = 300, control: bool = True,
                 class_weight: str | None = "balanced", memo: dict | None = None) -> pd.DataFrame:
    """Fit one probe (and its control) per task and layer.

    Parameters
    ----------
    train_vectors, test_vectors : numpy.ndarray
        ``[layers, n, d]`` pair vectors.
    train_labels, test_labels : dict
        Task name -> 0/1 labels (same keys).
    alphas, held_out, max_iter, class_weight
        See :func:`diagnostics.probe.linear.fit_probe`.
    seed : int
        Seeds the held-out split and the control permutations.
    control : bool
        Also fit the control task (labels shuffled across pairs); ``control`` / ``selectivity`` are NaN otherwise.
    memo : dict, optional
        Shared across calls with the same labels and settings: a layer whose train and test vectors are
        bit-identical to one fitted before reuses its rows (the frozen lower layers of a top-k fine-tuned model
        equal the pretrained model's).

    Returns
    -------
    pandas.DataFrame
        One row per (task, layer): ``task, layer, accuracy, control, selectivity, majority, alpha,
        control_alpha, held_out_accuracy, n_train, n_test, train_positive_rate, test_positive_rate``.
    """
    if train_vectors.shape[0] != test_vectors.shape[0]:
        raise ValueError(f"train has {train_vectors.shape[0]} layers, test {test_vectors.shape[0]}")
    if set(train_labels) != set(test_labels):
        raise ValueError("train and test labels name different tasks")
    n_train, n_test = train_vectors.shape[1], test_vectors.shape[1]
    split = held_out_split(n_train, held_out, seed)
    controls = {task: (control_labels(train_labels[task], seed + 1), control_labels(test_labels[task], seed + 2))
                for task in train_labels}
    rows = []
    for layer in range(train_vectors.shape[0]):
        layer_key = None
        if memo is not None:
            digest = hashlib.blake2b(np.ascontiguousarray(train_vectors[layer]).tobytes(), digest_size=16)
            digest.update(np.ascontiguousarray(test_vectors[layer]).tobytes())
            layer_key = digest.hexdigest()
            if layer_key in memo:
                rows += [{**row, "layer": layer} for row in memo[layer_key]]
                continue
        first = len(rows)
        x_train, x_test = standardise(train_vectors[layer], test_vectors[layer])
        for task, y_train in train_labels.items():
            y_test = test_labels[task]
            fit = fit_probe(x_train, y_train, x_test, y_test, alphas=alphas, split=split, max_iter=max_iter,
                            class_weight=class_weight)
            ctrl = (fit_probe(x_train, controls[task][0], x_test, controls[task][1], alphas=alphas, split=split,
                              max_iter=max_iter, class_weight=class_weight) if control else None)
            rows.append({"task": task, "layer": layer, "accuracy": fit.accuracy,
                         "control": ctrl.accuracy if ctrl else np.nan,
                         "selectivity": fit.accuracy - ctrl.accuracy if ctrl else np.nan,
                         "majority": majority_accuracy(y_test), "alpha": fit.alpha,
                         "control_alpha": ctrl.alpha if ctrl else np.nan,
                         "held_out_accuracy": fit.held_out_accuracy, "n_train": n_train, "n_test": n_test,
                         "train_positive_rate": float(np.mean(y_train)), "test_positive_rate": float(np.mean(y_test))})
        if layer_key is not None:
            memo[layer_key] = rows[first:]
    return pd.DataFrame(rows)


def probe_models(models: dict[str, str | Path], lang: str, tasks=DEFAULT_TASKS, cache_dir: str | Path | None = None,
                 *, max_train: int | None = None, max_test: int | None = None, seed: int = 0,
                 train: pd.DataFrame | None = None, test: pd.DataFrame | None = None,
                 train_column: str | None = None, test_column: str | None = None,
                 alphas: tuple[float, ...] = ALPHAS, held_out: float = 0.2, max_iter: int = 300,
                 control: bool = True, class_weight: str | None = "balanced", pooling: str = "mean",
                 max_length: int = 128, dtype: str = "float16", batch_size: int = 64, progress: bool = False,
                 encoder=None, reuse_results: bool = True, precision: str = "fp32") -> pd.DataFrame:
    """Probe every layer of each model for each task on one language (the one-call API).

    Training pairs are the language's RTE-style train + validation labelled by the rule annotator; test pairs
    are its diagnostic set with gold tags. Vectors are cached per model and text list in ``cache_dir``, so a
    second call (or another task list) runs no model.

    Parameters
    ----------
    models : dict
        Label -> model folder or fine-tuned run folder (``.../seed=<k>/``). Labels (or paths) with ``seed=<k>``
        give the ``seed`` column; others are the pretrained reference (seed None).
    lang : str
        ``en``, ``ru`` (or any language when ``train`` and ``test`` are given).
    tasks : str or sequence of str
        Coarse or fine category names/slugs; default the three coarse tasks of the study.
    cache_dir : str or Path, optional
        Where vectors (and annotations) are cached; no caching when None.
    max_train, max_test : int, optional
        Seeded subset sizes (the scale knobs: e.g. 600 / 400 run in a few minutes per model on 2 CPU cores).
    seed : int
        Seeds subsets, the held-out split and the control permutations.
    train, test : pandas.DataFrame, optional
        Frames to use instead of the defaults (need ``premise``, ``hypothesis`` and a list column).
    train_column, test_column : str, optional
        List columns holding categories; default ``auto_coarse``/``auto_features`` for training and
        ``coarse``/``features`` for the test (by task level).
    alphas, held_out, max_iter, control, class_weight
        Probe settings, see :func:`probe_layers`.
    pooling, max_length, dtype, batch_size, precision
        Extraction settings, see :func:`diagnostics.probe.cache.cached_sentence_vectors`.
    progress : bool
    encoder : callable, optional
        ``encoder(folder) -> (model, tokenizer)``, called only on a cache miss (default
        :func:`diagnostics.probe.extract.load_encoder`).
    reuse_results : bool
        With a ``cache_dir``, also store each model's probe table, keyed by its vector keys, the labels and
        every probe setting, and return it on an identical call (no vector read, no probe fit). False refits
        the probes on the cached vectors.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`RESULT_COLUMNS`: one row per (model, task, layer); layer 0 is the embedding output.
    """
    from .cache import cached_model_vectors, vector_key
    from .extract import load_encoder, pair_vectors

    if not models:
        raise ValueError("no model to probe")
    task_list: list[ProbingTask] = parse_tasks(tasks)
    if train is None:
        train = annotated_training_frame(lang, max_train=max_train, seed=seed, cache_dir=cache_dir, progress=progress)
    else:
        train = train.reset_index(drop=True) if max_train is None else _subsample(train, max_train, seed)
    if test is None:
        test = diagnostic_frame(lang, max_test=max_test, seed=seed)
    else:
        test = test.reset_index(drop=True) if max_test is None else _subsample(test, max_test, seed)
    train_labels = {t.name: task_labels(train, t, train_column or t.columns(gold=False)) for t in task_list}
    test_labels = {t.name: task_labels(test, t, test_column or t.columns(gold=True)) for t in task_list}

    train_texts: dict[str, int] = {}
    train_p, train_h = pair_index(train, train_texts)
    test_texts: dict[str, int] = {}
    test_p, test_h = pair_index(test, test_texts)
    probe_settings = {"alphas": [float(a) for a in alphas], "held_out": held_out, "seed": seed,
                      "max_iter": max_iter, "control": control, "class_weight": class_weight}
    label_digest = _digest_arrays([train_p, train_h, test_p, test_h]
                                  + [train_labels[t.name] for t in task_list] + [test_labels[t.name] for t in task_list],
                                  [t.name for t in task_list])
    kwargs = dict(pooling=pooling, max_length=max_length, dtype=dtype, precision=precision)
    train_keys, test_keys = list(train_texts), list(test_texts)
    tables, result_paths = {}, {}
    for label, path in models.items():
        if cache_dir is None:
            continue
        result_key = _result_key(vector_key(path, train_keys, **kwargs), vector_key(path, test_keys, **kwargs),
                                 label_digest, probe_settings)
        result_paths[label] = Path(cache_dir) / f"probe-{result_key}.json"
        if reuse_results and result_paths[label].is_file():
            tables[label] = pd.DataFrame(json.loads(result_paths[label].read_text(encoding="utf-8")))
    pending = [label for label in models if label not in tables]
    if pending:
        # the first model (the pretrained reference) leads, so top-k seeds run only their own top layers;
        # each model is loaded once for the train and the test texts
        loaded: dict = {}

        def load(folder):
            if folder not in loaded:
                loaded[folder] = (encoder or load_encoder)(folder)
            return loaded[folder]

        wanted = {label: models[label] for label in dict.fromkeys([next(iter(models)), *pending])}
        extra = dict(batch_size=batch_size, progress=progress, encoder=load, **kwargs)
        train_sent = cached_model_vectors(wanted, train_keys, cache_dir, **extra)
        test_sent = cached_model_vectors(wanted, test_keys, cache_dir, **extra)
        memo: dict = {}  # layers identical across models (frozen lower layers) are fitted once
        for label in pending:
            tables[label] = probe_layers(pair_vectors(train_sent[label], train_p, train_h), train_labels,
                                         pair_vectors(test_sent[label], test_p, test_h), test_labels,
                                         alphas=alphas, held_out=held_out, seed=seed, max_iter=max_iter,
                                         control=control, class_weight=class_weight, memo=memo)
            if label in result_paths:
                _write_json(result_paths[label], tables[label].to_dict(orient="list"))
    frames = []
    for label, path in models.items():
        table = tables[label].copy()
        table.insert(0, "language", lang)
        table.insert(0, "seed", pd.array([seed_of(label, path)] * len(table), dtype="Int64"))
        table.insert(0, "model", str(label))
        frames.append(table)
    return pd.concat(frames, ignore_index=True)[RESULT_COLUMNS]


def _digest_arrays(arrays: list[np.ndarray], names: list[str]) -> str:
    h = hashlib.sha256(json.dumps(names).encode())
    for array in arrays:
        array = np.ascontiguousarray(array, dtype=np.int64)
        h.update(len(array).to_bytes(8, "little"))
        h.update(array.tobytes())
    return h.hexdigest()


def _result_key(train_key: str, test_key: str, labels: str, settings: dict) -> str:
    raw = json.dumps({"v": RESULTS_VERSION, "train": train_key, "test": test_key, "labels": labels, **settings},
                     sort_keys=True)
    return hashlib.sha256(raw.encode()).hexdigest()[:24]


def _write_json(path: Path, payload) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    tmp.write_text(json.dumps(payload), encoding="utf-8")
    os.replace(tmp, path)


def _subsample(frame: pd.DataFrame, n: int, seed: int) -> pd.DataFrame:
    from .tasks import subsample

    return subsample(frame, n, seed)


def layer_summary(table: pd.DataFrame, metric: str = "accuracy") -> pd.DataFrame:
    """Per (language, task, layer): mean and standard deviation of ``metric`` across fine-tuned seeds, the
    pretrained model's value, and the majority baseline.

    Parameters
    ----------
    table : pandas.DataFrame
        From :func:`probe_models`.
    metric : str
        ``accuracy``, ``control`` or ``selectivity``.

    Returns
    -------
    pandas.DataFrame
        ``language, task, layer, mean, std, n_seeds, pretrained, majority`` (``std`` is the sample standard
        deviation, NaN with one seed; ``pretrained`` the mean over rows without a seed, NaN if none).
    """
    if metric not in table.columns:
        raise KeyError(f"no column {metric!r} in the probing table")
    keys = ["language", "task", "layer"]
    tuned = table[table["seed"].notna()]
    base = table[table["seed"].isna()]
    stats = tuned.groupby(keys)[metric].agg(mean="mean", std="std", n_seeds="count")
    out = table.groupby(keys)["majority"].first().to_frame().join(stats)
    out["pretrained"] = base.groupby(keys)[metric].mean()
    out["n_seeds"] = out["n_seeds"].fillna(0).astype(int)
    return out.reset_index()[keys + ["mean", "std", "n_seeds", "pretrained", "majority"]]
