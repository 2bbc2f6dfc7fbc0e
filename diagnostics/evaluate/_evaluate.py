"""``evaluate_models``: score finished NLI classifiers on diagnostic or NLI sets, stored as runs of a run store.

Each model (a folder, a hub id, ``embedded``, a checkpoint a sweep saved) becomes one run per language of the sets
asked for: ``<out>/<experiment>/<language>/<model>/seed=<k>/``. Several models are named as seeds of one model by
``name`` and ``seeds`` / ``seed_pattern``, so the stability statistics apply to checkpoints trained elsewhere. The
model's ``config.id2label`` decides which class is which label (:func:`~diagnostics.evaluate.head_labels`);
P(entailment) is the softmax mass of the classes mapped to entailment, and the prediction is entailment when that
mass is at least 0.5: the decision of the collapsed two-way head, the rule of the sweep's own tables
(:func:`diagnostics.finetune.prediction_table`). A run already finished with the same
model fingerprint, sets, label rule, length and precision is not evaluated again.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from diagnostics.core.errors import UserInputError
from diagnostics.data import DataRef

#: Default experiment name of evaluated runs.
EXPERIMENT = "evaluated"


@dataclass(frozen=True)
class EvalModel:
    """One model to evaluate, resolved, with the run coordinates it gets.

    Parameters
    ----------
    given : str
        What the user passed.
    path : Path
        Its local folder.
    name : str
        The ``model`` coordinate (the run folder's name is its slug).
    seed : int
        The ``seed`` coordinate.
    source : str
        ``embedded``, ``local`` or ``hf-cache``.
    run_settings : dict
        The sweep settings recorded by the run whose checkpoint this is (empty for other models).
    """

    given: str
    path: Path
    name: str
    seed: int
    source: str
    run_settings: dict = field(default_factory=dict)


@dataclass
class Evaluation:
    """What :func:`evaluate_models` did.

    Parameters
    ----------
    runs : pandas.DataFrame
        One row per run: ``experiment, language, model, seed, state`` (``done`` or ``skipped``: finished before),
        ``path``, ``rows``, ``seconds``.
    predictions : pandas.DataFrame
        The predictions tables of those runs, concatenated.
    datasets : dict
        The sets scored, name -> :class:`~diagnostics.data.DataRef` (its split, or the user's file): pass it as
        ``datasets`` / ``dataset`` to the statistics (:func:`~diagnostics.evaluate.slice_by_feature`,
        :func:`diagnostics.stats.category_scores`), which then read those sets as they were scored.
    """

    runs: pd.DataFrame
    predictions: pd.DataFrame
    datasets: dict = field(default_factory=dict)


def dataset_refs(items: Sequence[str | DataRef]) -> list[DataRef]:
    """Read the sets to evaluate on: ``NAME``, ``NAME:SPLIT`` or ``NAME=PATH`` (a user file in NAME's format).

    Parameters
    ----------
    items : sequence of str or DataRef
        As given to ``--dataset``. A registered set with several splits needs its split (``rte:validation``).

    Returns
    -------
    list of DataRef
        One reference per item.

    Raises
    ------
    UserInputError
        An unknown set or split, a missing file, a set with several splits named without one, or a set given twice.
    """
    from diagnostics.data import get_spec, user_file_refs
    from diagnostics.settings import split_pair

    refs: list[DataRef] = []
    for item in items:
        if isinstance(item, DataRef):
            refs.append(item)
            continue
        name, sep, _ = split_pair(item)
        if sep:
            refs.append(user_file_refs([item])[name.strip()])
            continue
        ref = DataRef.parse(item.strip())
        try:
            spec = get_spec(ref.name)
        except KeyError as err:
            raise UserInputError(f"--dataset {item!r}: {err.args[0] if err.args else err}") from None
        splits = list(spec.splits)
        if not splits:
            raise UserInputError(f"--dataset {item!r}: {ref.name} is not bundled; give its file as "
                                 f"{ref.name}=PATH")
        if ref.split is None:
            if len(splits) > 1:
                raise UserInputError(f"--dataset {item!r}: {ref.name} has the splits {', '.join(splits)}; name one, "
                                     f"e.g. {ref.name}:{'validation' if 'validation' in splits else splits[0]}")
            ref = DataRef(ref.name, splits[0])
        elif ref.split not in splits:
            raise UserInputError(f"--dataset {item!r}: {ref.name} has no split {ref.split!r} "
                                 f"(it has {', '.join(splits)})")
        refs.append(ref)
    names = [ref.name for ref in refs]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise UserInputError(f"--dataset: {', '.join(twice)} given twice (a run holds one table per set)")
    if not refs:
        raise UserInputError("--dataset: name at least one set (axb, lidirus, swediagnostics, rte:validation ...)")
    return refs


def _seed_of(pattern: re.Pattern | None, text: str) -> tuple[int, str] | None:
    """The seed the pattern finds in ``text`` (its last occurrence) and the text without it."""
    if pattern is None:
        return None
    found = None
    for found in pattern.finditer(text):
        pass
    if found is None:
        raise UserInputError(f"{text}: the seed pattern '{pattern.pattern}' does not occur in it")
    value = found.groupdict().get("seed") or found.group(1)
    try:
        seed = int(value)
    except (TypeError, ValueError):
        raise UserInputError(f"{text}: the seed pattern '{pattern.pattern}' found {value!r}, not an integer") \
            from None
    rest = text[:found.start()] + text[found.end():]
    return seed, rest


def _compile(seed_pattern: str | None) -> re.Pattern | None:
    if seed_pattern is None:
        return None
    try:
        pattern = re.compile(seed_pattern)
    except re.error as err:
        raise UserInputError(f"--seed-pattern '{seed_pattern}': not a regular expression ({err})") from None
    if pattern.groups == 0:
        raise UserInputError(f"--seed-pattern '{seed_pattern}': needs a group, e.g. seed(?P<seed>\\d+)")
    return pattern


def _stem(text: str) -> str:
    """A model name from what is left of a path or hub id once its seed is cut out."""
    cleaned = re.sub(r"/{2,}", "/", text).strip("/-_.=")
    cleaned = re.sub(r"[-_.=]+(?=/|$)", "", cleaned)
    if Path(text).expanduser().exists() or cleaned.count("/") > 1 or cleaned.startswith((".", "~")):
        parts = [p for p in Path(cleaned).parts if p not in ("checkpoint", ".", "..")]
        cleaned = parts[-1] if parts else cleaned
    return cleaned or "model"


def resolve_models(models: Sequence[str], *, name: str | None = None, seeds: Sequence[int] | None = None,
                   seed_pattern: str | None = None) -> list[EvalModel]:
    """Resolve the models and give each its ``model`` and ``seed`` coordinates.

    Parameters
    ----------
    models : sequence of str
        Model folders, hub ids, ``embedded``, or checkpoints a sweep saved (``.../seed=<k>/checkpoint``).
    name : str, optional
        The ``model`` coordinate of every model (several checkpoints as seeds of one model). Default: a sweep's
        checkpoint keeps its run's model; with ``seed_pattern``, the path without the seed; else the model's name.
    seeds : sequence of int, optional
        The seed of each model, in order.
    seed_pattern : str, optional
        A regular expression searched in each model as given (last occurrence): group ``seed`` (or the first) is
        the seed, e.g. ``seed(\\d+)``.

    Returns
    -------
    list of EvalModel
        One per model, in order. Without seeds, a sweep's checkpoint keeps its run's seed, and models that share a
        name are numbered 0, 1, ... in order.

    Raises
    ------
    UserInputError
        A seed count that does not match, a pattern that does not match, or two models with one name and seed.
    """
    from diagnostics.finetune import Run, run_folder
    from diagnostics.models import resolve_model

    if not models:
        raise UserInputError("evaluate: give at least one model (a folder, a hub id or 'embedded')")
    if seeds is not None and len(seeds) != len(models):
        raise UserInputError(f"--seeds: {len(seeds)} seed(s) for {len(models)} model(s)")
    pattern = _compile(seed_pattern)
    out, counts = [], {}
    for index, given in enumerate(models):
        ref = resolve_model(given)
        found = _seed_of(pattern, str(given))
        run = Run.at(ref.path) if run_folder(ref.path) is not None and ref.source == "local" else None
        settings: dict = {}
        if run is not None:
            try:
                settings = run.config().get("sweep") or {}
            except (OSError, ValueError):  # a checkpoint moved out of its run, or a damaged record: no defaults
                settings = {}
        model_name = name or (run.model if run is not None and run.model and found is None else None) \
            or (_stem(found[1]) if found is not None else ref.name)
        if seeds is not None:
            seed = int(seeds[index])
        elif found is not None:
            seed = found[0]
        elif run is not None:
            seed = run.seed
        else:
            seed = counts.get(model_name, 0)
        counts[model_name] = max(counts.get(model_name, 0), seed + 1)
        out.append(EvalModel(str(given), Path(ref.path), model_name, seed, ref.source, settings))
    seen: dict[tuple[str, int], str] = {}
    for model in out:
        key = (model.name, model.seed)
        if key in seen:
            raise UserInputError(f"{seen[key]} and {model.given} both become model {model.name!r} seed {model.seed}; "
                                 "give --seeds or --seed-pattern to tell the seeds apart, or --name")
        seen[key] = model.given
    return out


def _revision(model: EvalModel) -> str | None:
    """The hub revision (commit) of a model from the Hugging Face cache: its snapshot folder's name."""
    return model.path.name if model.source == "hf-cache" else None


def _language_of(ref: DataRef) -> str:
    from diagnostics.data import get_spec

    return ref.language or get_spec(ref.name).language


def _sweep_settings(model: EvalModel, language: str, refs: list[DataRef], experiment: str, out: Path,
                    max_length: int, batch_size: int, precision: str, device: str):
    """The inference settings as a sweep config (the store's checks verify the run hash of this section)."""
    from diagnostics.finetune import LANGUAGE_DEFAULTS, ModelSpec, SweepConfig

    diagnostic = [ref for ref in refs if _kind(ref) == "diagnostic"]
    others = [ref for ref in refs if _kind(ref) != "diagnostic"]
    as_value = [_ref_value(ref) for ref in diagnostic]
    data = {"diagnostics": as_value}
    defaults = LANGUAGE_DEFAULTS.get(language, {})
    if not defaults.get("train") or not defaults.get("validation"):  # none bundled: the evaluated set stands in
        data |= {"train": _ref_value(refs[0]), "validation": _ref_value(refs[0])}
    settings = {"experiment": experiment, "output_dir": str(out),
                "models": [ModelSpec(model.name, str(model.path))], "languages": [language], "seeds": [model.seed],
                "data": {language: data}, "extra_eval": {language: [_ref_value(ref) for ref in others]},
                "max_seq_length": max_length, "eval_batch_size": batch_size,
                "precision": precision, "device": device if device in ("cpu", "mps") or device.startswith("cuda")
                else "auto", "truncation": "pair", "progress": False}
    return SweepConfig(**settings)


def _kind(ref: DataRef) -> str:
    from diagnostics.data import get_spec

    return get_spec(ref.name).kind


def _ref_value(ref: DataRef) -> dict[str, Any]:
    return {k: v for k, v in (("name", ref.name), ("split", ref.split), ("path", ref.path),
                              ("language", ref.language)) if v is not None}


def _default_max_length(model: EvalModel, tokenizer) -> int:
    """The run's own maximum length for a sweep's checkpoint; else the tokenizer's limit, at most 512."""
    recorded = model.run_settings.get("max_seq_length")
    if isinstance(recorded, int) and recorded >= 8:
        return recorded
    limit = getattr(tokenizer, "model_max_length", None)
    return int(min(limit, 512)) if isinstance(limit, int) and limit > 0 else 512


def evaluate_models(models: Sequence[str], datasets: Sequence[str | DataRef], *, out: str | Path = "runs",
                    experiment: str = EXPERIMENT, name: str | None = None, seeds: Sequence[int] | None = None,
                    seed_pattern: str | None = None, label_map: str | dict | None = None,
                    batch_size: int = 64, max_length: int | None = None, device: str = "auto",
                    precision: str = "fp32", progress: bool = True) -> Evaluation:
    """Score NLI classifiers on diagnostic / NLI sets and store every (model, language) as a run.

    Parameters
    ----------
    models : sequence of str
        Model folders, hub ids (as transformers resolves them: cache, then the hub unless offline), ``embedded``,
        or checkpoints a sweep saved.
    datasets : sequence of str or DataRef
        ``axb``, ``lidirus``, ``swediagnostics``, ``rte:validation``, ``NAME=PATH`` ... (see :func:`dataset_refs`).
    out : str or Path
        The run store.
    experiment : str
        The ``experiment`` coordinate.
    name : str, optional
        The ``model`` coordinate of every model (see :func:`resolve_models`).
    seeds : sequence of int, optional
        The seed of each model, in order.
    seed_pattern : str, optional
        A regular expression finding each model's seed in what was given (see :func:`resolve_models`).
    label_map : str or dict, optional
        Overrides of the head's label rule (see :func:`~diagnostics.evaluate.head_labels`).
    batch_size : int
        Pairs per forward pass.
    max_length : int, optional
        Tokens per pair (the joined pair is cut, longest side first). Default: a sweep checkpoint's own setting,
        else the tokenizer's limit (at most 512).
    device : str
        ``auto`` (CUDA, then Apple ``mps``, then the CPU), ``cpu``, ``cuda[:n]`` or ``mps``.
    precision : str
        ``fp32``, ``bf16`` or ``fp16`` (autocast; fp16 on a GPU only).
    progress : bool
        Show progress bars.

    Returns
    -------
    Evaluation
        The runs (done now or finished before) and their predictions.

    Raises
    ------
    UserInputError
        Bad options, an unmappable head, or a run folder holding another evaluation with the same coordinates.
    """
    from diagnostics.finetune import ModelSpec, Run, run_dir
    from diagnostics.models import load_tokenizer, model_fingerprint

    from ._infer import autocast_dtype, load_classifier_head, pick_device
    from ._labels import describe_rule, head_labels

    if batch_size < 1:
        raise UserInputError(f"--batch-size: expected an integer >= 1, found {batch_size}")
    if max_length is not None and max_length < 8:
        raise UserInputError(f"--max-length: expected an integer >= 8, found {max_length}")
    refs = dataset_refs(datasets)
    resolved = resolve_models(models, name=name, seeds=seeds, seed_pattern=seed_pattern)
    torch_device = pick_device(device)
    amp = autocast_dtype(precision, torch_device)
    by_language: dict[str, list[DataRef]] = {}
    for ref in refs:
        by_language.setdefault(_language_of(ref), []).append(ref)
    frames = {ref.name: ref.load() for ref in refs}
    rows, tables = [], []
    for model in resolved:
        id2label = _id2label(model.path)
        labels = head_labels(id2label, label_map, what=model.given)
        tokenizer = load_tokenizer(model.path)
        length = max_length or _default_max_length(model, tokenizer)
        base = {"model": model.name, "model_given": model.given, "model_path": str(model.path),
                "source": model.source, "revision": _revision(model), "fingerprint": model_fingerprint(model.path),
                "label_rule": describe_rule(id2label, labels), "max_length": length,
                "truncation": "pair", "precision": precision}
        loaded = None
        for language, sets in by_language.items():
            record = base | {"kind": "evaluation", "datasets": [_ref_value(ref) for ref in sets]}
            sweep = _sweep_settings(model, language, sets, experiment, Path(out), length, batch_size, precision,
                                    torch_device)
            path = run_dir(out, experiment, language, ModelSpec(model.name).slug, model.seed)
            state = _finished_state(path, record)
            coords = {"experiment": experiment, "language": language, "model": model.name, "seed": model.seed}
            if state == "skipped":
                table = Run.at(path).predictions()
                rows.append(coords | {"state": state, "path": str(path), "rows": len(table), "seconds": 0.0})
                tables.append(table)
                continue
            if loaded is None:
                loaded = load_classifier_head(model.path)
            started = time.perf_counter()
            table, metrics = _score_sets(loaded, tokenizer, sets, frames, labels, coords, length, batch_size,
                                         torch_device, amp, progress)
            seconds = time.perf_counter() - started
            metrics |= {"kind": "evaluation", "inference_s": seconds, "device": torch_device,
                        "autocast": str(amp), "examples_per_s": len(table) / seconds if seconds > 0 else None,
                        "label_rule": record["label_rule"]}
            from ._runs import write_evaluation_run

            write_evaluation_run(path, run=coords | {"run_hash": sweep.run_hash()}, sweep=sweep.to_dict(),
                                 evaluation=record, metrics=metrics, predictions=table, device=torch_device,
                                 autocast=str(amp))
            rows.append(coords | {"state": "done", "path": str(path), "rows": len(table), "seconds": seconds})
            tables.append(table)
        del loaded
    runs = pd.DataFrame(rows, columns=["experiment", "language", "model", "seed", "state", "path", "rows",
                                       "seconds"])
    return Evaluation(runs, pd.concat(tables, ignore_index=True) if tables else pd.DataFrame(),
                      {ref.name: ref for ref in refs})


def _id2label(path: Path) -> dict:
    """The head's class names as transformers reads them (a head saved with the default names omits them)."""
    from transformers import AutoConfig

    from ._infer import require_classifier

    require_classifier(path)
    return dict(AutoConfig.from_pretrained(str(path)).id2label)


def _finished_state(path: Path, record: dict[str, Any]) -> str:
    """``skipped`` when ``path`` holds this evaluation finished; ``pending`` when it holds nothing finished."""
    from ._runs import evaluation_key, stored_evaluation

    from diagnostics.finetune import is_done

    if not is_done(path):
        return "pending"
    stored = stored_evaluation(path)
    if stored is None:
        raise UserInputError(f"{path}: holds a finished trained run, not an evaluation; evaluate into another "
                             "--experiment or --out")
    old, new = evaluation_key(stored), evaluation_key(record)
    if old != new:
        changed = ", ".join(k for k in new if old.get(k) != new.get(k))
        raise UserInputError(f"{path}: holds a finished evaluation with other {changed}; evaluate into another "
                             "--experiment (or --name / --seeds), or delete that folder")
    return "skipped"


def _score_sets(model, tokenizer, sets: list[DataRef], frames: dict[str, pd.DataFrame], labels: list[str],
                coords: dict[str, Any], max_length: int, batch_size: int, device: str, amp,
                progress: bool) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The predictions table of one run (every set of its language) and its metrics per set."""
    from diagnostics.core.schema import ENTAILMENT
    from diagnostics.finetune import encode_pairs, prediction_table
    from diagnostics.predictions import scores_to_predictions
    from diagnostics.stats import mcc

    from ._infer import class_logits

    tables, per_set = [], {}
    for ref in sets:
        frame = frames[ref.name]
        inputs = encode_pairs(tokenizer, frame, max_length, "pair")
        logits = class_logits(model, inputs, batch_size=batch_size, device=device, amp=amp, progress=progress,
                              desc=f"{coords['model']} seed {coords['seed']} {ref.name}")
        probability = scores_to_predictions(logits, labels)[1]
        table = prediction_table(coords, ref.key, frame, probability)
        prediction = table["prediction"].to_numpy(dtype=object)
        tables.append(table)
        gold = frame["label"]
        known = gold.notna().to_numpy()
        if known.any():
            y = (gold[known] == ENTAILMENT).to_numpy(dtype=np.int64)
            p = (prediction[known] == ENTAILMENT).astype(np.int64)
            per_set[ref.key] = {"examples": int(known.sum()), "accuracy": float(np.mean(y == p)),
                                "mcc": mcc(y, p), "predicted_entailment_share": float(np.mean(p))}
    return pd.concat(tables, ignore_index=True), {"datasets": per_set}
