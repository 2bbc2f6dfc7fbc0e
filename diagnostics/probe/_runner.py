"""Probe every layer of several models (pretrained + fine-tuned seeds) on one language: the tidy result table."""

from __future__ import annotations

import hashlib
import json
import warnings
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd

from diagnostics.core.io_utils import write_json_atomic

from ._layers import fit_layers
from ._linear import (ALPHAS, chance_level, control_labels, fit_probe, held_out_split, majority_accuracy,
                     standardise)
from ._tasks import (DEFAULT_TASKS, PROBE_LABELS, TRAIN_SETS, ProbingTask, annotate_frame, annotated_selection_frame,
                    annotated_training_frame, diagnostic_frame, feature_list_name, parse_tasks, task_labels)

RESULT_COLUMNS = ["model", "seed", "language", "task", "layer", "accuracy", "balanced_accuracy", "macro_f1",
                  "control", "control_balanced_accuracy", "selectivity", "majority", "alpha", "control_alpha",
                  "selection", "selection_accuracy", "n_train", "n_selection", "n_test", "train_positive_rate",
                  "test_positive_rate", "feature_list"]
RESULTS_VERSION = 2
#: Where a probe's L2 strength is chosen: the study's annotated RTE-style test split, or pairs held out of training.
SELECTIONS = ("test", "holdout")


def seed_of(label: str, path: str | Path | None = None) -> int | None:
    """Find the fine-tuning seed of a model.

    Parameters
    ----------
    label : str
        The model's label; a ``seed=<k>`` label (or one ending in a ``seed=<k>`` component) names a seed.
    path : str or Path, optional
        The model's folder; when it is in a run folder (see :func:`diagnostics.finetune.run_folder`), that
        run's seed wins.

    Returns
    -------
    int or None
        The seed; None for a pretrained model.
    """
    from diagnostics.finetune import run_coordinates, run_folder

    for where in ([path] if path is not None else []) + [label]:
        if run_folder(where) is not None:
            return run_coordinates(where)["seed"]
    return None


def pair_index(frame: pd.DataFrame, texts: dict[str, int]) -> tuple[np.ndarray, np.ndarray]:
    """Look up the rows of each pair's premise and hypothesis in a text -> row mapping (adds unseen texts to it).

    ``texts`` is updated in place with new rows for unseen texts; a missing text counts as ``""``. Returns the int64
    rows of the premises and of the hypotheses, one per pair.
    """
    def rows(column: str) -> np.ndarray:
        return np.array([texts.setdefault(str(t), len(texts)) for t in frame[column].fillna("")], dtype=np.int64)

    return rows("premise"), rows("hypothesis")


def probe_layers(train_vectors: np.ndarray, train_labels: dict[str, np.ndarray], test_vectors: np.ndarray,
                 test_labels: dict[str, np.ndarray], *, select_vectors: np.ndarray | None = None,
                 select_labels: dict[str, np.ndarray] | None = None, alphas: tuple[float, ...] = ALPHAS,
                 held_out: float = 0.2, seed: int = 0, max_iter: int = 300, control: bool = True,
                 class_weight: str | None = None, memo: dict | None = None, n_jobs: int = 1,
                 progress: str | None = None) -> pd.DataFrame:
    """Fit one probe (and its control) per task and layer.

    Parameters
    ----------
    train_vectors : numpy.ndarray
        ``[layers, n, d]`` pair vectors of the training set.
    train_labels : dict
        Task name -> 0/1 training labels.
    test_vectors : numpy.ndarray
        ``[layers, m, d]`` pair vectors of the test set.
    test_labels : dict
        Task name -> 0/1 test labels (the keys of ``train_labels``).
    select_vectors, select_labels : numpy.ndarray and dict, optional
        Selection set choosing each probe's L2 strength (``selection = "test"`` in the table); without it a
        seeded ``held_out`` fraction of the training pairs is held out (``selection = "holdout"``). Features are
        standardised with the training set's statistics.
    alphas : tuple of float
        L2 strengths tried (see :func:`diagnostics.probe.fit_probe`).
    held_out : float
        Fraction of the training pairs held out to choose alpha (without a selection set).
    seed : int
        Seeds the held-out split and the control permutations.
    max_iter : int
    control : bool
        Also fit the control task (train, selection and test labels each shuffled across pairs); ``control``,
        ``control_balanced_accuracy`` and ``selectivity`` are NaN otherwise.
    class_weight : {None, "balanced"}
        See :func:`diagnostics.probe.fit_probe`.
    memo : dict, optional
        Shared across calls with the same labels and settings: a layer whose train, selection and test vectors
        are bit-identical to one fitted before reuses its rows (the frozen lower layers of a top-k fine-tuned
        model equal the pretrained model's).
    n_jobs : int
        Processes fitting distinct layers at once (the rows are the same whatever it is).
    progress : str, optional
        Label of a progress bar over the layers fitted (on stderr); None shows none.

    Returns
    -------
    pandas.DataFrame
        One row per (task, layer): the columns of :data:`RESULT_COLUMNS` from ``task`` on. ``accuracy``,
        ``balanced_accuracy`` and ``macro_f1`` are on the test set (``majority`` is its majority-class share);
        ``selection`` names the protocol (``test`` or ``holdout``), ``n_train`` / ``n_selection`` count the pairs
        the probe is fit on / that chose its L2 strength (``selection_accuracy``).
    """
    if train_vectors.shape[0] != test_vectors.shape[0]:
        raise ValueError(f"train has {train_vectors.shape[0]} layers, test {test_vectors.shape[0]}")
    if set(train_labels) != set(test_labels):
        raise ValueError("train and test labels name different tasks")
    if (select_vectors is None) != (select_labels is None):
        raise ValueError("give both select_vectors and select_labels, or neither")
    if select_vectors is not None and (select_vectors.shape[0] != train_vectors.shape[0]
                                       or set(select_labels) != set(train_labels)):
        raise ValueError("the selection set differs from the training set in layers or tasks")
    split = None if select_vectors is not None else held_out_split(train_vectors.shape[1], held_out, seed)
    labels = {task: _task_labels(task, train_labels, select_labels, test_labels, seed) for task in train_labels}
    inputs = [tuple(v[layer] for v in (train_vectors, select_vectors, test_vectors) if v is not None)
              for layer in range(train_vectors.shape[0])]
    fit = partial(_probe_layer, labels=labels, split=split, alphas=alphas, max_iter=max_iter, control=control,
                  class_weight=class_weight)
    return pd.DataFrame(fit_layers(inputs, fit, memo=memo, n_jobs=n_jobs, progress=progress))


def _probe_layer(layer: int, *vectors: np.ndarray, labels: dict, **settings) -> list[dict]:
    """Every task's row on one layer: its vectors (train, selection if any, test) standardised on the training set."""
    scaled = standardise(*vectors)
    x_select = scaled[1] if len(scaled) == 3 else None
    return [_probe_row(task, layer, scaled[0], x_select, scaled[-1], task_labels, **settings)
            for task, task_labels in labels.items()]


def _task_labels(task, train_labels, select_labels, test_labels, seed) -> dict:
    """One task's labels and their control permutations (seeded per set)."""
    select = select_labels[task] if select_labels is not None else None
    return {"train": train_labels[task], "select": select, "test": test_labels[task],
            "control": (control_labels(train_labels[task], seed + 1),
                        control_labels(select, seed + 3) if select is not None else None,
                        control_labels(test_labels[task], seed + 2))}


def _probe_row(task, layer, x_train, x_select, x_test, labels, *, split, control, **settings) -> dict:
    """Fit one task's probe (and control) on one layer: its row of the result table."""
    y_train, y_select, y_test = labels["train"], labels["select"], labels["test"]
    fit = fit_probe(x_train, y_train, x_test, y_test, x_select=x_select, y_select=y_select, split=split,
                    **settings)
    ctrl = None
    if control:
        c_train, c_select, c_test = labels["control"]
        ctrl = fit_probe(x_train, c_train, x_test, c_test, x_select=x_select, y_select=c_select, split=split,
                         **settings)
    nan = float("nan")
    return {"task": task, "layer": layer, "accuracy": fit.accuracy, "balanced_accuracy": fit.balanced_accuracy,
            "macro_f1": fit.macro_f1, "control": ctrl.accuracy if ctrl else nan,
            "control_balanced_accuracy": ctrl.balanced_accuracy if ctrl else nan,
            "selectivity": fit.accuracy - ctrl.accuracy if ctrl else nan, "majority": majority_accuracy(y_test),
            "alpha": fit.alpha, "control_alpha": ctrl.alpha if ctrl else nan,
            "selection": "holdout" if x_select is None else "test", "selection_accuracy": fit.selection_accuracy,
            "n_train": len(y_train) if x_select is not None else len(split[0]),
            "n_selection": len(y_select) if x_select is not None else len(split[1]), "n_test": len(y_test),
            "train_positive_rate": float(np.mean(y_train)), "test_positive_rate": float(np.mean(y_test))}


def probe_models(models: dict[str, str | Path], lang: str, tasks=DEFAULT_TASKS, cache_dir: str | Path | None = None,
                 *, selection: str = "test", class_weight: str | None = None, max_train: int | None = None,
                 max_selection: int | None = None, max_test: int | None = None, seed: int = 0,
                 train: pd.DataFrame | None = None, test: pd.DataFrame | None = None,
                 selection_frame: pd.DataFrame | None = None, train_column: str | None = None,
                 selection_column: str | None = None, test_column: str | None = None,
                 alphas: tuple[float, ...] = ALPHAS, held_out: float = 0.2, max_iter: int = 300,
                 control: bool = True, pooling: str = "mean", max_length: int = 128, dtype: str = "float16",
                 batch_size: int = 64, progress: bool = False, encoder=None, reuse_results: bool = True,
                 precision: str = "fp32", probe_labels: str = "presence", features=None,
                 n_jobs: int = 1) -> pd.DataFrame:
    """Probe every layer of each model for each task on one language (the one-call API).

    The defaults are the study's protocol (Tikhonova et al. 2022, Appendix 8.4): probes trained on the language's
    RTE-style train + validation labelled by the rule annotator, L2 strength chosen on its RTE-style test split
    labelled the same way, no class weighting, scores on the diagnostic set's gold tags. Vectors are cached per
    model and text list in ``cache_dir``, so a second call (or another task list) runs no model.

    Parameters
    ----------
    models : dict
        Label -> model folder or fine-tuned run folder. A label (or path) with ``seed=<k>`` gives the ``seed``
        column; the others are the pretrained reference (seed None).
    lang : str
        ``en``, ``ru`` (any language when ``train`` and ``test`` are given).
    tasks : str or sequence of str
        Coarse or fine category names/slugs; default the study's three coarse tasks.
    cache_dir : str or Path, optional
        Where vectors (and annotations) are cached; None: no cache.
    selection : {"test", "holdout"}
        Where the L2 strength is chosen. ``"test"``: on ``selection_frame``, else the bundled RTE-style test split
        (RTE for en, TERRa for ru); a language without one falls back to ``"holdout"`` with a
        :class:`UserWarning` (the ``selection`` column records what ran). ``"holdout"``: on a seeded ``held_out``
        fraction of the training pairs.
    class_weight : {None, "balanced"}
    max_train, max_selection, max_test : int, optional
        Seeded subset sizes (``max_selection`` defaults to ``max_train``; None: all pairs).
    seed : int
        Seeds the subsets, the held-out split and the control permutations.
    train, test : pandas.DataFrame, optional
        Frames instead of the defaults (``premise``, ``hypothesis`` and a list column).
    selection_frame : pandas.DataFrame, optional
        Selection set for ``selection="test"``; annotated by the rule annotator unless it holds the label columns.
    train_column, selection_column, test_column : str, optional
        List columns of categories; default ``auto_coarse``/``auto_features`` for training and selection,
        ``coarse``/``features`` for the test (by task level).
    alphas : tuple of float
        L2 strengths tried (see :func:`probe_layers`).
    held_out : float
    max_iter : int
    control : bool
        Also fit the control tasks (see :func:`probe_layers`).
    pooling : {"mean", "cls"}
    max_length : int
    dtype : {"float16", "float32"}
        Storage dtype of the cached vectors.
    batch_size : int
    progress : bool
    encoder : callable, optional
        ``encoder(folder) -> (model, tokenizer)``, called on a cache miss (default
        :func:`diagnostics.probe.load_encoder`).
    reuse_results : bool
        With a ``cache_dir``, store each model's table keyed by its vectors, labels and probe settings, and return
        it on an identical call; False refits the probes on the cached vectors.
    precision : {"fp32", "bf16"}
        Compute precision of the encoders.
    probe_labels : {"presence", "differs"}
        How the annotator labels the pairs it annotates: ``"presence"`` (the study's) when either sentence shows a
        feature of ``features``; ``"differs"`` when the evidence differs between the sentences, over all features
        (:func:`diagnostics.probe.annotate_frame`).
    features : sequence of str, optional
        The features of ``"presence"``; default :data:`diagnostics.probe.STUDY_FEATURES`.
    n_jobs : int
        Processes fitting the probes of distinct layers at once (joblib; the table is the same whatever it is).

    Returns
    -------
    pandas.DataFrame
        Columns :data:`RESULT_COLUMNS`, one row per (model, task, layer); layer 0 is the embedding output.
        ``feature_list`` names the annotator's list (:func:`diagnostics.probe.feature_list_name`).
    """
    plan = plan_probes(**locals())
    tables = plan.run(plan.accuracy_fit, "probe")
    return label_tables(models, tables, lang).assign(feature_list=plan.feature_list)[RESULT_COLUMNS]


@dataclass
class ProbePlan:
    """The pair sets, labels and settings of one :func:`probe_models` call, and how to run a fit over its models.

    Built by :func:`plan_probes`; :func:`probe_models` runs :meth:`accuracy_fit` on it, and
    :func:`diagnostics.probe.probe_mdl` the online code on the same pairs and labels.

    Parameters
    ----------
    models : dict
        Label -> model or run folder.
    lang : str
    tasks : list of ProbingTask
    sets : dict
        Set name (``train``, ``test``, ``select``) -> (frame, task name -> labels).
    settings : dict
        The probes' settings that key the result cache.
    extraction : dict
        ``pooling``, ``max_length``, ``dtype``, ``precision`` of the vectors.
    feature_list : str
        Name of the annotator's feature list (:func:`diagnostics.probe.feature_list_name`).
    options : dict
        The probes' fitting and caching arguments (``alphas``, ``held_out``, ``seed``, ``max_iter``, ``control``,
        ``class_weight``, ``cache_dir``, ``reuse_results``, ``batch_size``, ``progress``, ``encoder``,
        ``n_jobs``).
    """

    models: dict
    lang: str
    tasks: list
    sets: dict
    settings: dict
    extraction: dict
    feature_list: str
    options: dict

    def accuracy_fit(self, vectors: dict, memo: dict, label: str | None = None) -> pd.DataFrame:
        """Fit the accuracy probes (and controls) of every task and layer of one model (:func:`probe_layers`)."""
        sets, o = self.sets, self.options
        return probe_layers(vectors["train"], sets["train"][1], vectors["test"], sets["test"][1],
                            select_vectors=vectors.get("select"), select_labels=sets.get("select", (None, None))[1],
                            alphas=o["alphas"], held_out=o["held_out"], seed=o["seed"], max_iter=o["max_iter"],
                            control=o["control"], class_weight=o["class_weight"], memo=memo, n_jobs=o["n_jobs"],
                            progress=f"fit probes {label or ''}".rstrip() if o["progress"] else None)

    def run(self, fit, prefix: str, settings: dict | None = None) -> dict[str, pd.DataFrame]:
        """Model label -> table of ``fit(vectors, memo, label)``, through the caches (see :func:`run_cached`)."""
        o = self.options
        return run_cached(self.models, self.sets, {**self.settings, **(settings or {})}, fit,
                          cache_dir=o["cache_dir"], reuse_results=o["reuse_results"], extraction=self.extraction,
                          batch_size=o["batch_size"], progress=o["progress"], encoder=o["encoder"], prefix=prefix)


def plan_probes(models, lang, tasks, cache_dir, *, selection, class_weight, max_train, max_selection, max_test, seed,
                train, test, selection_frame, train_column, selection_column, test_column, alphas, held_out,
                max_iter, control, pooling, max_length, dtype, batch_size, progress, encoder, reuse_results,
                precision, probe_labels, features, n_jobs) -> ProbePlan:
    """Check the arguments of :func:`probe_models` and build its pair sets and labels (annotating where needed).

    Parameters
    ----------
    models, lang, tasks, cache_dir, selection, class_weight, max_train, max_selection, max_test, seed : object
        As in :func:`probe_models` (every argument is required here).
    train, test, selection_frame, train_column, selection_column, test_column, alphas, held_out : object
        As in :func:`probe_models`.
    max_iter, control, pooling, max_length, dtype, batch_size, progress, encoder, reuse_results : object
        As in :func:`probe_models`.
    precision, probe_labels, features, n_jobs : object
        As in :func:`probe_models`.

    Returns
    -------
    ProbePlan
        The sets (name -> (frame, task -> labels)): ``train``, ``test`` and, with ``selection="test"``,
        ``select``.
    """
    if not models:
        raise ValueError("no model to probe")
    task_list: list[ProbingTask] = parse_tasks(tasks)
    if class_weight not in (None, "balanced"):
        raise ValueError(f"class_weight must be None or 'balanced', found {class_weight!r}")
    if selection not in SELECTIONS:
        raise ValueError(f"selection must be one of {', '.join(SELECTIONS)}, found {selection!r}")
    if probe_labels not in PROBE_LABELS:
        raise ValueError(f"probe_labels must be one of {', '.join(PROBE_LABELS)}, found {probe_labels!r}")
    reading = dict(labels=probe_labels, features=features)
    feature_list = feature_list_name(probe_labels, features)  # (also checks the feature names before any work)
    if train is None:
        train = annotated_training_frame(lang, max_train=max_train, seed=seed, cache_dir=cache_dir, progress=progress,
                                         **reading)
    test = diagnostic_frame(lang, max_test=max_test, seed=seed) if test is None else test
    sets = {"train": _labelled(_subsample(train, max_train, seed), task_list, train_column, gold=False),
            "test": _labelled(_subsample(test, max_test, seed), task_list, test_column, gold=True)}
    max_selection = max_train if max_selection is None else max_selection
    selection, select = choose_selection_set(lang, selection, selection_frame, task_list, max_selection=max_selection,
                                             seed=seed, cache_dir=cache_dir, progress=progress, column=selection_column,
                                             **reading)
    if select is not None:
        sets["select"] = _labelled(select, task_list, selection_column, gold=False)
    settings = {"alphas": [float(a) for a in alphas], "held_out": held_out, "seed": seed, "max_iter": max_iter,
                "control": control, "class_weight": class_weight, "selection": selection}
    options = dict(alphas=alphas, held_out=held_out, seed=seed, max_iter=max_iter, control=control,
                   class_weight=class_weight, cache_dir=cache_dir, reuse_results=reuse_results,
                   batch_size=batch_size, progress=progress, encoder=encoder, n_jobs=n_jobs)
    return ProbePlan(models=models, lang=lang, tasks=task_list, sets=sets, settings=settings,
                     extraction=dict(pooling=pooling, max_length=max_length, dtype=dtype, precision=precision),
                     feature_list=feature_list, options=options)


def _labelled(frame: pd.DataFrame, tasks: list[ProbingTask], column: str | None,
              gold: bool) -> tuple[pd.DataFrame, dict[str, np.ndarray]]:
    """A frame and its task labels, from ``column`` or each task's gold / annotator column."""
    return frame, {t.name: task_labels(frame, t, column or t.columns(gold=gold)) for t in tasks}


def choose_selection_set(lang: str, selection: str, frame: pd.DataFrame | None, tasks: list[ProbingTask], *,
                         max_selection: int | None = None, seed: int = 0, cache_dir: str | Path | None = None,
                         progress: bool = False, column: str | None = None, labels: str = "presence",
                         features=None) -> tuple[str, pd.DataFrame | None]:
    """The protocol that will run and its selection frame (see ``selection`` in :func:`probe_models`).

    Parameters
    ----------
    lang : str
    selection : {"test", "holdout"}
        The protocol asked for.
    frame : pandas.DataFrame, optional
        A user selection set (``premise``, ``hypothesis``); annotated by ``lang``'s rule annotator unless it
        holds ``column`` (or every task's annotator column) already.
    tasks : list of ProbingTask
        The tasks whose annotator columns the frame needs.
    max_selection : int, optional
        Seeded subset size.
    seed : int
        Seed of the subset.
    cache_dir : str or Path, optional
        Annotation cache.
    progress : bool
        Show progress bars while annotating.
    column : str, optional
        The frame's label column.
    labels : {"presence", "differs"}
        The annotator's reading (see :func:`diagnostics.probe.annotate_frame`).
    features : sequence of str, optional
        The features of ``"presence"``.

    Returns
    -------
    (str, pandas.DataFrame or None)
        ``("test", frame)``, or ``("holdout", None)`` when asked for or when ``lang`` has no bundled RTE-style
        test split and no frame is given (then with a :class:`UserWarning`).
    """
    if selection not in SELECTIONS:
        raise ValueError(f"selection must be one of {', '.join(SELECTIONS)}, found {selection!r}")
    if selection == "holdout":
        return "holdout", None
    if frame is not None:
        frame = _subsample(frame, max_selection, seed)
        needed = {column} if column else {t.columns(gold=False) for t in tasks}
        if not needed <= set(frame.columns):
            frame = annotate_frame(frame, lang, cache_dir=cache_dir, progress=progress, labels=labels,
                                   features=features)
        return "test", frame
    if lang not in TRAIN_SETS:
        warnings.warn(f"no bundled RTE-style test split for language {lang!r} (have {', '.join(TRAIN_SETS)}): the "
                      f"probes' L2 strength is chosen on pairs held out of the training set (selection='holdout') "
                      f"instead of the study's protocol; pass selection_frame= to choose it on a test split",
                      UserWarning, stacklevel=3)
        return "holdout", None
    return "test", annotated_selection_frame(lang, max_selection=max_selection, seed=seed, cache_dir=cache_dir,
                                             progress=progress, labels=labels, features=features)


def run_cached(models: dict, sets: dict[str, tuple[pd.DataFrame, dict]], settings: dict, fit, *, cache_dir,
               reuse_results: bool, extraction: dict, batch_size: int, progress: bool, encoder,
               prefix: str) -> dict[str, pd.DataFrame]:
    """Each model's table, read from the result cache or fitted on its (cached) pair vectors.

    ``models`` maps label -> model or run folder, the first being the reference of the shared-layer encoding; the tables
    come in that order. ``sets`` maps name -> (frame, task labels) of every pair set the probes use; their texts, labels
    and ``settings`` (every setting of ``fit``, JSON-serialisable) key the result cache.
    ``fit(vectors, memo, label) -> DataFrame`` gets ``vectors`` as set name -> ``[layers, pairs, 2 * hidden]`` and the
    model's label; ``memo`` is shared across the models.

    ``cache_dir`` holds the vector and result caches (None caches nothing); ``reuse_results`` returns a stored result
    table on an identical call (see :func:`probe_models`). ``extraction`` holds ``pooling``, ``max_length``, ``dtype``,
    ``precision``. ``encoder(folder) -> (model, tokenizer)`` defaults to :func:`diagnostics.probe.load_encoder`.
    ``prefix`` is the file-name prefix of the result entries (``<prefix>-<key>.json``).
    """
    from ._cache import cached_model_vectors, vector_key
    from ._extract import load_encoder, pair_vectors

    texts = {name: {} for name in sets}
    index = {name: pair_index(frame, texts[name]) for name, (frame, _) in sets.items()}
    digest = _digest_arrays([a for name in sets for a in index[name]]
                            + [labels[t] for _, labels in sets.values() for t in labels],
                            [[name, list(labels)] for name, (_, labels) in sets.items()])
    tables, paths = {}, {}
    for label, path in models.items():
        if cache_dir is None:
            continue
        keys = {name: vector_key(path, list(texts[name]), **extraction) for name in sets}
        paths[label] = Path(cache_dir) / f"{prefix}-{_result_key(keys, digest, settings)}.json"
        if reuse_results and paths[label].is_file():
            tables[label] = pd.DataFrame(json.loads(paths[label].read_text(encoding="utf-8")))
    pending = [label for label in models if label not in tables]
    if not pending:
        return {label: tables[label] for label in models}
    # the first model (the pretrained reference) leads, so top-k seeds run only their own top layers;
    # each model is loaded once for all text lists
    loaded: dict = {}

    def load(folder):
        if folder not in loaded:
            loaded[folder] = (encoder or load_encoder)(folder)
        return loaded[folder]

    wanted = {label: models[label] for label in dict.fromkeys([next(iter(models)), *pending])}
    sentences = {name: cached_model_vectors(wanted, list(texts[name]), cache_dir, batch_size=batch_size,
                                            progress=progress, encoder=load, **extraction) for name in sets}
    memo: dict = {}  # layers identical across models (frozen lower layers) are fitted once
    for label in pending:
        vectors = {name: pair_vectors(sentences[name][label], *index[name]) for name in sets}
        tables[label] = fit(vectors, memo, label)
        if label in paths:
            _write_json(paths[label], tables[label].to_dict(orient="list"))
    return {label: tables[label] for label in models}


def label_tables(models: dict, tables: dict[str, pd.DataFrame], lang: str) -> pd.DataFrame:
    """Concatenate per-model tables with ``model``, ``seed`` and ``language`` columns in front.

    ``models`` (label -> model or run folder) gives the output order and the seed (:func:`seed_of`, as nullable
    integers); ``lang`` fills the ``language`` column.
    """
    frames = []
    for label, path in models.items():
        table = tables[label].copy()
        table.insert(0, "language", lang)
        table.insert(0, "seed", pd.array([seed_of(label, path)] * len(table), dtype="Int64"))
        table.insert(0, "model", str(label))
        frames.append(table)
    return pd.concat(frames, ignore_index=True)


def _digest_arrays(arrays: list[np.ndarray], names: list) -> str:
    h = hashlib.sha256(json.dumps(names).encode())
    for array in arrays:
        array = np.ascontiguousarray(array, dtype=np.int64)
        h.update(len(array).to_bytes(8, "little"))
        h.update(array.tobytes())
    return h.hexdigest()


def _result_key(vector_keys: dict[str, str], labels: str, settings: dict) -> str:
    raw = json.dumps({"v": RESULTS_VERSION, "vectors": vector_keys, "labels": labels, **settings}, sort_keys=True)
    return hashlib.sha256(raw.encode()).hexdigest()[:24]


def _write_json(path: Path, payload) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_json_atomic(path, payload, indent=None, sort_keys=False, default=None)


def _subsample(frame: pd.DataFrame, n: int | None, seed: int) -> pd.DataFrame:
    from ._tasks import subsample

    return subsample(frame, n, seed)


def layer_summary(table: pd.DataFrame, metric: str = "accuracy") -> pd.DataFrame:
    """Per (language, task, layer): mean and standard deviation of ``metric`` across fine-tuned seeds, the
    pretrained model's value, the majority baseline and the metric's chance level.

    Parameters
    ----------
    table : pandas.DataFrame
        From :func:`probe_models` (or :func:`diagnostics.probe.probe_gold_cv`).
    metric : str
        Any metric column: ``accuracy``, ``balanced_accuracy``, ``macro_f1``, ``control``,
        ``control_balanced_accuracy`` or ``selectivity``.

    Returns
    -------
    pandas.DataFrame
        ``language, task, layer, mean, std, n_seeds, pretrained, majority, chance`` (``std`` is the sample
        standard deviation, NaN with one seed; ``pretrained`` the mean over rows without a seed, NaN if none;
        ``chance`` what always predicting the majority class scores on ``metric``, see
        :func:`diagnostics.probe.chance_level`: the majority share for accuracy, 0.5 for balanced accuracy).
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
    out["chance"] = [chance_level(metric, m) for m in out["majority"]]
    return out.reset_index()[keys + ["mean", "std", "n_seeds", "pretrained", "majority", "chance"]]


def seed_separation(table: pd.DataFrame, metrics=("balanced_accuracy",)) -> pd.DataFrame:
    """How far the fine-tuned seeds lie from the pretrained model, per layer, in units of their own spread.

    For each metric, from :func:`layer_summary`: the pretrained model's value, the seeds' mean and sample standard
    deviation, ``difference = mean - pretrained`` and ``separation = difference / std`` (NaN with fewer than two
    seeds or no spread beyond rounding). Metrics on different scales (accuracy, MDL compression, codelength in bits)
    become comparable through ``separation``: the larger its magnitude, the more clearly the metric tells the
    fine-tuned models from the pretrained one beyond seed noise.

    Parameters
    ----------
    table : pandas.DataFrame
        From :func:`probe_models`, :func:`diagnostics.probe.probe_gold_cv` or :func:`diagnostics.probe.probe_mdl`.
    metrics : str or sequence of str
        Metric columns of ``table``.

    Returns
    -------
    pandas.DataFrame
        ``language, task, layer, metric, pretrained, mean, std, n_seeds, difference, separation``, one row per
        metric and layer.
    """
    frames = []
    for metric in [metrics] if isinstance(metrics, str) else list(metrics):
        summary = layer_summary(table, metric)
        summary["difference"] = summary["mean"] - summary["pretrained"]
        spread = summary["std"].where(summary["std"] > 1e-12 * summary["mean"].abs().clip(lower=1.0))
        summary["separation"] = summary["difference"] / spread
        frames.append(summary.assign(metric=metric))
    columns = ["language", "task", "layer", "metric", "pretrained", "mean", "std", "n_seeds", "difference",
               "separation"]
    return pd.concat(frames, ignore_index=True)[columns]
