"""The test oracle of the training engine: a plain, unfused transformers training loop, one run at a time.

This is the loop the package trained with before its engine (``diagnostics.finetune._fused``) became the only one:
``torch.optim.AdamW`` with a ``LambdaLR`` schedule and ``clip_grad_norm_`` for the ``epoch`` recipe; jiant v1's
``BertAdam`` (pytorch_pretrained_bert 0.6.2, written out tensor by tensor) and plateau rules for the ``jiant`` recipe.
It calls the model as is (``model(**batch).logits``), so K engine runs can be compared with K of these.
"""

from __future__ import annotations

import time
from typing import Any, Callable

import numpy as np
import pandas as pd
import torch

from diagnostics.finetune._batching import TokenInputs, batch_order, bucket_batches, length_sorted_batches
from diagnostics.finetune._config import SweepConfig
from diagnostics.finetune._jiant import PlateauController, warmup_linear
from diagnostics.finetune._loop import FitResult, LoopCounters, _jiant_schedule, total_steps
from diagnostics.finetune._predict import SetPredictions, prediction_table
from diagnostics.finetune._quality import category_summary

#: torch's clip_grad_norm_ divides by the norm plus this.
_CLIP_EPS = 1e-6


@torch.no_grad()
def clip_each_(grads: list[torch.Tensor], max_norm: float) -> None:
    """Scale every gradient tensor whose own L2 norm exceeds ``max_norm`` down to it (BertAdam's per-tensor clip).

    In place; ``max_norm <= 0`` clips nothing.
    """
    if max_norm <= 0 or not grads:
        return
    coefs = torch._foreach_norm(grads)  # one 0-d tensor per gradient, in its dtype
    torch._foreach_add_(coefs, _CLIP_EPS)
    torch._foreach_reciprocal_(coefs)
    torch._foreach_mul_(coefs, max_norm)
    torch._foreach_clamp_max_(coefs, 1.0)
    torch._foreach_mul_(grads, coefs)


@torch.no_grad()
def bert_adam_update(params: list[torch.Tensor], grads: list[torch.Tensor], exp_avg: list[torch.Tensor],
                     exp_avg_sq: list[torch.Tensor], *, lr: float, weight_decay: float, betas=(0.9, 0.999),
                     eps: float = 1e-6) -> None:
    """One BertAdam update of a list of tensors, in place (gradients already clipped).

    ``m = b1 m + (1 - b1) g``, ``v = b2 v + (1 - b2) g^2``, ``p -= lr * (m / (sqrt(v) + eps) + weight_decay * p)``:
    no bias correction, and the decay is part of the update (scaled by the scheduled rate, not by the moments).
    ``params``, ``grads`` and the moment buffers ``exp_avg``, ``exp_avg_sq`` are in one order; ``lr`` is the
    scheduled rate of this update.
    """
    b1, b2 = betas
    torch._foreach_mul_(exp_avg, b1)
    torch._foreach_add_(exp_avg, grads, alpha=1 - b1)
    torch._foreach_mul_(exp_avg_sq, b2)
    torch._foreach_addcmul_(exp_avg_sq, grads, grads, value=1 - b2)
    denom = torch._foreach_sqrt(exp_avg_sq)
    torch._foreach_add_(denom, eps)
    update = torch._foreach_div(exp_avg, denom)
    if weight_decay > 0:
        torch._foreach_add_(update, params, alpha=weight_decay)
    torch._foreach_add_(params, update, alpha=-lr)


class BertAdam(torch.optim.Optimizer):
    """BertAdam as pytorch_pretrained_bert 0.6.2 defines it (the ``bert_adam`` that jiant v1 ran through AllenNLP).

    Each group's ``lr`` is the base rate (what a plateau decay changes); an update uses
    ``lr * warmup_linear(step / t_total, warmup)`` with ``step`` the updates taken before it.

    Parameters
    ----------
    params : iterable
        Parameters or parameter groups (each may set ``lr`` and ``weight_decay``).
    lr : float
        Base learning rate.
    warmup : float
        Share of ``t_total`` spent warming up.
    t_total : int
        Steps of the schedule (``<= 0``: a constant multiplier of 1).
    betas : tuple of float
        Moment decay rates (BertAdam's ``b1``, ``b2``).
    eps : float
        BertAdam's ``e``.
    weight_decay : float
        Default decay of groups that set none.
    max_grad_norm : float
        Per-tensor gradient clip (``<= 0``: none).
    """

    def __init__(self, params, lr: float, *, warmup: float = 0.1, t_total: int = -1, betas=(0.9, 0.999),
                 eps: float = 1e-6, weight_decay: float = 0.01, max_grad_norm: float = 1.0):
        """Set the defaults of every group and the schedule shared by all of them."""
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                                  "max_grad_norm": max_grad_norm})
        self.warmup, self.t_total, self.updates = max(float(warmup), 0.0), t_total, 0

    def multiplier(self) -> float:
        """The schedule's multiplier of the next update."""
        return warmup_linear(self.updates / self.t_total, self.warmup) if self.t_total > 0 else 1.0

    @torch.no_grad()
    def step(self, closure=None):
        """Clip each gradient tensor, then apply one update to every parameter that has a gradient.

        Returns the loss of ``closure`` (which re-evaluates the model), ``None`` without one.
        """
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        scale = self.multiplier()
        for group in self.param_groups:
            params = [p for p in group["params"] if p.grad is not None]
            if not params:
                continue
            grads = [p.grad for p in params]
            for p in params:
                if not self.state[p]:
                    self.state[p]["exp_avg"] = torch.zeros_like(p)
                    self.state[p]["exp_avg_sq"] = torch.zeros_like(p)
            clip_each_(grads, group["max_grad_norm"])
            bert_adam_update(params, grads, [self.state[p]["exp_avg"] for p in params],
                             [self.state[p]["exp_avg_sq"] for p in params], lr=group["lr"] * scale,
                             weight_decay=group["weight_decay"], betas=group["betas"], eps=group["eps"])
        self.updates += 1
        return loss



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

    from diagnostics.finetune._modeling import parameter_groups, trainable_state

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


def _fit_jiant(model, train, gold: torch.Tensor, config: SweepConfig, *, seed: int,
               validate: Callable[[], dict[str, float]], device: str, amp: torch.dtype | None, desc: str,
               show: bool) -> FitResult:
    """The ``jiant`` recipe of :func:`fit`: checks every ``val_interval`` steps until the controller says stop."""
    from tqdm.auto import tqdm

    from diagnostics.finetune._modeling import parameter_groups, trainable_state

    batches, interval, t_total = _jiant_schedule(config, len(gold))
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


@torch.no_grad()
def predict_proba(model, inputs, batch_size: int, device: str, amp: torch.dtype | None) -> np.ndarray:
    """P(entailment) per example, in input order (batches sorted by length internally).

    ``model`` is switched to eval mode; ``inputs`` (encoded pairs or cached features) have ``lengths`` and
    ``batch(indices)``; ``amp`` is the autocast dtype, ``None`` for full precision. Returns the softmax probability of
    class 1 as float64, shape (len(inputs),).
    """
    model.eval()
    out = np.empty(len(inputs), dtype=np.float64)
    for batch in length_sorted_batches(inputs.lengths, batch_size):
        kwargs = {k: v.to(device) for k, v in inputs.batch(batch).items()}
        with torch.autocast(device.split(":")[0], dtype=amp or torch.float32, enabled=amp is not None):
            logits = model(**kwargs).logits.float()
        out[batch] = torch.softmax(logits, dim=-1)[:, 1].cpu().numpy()
    return out


def predict_sets(model, eval_frames: dict[str, pd.DataFrame], inputs: dict[str, Any], run_columns: dict[str, Any],
                 *, batch_size: int, device: str, amp: torch.dtype | None,
                 pretrain_seed: int | None = None) -> SetPredictions:
    """Predict every evaluation set except ``validation`` and summarise each per diagnostic category.

    The tables follow the order of ``eval_frames``; ``inputs`` holds the model inputs by set name (see
    :class:`diagnostics.finetune._inputs.RunInputs`); ``run_columns`` and ``pretrain_seed`` are columns of the
    tables (see :func:`prediction_table`); ``amp`` is the autocast dtype, ``None`` for full precision. The result
    holds one table per set, category summaries by set name, the number of rows predicted and the seconds taken.
    """
    started, out = time.perf_counter(), SetPredictions()
    for name, frame in eval_frames.items():
        if name == "validation":
            continue
        proba = predict_proba(model, inputs[name], batch_size, device, amp)
        out.records += len(frame)
        out.tables.append(prediction_table(run_columns, name, frame, proba, pretrain_seed))
        out.categories[name] = category_summary(frame, proba)
    out.seconds = time.perf_counter() - started
    return out


def small_bert_folder(folder, vocab: int):
    """Save a 2-layer random BERT of width 16 with a ``vocab``-word vocabulary into ``folder`` (seeded: torch seed 0)
    and return it: the engine's mechanics at a cheap optimizer step."""
    from transformers import BertConfig, BertForSequenceClassification

    torch.manual_seed(0)
    config = BertConfig(vocab_size=vocab, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=32, max_position_embeddings=64, num_labels=2)
    BertForSequenceClassification(config).save_pretrained(folder, safe_serialization=True)
    return folder


def random_pairs(vocab: int, count: int = 30, validation: int = 12):
    """Token ids of ``count`` random pairs of varied length (4 to 19 ids below ``vocab``), random labels, and the first
    ``validation`` of them as a validation set: ``(train, gold, validation, validation gold)`` (seeded)."""
    rng = np.random.default_rng(0)
    ids = [list(rng.integers(5, vocab, size=int(rng.integers(4, 20)))) for _ in range(count)]
    gold = torch.from_numpy(rng.integers(0, 2, size=len(ids)))
    return TokenInputs(ids, None, 0), gold, TokenInputs(ids[:validation], None, 0), gold[:validation].numpy()
