"""Run the token-wise parts of a BERT-like encoder on real tokens only (padding skipped).

In a BERT layer only the attention core (softmax(QK^T)V) mixes positions; the query/key/value projections, the
attention output projection (``attention.output``: dense + dropout + LayerNorm with the residual) and the
feed-forward block (``intermediate`` + ``output``) act on each token alone, and they are all of the layer's matrix
work but the attention core. A dynamically padded batch of RTE pairs in random order is ~40 % padding, so
computing those parts on the real tokens only (gather, compute, scatter back into the padded layout around the
attention core) saves most of that work, forward and backward, without changing what any real token sees:

* real tokens get the same values as in the padded computation (the same per-token arithmetic);
* padded positions get zero queries, keys and values and keep their input hidden state through the layers; they
  are masked as attention keys and the classifier reads the first token, so nothing downstream reads them (their
  hidden states are *not* those of the plain model: use this for training and classification, not to read every
  position's hidden state);
* dropout draws its masks for the real tokens only, so a seed gives a different (equally random) mask stream than
  the plain model: runs stay deterministic per seed but are not bit-identical to runs without unpadding.

Implemented with forward hooks on the existing modules, so parameter names, checkpoints and ``state_dict`` are
those of the plain model (not compatible with gradient checkpointing, whose recomputation runs outside the
model's forward call). Applies to layers with ``attention.output``, ``intermediate`` and ``output`` modules
(BERT, RoBERTa, XLM-R, ELECTRA); other models are left as they are.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
from torch import nn


@dataclass
class _Batch:
    """Index of the real tokens of the batch being run (``None``: little or no padding, run as usual)."""

    index: torch.Tensor | None = None
    residuals: list = field(default_factory=list)


def _gather(batch: _Batch, tensor: torch.Tensor) -> torch.Tensor:
    return tensor.reshape(-1, tensor.shape[-1]).index_select(0, batch.index)


def _scatter(batch: _Batch, full: torch.Tensor, real: torch.Tensor) -> torch.Tensor:
    """``full`` with its real-token rows replaced by ``real`` (out of place, differentiable in both)."""
    return full.reshape(-1, full.shape[-1]).index_copy(0, batch.index, real).view(full.shape)


def enable_unpadding(model: nn.Module, min_padding: float = 0.1) -> bool:
    """Make the token-wise parts of ``model``'s encoder layers skip padded positions (see the module docstring).

    ``model`` is a Hugging Face BERT-like model (``base_model.encoder.layer``), e.g. a ``*ForSequenceClassification``;
    it must be called with a 2-D ``attention_mask`` keyword (1 = real token) for unpadding to take effect. Padded
    positions are skipped only in batches with at least ``min_padding`` share of padding (0 = whenever there is any).
    Returns whether unpadding was installed (``False`` for models without the BERT layer structure, or when it
    already is).
    """
    base = getattr(model, "base_model", model)
    layers = getattr(getattr(base, "encoder", None), "layer", None)
    if layers is None or getattr(model, "_unpadding", False):
        return False
    parts = [(layer.attention.output, layer.intermediate, layer.output) for layer in layers
             if all(hasattr(layer, a) for a in ("attention", "intermediate", "output"))
             and hasattr(layer.attention, "output")]
    if not parts or len(parts) != len(layers):
        return False
    batch = _Batch()

    def begin(module, args, kwargs):
        mask = kwargs.get("attention_mask")
        batch.index = None
        if mask is not None and mask.dim() == 2:
            index = mask.reshape(-1).nonzero().squeeze(1)
            # below ~1/10 padding (length-bucketed batches) gathering and scattering costs about what it saves
            if index.numel() <= (1 - min_padding) * mask.numel():
                batch.index = index

    def end(module, args, kwargs, output):
        batch.index = None
        batch.residuals.clear()

    def gather_pair(module, args):  # (x, residual), both padded -> both real-only; keep the residual to scatter into
        if batch.index is None:
            return None
        x, residual = args[0], args[1]
        batch.residuals.append(residual)
        return (x if x.dim() == 2 else _gather(batch, x), _gather(batch, residual)) + tuple(args[2:])

    def scatter_back(module, args, output):
        if batch.index is None:
            return None
        return _scatter(batch, batch.residuals.pop(), output)

    def gather_keep_shape(module, args):  # remember the padded input to scatter the projection back into its shape
        if batch.index is None:
            return None
        batch.residuals.append(args[0])
        return (_gather(batch, args[0]),) + tuple(args[1:])

    def gather_real(module, args):
        if batch.index is None:
            return None
        return (_gather(batch, args[0]),) + tuple(args[1:])

    def scatter_zeros(module, args, output):  # the attention core wants the padded layout back
        if batch.index is None:
            return None
        shape = batch.residuals.pop().shape[:-1] + output.shape[-1:]
        return _scatter(batch, output.new_zeros(shape), output)

    base.register_forward_pre_hook(begin, with_kwargs=True)
    base.register_forward_hook(end, with_kwargs=True, always_call=True)
    for layer, (self_output, intermediate, output) in zip(layers, parts):
        projections = [getattr(getattr(layer.attention, "self", None), n, None) for n in ("query", "key", "value")]
        for projection in projections if all(isinstance(p, nn.Linear) for p in projections) else ():
            # padded positions get zero queries, keys and values: masked as keys, and their outputs are dropped
            projection.register_forward_pre_hook(gather_keep_shape)
            projection.register_forward_hook(scatter_zeros)
        self_output.register_forward_pre_hook(gather_pair)
        self_output.register_forward_hook(scatter_back)
        intermediate.register_forward_pre_hook(gather_real)
        # output gets the real-only intermediate activations and the padded attention output as its residual
        output.register_forward_pre_hook(gather_pair)
        output.register_forward_hook(scatter_back)
    model._unpadding = True
    return True
