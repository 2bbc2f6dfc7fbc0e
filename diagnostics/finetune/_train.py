"""The one lifecycle of every job: a queue of runs trained in K slots as one (a single run is a group of one).

A job holds runs that share a training key (:mod:`.grouping`: one model and step shapes; experiments, languages,
sizes and seeds may differ). Each run is skipped when finished, locked (a run another process holds is left out and
reported ``locked``), cleared of a partial earlier attempt, and marked failed (``FAILED`` with the traceback),
interrupted (Ctrl+C) or done (``DONE``, written last); every file goes through the writer of the run's lease
(:mod:`._run_writer`), and a run whose lease another host took over ends alone, reported ``lost``. The engine
(:func:`~.fused.fit_runs`) trains the runs K at a time; a run's data (mixture, tokenisation, cached features) is
prepared when it takes a slot, once per experiment and language, and
each run is predicted and stored in its own folder the moment it stops, before the next run takes its slot:
``config.json``, ``versions.json``, ``metrics.json`` (with a ``fused`` record: the job's slots and runs, precision
and TF32 setting), ``predictions.parquet`` and an optional checkpoint. Killing a job loses its unfinished runs only,
which the next sweep trains again. On CPU a seed fully determines a run in a job of a given composition (same
thread count): torch's RNG is seeded before each head is initialised, batch orders come from a generator seeded
with the run's seed, and deterministic algorithms are requested.
"""

from __future__ import annotations

import os
import time
import traceback
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch

from diagnostics.core.schema import CLASS_LABELS
from diagnostics.stats import mcc

from . import _store as store
from ._config import ModelSpec, SweepConfig
from ._fused import EngineRun, RunData, StackedClassifiers, batched_validator, fit_runs, predict_proba_stacked
from ._inputs import RunInputs, prepare_inputs
from ._interrupts import raise_if_interrupted, watching_interrupts
from ._loop import FitResult
from ._predict import SetPredictions, prediction_table
from ._quality import category_summary
from ._resources import PeakMemory, fitness_mib, protocol_figures
from ._run_lock import RunLock, RunLockedError, RunLockLost
from ._run_spec import RunSpec
from ._recipes import get_recipe
from ._resume import RESUME_FOLDER, keeps_resume, load_resume, resume_enabled, save_resume
from ._run_writer import RunWriter
from ._store_checks import DAMAGED, NEWER, UNREADABLE, finished_state, reopen_corrupt


def resolve_model_path(model: ModelSpec) -> Path:
    """Find the local folder of a model through the one resolver, :func:`diagnostics.models.resolve_model`.

    Parameters
    ----------
    model : ModelSpec
        The model's name and, optionally, its folder (``path`` wins).

    Returns
    -------
    Path
        A Hugging Face model folder with safetensors weights.

    Raises
    ------
    FileNotFoundError
        Not a model folder, or a hub id neither cached nor obtainable
        (:class:`~diagnostics.models.ModelNotAvailableError`).
    """
    from diagnostics.models import resolve_model

    return Path(resolve_model(model.path or model.name).path)


def label_ids(labels: pd.Series) -> np.ndarray:
    """Map label names to int64 class ids: ``entailment`` -> 1, ``not_entailment`` -> 0 (missing labels -> -1)."""
    mapping = {name: i for i, name in enumerate(CLASS_LABELS)}
    return labels.map(lambda x: mapping.get(x, -1)).to_numpy(dtype=np.int64)


def _device(config: SweepConfig) -> str:
    """The torch device a config asks for (``auto``: CUDA when available)."""
    if config.device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    return config.device


def _autocast_dtype(config: SweepConfig, device: str) -> torch.dtype | None:
    """The autocast dtype of a config's precision on ``device``; ``None`` for full precision."""
    if device == "cpu":
        # opt-in only: fp32 stays the CPU default; without native bf16 the emulation would be slower than fp32
        from diagnostics.models import cpu_bf16_supported

        return torch.bfloat16 if config.precision == "bf16" and cpu_bf16_supported() else None
    if not device.startswith("cuda") or config.precision in ("fp32", "tf32"):
        return None
    if config.precision == "fp16":
        return torch.float16
    if config.precision == "bf16" or torch.cuda.is_bf16_supported():
        return torch.bfloat16
    return torch.float16


def _scores(gold: np.ndarray, proba: np.ndarray) -> dict[str, float]:
    """Accuracy, MCC and share of predicted entailment of probabilities thresholded at 0.5."""
    pred = (proba >= 0.5).astype(np.int64)
    return {"accuracy": float(np.mean(pred == gold)), "mcc": mcc(gold, pred),
            "predicted_entailment_share": float(np.mean(pred))}


def train_run(spec: RunSpec, *, progress: bool | None = None) -> dict[str, Any]:
    """Train, evaluate and store one run: a group of one (:func:`train_group`).

    Parameters
    ----------
    spec : RunSpec
        Config (as a dict), language, model and seed.
    progress : bool, optional
        Show a progress bar (defaults to the config's ``progress``).

    Returns
    -------
    dict
        ``{"path", "state": "done"|"skipped", "metrics"}``.

    Raises
    ------
    RunLockedError
        Another live process trains this run.
    """
    outcome = train_group([spec], progress=progress, slots=1)[0]
    if outcome["state"] == "locked":
        raise RunLockedError(outcome["error"].split(": ", 1)[-1])
    return outcome


def train_group(specs: list[RunSpec], *, progress: bool | None = None,
                slots: int | None = None) -> list[dict[str, Any]]:
    """Train, evaluate and store a job's runs, K at a time in one computation (one run: a group of one).

    Parameters
    ----------
    specs : list of RunSpec
        Runs of one training key (:func:`~diagnostics.finetune._grouping.training_key`), in queue order.
    progress : bool, optional
        Show a progress bar (defaults to the first config's ``progress``).
    slots : int, optional
        Runs trained at once; by default the first config's ``fuse`` (``auto``: what fits the device), at most the
        runs to train.

    Returns
    -------
    list of dict
        One outcome per run, in the order of ``specs``: ``{"path", "state": "done"|"skipped", "metrics"}``;
        ``{"path", "state": "locked", "error"}`` for a run another process holds; ``{"path", "state": "lost",
        "error"}`` for a run whose lease another host took over while this job trained it (that run ends, the
        others go on); ``{"path", "state": "failed", "error"}`` for a finished run this version must not touch (a
        newer ``DONE``). Each run is claimed (done? -> lease -> done again? -> clear a partial attempt) when it takes
        a slot and released once stored, so the runs still queued stay free for other processes; every write goes
        through the lease's :class:`~._run_writer.RunWriter`. What training raises is re-raised once every run the
        job still holds has a marker: ``INTERRUPTED`` for Ctrl+C or an exit, ``FAILED`` with the traceback otherwise.
    """
    job = _Ownership()
    try:
        with watching_interrupts():
            _train_runs(specs, slots, progress, job)
    except BaseException as err:
        job.abort(err)
        raise
    finally:
        job.release_all()
    return [job.outcomes[str(spec.path)] for spec in specs]


class _Ownership:
    """The runs a job holds: their leases and writers, and what became of each run."""

    def __init__(self):
        self.outcomes: dict[str, dict[str, Any]] = {}
        self.writers: dict[str, RunWriter] = {}

    def claim(self, spec: RunSpec) -> bool:
        """Done? -> lease -> done again? -> clear a partial attempt: whether this job trains the run now."""
        key = str(spec.path)
        if store.is_done(spec.path) and self._keep_finished(spec):
            return False
        try:
            lock = RunLock(spec.path).acquire()
        except RunLockedError as err:
            self.outcomes[key] = {"path": key, "state": "locked", "error": f"{type(err).__name__}: {err}"}
            return False
        writer = self.writers[key] = RunWriter(lock)
        try:
            if store.is_done(spec.path):  # finished meanwhile, or damaged: withdrawn under the lease
                if self._keep_finished(spec):
                    self.release(spec)
                    return False
                reopen_corrupt(spec.path, writer)  # the sweep said so when it queued the run
            config = spec.sweep
            kept = (RESUME_FOLDER,) if resume_enabled(config) and keeps_resume(spec.path, config.run_hash()) else ()
            writer.clear_partial(keep=kept)
        except RunLockLost as err:
            self.lose(spec, err)
            return False
        return True

    def _keep_finished(self, spec: RunSpec) -> bool:
        """Whether a finished run stays as it is (sound, unreadable or newer): its outcome is recorded."""
        key = str(spec.path)
        state, problems = finished_state(spec.path)
        if state == DAMAGED:
            return False
        if state == NEWER:
            self.outcomes[key] = {"path": key, "state": "failed", "error": f"{spec.path}: {problems[0]}"}
            return True
        if state == UNREADABLE:
            warnings.warn(f"{spec.path}: finished run left alone: {'; '.join(problems)}", stacklevel=2)
        self.outcomes[key] = _skipped(spec)
        return True

    def writer(self, spec: RunSpec) -> RunWriter:
        return self.writers[str(spec.path)]

    def gone(self, spec: RunSpec) -> bool:
        """Whether the job lost the run's lease (its heartbeat saw another owner)."""
        writer = self.writers.get(str(spec.path))
        return writer is not None and writer.lock.lost is not None

    def lose(self, spec: RunSpec, err: RunLockLost | None = None) -> None:
        """The run's lease was taken over: it ends here, as an error of that run alone."""
        key = str(spec.path)
        writer = self.writers.pop(key, None)
        message = str(err) if err is not None else writer.lock.lost_message() if writer else f"run {key}: lease lost"
        self.outcomes[key] = {"path": key, "state": "lost", "error": f"RunLockLost: {message}"}
        if writer is not None:
            writer.discard()  # this token's staging only: the new owner's files are not touched
            writer.lock.release()  # only stops the heartbeat: the lease is no longer ours

    def done(self, spec: RunSpec, metrics: dict[str, Any]) -> None:
        self.writer(spec).remove_folder(RESUME_FOLDER)
        self.writer(spec).mark_done({"best": metrics["best"], "finished": time.strftime("%Y-%m-%dT%H:%M:%S")})
        self.outcomes[str(spec.path)] = {"path": str(spec.path), "state": "done", "metrics": metrics}
        self.release(spec)

    def release(self, spec: RunSpec) -> None:
        writer = self.writers.pop(str(spec.path), None)
        if writer is not None:
            writer.lock.release()

    def abort(self, err: BaseException) -> None:
        """Mark every run still held: ``INTERRUPTED`` for Ctrl+C or an exit (a requeued SLURM job's), else
        ``FAILED`` with the traceback."""
        for writer in self.writers.values():
            if isinstance(err, KeyboardInterrupt):
                writer.mark_interrupted("SIGINT: the training was interrupted (Ctrl+C)")
            elif isinstance(err, SystemExit):
                writer.mark_interrupted(f"the process exited while training (SystemExit {err.code}), e.g. its SLURM "
                                        "job requeued itself")
            else:
                writer.mark_failed(traceback.format_exc())

    def release_all(self) -> None:
        for writer in self.writers.values():
            writer.discard()
            writer.lock.release()
        self.writers.clear()


@contextmanager
def owned_run(path: str | Path) -> Iterator[RunWriter]:
    """Hold a run folder's lease while a block writes the run through its writer (for runs made without training).

    Claims the run (:class:`~._run_lock.RunLock`), clears what an earlier attempt left, yields the lease's
    :class:`~._run_writer.RunWriter` and gives the lease back after the block. A block that raises leaves ``FAILED``
    with the traceback.

    Parameters
    ----------
    path : str or Path
        The run folder (created when missing).

    Yields
    ------
    RunWriter
        The writer of the held lease; call its ``mark_done`` last.

    Raises
    ------
    RunLockedError
        Another live process holds the run.
    """
    writer = RunWriter(RunLock(Path(path)).acquire())
    try:
        writer.clear_partial()
        yield writer
    except BaseException:
        writer.mark_failed(traceback.format_exc())
        raise
    finally:
        writer.discard()
        writer.lock.release()


def _skipped(spec: RunSpec) -> dict[str, Any]:
    try:
        metrics = store._read_json(spec.path / "metrics.json")
    except OSError:  # an unreadable finished run is left alone
        metrics = None
    return {"path": str(spec.path), "state": "skipped", "metrics": metrics}


def job_slots(config: SweepConfig, specs: list[RunSpec], device: str | None = None) -> int:
    """The slots of a job: ``fuse``, or what ``auto`` measures on the device.

    Parameters
    ----------
    config : SweepConfig
        Supplies ``fuse`` (and, for ``auto``, the sizes :func:`~diagnostics.finetune._grouping.run_memory_bytes`
        reads).
    specs : list of RunSpec
        The job's runs (``auto`` takes no more slots than runs).
    device : str, optional
        Where the job trains; the config's device by default.

    Returns
    -------
    int
        At least 1.
    """
    if config.fuse != "auto":
        return max(1, int(config.fuse))
    from ._grouping import auto_group_size

    return auto_group_size(resolve_model_path(specs[0].model_spec), config, device or _device(config), len(specs))


class _JobData:
    """Each (experiment, language)'s data, prepared when its first run takes a slot and dropped after its last."""

    def __init__(self, specs: list[RunSpec], model_path: Path, device: str, amp, show: bool):
        self.model_path, self.device, self.amp, self.show = model_path, device, amp, show
        self.users: dict[tuple[str, str], int] = {}
        for spec in specs:
            self.users[self.key(spec)] = self.users.get(self.key(spec), 0) + 1
        self.prepared: dict[tuple[str, str], tuple[RunInputs, torch.Tensor, Any]] = {}

    @staticmethod
    def key(spec: RunSpec) -> tuple[str, str]:
        return spec.config["experiment"], spec.language

    def get(self, spec: RunSpec) -> tuple[RunInputs, torch.Tensor, Any]:
        """The run's inputs, training labels and validation function (shared by the runs of its key)."""
        key = self.key(spec)
        if key not in self.prepared:
            config = spec.sweep
            data = prepare_inputs(config, spec.language, self.model_path, feature_folder(config, spec.model_spec),
                                  device=self.device, amp=self.amp, show=self.show)
            gold_train = torch.from_numpy(np.array(label_ids(data.train_frame["label"])))
            gold_val, inputs_val = label_ids(data.eval_frames["validation"]["label"]), data.inputs["validation"]
            limit = get_recipe(config.recipe).validation_limit(config)
            if limit is not None:
                gold_val, inputs_val = gold_val[:limit], inputs_val.head(limit)
            validate = batched_validator(inputs_val, gold_val, config.eval_batch_size, self.device, self.amp, _scores)
            self.prepared[key] = (data, gold_train, validate)
        return self.prepared[key]

    def release(self, spec: RunSpec) -> None:
        """One run of the key is stored: drop the key's data after its last run."""
        key = self.key(spec)
        self.users[key] -= 1
        if not self.users[key]:
            self.prepared.pop(key, None)


def _train_runs(specs: list[RunSpec], slots: int | None, progress: bool | None, job: _Ownership) -> None:
    """Fine-tune the job's runs in their slots; as each ends, predict every set and store its files.

    A run is claimed (``job.claim(spec)``: skipped, locked elsewhere, or this job's) when it would take a slot, so the
    runs still queued stay free for other processes. A run whose lease is lost leaves its slot at the next step.
    """
    lead, model_spec = specs[0].sweep, specs[0].model_spec
    show = lead.progress if progress is None else progress
    with _torch_settings(lead) as device:
        amp = _autocast_dtype(lead, device)
        slots = min(len(specs), slots or job_slots(lead, specs, device))
        model_path = resolve_model_path(model_spec)
        data_of = _JobData(specs, model_path, device, amp, show)
        skip_padding = lead.skip_padding and slots == 1  # stacked runs go through vmap, which cannot gather tokens
        clocks: dict[int, _Clock] = {}
        resumed: dict[int, int] = {}  # run -> the step of the check an earlier attempt saved, where it went on
        with PeakMemory() as memory:
            if device.startswith("cuda"):
                torch.cuda.reset_peak_memory_stats()

            def join(index: int) -> RunData | None:
                raise_if_interrupted()
                spec, config = specs[index], specs[index].sweep
                if not job.claim(spec):
                    data_of.release(spec)
                    return None
                clocks[index] = clock = _Clock()
                try:
                    _write_run_settings(job.writer(spec), spec, config, device, amp)
                except RunLockLost as err:
                    job.lose(spec, err)
                    data_of.release(spec)
                    return None
                data, gold_train, validate = data_of.get(spec)
                model = _build_model(config, model_path, spec.seed, skip_padding and index == 0)
                resume = load_resume(spec.path, config.run_hash()) if resume_enabled(config) else None
                if resume is not None:
                    resumed[index] = resume["meta"]["counters"]["step"]
                clock.init_s = time.perf_counter() - clock.started
                return RunData(model, data.inputs["train"], gold_train, validate, resume)

            def finished(index: int, run: RunData, fit: FitResult) -> None:
                spec = specs[index]
                try:
                    store_run(index, run, fit)
                except RunLockLost as err:
                    job.lose(spec, err)
                finally:
                    data_of.release(spec)

            def checked(index: int, state) -> None:
                spec = specs[index]
                if not resume_enabled(spec.sweep) or job.gone(spec):
                    return
                try:
                    save_resume(job.writer(spec), state(), spec.sweep.run_hash())
                except RunLockLost:
                    pass  # the engine drops the run at its next step (gone)

            def gone(index: int) -> bool:
                raise_if_interrupted()  # asked after every step: an interrupt a library swallowed ends the job here
                if not job.gone(specs[index]):
                    return False
                job.lose(specs[index])
                data_of.release(specs[index])
                return True

            def store_run(index: int, run: RunData, fit: FitResult) -> None:
                spec, config = specs[index], specs[index].sweep
                writer = job.writer(spec)
                data = data_of.get(spec)[0]
                pred = _predict(run.model, spec, data, config, device, amp)
                if config.save_checkpoint:
                    from ._modeling import save_checkpoint

                    writer.write_folder(store.CHECKPOINT_FOLDER,
                                        lambda folder: save_checkpoint(run.model, model_path, folder, data.tokenizer))
                writer.write_predictions(_predictions_table(pred.tables))
                cuda_peak = torch.cuda.max_memory_allocated() if device.startswith("cuda") else None
                resources = _resources(clocks.pop(index), memory.peak, cuda_peak, fit, data, pred)
                resources |= protocol_figures(model_path, spec.language, device, config.output_dir,
                                              fit.best["validation_accuracy"])
                group = {"slots": slots, "runs": len(specs), "precision": config.precision, "autocast": str(amp),
                         "tf32": bool(torch.backends.cuda.matmul.allow_tf32), "skip_padding": skip_padding}
                metrics = _metrics(config, fit, data.train_frame, run.model, pred, resources, device) | {
                    "fused": group, "resumed_at_step": resumed.get(index)}
                writer.write_json("metrics.json", metrics)
                job.done(spec, metrics)

            runs = [EngineRun(spec.seed, spec.sweep, lambda i=i: join(i)) for i, spec in enumerate(specs)]
            what = (f"{specs[0].config['experiment']} {specs[0].describe()}" if len(specs) == 1 else
                    f"{len(specs)} runs of {model_spec.name} in {slots} slots")
            fit_runs(runs, slots=slots, device=device, amp=amp, show=show, desc=what, finished=finished, gone=gone,
                     checked=checked)


def _build_model(config: SweepConfig, model_path: Path, seed: int, skip_padding: bool):
    """A run's classifier, its head initialised from its seed; ``skip_padding`` hooks it to skip padding."""
    from ._modeling import load_classifier

    model = load_classifier(model_path, seed=seed, dropout=config.dropout, top_k=config.train_top_k_layers,
                            freeze_embeddings=config.freeze_embeddings, head=config.classifier_head)
    if skip_padding:
        from ._unpadding import enable_unpadding

        enable_unpadding(model)
    return model


def _predict(model, spec: RunSpec, data: RunInputs, config: SweepConfig, device: str, amp) -> SetPredictions:
    """A run's predictions of every evaluation set but validation."""
    stack = StackedClassifiers([model], device)
    out = SetPredictions()
    started = time.perf_counter()
    columns = _run_columns(spec, config, spec.model_spec)
    for name, frame in data.eval_frames.items():
        if name == "validation":
            continue
        proba = predict_proba_stacked(stack, data.inputs[name], config.eval_batch_size, device, amp)[0]
        out.records += len(frame)
        out.tables.append(prediction_table(columns, name, frame, proba, spec.model_spec.pretrain_seed))
        out.categories[name] = category_summary(frame, proba)
    out.seconds = time.perf_counter() - started
    return out


@contextmanager
def _torch_settings(config: SweepConfig) -> Iterator[str]:
    """Apply the run's thread count, determinism and TF32 settings; yield its device; restore the settings after."""
    previous_threads = torch.get_num_threads()
    if config.num_threads:
        torch.set_num_threads(config.num_threads)
    device = _device(config)
    if device.startswith("cuda"):
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    previous_det = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(config.deterministic, warn_only=True)
    previous_tf32 = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    tf32 = config.precision == "tf32" and device.startswith("cuda")
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = tf32
    try:
        yield device
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = previous_tf32
        torch.use_deterministic_algorithms(previous_det)
        torch.set_num_threads(previous_threads)


def _write_run_settings(writer: RunWriter, spec: RunSpec, config: SweepConfig, device: str,
                        amp: torch.dtype | None) -> None:
    """Record what the run is (``config.json``) and what it runs on (``versions.json``)."""
    model_spec = spec.model_spec
    writer.write_json(store.RUN_CONFIG, {"run": {"experiment": config.experiment, "language": spec.language,
                                                 "model": model_spec.name, "seed": spec.seed,
                                                 "pretrain_seed": model_spec.pretrain_seed,
                                                 "run_hash": config.run_hash()},
                                         "sweep": config.to_dict()})
    writer.write_json("versions.json", store.library_versions() | {
        "device": device, "autocast": str(amp), "tf32": bool(torch.backends.cuda.matmul.allow_tf32)})


@dataclass
class _Clock:
    """Wall and CPU time since a run started its work, and how long its set-up took."""

    started: float = field(default_factory=time.perf_counter)
    cpu_started: float = field(default_factory=time.process_time)
    init_s: float = 0.0


def _run_columns(spec: RunSpec, config: SweepConfig, model_spec: ModelSpec) -> dict[str, Any]:
    """The constant columns that identify a run in its predictions table."""
    return {"experiment": config.experiment, "language": spec.language, "model": model_spec.name, "seed": spec.seed}


def _predictions_table(tables: list[pd.DataFrame]) -> pd.DataFrame:
    """The predictions of every diagnostic set as one table (the run's ``predictions.parquet``)."""
    return pd.concat(tables, ignore_index=True) if tables else pd.DataFrame(columns=store.PREDICTION_COLUMNS)


def _resources(clock: _Clock, rss_peak: int, cuda_peak: int | None, fitted: FitResult, data: RunInputs,
               predicted: SetPredictions) -> dict[str, Any]:
    """Throughput, memory and timings of the training run (training and inference together; not MOROCCO's)."""
    counters = fitted.counters
    examples = counters.train_examples
    peak_mib = (cuda_peak if cuda_peak is not None else rss_peak) / 2**20
    inference_rps = predicted.records / predicted.seconds if predicted.seconds > 0 and predicted.records else None
    return {
        "train_peak_memory_mib": round(peak_mib, 1),
        "train_peak_memory_kind": "cuda_max_allocated" if cuda_peak is not None else "rss",
        "train_peak_rss_mib": round(rss_peak / 2**20, 1),
        "train_examples_per_s": examples / counters.train_seconds if counters.train_seconds > 0 else None,
        "mean_padded_length": counters.padded_tokens / examples if examples else None,
        "mean_length": counters.real_tokens / examples if examples else None,
        "inference_records_per_s": inference_rps,
        "init_s": clock.init_s,
        "frozen_features_computed_s": data.features_computed_s,
        "train_s": counters.train_seconds,
        "inference_s": predicted.seconds,
        "total_s": time.perf_counter() - clock.started,
        "cpu_s": time.process_time() - clock.cpu_started,  # all threads; wall time is inflated when cores are shared
        "load_average_1min": os.getloadavg()[0],
        "fitness_train_mib": fitness_mib(fitted.best["validation_accuracy"], inference_rps, peak_mib),
    }


def _metrics(config: SweepConfig, fitted: FitResult, train_frame: pd.DataFrame, model, predicted: SetPredictions,
             resources: dict[str, Any], device: str) -> dict[str, Any]:
    """The ``metrics.json`` of a run: selection, history, diagnostic scores per set, resources."""
    metrics = {
        "selection_metric": config.selection_metric,
        "best": fitted.best,
        "history": fitted.history,
        "steps": fitted.counters.step,
        "train_examples": int(len(train_frame)),
        "train_composition": train_frame["dataset"].value_counts().to_dict(),
        "trainable_parameters": int(sum(p.numel() for p in model.parameters() if p.requires_grad)),
        "diagnostics": {t["dataset"].iat[0]: _scores(label_ids(t["label"]), t["probability"].to_numpy())
                        | predicted.categories.get(t["dataset"].iat[0], {})
                        for t in predicted.tables if t["label"].notna().all() and len(t)},
        "resources": resources,
        "device": device,
    }
    if config.presence is not None:
        controlled = train_frame["has_feature"].dropna().astype(bool)
        metrics["presence"] = {"feature": config.presence.feature, "within": config.presence.within,
                               "share": float(controlled.mean()), "controlled_pairs": int(len(controlled))}
    return metrics


def feature_folder(config: SweepConfig, model: ModelSpec) -> Path:
    """Locate the store of a model's frozen-layer features, shared by every language and experiment of a run store.

    ``<output_dir>/.cache/features/<model slug>``. Examples are keyed by model fingerprint, k, max length, dtypes and
    token ids, so sharing is safe and saves the examples that mixtures have in common (e.g. the same SICK pairs in
    the English and Russian mixtures).
    """
    return Path(config.output_dir) / ".cache" / "features" / model.slug
