"""Train K runs of one model as one computation: stacked weights, one vectorised step for all runs.

The study's recipe trains hundreds of small runs (batch 4). Alone, one such run leaves most of a GPU idle: a step
is a few hundred small kernels. Here K runs of the same model and recipe (typically the seeds of one experiment and
language) keep their weights stacked along a new leading dimension (``torch.func.stack_module_state``); one
``vmap(functional_call)`` of the unmodified Hugging Face module computes every run's logits, one backward pass every
run's gradients, and a vectorised AdamW updates all runs at once.

Every run keeps what it would have alone: the head initialised from its seed (the models are built one by one, as
for a solo run), its own batch order (a generator seeded with its seed), its own optimizer state, learning-rate
schedule, gradient clipping (the norm is taken over that run's gradients only), validation, early stopping and best
weights. A run that stops leaves the group (its slices are dropped); the others go on. With dropout off a fused
run's logits equal its solo run's to float rounding; with dropout on, masks are drawn per run from the shared
generator (``vmap(..., randomness="different")``), so a fused run is another, equally random draw than its solo run,
and the same group with the same seeds reproduces itself.

Masks: Hugging Face's mask builder branches on tensor values, which ``vmap`` refuses, so the fused step passes the
additive 4-D mask (0 for tokens, the dtype's minimum for padding) that the models accept as is.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from torch import nn

from ._batching import batch_order, bucket_batches, length_sorted_batches
from ._config import SweepConfig
from ._loop import FitResult, schedule_factor, total_steps
from ._modeling import parameter_groups
from ._stacked_optim import StackedAdamW, StackedBertAdam

__all__ = ["StackedClassifiers", "StackedAdamW", "StackedBertAdam", "fit_fused", "batched_validator",
           "predict_proba_stacked"]


def _additive_mask(mask: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """(..., B, T) 0/1 attention mask -> (..., B, 1, 1, T) additive mask (0 keep, dtype minimum for padding)."""
    extended = mask[..., :, None, None, :].to(dtype)
    return (1.0 - extended) * torch.finfo(dtype).min


class StackedClassifiers:
    """K sequence classifiers of one architecture as stacked tensors, evaluated with one ``vmap``.

    Parameters
    ----------
    models : sequence of torch.nn.Module
        The runs' classifiers, already initialised (each from its own seed) and of identical structure. Parameters
        that do not train (``requires_grad`` False, e.g. frozen embeddings) must be equal in every model: they are
        kept once and shared, not stacked.
    device : str
        Torch device of the stacked tensors.
    """

    def __init__(self, models: Sequence[nn.Module], device: str = "cpu"):
        if not models:
            raise ValueError("no models to stack")
        # a group of one calls its own module without vmap: its attention kernel and its hooks (skipping padding,
        # diagnostics.finetune._unpadding) stay, and it runs as fast as the module alone
        self.direct = len(models) == 1
        if self.direct:
            self.template = models[0].to(device)
        else:
            self.template = copy.deepcopy(models[0]).to("meta")
            # eager attention is plain batched matmuls, which vmap batches natively; SDPA falls back to a loop over
            # the runs on the CPU, and its memory-efficient CUDA kernel's backward is not batchable on every build
            if hasattr(self.template, "set_attn_implementation"):
                self.template.set_attn_implementation("eager")
        self.device = device
        self.trainable = [name for name, p in models[0].named_parameters() if p.requires_grad]
        named = [dict(m.named_parameters()) for m in models]
        self.params = {name: torch.stack([n[name].detach() for n in named]).to(device).requires_grad_(True)
                       for name in self.trainable}
        self.shared = {name: p.detach().to(device) for name, p in models[0].named_parameters()
                       if not p.requires_grad}
        buffers = [dict(m.named_buffers()) for m in models]
        self.buffers = {name: torch.stack([b[name] for b in buffers]).to(device) for name in buffers[0]}

    @property
    def size(self) -> int:
        """Number of runs in the stack."""
        return next(iter(self.params.values())).shape[0]

    def _call(self, params, buffers, shared, kwargs):
        return torch.func.functional_call(self.template, ({**params, **shared}, buffers), (), kwargs).logits

    def logits(self, batch: dict[str, torch.Tensor], *, shared_inputs: bool = False, train: bool = True,
               amp: torch.dtype | None = None) -> torch.Tensor:
        """Every run's logits for its batch, float32 of shape (K, B, n_classes).

        ``batch`` holds model keyword arguments with a leading run dimension (K, B, T), or (B, T) with
        ``shared_inputs`` (every run reads the same examples, e.g. validation); ``attention_mask`` is the 0/1 mask.
        ``train`` turns dropout on where the model has it; ``amp`` is the autocast dtype (``None``: full precision).
        """
        self.template.train(train)
        device_type = self.device.split(":")[0]
        with torch.autocast(device_type, dtype=amp or torch.float32, enabled=amp is not None):
            if self.direct:
                kwargs = batch if shared_inputs else {k: v[0] for k, v in batch.items()}
                params = {name: p[0] for name, p in self.params.items()}
                buffers = {name: b[0] for name, b in self.buffers.items()}
                return self._call(params, buffers, self.shared, kwargs).float()[None]
            kwargs = dict(batch)
            if "attention_mask" in kwargs:
                kwargs["attention_mask"] = _additive_mask(kwargs["attention_mask"], amp or torch.float32)
            in_dims = (0, 0, None, None if shared_inputs else 0)
            out = torch.vmap(self._call, in_dims=in_dims, randomness="different")(
                self.params, self.buffers, self.shared, kwargs)
        return out.float()

    def keep(self, runs: Sequence[int]) -> None:
        """Keep only the runs at positions ``runs`` (the others leave the group).

        ``runs`` are positions in the current stack, in the order they keep.
        """
        index = torch.as_tensor(list(runs), dtype=torch.long, device=self.device)
        with torch.no_grad():
            self.params = {n: p.index_select(0, index).detach().requires_grad_(True) for n, p in self.params.items()}
            self.buffers = {n: b.index_select(0, index) for n, b in self.buffers.items()}

    def state_of(self, position: int) -> dict[str, torch.Tensor]:
        """A CPU copy of one run's trainable tensors (the format of :func:`~.modeling.trainable_state`)."""
        return {name: p[position].detach().cpu().clone() for name, p in self.params.items()}


def _stack_batches(train, batches: Sequence[np.ndarray], pad_to: int | None) -> dict[str, torch.Tensor]:
    """One batch per run, padded to a common width: tensors of shape (K, B, T)."""
    parts = [train.batch(b, pad_to=pad_to) for b in batches]
    width = max(part["attention_mask"].shape[1] for part in parts)
    out = {}
    for key in parts[0]:
        padded = []
        for part in parts:
            tensor = part[key]
            extra = width - tensor.shape[1]
            if extra:
                fill = train.pad_id if key == "input_ids" and hasattr(train, "pad_id") else 0
                shape = (tensor.shape[0], extra) + tuple(tensor.shape[2:])
                tensor = torch.cat([tensor, torch.full(shape, fill, dtype=tensor.dtype)], dim=1)
            padded.append(tensor)
        out[key] = torch.stack(padded)
    return out


def batched_validator(stack_inputs, gold: np.ndarray, batch_size: int, device: str, amp: torch.dtype | None,
                      score: Callable[[np.ndarray, np.ndarray], dict[str, float]]):
    """A validation function for :func:`fit_fused`: every run's scores on one shared set, in one pass per batch.

    ``stack_inputs`` (encoded pairs or cached features) has ``lengths`` and ``batch(indices)``; ``gold`` holds the
    class ids; ``score(gold, proba) -> dict`` has the selection metric among its keys. Returns
    ``validate(stack, members) -> list of dict``: one dict of scores per run of the stack, in stack order.
    """

    def validate(stack: StackedClassifiers, members: Sequence[int]) -> list[dict[str, float]]:
        proba = predict_proba_stacked(stack, stack_inputs, batch_size, device, amp)
        return [score(gold, row) for row in proba]

    return validate


@torch.no_grad()
def predict_proba_stacked(stack: StackedClassifiers, inputs, batch_size: int, device: str,
                          amp: torch.dtype | None) -> np.ndarray:
    """P(entailment) of every run of ``stack`` for every example, in input order.

    ``inputs`` are encoded pairs or cached features. Float64 of shape (K, len(inputs)).
    """
    out = np.empty((stack.size, len(inputs)), dtype=np.float64)
    for batch in length_sorted_batches(inputs.lengths, batch_size):
        kwargs = {k: v.to(device) for k, v in inputs.batch(batch).items()}
        logits = stack.logits(kwargs, shared_inputs=True, train=False, amp=amp)
        out[:, batch] = torch.softmax(logits, dim=-1)[..., 1].cpu().numpy()
    return out


@dataclass
class _Run:
    """The per-run state of a fused loop."""

    index: int
    seed: int
    generator: torch.Generator
    result: FitResult = field(default_factory=FitResult)
    best_state: dict[str, torch.Tensor] | None = None
    bad_epochs: int = 0
    losses: list[torch.Tensor] = field(default_factory=list)
    controller: Any = None
    decay: float = 1.0


def _train_step(stack: StackedClassifiers, active: list[_Run], train, gold: torch.Tensor,
                batches: Sequence[np.ndarray], pad_to: int | None, device: str, amp: torch.dtype | None,
                update: Callable[[], Any]) -> None:
    """One step of every active run on its own batch: forward, per-run losses, backward, update, counters.

    Nothing here waits for the device: inputs and labels go over from pinned memory without blocking, token counts
    come from the host's copy of the batch, losses stay on the device until a check reads them.
    """
    tensors = _stack_batches(train, batches, pad_to)
    tensors["labels"] = torch.stack([gold[b] for b in batches])
    pinned = device.startswith("cuda")
    moved = {k: (v.pin_memory() if pinned else v).to(device, non_blocking=True) for k, v in tensors.items()}
    labels = moved.pop("labels")
    logits = stack.logits(moved, amp=amp)
    per_run = torch.nn.functional.cross_entropy(logits.flatten(0, 1), labels.flatten(),
                                                reduction="none").view(labels.shape).mean(1)
    per_run.sum().backward()  # runs share no parameter: each run's gradient is its own loss's
    update()
    mask = tensors["attention_mask"]
    for position, (run, loss) in enumerate(zip(active, per_run.detach())):
        run.losses.append(loss)
        counters = run.result.counters
        counters.step += 1
        counters.train_examples += len(batches[position])
        counters.padded_tokens += int(mask[position].numel())
        counters.real_tokens += int(mask[position].sum())


def _mean_loss(run: _Run) -> float | None:
    """The mean training loss since the run's last validation (and forget those losses)."""
    values = torch.stack(run.losses).float().cpu().tolist() if run.losses else []
    run.losses = []
    return float(np.mean(values)) if values else None


def fit_fused(models: Sequence[nn.Module], train, gold: torch.Tensor, config: SweepConfig, *, seeds: Sequence[int],
              validate: Callable[[StackedClassifiers, Sequence[int]], list[dict[str, float]]], device: str,
              amp: torch.dtype | None = None, show: bool = False, desc: str = "fused") -> list[FitResult]:
    """Train ``models`` (one per seed) as one group; end with each model holding its best validation's weights.

    Every run follows the config's recipe (``epoch`` or ``jiant``) as :func:`~.loop.fit` would train it alone: the
    same batch orders, schedule, clipping, validations, learning-rate decays and stopping rules, applied per run. A
    run that stops leaves the group. Each model is initialised from its seed (see :func:`~.modeling.load_classifier`)
    and updated in place at the end; each seed also seeds its run's batch-order generator, as in the solo loop.
    ``train`` (encoded pairs or cached features, with ``lengths`` and ``batch(indices, pad_to=...)``) is shared by
    the runs. ``validate(stack, members) -> list of dict`` scores each run of the current stack, in stack order;
    ``members`` are the positions in ``models`` of the runs still training (see :func:`batched_validator`).

    Returns one ``FitResult`` per run, in the order of ``models``; a run's ``counters.train_seconds`` is the group's
    training time while it trained.
    """
    from tqdm.auto import tqdm

    if len(models) != len(seeds):
        raise ValueError(f"{len(models)} models for {len(seeds)} seeds")
    runs = [_Run(i, seed, torch.Generator().manual_seed(seed)) for i, seed in enumerate(seeds)]
    stack = StackedClassifiers(models, device)
    steps = total_steps(config, len(gold))
    bar = tqdm(total=steps, desc=desc, leave=False, disable=not show)
    loop = _jiant_loop if config.recipe == "jiant" else _epoch_loop
    try:
        loop(stack, runs, models[0], train, gold, config, validate, device, amp, steps, bar)
    finally:
        bar.close()
    for run, model in zip(runs, models):
        model.load_state_dict(run.best_state, strict=False)
    return [run.result for run in runs]


def _leave(stack: StackedClassifiers, optimizer, active: list[_Run], leaving: list[int]) -> list[_Run]:
    """Drop the runs at positions ``leaving`` from the group; returns the runs that go on."""
    if not leaving:
        return active
    keep = [p for p in range(len(active)) if p not in leaving]
    if keep:
        stack.keep(keep)
        optimizer.keep(keep)
    return [active[p] for p in keep]


def _epoch_loop(stack, runs, model, train, gold, config, validate, device, amp, steps, bar) -> None:
    """The ``epoch`` recipe for a group: AdamW, linear schedule, a validation after each epoch, patience in epochs."""
    optimizer = StackedAdamW(stack, model, config)
    factor = schedule_factor(config, steps)
    selection = f"validation_{config.selection_metric}"
    pad_to = config.max_seq_length if config.pad_to_max_length else None
    active, step = list(runs), 0
    for epoch in range(1, config.max_epochs + 1):
        started = time.perf_counter()
        orders = [batch_order(train.lengths, config.batch_size, run.generator, bucketing=config.length_bucketing)
                  for run in active]
        for position in range(len(orders[0])):
            _train_step(stack, active, train, gold, [order[position] for order in orders], pad_to, device, amp,
                        lambda: optimizer.step([factor(step)] * len(active)))
            step += 1
            bar.update(1)
            if step >= steps:
                break
        elapsed = time.perf_counter() - started
        scores = validate(stack, [run.index for run in active])
        leaving = []
        for position, (run, score) in enumerate(zip(active, scores)):
            run.result.counters.train_seconds += elapsed
            entry = {"epoch": epoch, "step": step, "train_loss": _mean_loss(run),
                     **{f"validation_{k}": v for k, v in score.items()}}
            run.result.history.append(entry)
            if run.result.best is None or score[config.selection_metric] > run.result.best[selection]:
                run.result.best, run.best_state, run.bad_epochs = entry, stack.state_of(position), 0
            else:
                run.bad_epochs += 1
            if run.bad_epochs >= config.patience or step >= steps:
                leaving.append(position)
        active = _leave(stack, optimizer, active, leaving)
        if not active:
            break


def _jiant_loop(stack, runs, model, train, gold, config, validate, device, amp, steps, bar) -> None:
    """The ``jiant`` recipe for a group: BertAdam, checks every ``val_interval`` steps, per-run plateau rules."""
    from ._jiant import PlateauController
    from ._loop import _jiant_plan

    batches_per_epoch, interval, t_total = _jiant_plan(config, len(gold))
    optimizer = StackedBertAdam(stack, model, config, t_total)
    base_lr = parameter_groups(model, config.lr, config.head_lr, config.weight_decay, decay_all=True)[0]["lr"]
    for run in runs:
        run.controller = PlateauController(
            lr=base_lr, lr_patience=config.lr_patience, lr_decay_factor=config.lr_decay_factor,
            scheduler_threshold=config.scheduler_threshold, patience=config.patience, min_lr=config.min_lr,
            max_vals=config.max_vals, max_epochs=config.max_epochs, batches_per_epoch=batches_per_epoch)
    pad_to = config.max_seq_length if config.pad_to_max_length else None
    active, step = list(runs), 0
    started = time.perf_counter()
    while active:  # epochs repeat until every run's checks have stopped it
        orders = {run.index: bucket_batches(train.lengths, config.batch_size, run.generator) for run in active}
        for position in range(batches_per_epoch):
            decay = [run.decay for run in active]  # host floats, changed only at checks
            _train_step(stack, active, train, gold, [orders[run.index][position] for run in active], pad_to,
                        device, amp, lambda d=decay: optimizer.step(d))
            step += 1
            bar.update(1)
            if step % interval and step < steps:
                continue
            elapsed = time.perf_counter() - started
            scores = validate(stack, [run.index for run in active])
            leaving = []
            for place, (run, score) in enumerate(zip(active, scores)):
                run.result.counters.train_seconds += elapsed
                decision = run.controller.check(score[config.selection_metric], step)
                if decision.lr_decayed:
                    run.decay *= config.lr_decay_factor
                stop = decision.stop or ("max_steps" if step >= steps else None)
                entry = {"check": decision.check, "epoch": step / batches_per_epoch, "step": step,
                         "train_loss": _mean_loss(run), "lr": decision.lr, "lr_decayed": decision.lr_decayed,
                         "stop": stop, **{f"validation_{k}": v for k, v in score.items()}}
                run.result.history.append(entry)
                if decision.new_best:
                    run.result.best, run.best_state = entry, stack.state_of(place)
                if stop is not None:
                    leaving.append(place)
            active = _leave(stack, optimizer, active, leaving)
            started = time.perf_counter()
            if not active:
                break
