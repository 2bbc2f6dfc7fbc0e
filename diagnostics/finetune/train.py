"""One run: fine-tune with one seed, keep the best validation epoch, predict every diagnostic set, store it.

The loop is plain torch on a transformers model: dynamic padding, optional length bucketing, AdamW with linear
warm-up/decay, gradient clipping, evaluation on validation every epoch, early stopping, bf16/fp16 autocast on CUDA.
On CPU a seed fully determines the run (same thread count): torch's RNG is seeded before the head is initialised,
batch orders come from a seeded generator and deterministic algorithms are requested.
"""

from __future__ import annotations

import math
import os
import time
import traceback
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch

from diagnostics.models.loading import load_tokenizer
from diagnostics.schema import CLASS_LABELS
from diagnostics.stats.mcc import mcc

from . import store
from .batching import batch_order, encode_pairs, length_sorted_batches
from .config import ModelSpec, SweepConfig
from .mixtures import evaluation_sets, training_mixture
from .quality import category_summary
from .resources import PeakMemory, fitness


@dataclass
class RunSpec:
    """Coordinates of one run (picklable: sent to pool / SLURM / Ray workers)."""

    config: dict[str, Any]
    language: str
    model: dict[str, Any]
    seed: int

    @property
    def sweep(self) -> SweepConfig:
        return SweepConfig.from_dict(self.config)

    @property
    def model_spec(self) -> ModelSpec:
        return ModelSpec(**self.model)

    @property
    def path(self) -> Path:
        cfg = self.config
        return store.run_dir(cfg["output_dir"], cfg["experiment"], self.language, self.model_spec.slug, self.seed)

    def describe(self) -> str:
        return f"{self.language}/{self.model_spec.slug}/seed={self.seed}"


def resolve_model_path(model: ModelSpec) -> Path:
    """Local folder of a model: ``model.path``, an existing folder, or :func:`diagnostics.models.resolve_model`."""
    if model.path:
        path = Path(model.path)
        if not (path / "config.json").exists():
            raise FileNotFoundError(f"model {model.name!r}: {path} is not a Hugging Face folder (no config.json)")
        return path
    if (Path(model.name) / "config.json").exists():
        return Path(model.name)
    try:
        from diagnostics.models import resolve_model
    except ImportError as err:
        raise ImportError(f"model {model.name!r} is neither a local folder nor resolvable: diagnostics.models is "
                          f"unavailable ({err})") from err
    return Path(resolve_model(model.name))


def label_ids(labels: pd.Series) -> np.ndarray:
    """``entailment`` -> 1, ``not_entailment`` -> 0 (missing labels -> -1)."""
    mapping = {name: i for i, name in enumerate(CLASS_LABELS)}
    return labels.map(lambda x: mapping.get(x, -1)).to_numpy(dtype=np.int64)


def _device(config: SweepConfig) -> str:
    if config.device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    return config.device


def _autocast_dtype(config: SweepConfig, device: str) -> torch.dtype | None:
    if device == "cpu":
        # opt-in only: fp32 stays the CPU default; without native bf16 the emulation would be slower than fp32
        from diagnostics.models.precision import cpu_bf16_supported

        return torch.bfloat16 if config.precision == "bf16" and cpu_bf16_supported() else None
    if not device.startswith("cuda") or config.precision == "fp32":
        return None
    if config.precision == "fp16":
        return torch.float16
    if config.precision == "bf16" or torch.cuda.is_bf16_supported():
        return torch.bfloat16
    return torch.float16


@torch.no_grad()
def predict_proba(model, inputs, batch_size: int, device: str, amp: torch.dtype | None) -> np.ndarray:
    """P(entailment) per example, in input order (batches sorted by length internally)."""
    model.eval()
    out = np.empty(len(inputs), dtype=np.float64)
    for batch in length_sorted_batches(inputs.lengths, batch_size):
        kwargs = {k: v.to(device) for k, v in inputs.batch(batch).items()}
        with torch.autocast(device.split(":")[0], dtype=amp or torch.float32, enabled=amp is not None):
            logits = model(**kwargs).logits.float()
        out[batch] = torch.softmax(logits, dim=-1)[:, 1].cpu().numpy()
    return out


def _scores(gold: np.ndarray, proba: np.ndarray) -> dict[str, float]:
    pred = (proba >= 0.5).astype(np.int64)
    return {"accuracy": float(np.mean(pred == gold)), "mcc": mcc(gold, pred),
            "predicted_entailment_share": float(np.mean(pred))}


def train_run(spec: RunSpec, *, progress: bool | None = None) -> dict[str, Any]:
    """Train, evaluate and store one run; skip it when finished; refuse when another process holds it.

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
    path = spec.path
    if store.is_done(path):
        return {"path": str(path), "state": "skipped", "metrics": store._read_json(path / "metrics.json")}
    with store.RunLock(path):
        if store.is_done(path):  # finished by another process between the check and the lock
            return {"path": str(path), "state": "skipped", "metrics": store._read_json(path / "metrics.json")}
        store.clear_partial(path)
        try:
            metrics = _train(spec, path, progress)
        except BaseException:
            (path / "FAILED").write_text(traceback.format_exc(), encoding="utf-8")
            raise
        store.mark_done(path, {"best": metrics["best"], "finished": time.strftime("%Y-%m-%dT%H:%M:%S")})
    return {"path": str(path), "state": "done", "metrics": metrics}


def _train(spec: RunSpec, path: Path, progress: bool | None) -> dict[str, Any]:
    from tqdm.auto import tqdm

    config = spec.sweep
    model_spec = spec.model_spec
    show = config.progress if progress is None else progress
    previous_threads = torch.get_num_threads()
    if config.num_threads:
        torch.set_num_threads(config.num_threads)
    device = _device(config)
    if device.startswith("cuda"):
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    previous_det = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(config.deterministic, warn_only=True)
    amp = _autocast_dtype(config, device)

    store.write_json_atomic(path / "config.json", {"run": {"experiment": config.experiment, "language": spec.language,
                                                           "model": model_spec.name, "seed": spec.seed,
                                                           "pretrain_seed": model_spec.pretrain_seed,
                                                           "run_hash": config.run_hash()},
                                                   "sweep": config.to_dict()})
    store.write_json_atomic(path / "versions.json", store.library_versions() | {"device": device,
                                                                                "autocast": str(amp)})
    t_start, cpu_start = time.perf_counter(), time.process_time()
    try:
        with PeakMemory() as memory:
            if device.startswith("cuda"):
                torch.cuda.reset_peak_memory_stats()
            model_path = resolve_model_path(model_spec)
            tokenizer = load_tokenizer(model_path)
            train_frame = training_mixture(config, spec.language)
            eval_frames = evaluation_sets(config, spec.language)
            encoded = {"train": encode_pairs(tokenizer, train_frame, config.max_seq_length)}
            encoded |= {name: encode_pairs(tokenizer, frame, config.max_seq_length)
                        for name, frame in eval_frames.items()}
            features_computed_s = 0.0
            if config.train_top_k_layers is not None:
                from .features import FeatureCache

                cache = FeatureCache(feature_folder(config, model_spec), model_path,
                                     config.train_top_k_layers, config.max_seq_length, config.feature_dtype,
                                     device=device, batch_size=config.eval_batch_size, progress=show, autocast=amp)
                inputs = {}
                for name, enc in encoded.items():
                    t0 = time.perf_counter()
                    inputs[name], computed = cache.get(name, enc)
                    features_computed_s += (time.perf_counter() - t0) if computed else 0.0
            else:
                inputs = encoded
            from .modeling import load_classifier, parameter_groups, trainable_state

            model = load_classifier(model_path, seed=spec.seed, dropout=config.dropout,
                                    top_k=config.train_top_k_layers,
                                    freeze_embeddings=config.freeze_embeddings).to(device)
            if config.skip_padding:
                from .unpadding import enable_unpadding

                enable_unpadding(model)
            init_s = time.perf_counter() - t_start

            gold_train = torch.from_numpy(np.array(label_ids(train_frame["label"])))
            gold_val = label_ids(eval_frames["validation"]["label"])
            generator = torch.Generator().manual_seed(spec.seed)
            steps_per_epoch = math.ceil(len(train_frame) / config.batch_size)
            total_steps = steps_per_epoch * config.max_epochs
            if config.max_steps:
                total_steps = min(total_steps, config.max_steps)
            optimizer = _optimizer(config, parameter_groups(model, config.lr, config.head_lr, config.weight_decay))
            scheduler = _scheduler(config, optimizer, total_steps)
            scaler = torch.amp.GradScaler("cuda") if amp == torch.float16 else None

            pad_to = config.max_seq_length if config.pad_to_max_length else None
            history, best, best_state, bad_epochs = [], None, None, 0
            step, train_examples, train_seconds, padded_tokens, real_tokens = 0, 0, 0.0, 0, 0
            bar = tqdm(total=total_steps, desc=spec.describe(), leave=False, disable=not show)
            for epoch in range(1, config.max_epochs + 1):
                model.train()
                t_epoch, losses = time.perf_counter(), []
                for batch in batch_order(inputs["train"].lengths, config.batch_size, generator,
                                         bucketing=config.length_bucketing):
                    kwargs = {k: v.to(device) for k, v in inputs["train"].batch(batch, pad_to=pad_to).items()}
                    labels = gold_train[batch].to(device)
                    padded_tokens += int(kwargs["attention_mask"].numel())
                    real_tokens += int(kwargs["attention_mask"].sum())
                    with torch.autocast(device.split(":")[0], dtype=amp or torch.float32, enabled=amp is not None):
                        loss = torch.nn.functional.cross_entropy(model(**kwargs).logits.float(), labels)
                    optimizer.zero_grad(set_to_none=True)
                    if scaler is not None:
                        scaler.scale(loss).backward()
                        scaler.unscale_(optimizer)
                    else:
                        loss.backward()
                    if config.max_grad_norm:
                        torch.nn.utils.clip_grad_norm_([p for p in model.parameters() if p.requires_grad],
                                                       config.max_grad_norm)
                    if scaler is not None:
                        scaler.step(optimizer)
                        scaler.update()
                    else:
                        optimizer.step()
                    scheduler.step()
                    losses.append(float(loss.detach()))
                    step += 1
                    train_examples += len(batch)
                    bar.update(1)
                    if step >= total_steps:
                        break
                train_seconds += time.perf_counter() - t_epoch
                proba = predict_proba(model, inputs["validation"], config.eval_batch_size, device, amp)
                scores = _scores(gold_val, proba)
                entry = {"epoch": epoch, "step": step, "train_loss": float(np.mean(losses)) if losses else None,
                         **{f"validation_{k}": v for k, v in scores.items()}}
                history.append(entry)
                bar.set_postfix(val_acc=f"{scores['accuracy']:.3f}", val_mcc=f"{scores['mcc']:.3f}")
                if best is None or scores[config.selection_metric] > best[f"validation_{config.selection_metric}"]:
                    best, best_state, bad_epochs = entry, trainable_state(model), 0
                else:
                    bad_epochs += 1
                if bad_epochs >= config.patience or step >= total_steps:
                    break
            bar.close()
            model.load_state_dict(best_state, strict=False)

            t_inf, records, tables, categories = time.perf_counter(), 0, [], {}
            for name, frame in eval_frames.items():
                if name == "validation":
                    continue
                proba = predict_proba(model, inputs[name], config.eval_batch_size, device, amp)
                records += len(frame)
                tables.append(_prediction_table(config, spec, model_spec, name, frame, proba))
                categories[name] = category_summary(frame, proba)
            inference_s = time.perf_counter() - t_inf
            if config.save_checkpoint:
                from .modeling import save_checkpoint

                save_checkpoint(model, model_path, path / "checkpoint", tokenizer)
            cuda_peak = torch.cuda.max_memory_allocated() if device.startswith("cuda") else None
        predictions = pd.concat(tables, ignore_index=True) if tables else pd.DataFrame(columns=store.PREDICTION_COLUMNS)
        predictions.to_parquet(path / "predictions.parquet", index=False)
    finally:
        torch.use_deterministic_algorithms(previous_det)
        torch.set_num_threads(previous_threads)

    peak_mib = (cuda_peak if cuda_peak is not None else memory.peak) / 2**20
    inference_rps = records / inference_s if inference_s > 0 and records else None
    resources = {
        "peak_memory_mib": round(peak_mib, 1),
        "peak_memory_kind": "cuda_max_allocated" if cuda_peak is not None else "rss",
        "peak_rss_mib": round(memory.peak / 2**20, 1),
        "train_examples_per_s": train_examples / train_seconds if train_seconds > 0 else None,
        "mean_padded_length": padded_tokens / train_examples if train_examples else None,
        "mean_length": real_tokens / train_examples if train_examples else None,
        "inference_records_per_s": inference_rps,
        "init_s": init_s,
        "frozen_features_computed_s": features_computed_s,
        "train_s": train_seconds,
        "inference_s": inference_s,
        "total_s": time.perf_counter() - t_start,
        "cpu_s": time.process_time() - cpu_start,  # all threads; wall time is inflated when cores are shared
        "load_average_1min": os.getloadavg()[0],
        "fitness": fitness(best["validation_accuracy"], inference_rps, peak_mib),
    }
    metrics = {
        "selection_metric": config.selection_metric,
        "best": best,
        "history": history,
        "steps": step,
        "train_examples": int(len(train_frame)),
        "train_composition": train_frame["dataset"].value_counts().to_dict(),
        "trainable_parameters": int(sum(p.numel() for p in model.parameters() if p.requires_grad)),
        "diagnostics": {t["dataset"].iat[0]: _scores(label_ids(t["label"]), t["probability"].to_numpy())
                        | categories.get(t["dataset"].iat[0], {})
                        for t in tables if t["label"].notna().all() and len(t)},
        "resources": resources,
        "device": device,
    }
    if config.presence is not None:
        controlled = train_frame["has_feature"].dropna().astype(bool)
        metrics["presence"] = {"feature": config.presence.feature, "within": config.presence.within,
                               "share": float(controlled.mean()), "controlled_pairs": int(len(controlled))}
    store.write_json_atomic(path / "metrics.json", metrics)
    return metrics


def feature_folder(config: SweepConfig, model: ModelSpec) -> Path:
    """Where the frozen-layer features of a model live: shared by every language and experiment of a run store
    (examples are keyed by model fingerprint, k, max length, dtypes and token ids, so sharing is safe and saves
    the examples that mixtures have in common, e.g. the same SICK pairs in the English and Russian mixtures)."""
    return Path(config.output_dir) / ".cache" / "features" / model.slug


def _prediction_table(config: SweepConfig, spec: RunSpec, model: ModelSpec, name: str, frame: pd.DataFrame,
                      proba: np.ndarray) -> pd.DataFrame:
    table = pd.DataFrame({
        "experiment": config.experiment, "language": spec.language, "model": model.name, "seed": spec.seed,
        "dataset": name, "example_id": frame["id"].astype(str).to_numpy(),
        "label": frame["label"].to_numpy(dtype=object),
        "prediction": np.where(proba >= 0.5, CLASS_LABELS[1], CLASS_LABELS[0]), "probability": proba,
    })
    if model.pretrain_seed is not None:
        table["pretrain_seed"] = model.pretrain_seed
    return table


def _optimizer(config: SweepConfig, groups: list[dict]) -> torch.optim.Optimizer:
    if config.optimizer == "sgd":
        return torch.optim.SGD(groups, lr=config.lr)
    cls = torch.optim.AdamW if config.optimizer == "adamw" else torch.optim.Adam
    try:  # one fused kernel per step (CPU and CUDA since torch 2.4); the Trainer's default too
        return cls(groups, lr=config.lr, eps=config.adam_eps, fused=True)
    except (RuntimeError, TypeError):
        return cls(groups, lr=config.lr, eps=config.adam_eps)


def _scheduler(config: SweepConfig, optimizer, total_steps: int):
    warmup = int(round(config.warmup_ratio * total_steps))

    def factor(step: int) -> float:
        if config.scheduler == "constant":
            return min(1.0, (step + 1) / warmup) if warmup else 1.0
        if warmup and step < warmup:
            return (step + 1) / warmup
        return max(0.0, (total_steps - step) / max(1, total_steps - warmup))

    return torch.optim.lr_scheduler.LambdaLR(optimizer, factor)


def spec_dict(model: ModelSpec) -> dict[str, Any]:
    """ModelSpec as a plain dict (for :class:`RunSpec`)."""
    return asdict(model)
