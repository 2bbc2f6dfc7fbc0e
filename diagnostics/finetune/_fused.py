"""The training engine: runs queued into K slots of one model, the slots trained as one computation.

The study's recipe trains hundreds of small runs (batch 4). Alone, one such run leaves most of a GPU idle: a step
is a few hundred small kernels. Here K runs that share a model and a recipe's shapes (any experiment, language,
training size or seed; :func:`diagnostics.finetune._grouping.training_key`) keep their weights stacked along a
new leading dimension; one ``vmap(functional_call)`` of the unmodified Hugging Face module computes every run's
logits, one backward pass every run's gradients, and one optimizer pass (:mod:`._stacked_optim`) updates all runs.
A run that stops frees its slot, which the next run of the queue takes at once (its weights and moments written
into the slot); when the queue is empty the stack shrinks. A single run is a group of one slot.

Every run keeps what it would have alone: the head initialised from its seed (the models are built one by one, as
for a solo run), its own data, batch order (a generator seeded with its seed), optimizer state and step count,
learning-rate schedule, gradient clipping (the norm is taken over that run's gradients only), validation on its own
set at its own steps, early stopping and best weights. Runs whose batches differ in size (a last, partial batch)
are padded with examples of weight 0. With dropout off a run's logits equal its solo run's to float rounding; with
dropout on, masks are drawn per run from the shared generator (``vmap(..., randomness="different")``), so a fused
run is another, equally random draw than its solo run, and the same group with the same queue reproduces itself.

Masks: Hugging Face's mask builder branches on tensor values, which ``vmap`` refuses, so the fused step passes the
additive 4-D mask (0 for tokens, the dtype's minimum for padding) that the models accept as is.
"""

from __future__ import annotations

import copy
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn

from ._batching import length_sorted_batches
from ._capture import StepGraphs, bucket_width, static_tensors
from ._config import SweepConfig
from ._grouping import training_key
from ._loop import FitResult, total_steps
from ._recipes import get_recipe
from ._stacked_optim import StackedAdamW, StackedBertAdam

__all__ = ["EngineRun", "RunData", "StackedClassifiers", "StackedAdamW", "StackedBertAdam", "fit_runs", "fit_fused",
           "batched_validator", "predict_proba_stacked"]

#: The width buckets' step (tokens) of a captured step: a width is rounded up to a multiple of it.
CAPTURE_BUCKET = 32


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
        # a linear layer's weight is kept as (K, in, out), the layout of its gradient under vmap: kept as
        # (K, out, in), every step copied each run's weight gradient to that layout (a strided pass over every
        # linear weight of every run); the model sees the transposed view, the layout it expects
        self.transposed = set() if self.direct else {
            f"{module_name}.weight" if module_name else "weight"
            for module_name, module in self.template.named_modules() if isinstance(module, nn.Linear)}
        named = [dict(m.named_parameters()) for m in models]
        self.params = {name: self._flip(name, torch.stack([n[name].detach().to(device) for n in named]))
                       .contiguous().requires_grad_(True) for name in self.trainable}
        self.shared = {name: p.detach().to(device) for name, p in models[0].named_parameters()
                       if not p.requires_grad}
        buffers = [dict(m.named_buffers()) for m in models]
        self.buffers = {name: torch.stack([b[name].to(device) for b in buffers]) for name in buffers[0]}

    @property
    def size(self) -> int:
        """Number of runs in the stack."""
        return next(iter(self.params.values())).shape[0]

    def _flip(self, name: str, tensor: torch.Tensor) -> torch.Tensor:
        """``name``'s tensor (one run's or stacked) seen in the other layout: the model's <-> the stack's (a view)."""
        return tensor.transpose(-2, -1) if name in self.transposed else tensor

    def _call(self, params, buffers, shared, kwargs):
        params = {name: self._flip(name, p) for name, p in params.items()}
        return torch.func.functional_call(self.template, ({**params, **shared}, buffers), (), kwargs).logits

    def logits(self, batch: dict[str, torch.Tensor], *, shared_inputs: bool = False, train: bool = True,
               amp: torch.dtype | None = None, replace: dict[str, torch.Tensor] | None = None,
               additive_mask: bool = False) -> torch.Tensor:
        """Every run's logits for its batch, float32 of shape (K, B, n_classes).

        ``batch`` holds model keyword arguments with a leading run dimension (K, B, T), or (B, T) with
        ``shared_inputs`` (every run reads the same examples, e.g. validation); ``attention_mask`` is the 0/1 mask.
        ``train`` turns dropout on where the model has it; ``amp`` is the autocast dtype (``None``: full precision).
        ``replace`` gives stacked tensors the forward reads instead of some parameters (the word embedding's rows
        a batch reads, its ids remapped to them: :mod:`._lazy_rows`). ``additive_mask`` gives a group of one the
        additive 4-D mask too, as stacked runs always get it: Hugging Face's own mask builder asks the device whether
        the batch has padding at all (a read on the host that a captured step cannot hold, :mod:`._capture`).
        """
        params = self.params if not replace else {**self.params, **replace}
        self.template.train(train)
        device_type = self.device.split(":")[0]
        # no cast cache: each weight is cast once per forward anyway, and a cache cannot live in a CUDA graph
        with torch.autocast(device_type, dtype=amp or torch.float32, enabled=amp is not None, cache_enabled=False):
            if self.direct:
                kwargs = batch if shared_inputs else {k: v[0] for k, v in batch.items()}
                if additive_mask and "attention_mask" in kwargs:
                    mask = _additive_mask(kwargs["attention_mask"], amp or torch.float32)
                    kwargs = {**kwargs, "attention_mask": mask}
                params = {name: p[0] for name, p in params.items()}
                buffers = {name: b[0] for name, b in self.buffers.items()}
                return self._call(params, buffers, self.shared, kwargs).float()[None]
            kwargs = dict(batch)
            if "attention_mask" in kwargs:
                kwargs["attention_mask"] = _additive_mask(kwargs["attention_mask"], amp or torch.float32)
            in_dims = (0, 0, None, None if shared_inputs else 0)
            out = torch.vmap(self._call, in_dims=in_dims, randomness="different")(
                params, self.buffers, self.shared, kwargs)
        return out.float()

    def keep(self, runs: Sequence[int]) -> None:
        """Keep only the runs at positions ``runs`` (the others leave the group).

        ``runs`` are positions in the current stack, in the order they keep.
        """
        index = torch.as_tensor(list(runs), dtype=torch.long, device=self.device)
        with torch.no_grad():
            self.params = {n: p.index_select(0, index).detach().requires_grad_(True) for n, p in self.params.items()}
            self.buffers = {n: b.index_select(0, index) for n, b in self.buffers.items()}

    def put(self, position: int, model: nn.Module) -> None:
        """Write ``model``'s trainable weights and buffers into slot ``position`` (a run joining the group).

        Its frozen parameters must equal the stack's shared ones (the same pretrained model).
        """
        with torch.no_grad():
            for name, p in model.named_parameters():
                if name in self.params:
                    self.params[name][position].copy_(self._flip(name, p.detach()))
            for name, b in model.named_buffers():
                self.buffers[name][position].copy_(b)

    def select(self, positions: Sequence[int]) -> StackedClassifiers:
        """The runs at ``positions`` as a stack of their own, for evaluation (weights copied, no gradients)."""
        if list(positions) == list(range(self.size)):
            return self
        index = torch.as_tensor(list(positions), dtype=torch.long, device=self.device)
        out = copy.copy(self)
        with torch.no_grad():
            out.params = {n: p.index_select(0, index) for n, p in self.params.items()}
            out.buffers = {n: b.index_select(0, index) for n, b in self.buffers.items()}
        return out

    def model_layout(self, name: str, tensor: torch.Tensor) -> torch.Tensor:
        """One run's tensor ``name`` in the stack's layout seen in the model's, or the reverse (a view)."""
        return self._flip(name, tensor)

    def state_of(self, position: int) -> dict[str, torch.Tensor]:
        """A CPU copy of one run's trainable tensors (the format of :func:`~.modeling.trainable_state`)."""
        state = {name: p[position].detach().cpu() for name, p in self.params.items()}
        return {name: self._flip(name, p).clone(memory_format=torch.contiguous_format) for name, p in state.items()}


def _stack_batches(inputs: Sequence, batches: Sequence[np.ndarray], pad_to: int | None) -> dict[str, torch.Tensor]:
    """One batch per run from its own inputs, padded to common rows and width: tensors of shape (K, B, T, ...)."""
    parts = [source.batch(b, pad_to=pad_to) for source, b in zip(inputs, batches)]
    rows = max(len(b) for b in batches)
    width = max(part["attention_mask"].shape[1] for part in parts)
    out = {}
    for key in parts[0]:
        padded = []
        for source, part in zip(inputs, parts):
            tensor = part[key]
            if tensor.shape[:2] != (rows, width):
                fill = getattr(source, "pad_id", 0) if key == "input_ids" else 0
                grown = torch.full((rows, width) + tuple(tensor.shape[2:]), fill, dtype=tensor.dtype)
                grown[:tensor.shape[0], :tensor.shape[1]] = tensor
                tensor = grown
            padded.append(tensor)
        out[key] = torch.stack(padded)
    return out


def batched_validator(stack_inputs, gold: np.ndarray, batch_size: int, device: str, amp: torch.dtype | None,
                      score: Callable[[np.ndarray, np.ndarray], dict[str, float]]):
    """A validation function for :class:`RunData`: every run's scores on one set, in one pass per batch.

    ``stack_inputs`` (encoded pairs or cached features) has ``lengths`` and ``batch(indices)``; ``gold`` holds the
    class ids; ``score(gold, proba) -> dict`` has the selection metric among its keys. Returns
    ``validate(stack, members) -> list of dict``: one dict of scores per run of the stack, in stack order. Runs that
    share one such function are validated together when their checks fall on the same step.
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
class RunData:
    """What a run trains with, made when it joins the group.

    Parameters
    ----------
    model : torch.nn.Module
        Its classifier, initialised from its seed; holds the best validation's weights when the run ends.
    train : TokenInputs or FeatureInputs
        Its training inputs (``lengths``, ``batch(indices, pad_to=...)``).
    gold : torch.Tensor
        The training class ids (int64, CPU).
    validate : callable
        ``validate(stack, members) -> list of dict``: scores of each run of ``stack`` (``members``: their indices
        in the engine's list of runs), see :func:`batched_validator`.
    resume : dict, optional
        What an earlier attempt of the run saved at its last check (:meth:`_Run.resume_state`): the run goes on
        from there instead of from its first step.
    """

    model: nn.Module
    train: Any
    gold: torch.Tensor
    validate: Callable[[StackedClassifiers, Sequence[int]], list[dict[str, float]]]
    resume: dict[str, Any] | None = None


@dataclass
class EngineRun:
    """One run of the engine's queue: its seed, its recipe and how to make its data when it takes a slot.

    ``join()`` returns ``None`` for a run that is not to train after all (finished or taken elsewhere meanwhile).
    """

    seed: int
    config: SweepConfig
    join: Callable[[], RunData | None]


class _Run:
    """A run in a slot: its data, its place in its own batch order and schedule, its checks and its best weights."""

    def __init__(self, index: int, run: EngineRun, data: RunData):
        config = self.config = run.config
        self.index, self.data = index, data
        self.generator = torch.Generator().manual_seed(run.seed)
        self.lengths = data.train.lengths
        self.result, self.best_state, self.losses = FitResult(), None, []
        self.order: list[np.ndarray] = []
        self.position = self.epoch = 0
        self.recipe = get_recipe(config.recipe)
        self.steps = total_steps(config, len(data.gold))
        self.course = self.recipe.course(config, data.model, len(data.gold), self.steps)
        if data.resume is not None:
            self._restore(data.resume)

    def resume_state(self, stack: StackedClassifiers, optimizer, position: int) -> dict[str, Any]:
        """What the run needs to go on after its last check in another process: ``{"tensors", "meta"}``.

        Tensors (CPU copies, in the model's layout): its weights, its best weights, its optimizer moments and step
        count, its batch generator's state and torch's global generator (dropout). Meta (JSON): its counters,
        history, best entry, place in its batch order, plateau state and learning-rate decay.
        """
        tensors = {f"weights/{n}": t for n, t in stack.state_of(position).items()}
        tensors |= {f"best/{n}": t.clone() for n, t in (self.best_state or {}).items()}
        tensors |= optimizer.slot_state(position)
        tensors["generator"] = self.generator.get_state().clone()
        tensors["torch_rng"] = torch.get_rng_state().clone()
        counters = self.result.counters
        meta = {"counters": {"step": counters.step, "train_examples": counters.train_examples,
                             "train_seconds": counters.train_seconds, "padded_tokens": counters.padded_tokens,
                             "real_tokens": counters.real_tokens},
                "history": self.result.history, "best": self.result.best, "position": self.position,
                "epoch": self.epoch, "order": [b.tolist() for b in self.order],
                "has_best": self.best_state is not None, "course": self.course.state()}
        return {"tensors": tensors, "meta": meta}

    def _restore(self, state: dict[str, Any]) -> None:
        """Take up the run where :meth:`resume_state` left it (the optimizer's slot is restored by the engine)."""
        tensors, meta = state["tensors"], state["meta"]
        weights = {n[len("weights/"):]: t for n, t in tensors.items() if n.startswith("weights/")}
        self.data.model.load_state_dict(weights, strict=False)
        if meta.get("has_best"):
            self.best_state = {n[len("best/"):]: t for n, t in tensors.items() if n.startswith("best/")}
        self.generator.set_state(tensors["generator"])
        counters = self.result.counters
        for key, value in meta["counters"].items():
            setattr(counters, key, value)
        self.result.history, self.result.best = list(meta["history"]), meta["best"]
        self.position, self.epoch = meta["position"], meta["epoch"]
        self.order = [np.asarray(b, dtype=np.int64) for b in meta["order"]]
        # "plan": the key of resume files saved before the recipes' courses were named so
        self.course.restore(meta["course"] if "course" in meta else meta["plan"])

    @property
    def step(self) -> int:
        return self.result.counters.step

    def next_batch(self) -> np.ndarray:
        """The run's next batch; a new epoch draws its order from the run's generator (its recipe's order)."""
        if self.position >= len(self.order):
            self.order = self.course.order(self.lengths, self.generator)
            self.position, self.epoch = 0, self.epoch + 1
        self.position += 1
        return self.order[self.position - 1]

    def lr_factor(self) -> float:
        """The multiplier of the base learning rates for the run's next update (host float: no device read)."""
        return self.course.lr_factor(self.step)

    def due(self) -> bool:
        """Whether the run validates after its last step (its recipe's timing)."""
        return self.course.due(self.step, self.position, len(self.order))

    def check(self, score: dict[str, float], snapshot: Callable[[], dict[str, torch.Tensor]]) -> bool:
        """Record a validation; keep the weights (``snapshot()``) of a new best; whether the run stops here."""
        entry, new_best, stop = self.course.check(score, step=self.step, epoch=self.epoch, loss=self._mean_loss(),
                                                  best=self.result.best)
        self.result.history.append(entry)
        if new_best:
            self.result.best, self.best_state = entry, snapshot()
        return stop

    def _mean_loss(self) -> float | None:
        """The mean training loss since the run's last validation (and forget those losses)."""
        values = torch.stack(self.losses).float().cpu().tolist() if self.losses else []
        self.losses = []
        return float(np.mean(values)) if values else None


def _train_step(stack: StackedClassifiers, optimizer, active: list[_Run], pad_to: int | None, device: str,
                amp: torch.dtype | None, captured: _CapturedStep | None = None) -> None:
    """One step of every run in the group on its own next batch: forward, per-run losses, backward, update.

    Nothing here waits for the device: inputs and labels go over from pinned memory without blocking, token counts
    come from the host's copy of the batch, losses stay on the device until a check reads them. With ``captured`` the
    batches are padded to a width bucket and the step runs through the graph of that width (:mod:`._capture`).
    """
    batches = [run.next_batch() for run in active]
    factors = [run.lr_factor() for run in active]
    if captured is not None and pad_to is None:
        pad_to = captured.width(max(int(run.lengths[batch].max()) for run, batch in zip(active, batches)))
    tensors = _stack_batches([run.data.train for run in active], batches, pad_to)
    rows = tensors["attention_mask"].shape[1]
    labels = torch.zeros((len(active), rows), dtype=torch.long)
    for position, (run, batch) in enumerate(zip(active, batches)):
        labels[position, :len(batch)] = run.data.gold[batch]
    tensors["labels"] = labels
    partial = any(len(batch) < rows for batch in batches)
    if partial or captured is not None:  # a short batch is padded with examples of weight 0; its loss is its own mean
        tensors["weights"] = torch.tensor([[1.0 / len(b)] * len(b) + [0.0] * (rows - len(b)) for b in batches])
    pinned = device.startswith("cuda")
    if captured is not None:
        per_run = captured({k: (v.pin_memory() if pinned else v) for k, v in tensors.items()}, factors)
    else:
        replace = None
        embedding = getattr(optimizer, "rows", None)
        if embedding is not None and "input_ids" in tensors:  # the word embedding's rows (lazily: only those updated)
            tensors["input_ids"], table = embedding.prepare(tensors["input_ids"])
            replace = {embedding.name: table} if table is not None else None
        moved = {k: (v.pin_memory() if pinned else v).to(device, non_blocking=True) for k, v in tensors.items()}
        labels, weights = moved.pop("labels"), moved.pop("weights", None)
        optimizer.set_factors(factors)
        per_run = _device_step(stack, optimizer, moved, labels, weights, amp, replace)
    mask = tensors["attention_mask"]
    for position, (run, batch, loss) in enumerate(zip(active, batches, per_run)):
        run.losses.append(loss)
        counters = run.result.counters
        counters.step += 1
        counters.train_examples += len(batch)
        counters.padded_tokens += len(batch) * int(mask.shape[2])
        counters.real_tokens += int(mask[position].sum())


def _device_step(stack: StackedClassifiers, optimizer, inputs: dict[str, torch.Tensor], labels: torch.Tensor,
                 weights: torch.Tensor | None, amp: torch.dtype | None,
                 replace: dict[str, torch.Tensor] | None = None, additive_mask: bool = False) -> torch.Tensor:
    """A step's device work: every run's loss on its batch, backward, and the update at the rates the optimizer's
    ``set_factors`` wrote. Nothing is read from the host: a captured step is this on static buffers (:mod:`._capture`).

    Each run's loss is the mean over its examples, or the ``weights``' sum. Returns the losses (K,), detached.
    """
    logits = stack.logits(inputs, amp=amp, replace=replace, additive_mask=additive_mask)
    losses = torch.nn.functional.cross_entropy(logits.flatten(0, 1), labels.flatten(),
                                               reduction="none").view(labels.shape)
    per_run = (losses * weights).sum(1) if weights is not None else losses.mean(1)
    per_run.sum().backward()  # runs share no parameter: each run's gradient is its own loss's
    optimizer.apply()
    return per_run.detach()


class _CapturedStep:
    """The engine's step as graphs, one per (group, width bucket) (:class:`~._capture.StepGraphs`).

    The step on the static buffers: every run's weighted loss (the weights always an input, so that full and short
    batches share a graph), backward, and the optimizer's ``apply()`` at the rates ``set_factors`` wrote before it.
    Graphs are dropped when the group's tensors are made anew (runs leaving: the optimizer's ``binding``).
    """

    def __init__(self, stack: StackedClassifiers, optimizer, device: str, amp: torch.dtype | None, bucket: int,
                 limit: int | None):
        if optimizer.rows is not None and optimizer.rows.lazy:
            raise ValueError("lazy embedding rows are chosen on the host at every step and cannot be captured: "
                             "capture with lazy_rows off")
        if getattr(stack.template, "_unpadding", False):
            raise ValueError("a model that skips padding gathers its real tokens at positions read on the host, "
                             "which cannot be captured: capture with skip_padding off")
        self.stack, self.amp, self.bucket, self.limit = stack, amp, bucket, limit
        self.binding = optimizer.binding
        self.optimizer = optimizer
        self.graphs = StepGraphs(self._step, lambda: static_tensors(self.stack, self.optimizer), device)

    def width(self, longest: int) -> int:
        """The bucket a step whose longest example has ``longest`` tokens is padded to."""
        return bucket_width(longest, self.bucket, self.limit)

    def _step(self, buffers: dict[str, torch.Tensor]) -> torch.Tensor:
        inputs = dict(buffers)
        labels, weights = inputs.pop("labels"), inputs.pop("weights")
        return _device_step(self.stack, self.optimizer, inputs, labels, weights, self.amp, additive_mask=True)

    def __call__(self, host: dict[str, torch.Tensor], factors: Sequence[float]) -> torch.Tensor:
        optimizer = self.optimizer
        if optimizer.binding is not self.binding:  # the group's tensors were made anew: so are its graphs
            self.graphs.clear()
            self.binding = optimizer.binding
        return self.graphs(host, prepare=lambda: optimizer.set_factors(factors))


def _validate(stack: StackedClassifiers, active: list[_Run], due: list[int]) -> list[int]:
    """Validate the runs at positions ``due`` (together where they share a validation); the positions that stop."""
    by_set: dict[int, list[int]] = {}
    for position in due:
        by_set.setdefault(id(active[position].data.validate), []).append(position)
    leaving = []
    for positions in by_set.values():
        validate = active[positions[0]].data.validate
        scores = validate(stack.select(positions), [active[p].index for p in positions])
        for position, score in zip(positions, scores):
            if active[position].check(score, lambda p=position: stack.state_of(p)):
                leaving.append(position)
    return leaving


def fit_runs(runs: Sequence[EngineRun], *, slots: int, device: str, amp: torch.dtype | None = None,
             show: bool = False, desc: str = "fused",
             finished: Callable[[int, RunData, FitResult], None] | None = None,
             gone: Callable[[int], bool] | None = None,
             checked: Callable[[int, Callable[[], dict[str, Any]]], None] | None = None,
             lazy_rows: bool | None = None, capture: bool = False, bucket: int = CAPTURE_BUCKET) -> list[FitResult]:
    """Train a queue of runs in ``slots`` slots as one computation; each run ends with its best weights loaded.

    Parameters
    ----------
    runs : sequence of EngineRun
        The queue, in order. Every run's config must share the training key (model shapes and recipe:
        :func:`~diagnostics.finetune._grouping.training_key`); data, validation, schedule and seed are its own.
    slots : int
        Runs trained at once (K). The first K runs take the slots; a run that stops hands its slot to the next.
    device : str
        Torch device.
    amp : torch.dtype, optional
        Autocast dtype (``None``: full precision).
    show : bool
        Show a progress bar (in run-steps).
    desc : str
        The bar's label.
    finished : callable, optional
        ``finished(index, data, result)`` as each run ends, before its slot is refilled (its model holds its best
        weights): store it there, and a killed group loses only the runs still training.
    gone : callable, optional
        ``gone(index)``, asked after every step: true for a run that must stop at once (its process lost the run's
        lease). The run leaves its slot without ``finished`` and its result stays ``None``; the others go on.
    checked : callable, optional
        ``checked(index, state)`` after each check of a run that goes on; ``state()`` returns what the run needs to
        go on from there in another process (:meth:`_Run.resume_state`), to be given back as ``RunData.resume``.
        A run that resumes with a group of one slot also takes back torch's global generator (its dropout draws).
    lazy_rows : bool, optional
        BertAdam with a trainable word embedding: update only the rows each step's batches read, the others' steps
        replayed exactly when read (:mod:`._lazy_rows`; the weights equal the eager update's bit for bit). Default
        (``None``, ``False``): every row every step. Other optimizers and frozen embeddings: no effect.
    capture : bool
        Run the training step through graphs, one per width bucket (:mod:`._capture`): on CUDA captured CUDA
        graphs; elsewhere their stand-in, a recording of the step's ops replayed (which is how the CPU proves the
        step capturable, not a speed-up). A step's batches are padded to the bucket, every batch's loss weighted,
        and BertAdam's clip takes the word embedding's norm over its whole gradient: the same training to float
        rounding, not bit for bit the step without capture. Not with ``lazy_rows``, nor a model that skips padding
        (its gathers read the mask's real positions on the host).
    bucket : int
        With ``capture``, the width buckets' step in tokens (the widest is the recipe's ``max_seq_length``).

    Returns
    -------
    list of FitResult or None
        One per run, in the order of ``runs`` (``None`` for a run whose ``join`` gave nothing).
    """
    from tqdm.auto import tqdm

    if not runs:
        return []
    if len({training_key(run.config) for run in runs}) > 1:
        raise ValueError("runs of one group must share model shapes and recipe (training_key)")
    queue = deque(range(len(runs)))
    active: list[_Run] = []
    while len(active) < slots and (joining := _take(runs, queue)) is not None:
        active.append(joining)
    results: list[FitResult | None] = [None] * len(runs)
    if not active:
        return results
    lead = runs[0].config
    stack = StackedClassifiers([run.data.model for run in active], device)
    optimizer = _OPTIMIZERS[lead.optimizer](stack, active[0].data.model, lead)
    if lazy_rows is not None and optimizer.rows is not None:
        optimizer.rows.lazy = lazy_rows
    pad_to = lead.max_seq_length if lead.pad_to_max_length else None
    captured = _CapturedStep(stack, optimizer, device, amp, bucket, lead.max_seq_length) if capture else None
    for position, run in enumerate(active):
        _resume_slot(run, optimizer, position, slots)
    bar = tqdm(total=sum(run.steps for run in active), desc=desc, leave=False, disable=not show, unit="run-step")
    try:
        while active:
            started = time.perf_counter()
            _train_step(stack, optimizer, active, pad_to, device, amp, captured)
            elapsed = time.perf_counter() - started
            for run in active:
                run.result.counters.train_seconds += elapsed
            bar.update(len(active))
            stopped = [position for position, run in enumerate(active) if gone is not None and gone(run.index)]
            due = [position for position, run in enumerate(active) if run.due() and position not in stopped]
            if due or stopped:  # checks, snapshots and slots changing read every row
                optimizer.flush()
            leaving = _validate(stack, active, due) if due else []
            if checked is not None:
                for position in due:
                    if position not in leaving:
                        run = active[position]
                        checked(run.index, lambda r=run, p=position: r.resume_state(stack, optimizer, p))
            if not leaving and not stopped:
                continue
            for position in leaving:
                run = active[position]
                run.data.model.load_state_dict(run.best_state, strict=False)
                results[run.index] = run.result
                if finished is not None:
                    finished(run.index, run.data, run.result)
            emptied = []
            for position in sorted(leaving + stopped):
                joining = _take(runs, queue)
                if joining is None:
                    emptied.append(position)
                    continue
                stack.put(position, joining.data.model)
                optimizer.reset(position)
                _resume_slot(joining, optimizer, position, slots)
                active[position] = joining
                bar.total += joining.steps
                bar.refresh()
            if emptied:
                kept = [p for p in range(len(active)) if p not in emptied]
                if kept:
                    stack.keep(kept)
                    optimizer.keep(kept)
                active = [active[p] for p in kept]
    finally:
        bar.close()
    return results


#: The engine's stacked optimizers by the name a recipe gives (:attr:`~._recipes.Recipe.optimizer`).
_OPTIMIZERS = {"adamw": StackedAdamW, "bert_adam": StackedBertAdam}


def _resume_slot(run: _Run, optimizer, position: int, slots: int) -> None:
    """A resuming run's optimizer state into its slot; alone in its group, torch's generator too (its dropout)."""
    if run.data.resume is None:
        return
    optimizer.restore_slot(position, run.data.resume["tensors"])
    if slots == 1:
        torch.set_rng_state(run.data.resume["tensors"]["torch_rng"])


def _take(runs: Sequence[EngineRun], queue: deque) -> _Run | None:
    """The next run of the queue that joins (its data made), or ``None`` when the queue runs out."""
    while queue:
        index = queue.popleft()
        data = runs[index].join()
        if data is not None:
            return _Run(index, runs[index], data)
    return None


def fit_fused(models: Sequence[nn.Module], train, gold: torch.Tensor, config: SweepConfig, *, seeds: Sequence[int],
              validate: Callable[[StackedClassifiers, Sequence[int]], list[dict[str, float]]], device: str,
              amp: torch.dtype | None = None, show: bool = False, desc: str = "fused",
              lazy_rows: bool | None = None, capture: bool = False,
              bucket: int | None = None) -> list[FitResult]:
    """Train ``models`` (one per seed, one data set) in as many slots: :func:`fit_runs` without a queue.

    Each model ends with its best validation's weights; ``validate(stack, members)`` scores each run of the stack
    (``members``: positions in ``models``). ``lazy_rows``, ``capture`` and ``bucket`` as for :func:`fit_runs`.
    Returns one ``FitResult`` per model, in order.
    """
    if len(models) != len(seeds):
        raise ValueError(f"{len(models)} models for {len(seeds)} seeds")
    runs = [EngineRun(seed, config, lambda m=model: RunData(m, train, gold, validate))
            for model, seed in zip(models, seeds)]
    return fit_runs(runs, slots=len(runs), device=device, amp=amp, show=show, desc=desc, lazy_rows=lazy_rows,
                    capture=capture, bucket=CAPTURE_BUCKET if bucket is None else bucket)
