"""BertAdam's update of K stacked runs: one pass over each stacked tensor, the decay exact.

pytorch_pretrained_bert 0.6.2's BertAdam, per element of one run's tensor, after both clips:

.. code-block:: text

    g = grad * scale                        the (run, tensor)'s factor of both clips
    m = beta1 * m + (1 - beta1) * g
    v = beta2 * v + (1 - beta2) * g * g
    update = m / (sqrt(v) + eps) + decay * p
    p = p - rate * update                   the run's learning rate (base rate, schedule, plateau decays)

No bias correction, epsilon outside the square root, and the decay inside the update: scaled by the rate and
rounded with the rest of the update. (torch's fused AdamW kernel decays the weight on its own, ``p * (1 - lr wd)``:
in float32 that factor is ``1 - 1.19e-7`` at ``lr wd = 1e-7`` and exactly 1 below about ``3e-8``.)

:func:`bert_adam_` is one operator (``torch.ops.diagnostics.bert_adam_``): on CUDA float32 tensors with Triton
installed, one Triton kernel launch per stacked tensor, which reads weight, gradient and both moments once and
writes weight and moments once (28 bytes per float32 element); elsewhere the same arithmetic as torch ops, each
rounding once, in the same order (:func:`bert_adam_torch_`, the kernel's oracle). The clip factors and learning
rates are read from device tensors, so a step holds no host value and can be captured.
"""

from __future__ import annotations

import functools
import os

import torch

try:  # Triton ships with torch's CUDA builds only
    import triton
    import triton.language as tl
except ImportError:  # pragma: no cover - depends on the torch build
    triton = tl = None

#: Elements of one Triton program.
_BLOCK = 1024
#: Elements the torch form updates at once (its temporaries are a few copies of that many).
_CHUNK = 1 << 24


def bert_adam_(params: list[torch.Tensor], grads: list[torch.Tensor], exp_avgs: list[torch.Tensor],
               exp_avg_sqs: list[torch.Tensor], scales: list[torch.Tensor], rates: list[torch.Tensor],
               decays: list[float], beta1: float, beta2: float, eps: float) -> None:
    """Apply one BertAdam update to stacked tensors, in place.

    Parameters
    ----------
    params, grads, exp_avgs, exp_avg_sqs : list of torch.Tensor
        Per stacked tensor (leading dimension K, the runs): weight, gradient (not clipped), first and second moment.
        ``params`` and both moments are updated in place; ``grads`` are only read.
    scales : list of torch.Tensor
        Per tensor, each run's factor of both clips, shape (K, 1, ...) (a column broadcasting over the tensor).
    rates : list of torch.Tensor
        Per tensor, each run's learning rate of this update, shape (K, 1, ...).
    decays : list of float
        Per tensor, its weight decay (0: none).
    beta1, beta2, eps : float
        BertAdam's ``b1``, ``b2`` and ``e``.
    """
    torch.ops.diagnostics.bert_adam_(params, grads, exp_avgs, exp_avg_sqs, scales, rates, decays, beta1, beta2, eps)


@torch.library.custom_op("diagnostics::bert_adam_", mutates_args=("params", "exp_avgs", "exp_avg_sqs"))
def _bert_adam_op(params: list[torch.Tensor], grads: list[torch.Tensor], exp_avgs: list[torch.Tensor],
                  exp_avg_sqs: list[torch.Tensor], scales: list[torch.Tensor], rates: list[torch.Tensor],
                  decays: list[float], beta1: float, beta2: float, eps: float) -> None:
    bert_adam_torch_(params, grads, exp_avgs, exp_avg_sqs, scales, rates, decays, beta1, beta2, eps)


@_bert_adam_op.register_kernel("cuda")
def _bert_adam_cuda(params, grads, exp_avgs, exp_avg_sqs, scales, rates, decays, beta1, beta2, eps) -> None:
    kernel = [i for i, p in enumerate(params) if triton_eligible(p, grads[i], exp_avgs[i], exp_avg_sqs[i])]
    rest = sorted(set(range(len(params))) - set(kernel))
    if kernel:
        bert_adam_triton_(*([lst[i] for i in kernel] for lst in (params, grads, exp_avgs, exp_avg_sqs, scales, rates,
                                                                  decays)), beta1, beta2, eps)
    if rest:
        bert_adam_torch_(*([lst[i] for i in rest] for lst in (params, grads, exp_avgs, exp_avg_sqs, scales, rates,
                                                              decays)), beta1, beta2, eps)


def triton_eligible(*tensors: torch.Tensor) -> bool:
    """Whether the Triton kernel can update these tensors: Triton installed, float32, contiguous, one shape."""
    first = tensors[0]
    return triton is not None and all(t.dtype == torch.float32 and t.is_contiguous() and t.shape == first.shape
                                      for t in tensors)


@torch.no_grad()
def bert_adam_torch_(params, grads, exp_avgs, exp_avg_sqs, scales, rates, decays, beta1: float, beta2: float,
                     eps: float) -> None:
    """:func:`bert_adam_` as torch ops on any device, each rounding once, in the Triton kernel's order."""
    one_minus_beta1, one_minus_beta2 = 1.0 - beta1, 1.0 - beta2
    for part in _chunks([p.numel() for p in params]):
        p, m, v = ([lst[i] for i in part] for lst in (params, exp_avgs, exp_avg_sqs))
        g = torch._foreach_mul([grads[i] for i in part], [scales[i] for i in part])
        torch._foreach_mul_(m, beta1)
        torch._foreach_add_(m, torch._foreach_mul(g, one_minus_beta1))
        torch._foreach_mul_(v, beta2)
        square = torch._foreach_mul(g, one_minus_beta2)
        torch._foreach_mul_(square, g)
        torch._foreach_add_(v, square)
        del g, square
        denom = _sqrt(v)
        torch._foreach_add_(denom, eps)
        update = torch._foreach_div(m, denom)
        del denom
        decayed = [i for i, k in enumerate(part) if decays[k] != 0]
        if decayed:
            weights = [p[i] for i in decayed]
            torch._foreach_add_([update[i] for i in decayed],
                                torch._foreach_mul(weights, [decays[part[i]] for i in decayed]))
        torch._foreach_mul_(update, [rates[i] for i in part])
        torch._foreach_sub_(p, update)


@torch.no_grad()
def bert_adam_replay_(param: torch.Tensor, exp_avg: torch.Tensor, exp_avg_sq: torch.Tensor, counts: list[int],
                      scales: torch.Tensor, rates: torch.Tensor, decay: float, beta1: float, beta2: float,
                      eps: float) -> None:
    """Apply to rows of one stacked tensor the steps they missed, each with a zero gradient, in place.

    Each element goes through :func:`bert_adam_torch_`'s operations with a zero gradient, each rounding as there (so
    the rows end as the eager update makes them, bit for bit): the gradient terms ``(0 * scale) * (1 - beta1)`` and
    ``((0 * scale) * (1 - beta2)) * (0 * scale)`` are the same for every element of a run, so they are made once per
    step and run, as (K, 1, ...) columns.

    Parameters
    ----------
    param, exp_avg, exp_avg_sq : torch.Tensor
        The rows' weights and moments, shape (K, rows, ...), oldest rows first.
    counts : list of int
        Per missed step, in order: how many leading rows miss it.
    scales, rates : torch.Tensor
        Per missed step and run (n, K): the tensor's clip factor and learning rate at that step.
    decay : float
        The tensor's weight decay.
    beta1, beta2, eps : float
        BertAdam's ``b1``, ``b2`` and ``e``.
    """
    column = (-1,) + (1,) * (param.dim() - 1)
    gradient = torch.zeros_like(scales) * scales
    first = gradient * (1.0 - beta1)
    second = gradient * (1.0 - beta2)
    second.mul_(gradient)
    for step, count in enumerate(counts):
        p, m, v = param[:, :count], exp_avg[:, :count], exp_avg_sq[:, :count]
        m.mul_(beta1)
        m.add_(first[step].view(column))
        v.mul_(beta2)
        v.add_(second[step].view(column))
        update = _sqrt([v])[0]
        update.add_(eps)
        update = torch.div(m, update, out=update)
        if decay != 0:
            update.add_(p * decay)
        update.mul_(rates[step].view(column))
        p.sub_(update)


def replay_eligible(param: torch.Tensor, exp_avg: torch.Tensor, exp_avg_sq: torch.Tensor,
                    history: torch.Tensor) -> bool:
    """Whether :func:`bert_adam_replay_rows_` can run: Triton installed, float32 contiguous weight and moments of one
    shape and a float32 history, on CUDA (or on the CPU under Triton's interpreter, ``TRITON_INTERPRET=1``)."""
    on_device = param.device.type == "cuda" or os.environ.get("TRITON_INTERPRET") == "1"
    return (on_device and param.dim() >= 2 and history.dtype == torch.float32
            and triton_eligible(param, exp_avg, exp_avg_sq))


@torch.no_grad()
def bert_adam_replay_rows_(param: torch.Tensor, exp_avg: torch.Tensor, exp_avg_sq: torch.Tensor,
                           rows: torch.Tensor, starts: torch.Tensor, history: torch.Tensor, decay: float,
                           beta1: float, beta2: float, eps: float) -> None:
    """:func:`bert_adam_replay_` in registers: each row of the whole stacked tensor read once, its missed steps
    applied, written once (one Triton program per row, run and block of the row's elements).

    The arithmetic is :func:`bert_adam_replay_`'s, each operation rounding once in the same order, so the rows end
    bit for bit as there (and as the eager update makes them); see :func:`replay_eligible` for where it runs.

    Parameters
    ----------
    param, exp_avg, exp_avg_sq : torch.Tensor
        The whole stacked weight and moments, shape (K, vocab, ...), updated in place.
    rows : torch.Tensor
        The row ids to bring up to date (int64, any order, no repeats).
    starts : torch.Tensor
        Per row, the first missed step as an index into ``history`` (int64); the row misses every step from there.
    history : torch.Tensor
        Per step and run, shape (n, 2, K): the tensor's clip factor (``[:, 0]``) and learning rate (``[:, 1]``).
    decay : float
        The tensor's weight decay.
    beta1, beta2, eps : float
        BertAdam's ``b1``, ``b2`` and ``e``.
    """
    runs, vocab = param.shape[0], param.shape[1]
    per_row = param.numel() // max(runs * vocab, 1)
    if not len(rows) or per_row == 0 or history.shape[0] == 0:
        return
    history = history.contiguous()
    block = min(_BLOCK, triton.next_power_of_2(per_row))
    grid = (len(rows), runs, triton.cdiv(per_row, block))
    _replay_kernel()[grid](param, exp_avg, exp_avg_sq, rows, starts, history, history.shape[0], runs, vocab, per_row,
                           beta1, 1.0 - beta1, beta2, 1.0 - beta2, eps, float(decay), DECAY=decay != 0, BLOCK=block,
                           enable_fp_fusion=False)


def _sqrt(tensors: list[torch.Tensor]) -> list[torch.Tensor]:
    """Correctly rounded square roots (as IEEE's, CUDA's and Triton's ``sqrt_rn``).

    The CPU's float32 ``sqrt`` is off by an ulp in about one case in six; its float64 one rounded to float32 is not
    (taken over all the tensors at once: three ops, not three per tensor).
    """
    if not tensors or tensors[0].device.type != "cpu" or tensors[0].dtype != torch.float32:
        return torch._foreach_sqrt(tensors)
    flat = torch.cat([t.reshape(-1) for t in tensors]).double().sqrt_().float()
    return [part.view(t.shape) for part, t in zip(flat.split([t.numel() for t in tensors]), tensors)]


def _chunks(sizes: list[int]) -> list[list[int]]:
    """Consecutive tensor indices in runs of at most :data:`_CHUNK` elements (a larger tensor alone)."""
    chunks: list[list[int]] = []
    total = 0
    for index, size in enumerate(sizes):
        if chunks and total + size <= _CHUNK:
            chunks[-1].append(index)
            total += size
        else:
            chunks.append([index])
            total = size
    return chunks


def bert_adam_triton_(params, grads, exp_avgs, exp_avg_sqs, scales, rates, decays, beta1: float, beta2: float,
                      eps: float) -> None:
    """:func:`bert_adam_` as one Triton kernel launch per tensor (float32, contiguous; see :func:`triton_eligible`).

    Runs on CPU tensors too under Triton's interpreter (``TRITON_INTERPRET=1`` when the kernel is first used).
    """
    kernel = _kernel()
    for p, g, m, v, scale, rate, decay in zip(params, grads, exp_avgs, exp_avg_sqs, scales, rates, decays):
        runs = p.shape[0]
        per_run = p.numel() // runs if runs else 0
        if per_run == 0:
            continue
        grid = (runs, triton.cdiv(per_run, _BLOCK))
        # no fused multiply-adds: every operation rounds once, as the torch form's do
        kernel[grid](p, g, m, v, scale, scale.stride(0), rate, rate.stride(0), per_run, beta1, 1.0 - beta1, beta2,
                     1.0 - beta2, eps, float(decay), DECAY=decay != 0, BLOCK=_BLOCK, enable_fp_fusion=False)


@functools.cache
def _kernel():
    """The Triton kernel, made on first use (an interpreted one when ``TRITON_INTERPRET=1`` is set then)."""
    if triton is None:
        raise RuntimeError("the BertAdam kernel needs Triton, which is not installed")

    def bert_adam_kernel(p_ptr, g_ptr, m_ptr, v_ptr, scale_ptr, scale_stride, rate_ptr, rate_stride, per_run,
                         beta1, one_minus_beta1, beta2, one_minus_beta2, eps, decay, DECAY: tl.constexpr,
                         BLOCK: tl.constexpr):
        run = tl.program_id(0)
        offsets = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
        mask = offsets < per_run
        at = run.to(tl.int64) * per_run + offsets
        scale = tl.load(scale_ptr + run * scale_stride)
        rate = tl.load(rate_ptr + run * rate_stride)
        g = tl.load(g_ptr + at, mask=mask, other=0.0) * scale
        p = tl.load(p_ptr + at, mask=mask, other=0.0)
        m = tl.load(m_ptr + at, mask=mask, other=0.0) * beta1 + g * one_minus_beta1
        v = tl.load(v_ptr + at, mask=mask, other=0.0) * beta2 + g * one_minus_beta2 * g
        update = tl.div_rn(m, tl.sqrt_rn(v) + eps)
        if DECAY:
            update = update + p * decay
        p = p - update * rate
        tl.store(m_ptr + at, m, mask=mask)
        tl.store(v_ptr + at, v, mask=mask)
        tl.store(p_ptr + at, p, mask=mask)

    return triton.jit(bert_adam_kernel)


@functools.cache
def _replay_kernel():
    """The Triton kernel of :func:`bert_adam_replay_rows_`, made on first use."""
    if triton is None:
        raise RuntimeError("the BertAdam replay kernel needs Triton, which is not installed")

    def bert_adam_replay_kernel(p_ptr, m_ptr, v_ptr, rows_ptr, starts_ptr, history_ptr, steps, runs, vocab, per_row,
                                beta1, one_minus_beta1, beta2, one_minus_beta2, eps, decay, DECAY: tl.constexpr,
                                BLOCK: tl.constexpr):
        row = tl.load(rows_ptr + tl.program_id(0))
        start = tl.load(starts_ptr + tl.program_id(0))
        run = tl.program_id(1)
        offsets = tl.program_id(2) * BLOCK + tl.arange(0, BLOCK)
        mask = offsets < per_row
        at = (run.to(tl.int64) * vocab + row) * per_row + offsets
        p = tl.load(p_ptr + at, mask=mask, other=0.0)
        m = tl.load(m_ptr + at, mask=mask, other=0.0)
        v = tl.load(v_ptr + at, mask=mask, other=0.0)
        for step in range(start, steps):
            scale = tl.load(history_ptr + (step * 2) * runs + run)
            rate = tl.load(history_ptr + (step * 2 + 1) * runs + run)
            g = scale * 0.0  # the missed step's gradient, as the eager step rounds it
            m = m * beta1 + g * one_minus_beta1
            v = v * beta2 + g * one_minus_beta2 * g
            update = tl.div_rn(m, tl.sqrt_rn(v) + eps)
            if DECAY:
                update = update + p * decay
            p = p - update * rate
        tl.store(m_ptr + at, m, mask=mask)
        tl.store(v_ptr + at, v, mask=mask)
        tl.store(p_ptr + at, p, mask=mask)

    return triton.jit(bert_adam_replay_kernel)
