"""The optimizers of the training engine: AdamW and jiant's BertAdam over K runs' stacked parameters, in one pass.

A step is a handful of operations whatever K and the number of parameter tensors:

1. one norm per stacked gradient, over each run's slice (a (K,) vector per tensor): the per-(run, tensor) norms,
   from which each run's global norm (its clip to ``max_grad_norm``) and, for BertAdam, each tensor's norm after
   that clip (its per-tensor clip to ``bert_adam_max_grad_norm``) are derived on the device, with no second pass;
2. the update:

   * BertAdam: one operator (:func:`~._bert_adam_kernel.bert_adam_`, one Triton kernel per stacked tensor on CUDA)
     that scales each (run, tensor) gradient by its factor of both clips, updates the moments and applies
     pytorch_pretrained_bert 0.6.2's update ``p -= lr (m / (sqrt(v) + eps) + wd p)`` at each run's own rate, read
     from a (K, groups) device tensor;
   * AdamW: torch's fused Adam kernel (``_fused_adamw_``: reads weight, gradient and both moments once, writes
     weight and moments once) once per run and parameter group, the run's clip as the kernel's gradient scale and
     its step count its own (bias correction).

The views of each run's weights and moments are made once per group composition; of its gradients (fresh each
step: nothing to zero or accumulate into) once per step. A step is two calls: :meth:`~_StackedOptimizer.set_factors`
writes each run's learning rates (its base rates times the multiplier its loop gives: its schedule, its plateau
decays and BertAdam's warm-up) from the host into a device buffer, and ``apply()`` clips and updates reading them
there. ``apply()`` holds no host value that changes from step to step and reads nothing back from the device, so it
can be captured once and replayed with new gradients and rates (:mod:`._capture`). Each run has its own moments and
step count (a run joining a group starts at 0: :meth:`~_StackedOptimizer.reset` clears its slot).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

from ._bert_adam_kernel import bert_adam_
from ._config import SweepConfig
from ._lazy_rows import EmbeddingRows, word_embedding
from ._modeling import parameter_groups

#: torch's clip_grad_norm_ (and BertAdam's per-tensor clip) divide by the norm plus this.
_CLIP_EPS = 1e-6


class _StackedOptimizer:
    """Moments and per-run views over a stack's parameters; the per-(run, tensor) gradient norms of a step."""

    betas = (0.9, 0.999)
    #: The word-embedding rows of the step (:class:`~._lazy_rows.EmbeddingRows`), where the optimizer keeps them.
    rows: EmbeddingRows | None = None

    def __init__(self, stack, model: nn.Module, config: SweepConfig, *, decay_all: bool):
        self.stack, self.config = stack, config
        ids = {id(p): name for name, p in model.named_parameters()}
        self.groups = [(g["lr"], g["weight_decay"], [ids[id(p)] for p in g["params"]])
                       for g in parameter_groups(model, config.lr, config.head_lr, config.weight_decay,
                                                 decay_all=decay_all)]
        self.names = [name for _, _, names in self.groups for name in names]
        self.exp_avg = {n: torch.zeros_like(stack.params[n]) for n in self.names}
        self.exp_avg_sq = {n: torch.zeros_like(stack.params[n]) for n in self.names}
        self._base_rates = [base_lr for base_lr, _, _ in self.groups]
        self.counts = torch.zeros(stack.size, dtype=torch.float32, device=stack.device)
        self._bind()

    def _rate_dtype(self) -> torch.dtype:
        """The dtype of the learning rates' device buffer (the weights' by default: the rate a kernel multiplies)."""
        return self.stack.params[self.names[0]].dtype

    def _bind(self) -> None:
        """(Re)make the views of the weights and moments, and the clip buffers, for the stack's runs."""
        params, size = self.stack.params, self.stack.size
        #: A new object whenever the tensors a step reads are made anew (the group's runs kept): a captured step
        #: (:mod:`._capture`) is valid while this is the object it was captured under.
        self.binding = object()
        self._stretches: dict[tuple[int, int], list] = {}
        # the clip factors of a step land in these buffers, read through views made once: a (K, 1, ...) column per
        # tensor broadcasts over its stacked gradient; a one-element view per run is the kernel's gradient scale
        dtype, device = params[self.names[0]].dtype, self.stack.device
        self._scale = torch.ones((size, len(self.names)), dtype=dtype, device=device)
        self._scale_columns = [self._scale[:, i].view((-1,) + (1,) * (params[n].dim() - 1))
                               for i, n in enumerate(self.names)]
        self._inverse = torch.ones(size, dtype=torch.float32, device=device)
        self._inverse_views = [self._inverse[k:k + 1] for k in range(size)]
        longest = max((len(names) for _, _, names in self.groups), default=0)
        self._count_views = [[self.counts[k]] * longest for k in range(size)]
        # each run's learning rate per parameter group, on the device (written by set_factors)
        self._rates = torch.zeros((size, len(self.groups)), dtype=self._rate_dtype(), device=device)

    def set_factors(self, factors: Sequence[float]) -> None:
        """Write each run's learning rates (base rate of each group times its factor) to the device buffer that
        ``apply()`` reads.

        Each rate is the product in double precision, rounded once to the buffer's dtype (as BertAdam's
        ``lr_scheduled * update`` rounds it; AdamW's buffer keeps what the fused kernel reads, see
        :class:`StackedAdamW`). The copy does not wait for the device.

        Parameters
        ----------
        factors : sequence of float
            Per run, the multiplier of the configured learning rates at this step.
        """
        rates = torch.tensor([[base * float(factor) for base in self._base_rates] for factor in factors],
                             dtype=torch.float64).to(self._rates.dtype)
        self._rates.copy_(rates, non_blocking=True)

    def static_tensors(self) -> list[torch.Tensor]:
        """Every tensor ``apply()`` reads or writes that lives from step to step: the moments, step counts, clip
        buffers and rates (the stack's weights are the stack's; see :mod:`._capture`)."""
        return [*self.exp_avg.values(), *self.exp_avg_sq.values(), self.counts, self._scale, self._inverse,
                self._rates]

    def _views(self, start: int, end: int) -> list:
        """Per parameter group: its base rate, decay, and the weights and moments of runs ``start`` to ``end``."""
        key = (start, end)
        if key not in self._stretches:
            whole, one = (start, end) == (0, self.stack.size), end == start + 1

            def part(tensors: dict[str, torch.Tensor], names: list[str]) -> list[torch.Tensor]:
                return [tensors[n] if whole else tensors[n][start] if one else tensors[n][start:end] for n in names]

            self._stretches[key] = [(base_lr, decay, part(self.stack.params, names), part(self.exp_avg, names),
                                     part(self.exp_avg_sq, names)) for base_lr, decay, names in self.groups]
        return self._stretches[key]

    def flush(self) -> None:
        """Bring every deferred update up to date (lazy rows), before anything reads every weight or moment."""
        if self.rows is not None:
            self.rows.flush()

    def _settled(self) -> None:
        if self.rows is not None and self.rows.pending:
            raise RuntimeError("embedding rows miss updates: flush() before the group's slots change")

    def keep(self, runs: Sequence[int]) -> None:
        """Keep the state of the runs at positions ``runs`` (after the stack kept the same positions)."""
        self._settled()
        index = torch.as_tensor(list(runs), dtype=torch.long, device=self.stack.device)
        self.exp_avg = {n: t.index_select(0, index) for n, t in self.exp_avg.items()}
        self.exp_avg_sq = {n: t.index_select(0, index) for n, t in self.exp_avg_sq.items()}
        self.counts = self.counts.index_select(0, index)
        self._bind()

    @torch.no_grad()
    def reset(self, position: int) -> None:
        """Clear the moments and step count of slot ``position`` (a run joins the group there)."""
        self._settled()
        for name in self.names:
            self.exp_avg[name][position].zero_()
            self.exp_avg_sq[name][position].zero_()
        self.counts[position].zero_()

    def slot_state(self, position: int) -> dict[str, torch.Tensor]:
        """CPU copies of slot ``position``'s moments (``exp_avg/<name>``, ``exp_avg_sq/<name>``, in the model's
        layout) and step count (``count``), for :meth:`restore_slot` in another process and stack."""
        self.flush()
        state = {}
        for name in self.names:
            for kind, moments in (("exp_avg", self.exp_avg), ("exp_avg_sq", self.exp_avg_sq)):
                tensor = self.stack.model_layout(name, moments[name][position].detach().cpu())
                state[f"{kind}/{name}"] = tensor.clone(memory_format=torch.contiguous_format)
        state["count"] = self.counts[position].detach().cpu().clone()
        return state

    @torch.no_grad()
    def restore_slot(self, position: int, state: dict[str, torch.Tensor]) -> None:
        """Put a run's moments and step count saved by :meth:`slot_state` into slot ``position``."""
        self._settled()
        for name in self.names:
            for kind, moments in (("exp_avg", self.exp_avg), ("exp_avg_sq", self.exp_avg_sq)):
                moments[name][position].copy_(self.stack.model_layout(name, state[f"{kind}/{name}"]))
        self.counts[position].copy_(state["count"])

    def _gradients(self) -> list[torch.Tensor]:
        """The stacked gradients, in the order of :attr:`names`."""
        return [self.stack.params[n].grad for n in self.names]

    def _norms(self, stacked: list[torch.Tensor]) -> torch.Tensor:
        """The norm of every (run, tensor) gradient, float32 of shape (K, tensors): one reduction per tensor."""
        return torch.stack([torch.linalg.vector_norm(g, dim=tuple(range(1, g.dim()))) for g in stacked],
                           dim=1).float()

    @torch.no_grad()
    def grad_norms(self) -> torch.Tensor:
        """Each run's gradient norm over all of its parameters, float32 of shape (K,), on the device."""
        return torch.linalg.vector_norm(self._norms(self._gradients()), dim=1)

    def _global_clip(self, norms: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Each run's norm (K,) and its factor of the clip to ``max_grad_norm`` (1 without clipping)."""
        total = torch.linalg.vector_norm(norms, dim=1)
        max_norm = self.config.max_grad_norm
        coef = (max_norm / (total + _CLIP_EPS)).clamp(max=1.0) if max_norm else torch.ones_like(total)
        return total, coef

    def _update(self, start: int, end: int, rates: list[torch.Tensor], grads: list[torch.Tensor],
                steps: list[torch.Tensor], grad_scale: torch.Tensor | None) -> None:
        """The fused Adam kernel over runs ``start`` to ``end`` (``grads``: theirs, in the order of :attr:`names`) at
        the rate ``rates[group]`` (a one-element device tensor) per group, gradients divided by ``grad_scale``."""
        beta1, beta2 = self.betas
        first = 0
        for rate, (_, decay, params, exp_avg, exp_avg_sq) in zip(rates, self._views(start, end)):
            last = first + len(params)
            if params:
                torch._fused_adamw_(params, grads[first:last], exp_avg, exp_avg_sq, [], steps[:len(params)],
                                    lr=rate, beta1=beta1, beta2=beta2, weight_decay=decay,
                                    eps=self.config.adam_eps, amsgrad=False, maximize=False,
                                    grad_scale=grad_scale)
            first = last

    def _stretch_gradients(self, stacked: list[torch.Tensor],
                           stretches: Sequence[tuple[int, int, float]]) -> list[list[torch.Tensor]]:
        """Each stretch's gradients: the stacked ones for the whole stack, one ``unbind`` per tensor for single
        runs, slices otherwise."""
        size = self.stack.size
        single = any(end == start + 1 and (start, end) != (0, size) for start, end, _ in stretches)
        unbound = [g.unbind(0) for g in stacked] if single else None
        return [stacked if (start, end) == (0, size) else
                [u[start] for u in unbound] if end == start + 1 else [g[start:end] for g in stacked]
                for start, end, _ in stretches]

    def _release(self) -> None:
        """Drop the gradients: the next backward writes fresh ones (nothing to zero, nothing to add to)."""
        for name in self.names:
            self.stack.params[name].grad = None


class StackedAdamW(_StackedOptimizer):
    """``torch.optim.AdamW`` for K stacked runs: no decay on biases and LayerNorm, ``head_lr``, a global clip per run.

    Each run takes the update its solo AdamW would (bias correction by the step count, the fused kernel); its
    gradients are clipped to ``max_grad_norm`` over all of its own parameters first. The kernel reads each run's
    rate from the device (its tensor-rate form): float64 on the CPU, whose kernel reads the rate as a double, so the
    update equals the one with the rate given as a Python float bit for bit; float32 on CUDA, whose kernel reads a
    float32.

    Parameters
    ----------
    stack : StackedClassifiers
        The runs whose ``params`` are updated in place.
    model : torch.nn.Module
        One of the runs' modules, to group parameters as transformers' training does.
    config : SweepConfig
        Supplies ``lr``, ``head_lr``, ``weight_decay``, ``adam_eps`` and ``max_grad_norm``.
    """

    def __init__(self, stack, model: nn.Module, config: SweepConfig):
        super().__init__(stack, model, config, decay_all=False)

    def _rate_dtype(self) -> torch.dtype:
        return torch.float64 if torch.device(self.stack.device).type == "cpu" else torch.float32

    def _bind(self) -> None:
        super()._bind()
        self._rate_cells = [[self._rates[k, group] for group in range(len(self.groups))]
                            for k in range(self.stack.size)]

    @torch.no_grad()
    def apply(self) -> torch.Tensor:
        """Clip each run's gradients and update every run at the rates :meth:`set_factors` wrote; then drop the
        gradients. Device work only: nothing read from the host or back from the device.

        Returns
        -------
        torch.Tensor
            Each run's gradient norm before clipping, shape (K,), on the device (not read back).
        """
        stacked = self._gradients()
        norms, coef = self._global_clip(self._norms(stacked))
        self._inverse.copy_(coef.reciprocal())  # the kernel divides each run's gradients by its scale
        self.counts.add_(1.0)  # the kernel reads each run's step count for its bias corrections
        runs = [(run, run + 1, None) for run in range(self.stack.size)]
        for (run, _, _), grads in zip(runs, self._stretch_gradients(stacked, runs)):
            self._update(run, run + 1, self._rate_cells[run], grads, self._count_views[run],
                         self._inverse_views[run])
        self._release()
        return norms

    @torch.no_grad()
    def step(self, factors: Sequence[float]) -> torch.Tensor:
        """Clip each run's gradients and update every run; then drop the gradients.

        Parameters
        ----------
        factors : sequence of float
            Per run, the schedule's multiplier of the base learning rates at this step.

        Returns
        -------
        torch.Tensor
            Each run's gradient norm before clipping, shape (K,), on the device (not read back).
        """
        self.set_factors(factors)
        return self.apply()


class StackedBertAdam(_StackedOptimizer):
    """jiant v1's step for K stacked runs: the global clip per run, then BertAdam with its per-tensor clip.

    Each run's gradients are clipped to ``max_grad_norm`` over all of its parameters (jiant's trainer), then each
    tensor to ``bert_adam_max_grad_norm`` (inside BertAdam), then BertAdam's update (no bias correction, epsilon
    outside the square root, weight decay on every parameter added to the update) at the run's own learning rate:
    its base rate, decayed on its own plateaus, times BertAdam's warm-up schedule (the factors its loop gives).
    Both clips and the update are one pass over each stacked tensor (:mod:`._bert_adam_kernel`).

    With a trainable word embedding, the engine gives each step's token ids to :attr:`rows`
    (:class:`~._lazy_rows.EmbeddingRows`): the embedding gradient's norm is taken over the rows the batches read, and
    with ``lazy_rows`` only those rows are updated, each row's missed steps replayed exactly when it is read again.

    Parameters
    ----------
    stack : StackedClassifiers
        The runs whose ``params`` are updated in place.
    model : torch.nn.Module
        One of the runs' modules (its parameter names).
    config : SweepConfig
        The recipe.
    lazy_rows : bool, optional
        Update the word embedding's rows lazily where it trains (default: no, every row every step: replayed as
        torch ops, a row's missed steps move more bytes than the eager kernel saves, see :mod:`._lazy_rows`).
    """

    def __init__(self, stack, model: nn.Module, config: SweepConfig, *, lazy_rows: bool | None = None):
        super().__init__(stack, model, config, decay_all=True)
        self._decays = [float(decay) for _, decay, names in self.groups for _ in names]
        embedding = word_embedding(model)
        if embedding is not None and embedding[0] in self.names:
            self.rows = EmbeddingRows(self, *embedding, lazy=bool(lazy_rows))

    def _bind(self) -> None:
        super()._bind()
        # each run's learning rate per parameter group: a (K, 1, ...) column of it per tensor
        params = self.stack.params
        self._rate_columns = [self._rates[:, group].view((-1,) + (1,) * (params[name].dim() - 1))
                              for group, (_, _, names) in enumerate(self.groups) for name in names]

    def clip_scales(self, per_tensor: torch.Tensor) -> torch.Tensor:
        """Each (run, tensor) gradient's factor of both clips, into ``_scale`` (read through ``_scale_columns``);
        each run's norm before clipping, shape (K,).

        ``per_tensor`` is the norm of every (run, tensor) gradient, shape (K, tensors).
        """
        norms, coef = self._global_clip(per_tensor)
        scale = coef[:, None].expand_as(per_tensor)
        limit = self.config.bert_adam_max_grad_norm
        if limit > 0:  # each tensor's norm after the global clip
            scale = scale * (limit / (per_tensor * coef[:, None] + _CLIP_EPS)).clamp(max=1.0)
        self._scale.copy_(scale)
        return norms

    @torch.no_grad()
    def apply(self) -> torch.Tensor:
        """Clip and update every run at the rates :meth:`set_factors` wrote; drop the gradients. Reads nothing from
        the host: the norms, clip factors and update are device work only.

        Returns
        -------
        torch.Tensor
            Each run's gradient norm before clipping, shape (K,), on the device (not read back).
        """
        if self.rows is not None and self.rows.rows is None:
            self.rows.flush()  # a step without the engine's rows updates the whole table: nothing may be deferred
        stacked = self._gradients()
        params = [self.stack.params[n] for n in self.names]
        exp_avg, exp_avg_sq = [self.exp_avg[n] for n in self.names], [self.exp_avg_sq[n] for n in self.names]
        rows = self.rows if self.rows is not None and self.rows.rows is not None else None
        normed = stacked
        if rows is not None:  # the embedding's norm over the rows the batches read (the others' gradient is zero)
            normed = list(stacked)
            normed[rows.index] = rows.gradient(stacked[rows.index])
        norms = self.clip_scales(self._norms(normed))
        if rows is not None and rows.table is not None:  # lazy: the update of the rows read only
            i = rows.index
            stacked = normed
            params[i], exp_avg[i], exp_avg_sq[i] = rows.gathered()
        bert_adam_(params, stacked, exp_avg, exp_avg_sq, self._scale_columns, self._rate_columns, self._decays,
                   *self.betas, self.config.adam_eps)
        if rows is not None:
            if rows.table is not None:
                rows.scatter(params[rows.index], exp_avg[rows.index], exp_avg_sq[rows.index])
            rows.release()
        self._release()
        return norms

    @torch.no_grad()
    def step(self, factors: Sequence[float]) -> torch.Tensor:
        """Clip and update every run; then drop the gradients.

        Parameters
        ----------
        factors : sequence of float
            Per run, the multiplier of the configured learning rates: its plateau decays so far times BertAdam's
            warm-up factor at its own step (:func:`~diagnostics.finetune._jiant.warmup_linear`).

        Returns
        -------
        torch.Tensor
            Each run's gradient norm before clipping, shape (K,), on the device (not read back).
        """
        self.set_factors(factors)
        return self.apply()
