"""The optimisation loop of one run: optimizer, learning-rate schedule, steps, epochs and best-epoch selection.

Two recipes (``SweepConfig.recipe``). ``epoch``: AdamW (or Adam / SGD) with linear warm-up and decay, gradient
clipping, validation after every epoch, early stopping on the selection metric. ``jiant``: jiant v1's trainer as
the reference study ran it (:mod:`.jiant`): BertAdam, validation every ``val_interval`` steps, learning-rate decay
on a plateau, stopping rules counted in checks, AllenNLP's length buckets. Both: bf16/fp16 autocast on CUDA (fp16
with a gradient scaler); batch orders come from a generator seeded with the run's seed, so on CPU the loop is
reproducible.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import torch

from ._batching import batch_order, bucket_batches
from ._config import SweepConfig
from ._jiant import VAL_SCHEDULES, BertAdam, PlateauController, resolve_val_interval, step_budget


@dataclass
class LoopCounters:
    """Running totals of a training loop, from which a run's throughput is computed.

    Parameters
    ----------
    step : int
        Optimizer steps taken.
    train_examples : int
        Training examples seen (an example seen in two epochs counts twice).
    train_seconds : float
        Wall time spent in training epochs (validation excluded).
    padded_tokens : int
        Token positions of the training batches, padding included.
    real_tokens : int
        Token positions that are not padding.
    """

    step: int = 0
    train_examples: int = 0
    train_seconds: float = 0.0
    padded_tokens: int = 0
    real_tokens: int = 0


@dataclass
class FitResult:
    """What a finished loop reports: one history entry per validation, the selected entry and the totals.

    Parameters
    ----------
    history : list of dict
        Per validation: ``epoch``, ``step``, ``train_loss`` and the ``validation_*`` scores; the ``jiant`` recipe
        adds ``check``, ``lr`` (the base learning rate after the check), ``lr_decayed`` and ``stop`` (why training
        ended there, else ``None``), and its ``epoch`` is fractional (steps / steps per epoch).
    best : dict or None
        The entry of the selected validation (``None`` only before the first one).
    counters : LoopCounters
        Totals of the loop.
    """

    history: list[dict[str, Any]] = field(default_factory=list)
    best: dict[str, Any] | None = None
    counters: LoopCounters = field(default_factory=LoopCounters)


def total_steps(config: SweepConfig, train_size: int, schedule: str | None = None) -> int:
    """Optimizer steps of a run at most: full epochs of ``batch_size`` (or the jiant recipe's budget), ``max_steps``.

    Parameters
    ----------
    config : SweepConfig
        Supplies ``recipe``, ``batch_size``, ``max_epochs`` and ``max_steps`` (and, for ``jiant``,
        ``val_interval`` and ``max_vals``).
    train_size : int
        Number of training examples.
    schedule : str, optional
        ``jiant`` recipe: the budget under this reading of :data:`diagnostics.finetune.VAL_SCHEDULES` instead of
        the config's own ``val_interval`` and ``max_vals``.

    Returns
    -------
    int
        The number of steps after which training stops at the latest. ``jiant``: the step of the check at which
        ``max_epochs`` or ``max_vals`` ends training (:func:`diagnostics.finetune._jiant.step_budget`, BertAdam's
        ``t_total``); earlier checks may stop it sooner.
    """
    if config.recipe == "jiant":
        steps = _jiant_plan(config, train_size, schedule)[2]
        return min(steps, config.max_steps) if config.max_steps else steps
    steps = math.ceil(train_size / config.batch_size) * config.max_epochs
    return min(steps, config.max_steps) if config.max_steps else steps


def make_optimizer(config: SweepConfig, groups: list[dict]) -> torch.optim.Optimizer:
    """The optimizer a config names, over the given parameter groups.

    ``config`` supplies ``optimizer`` (``adamw``, ``adam`` or ``sgd``), ``lr`` and ``adam_eps``; ``groups`` come from
    :func:`diagnostics.finetune._modeling.parameter_groups`. Adam-type optimizers use the fused kernel where this
    torch build has one.
    """
    if config.optimizer == "sgd":
        return torch.optim.SGD(groups, lr=config.lr)
    cls = torch.optim.AdamW if config.optimizer == "adamw" else torch.optim.Adam
    try:  # one fused kernel per step (CPU and CUDA since torch 2.4); the Trainer's default too
        return cls(groups, lr=config.lr, eps=config.adam_eps, fused=True)
    except (RuntimeError, TypeError):
        return cls(groups, lr=config.lr, eps=config.adam_eps)


def make_scheduler(config: SweepConfig, optimizer: torch.optim.Optimizer,
                   steps: int) -> torch.optim.lr_scheduler.LambdaLR:
    """Linear warm-up over ``warmup_ratio`` of the steps, then linear decay to 0 (or a constant rate).

    ``config.scheduler`` is ``linear`` or ``constant``; ``steps`` is the run's total of optimizer steps (see
    :func:`total_steps`). Step it once per optimizer step.
    """
    warmup = int(round(config.warmup_ratio * steps))

    def factor(step: int) -> float:
        """Multiplier of the base learning rates at ``step``."""
        if config.scheduler == "constant":
            return min(1.0, (step + 1) / warmup) if warmup else 1.0
        if warmup and step < warmup:
            return (step + 1) / warmup
        return max(0.0, (steps - step) / max(1, steps - warmup))

    return torch.optim.lr_scheduler.LambdaLR(optimizer, factor)


class _Updater:
    """One optimizer step from a loss: backward, optional fp16 scaling, clipping, step, schedule."""

    def __init__(self, model, config: SweepConfig, optimizer, scheduler, amp: torch.dtype | None):
        """Bind the optimizer and schedule to the trainable parameters of ``model``."""
        self.trainable = [p for p in model.parameters() if p.requires_grad]
        self.max_grad_norm = config.max_grad_norm
        self.optimizer, self.scheduler = optimizer, scheduler
        self.scaler = torch.amp.GradScaler("cuda") if amp == torch.float16 else None

    def __call__(self, loss: torch.Tensor) -> None:
        """Apply the gradient of ``loss``."""
        self.optimizer.zero_grad(set_to_none=True)
        if self.scaler is not None:
            self.scaler.scale(loss).backward()
            self.scaler.unscale_(self.optimizer)
        else:
            loss.backward()
        if self.max_grad_norm:
            torch.nn.utils.clip_grad_norm_(self.trainable, self.max_grad_norm)
        if self.scaler is not None:
            self.scaler.step(self.optimizer)
            self.scaler.update()
        else:
            self.optimizer.step()
        if self.scheduler is not None:
            self.scheduler.step()


def _train_step(model, train, gold: torch.Tensor, batch, pad_to: int | None, update: _Updater,
                counters: LoopCounters, device: str, amp: torch.dtype | None) -> torch.Tensor:
    """One optimizer step on ``batch``; returns its loss (left on the device)."""
    tensors = train.batch(batch, pad_to=pad_to)
    counters.padded_tokens += int(tensors["attention_mask"].numel())
    counters.real_tokens += int(tensors["attention_mask"].sum())
    kwargs = {k: v.to(device, non_blocking=True) for k, v in tensors.items()}
    labels = gold[batch].to(device, non_blocking=True)
    with torch.autocast(device.split(":")[0], dtype=amp or torch.float32, enabled=amp is not None):
        loss = torch.nn.functional.cross_entropy(model(**kwargs).logits.float(), labels)
    update(loss)
    counters.step += 1
    counters.train_examples += len(batch)
    return loss.detach()


def _train_epoch(model, train, gold: torch.Tensor, config: SweepConfig, generator: torch.Generator,
                 update: _Updater, counters: LoopCounters, steps: int, device: str, amp: torch.dtype | None,
                 bar) -> list[float]:
    """One pass over the training set in a seeded order (stopping at ``steps``); returns the loss of every step."""
    model.train()
    started, losses = time.perf_counter(), []
    pad_to = config.max_seq_length if config.pad_to_max_length else None
    # Nothing in the loop reads a value back from the device (token counts come from the host's copy of the batch,
    # losses are read once per epoch): on a GPU each read waits for the queued kernels. At the study's batch of 4
    # on an H100 this made training about 1.1x faster.
    for batch in batch_order(train.lengths, config.batch_size, generator, bucketing=config.length_bucketing):
        losses.append(_train_step(model, train, gold, batch, pad_to, update, counters, device, amp))
        bar.update(1)
        if counters.step >= steps:
            break
    values = torch.stack(losses).float().cpu().tolist() if losses else []
    counters.train_seconds += time.perf_counter() - started
    return values


def fit(model, train, gold: torch.Tensor, config: SweepConfig, *, seed: int,
        validate: Callable[[], dict[str, float]], device: str, amp: torch.dtype | None, desc: str,
        show: bool) -> FitResult:
    """Train ``model`` in place by the config's recipe; end with the best validation's trainable weights loaded.

    ``model`` is a sequence classifier on ``device`` (see :func:`diagnostics.finetune._modeling.load_classifier`);
    ``train`` (encoded pairs or cached features) has ``lengths`` and ``batch(indices, pad_to=...)``; ``gold`` holds
    the class ids (int64, CPU); ``seed`` seeds the generator of the batch orders. ``validate()`` scores the current
    model on the validation set (keys include ``config.selection_metric``; the ``jiant`` recipe expects it to score
    the first ``val_data_limit`` pairs only). ``amp`` is the autocast dtype, ``None`` for full precision.

    The result holds the per-validation history (train loss and ``validation_*`` scores), the selected one and the
    loop's totals.
    """
    if config.recipe == "jiant":
        return _fit_jiant(model, train, gold, config, seed=seed, validate=validate, device=device, amp=amp,
                          desc=desc, show=show)
    from tqdm.auto import tqdm

    from ._modeling import parameter_groups, trainable_state

    generator = torch.Generator().manual_seed(seed)
    steps = total_steps(config, len(gold))
    optimizer = make_optimizer(config, parameter_groups(model, config.lr, config.head_lr, config.weight_decay))
    update = _Updater(model, config, optimizer, make_scheduler(config, optimizer, steps), amp)
    selection = f"validation_{config.selection_metric}"
    result, best_state, bad_epochs = FitResult(), None, 0
    counters = result.counters
    bar = tqdm(total=steps, desc=desc, leave=False, disable=not show)
    for epoch in range(1, config.max_epochs + 1):
        losses = _train_epoch(model, train, gold, config, generator, update, counters, steps, device, amp, bar)
        scores = validate()
        entry = {"epoch": epoch, "step": counters.step, "train_loss": float(np.mean(losses)) if losses else None,
                 **{f"validation_{k}": v for k, v in scores.items()}}
        result.history.append(entry)
        bar.set_postfix(val_acc=f"{scores['accuracy']:.3f}", val_mcc=f"{scores['mcc']:.3f}")
        if result.best is None or scores[config.selection_metric] > result.best[selection]:
            result.best, best_state, bad_epochs = entry, trainable_state(model), 0
        else:
            bad_epochs += 1
        if bad_epochs >= config.patience or counters.step >= steps:
            break
    bar.close()
    model.load_state_dict(best_state, strict=False)
    return result


def _jiant_plan(config: SweepConfig, train_size: int, schedule: str | None = None) -> tuple[int, int, int]:
    """(steps per epoch, steps between checks, BertAdam's ``t_total``) of a ``jiant`` run on ``train_size`` pairs.

    ``schedule`` names a reading of :data:`~diagnostics.finetune._jiant.VAL_SCHEDULES` to use instead of the
    config's ``val_interval`` and ``max_vals``.
    """
    val_interval, max_vals = config.val_interval, config.max_vals
    if schedule is not None:
        reading = VAL_SCHEDULES[schedule]
        val_interval, max_vals = reading.val_interval, reading.max_vals
    batches = max(1, math.ceil(train_size / config.batch_size))
    interval = resolve_val_interval(val_interval, batches)
    return batches, interval, step_budget(batches, config.max_epochs, interval, max_vals)


def _fit_jiant(model, train, gold: torch.Tensor, config: SweepConfig, *, seed: int,
               validate: Callable[[], dict[str, float]], device: str, amp: torch.dtype | None, desc: str,
               show: bool) -> FitResult:
    """The ``jiant`` recipe of :func:`fit`: checks every ``val_interval`` steps until the controller says stop."""
    from tqdm.auto import tqdm

    from ._modeling import parameter_groups, trainable_state

    batches, interval, t_total = _jiant_plan(config, len(gold))
    steps = total_steps(config, len(gold))
    groups = parameter_groups(model, config.lr, config.head_lr, config.weight_decay, decay_all=True)
    optimizer = BertAdam(groups, config.lr, warmup=config.warmup_ratio, t_total=t_total, eps=config.adam_eps,
                         weight_decay=config.weight_decay, max_grad_norm=config.bert_adam_max_grad_norm)
    update = _Updater(model, config, optimizer, None, amp)
    controller = PlateauController(
        lr=optimizer.param_groups[0]["lr"], lr_patience=config.lr_patience, lr_decay_factor=config.lr_decay_factor,
        scheduler_threshold=config.scheduler_threshold, patience=config.patience, min_lr=config.min_lr,
        max_vals=config.max_vals, max_epochs=config.max_epochs, batches_per_epoch=batches)
    generator = torch.Generator().manual_seed(seed)
    lengths = train.lengths
    pad_to = config.max_seq_length if config.pad_to_max_length else None
    result, best_state, losses, stop = FitResult(), None, [], None
    counters = result.counters
    bar = tqdm(total=steps, desc=desc, leave=False, disable=not show)
    model.train()
    started = time.perf_counter()
    while stop is None:  # jiant's batch generator repeats epochs without end; only a check stops training
        for batch in bucket_batches(lengths, config.batch_size, generator):
            losses.append(_train_step(model, train, gold, batch, pad_to, update, counters, device, amp))
            bar.update(1)
            if counters.step % interval and counters.step < steps:
                continue
            counters.train_seconds += time.perf_counter() - started
            scores = validate()
            decision = controller.check(scores[config.selection_metric], counters.step)
            if decision.lr_decayed:
                for group in optimizer.param_groups:
                    group["lr"] *= config.lr_decay_factor
            stop = decision.stop or ("max_steps" if counters.step >= steps else None)
            entry = {"check": decision.check, "epoch": counters.step / batches, "step": counters.step,
                     "train_loss": float(torch.stack(losses).float().mean().cpu()), "lr": decision.lr,
                     "lr_decayed": decision.lr_decayed, "stop": stop,
                     **{f"validation_{k}": v for k, v in scores.items()}}
            result.history.append(entry)
            bar.set_postfix(val_acc=f"{scores['accuracy']:.3f}", val_mcc=f"{scores['mcc']:.3f}")
            if decision.new_best:
                result.best, best_state = entry, trainable_state(model)
            losses = []
            model.train()
            started = time.perf_counter()
            if stop is not None:
                break
    bar.close()
    model.load_state_dict(best_state, strict=False)
    return result
