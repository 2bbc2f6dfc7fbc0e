"""A group of runs trained as one (``fuse``): lock, train fused, predict together, store every run on its own.

The runs of a group differ only in their seed (see :mod:`.grouping`). They are prepared once (data, tokenisation,
cached features), trained by :func:`~.fused.fit_fused`, predicted in one pass per evaluation batch, and each is
stored exactly as :func:`~.train.train_run` stores a run: its own folder, ``config.json``, ``versions.json``,
``metrics.json`` (with a ``fused`` record: the group's seeds, its size, precision and TF32 setting),
``predictions.parquet``, optional checkpoint and ``DONE``. A run that another process holds is left out of the
group (reported ``locked``); killing a group loses its unfinished runs only, which the next sweep trains again.
"""

from __future__ import annotations

import time
import traceback
from contextlib import ExitStack
from typing import Any

import numpy as np
import torch

from . import _store as store
from ._run_lock import RunLock, RunLockedError
from ._fused import StackedClassifiers, batched_validator, fit_fused, predict_proba_stacked
from ._inputs import prepare_inputs
from ._modeling import load_classifier
from ._predict import SetPredictions, prediction_table
from ._quality import category_summary
from ._resources import PeakMemory, protocol_figures
from ._train import (RunSpec, _autocast_dtype, _Clock, _metrics, _resources, _run_columns, _scores, _torch_settings,
                    _write_predictions, _write_run_settings, feature_folder, label_ids, resolve_model_path, train_run)


def train_group(specs: list[RunSpec], *, progress: bool | None = None) -> list[dict[str, Any]]:
    """Train, evaluate and store runs that differ only in their seed as one fused group.

    ``specs`` share one experiment, language and model; ``progress`` defaults to the config's ``progress``. Returns
    one outcome per run, in the order of ``specs``: ``{"path", "state", "metrics"}`` as :func:`~.train.train_run`
    returns them, or ``{"path", "state": "locked", "error"}`` for a run another process holds. What training raises
    is re-raised once every run of the group has a ``FAILED`` file with the traceback.
    """
    outcomes: dict[str, dict[str, Any]] = {}
    with ExitStack() as locks:
        todo = []
        for spec in specs:
            if store.is_done(spec.path):
                outcomes[str(spec.path)] = _skipped(spec)
                continue
            try:
                locks.enter_context(RunLock(spec.path))
            except RunLockedError as err:
                outcomes[str(spec.path)] = {"path": str(spec.path), "state": "locked",
                                            "error": f"{type(err).__name__}: {err}"}
                continue
            if store.is_done(spec.path):  # finished by another process between the check and the lock
                outcomes[str(spec.path)] = _skipped(spec)
                continue
            store.clear_partial(spec.path)
            todo.append(spec)
        if len(todo) == 1:
            locks.close()
            outcomes[str(todo[0].path)] = train_run(todo[0], progress=progress)
        elif todo:
            try:
                metrics = _train(todo, progress)
            except BaseException:
                for spec in todo:
                    store.mark_failed(spec.path, traceback.format_exc())
                raise
            for spec, run_metrics in zip(todo, metrics):
                store.mark_done(spec.path, {"best": run_metrics["best"],
                                            "finished": time.strftime("%Y-%m-%dT%H:%M:%S")})
                outcomes[str(spec.path)] = {"path": str(spec.path), "state": "done", "metrics": run_metrics}
    return [outcomes[str(spec.path)] for spec in specs]


def _skipped(spec: RunSpec) -> dict[str, Any]:
    return {"path": str(spec.path), "state": "skipped", "metrics": store._read_json(spec.path / "metrics.json")}


def _train(specs: list[RunSpec], progress: bool | None) -> list[dict[str, Any]]:
    """Fine-tune the group, predict every set for every run, store each run's files; returns their metrics."""
    config, model_spec, language = specs[0].sweep, specs[0].model_spec, specs[0].language
    show = config.progress if progress is None else progress
    seeds = [spec.seed for spec in specs]
    with _torch_settings(config) as device:
        amp = _autocast_dtype(config, device)
        for spec in specs:
            _write_run_settings(spec.path, spec, config, device, amp)
        clock = _Clock()
        with PeakMemory() as memory:
            if device.startswith("cuda"):
                torch.cuda.reset_peak_memory_stats()
            model_path = resolve_model_path(model_spec)
            data = prepare_inputs(config, language, model_path, feature_folder(config, model_spec), device=device,
                                  amp=amp, show=show)
            models = [load_classifier(model_path, seed=seed, dropout=config.dropout, top_k=config.train_top_k_layers,
                                      freeze_embeddings=config.freeze_embeddings, head=config.classifier_head) for seed in seeds]
            clock.init_s = time.perf_counter() - clock.started
            gold_train = torch.from_numpy(np.array(label_ids(data.train_frame["label"])))
            gold_val, inputs_val = label_ids(data.eval_frames["validation"]["label"]), data.inputs["validation"]
            if config.recipe == "jiant" and config.val_data_limit is not None:
                gold_val, inputs_val = gold_val[:config.val_data_limit], inputs_val.head(config.val_data_limit)
            fitted = fit_fused(models, data.inputs["train"], gold_train, config, seeds=seeds, device=device, amp=amp,
                               validate=batched_validator(inputs_val, gold_val, config.eval_batch_size, device, amp,
                                                          _scores),
                               show=show, desc=f"{config.experiment} {language} {model_spec.name} seeds {seeds}")
            predicted = _predict(models, specs, data, config, device, amp)
            if config.save_checkpoint:
                from ._modeling import save_checkpoint

                for spec, model in zip(specs, models):
                    save_checkpoint(model, model_path, spec.path / "checkpoint", data.tokenizer)
            cuda_peak = torch.cuda.max_memory_allocated() if device.startswith("cuda") else None
        group = {"seeds": seeds, "size": len(specs), "precision": config.precision, "autocast": str(amp),
                 "tf32": bool(torch.backends.cuda.matmul.allow_tf32),
                 "skip_padding": False}
        out = []
        for spec, model, fit, pred in zip(specs, models, fitted, predicted):
            _write_predictions(spec.path, pred.tables)
            resources = _resources(clock, memory.peak, cuda_peak, fit, data, pred)
            resources |= protocol_figures(model_path, language, device, config.output_dir,
                                          fit.best["validation_accuracy"])
            metrics = _metrics(config, fit, data.train_frame, model, pred, resources, device) | {"fused": group}
            store.write_json_atomic(spec.path / "metrics.json", metrics)
            out.append(metrics)
    return out


def _predict(models, specs: list[RunSpec], data, config, device: str, amp) -> list[SetPredictions]:
    """Every run's predictions of every evaluation set but validation, the runs stacked in one pass per batch."""
    stack = StackedClassifiers(models, device)
    out = [SetPredictions() for _ in specs]
    started = time.perf_counter()
    for name, frame in data.eval_frames.items():
        if name == "validation":
            continue
        proba = predict_proba_stacked(stack, data.inputs[name], config.eval_batch_size, device, amp)
        for spec, pred, row in zip(specs, out, proba):
            columns = _run_columns(spec, config, spec.model_spec)
            pred.records += len(frame)
            pred.tables.append(prediction_table(columns, name, frame, row, spec.model_spec.pretrain_seed))
            pred.categories[name] = category_summary(frame, row)
    share = (time.perf_counter() - started) / len(specs)  # each run's share of the group's prediction time
    for pred in out:
        pred.seconds = share
    return out
