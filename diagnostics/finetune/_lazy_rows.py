"""Lazy word-embedding rows for BertAdam: a row is updated when a batch reads it, its missed steps replayed exactly.

Half of a multilingual BERT's weights are its word embeddings, and a batch of a few pairs reads a few hundred of
their rows. A row that no run's batch read in a step has a zero gradient there, so BertAdam's update of it is a
function of its moments, its weight and the step's learning rate only:

.. code-block:: text

    m = beta1 * m + (1 - beta1) * 0
    v = beta2 * v + (1 - beta2) * 0 * 0
    p = p - rate * (m / (sqrt(v) + eps) + decay * p)

With lazy rows (:class:`EmbeddingRows`, ``lazy=True``) a step updates only the rows its batches read (the union over
the group's runs: every run's gradient rows there, zero for the rows only other runs read). Every row keeps the
number of steps applied to it; before a batch reads a row, its missed steps are replayed through the same operator
(:func:`~._bert_adam_kernel.bert_adam_replay_`: the operator's arithmetic with a zero gradient) and each missed
step's per-run rates and clip factors (a device history of the embedding's per step), so the row equals what the
eager update made of it, bit for bit. The forward
reads the batch's rows as a sub-table (ids remapped; rows ``0 .. padding_idx`` always kept, so the padding row keeps
its index and the embedding treats it as before), and its backward makes gradients of those rows only. All rows
are brought up to date (:meth:`EmbeddingRows.flush`) before anything reads the whole table: a validation check,
a snapshot of weights or optimizer state, a run leaving or joining the group, the end of training.

The clip norms need the embedding gradient's norm, which a reduction over the whole (mostly zero) gradient and one
over its nonzero rows round differently. So whenever the engine gives the batch's rows, both modes take that norm over
the gathered rows (``lazy=False`` keeps the whole table's update and gradient: the eager step to compare with).

Cost: exactness makes a row's missed steps a loop of whole steps (every rounding of every step), so a check's flush
replays about as many row-steps as the eager update would have made. As torch ops (any device) each replayed step is
a dozen passes over its rows, more bytes than the eager kernel's one pass. On CUDA with Triton the replay runs in
registers (:func:`~._bert_adam_kernel.bert_adam_replay_rows_`: each late row of the whole table read and written
once per catch-up, its missed steps applied in between), which is what lazy rows need to pay; the engine's default
stays the eager update until a GPU measurement says lazy rows are faster.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from ._bert_adam_kernel import bert_adam_replay_, bert_adam_replay_rows_, replay_eligible

#: Elements of one gathered tensor a replay works on at once (temporaries are a few copies of that many).
_BLOCK = 1 << 25


def word_embedding(model: nn.Module) -> tuple[str, int] | None:
    """The trainable word-embedding weight of ``model``: its parameter name and padding index (-1: none).

    Parameters
    ----------
    model : torch.nn.Module
        A classifier (transformers' or jiant's pair head over an encoder).

    Returns
    -------
    tuple of (str, int) or None
        ``None`` when the model reads no token ids through an ``nn.Embedding`` or that embedding does not train.
    """
    embedding = None
    for owner in (model, getattr(model, "base_model", None)):
        get = getattr(owner, "get_input_embeddings", None)
        if get is not None:
            try:
                embedding = get()
            except (NotImplementedError, AttributeError):
                embedding = None
            if embedding is not None:
                break
    if not isinstance(embedding, nn.Embedding) or not embedding.weight.requires_grad:
        return None
    for name, param in model.named_parameters():
        if param is embedding.weight:
            padding = embedding.padding_idx
            return name, -1 if padding is None else int(padding)
    return None


class EmbeddingRows:
    """The batch's word-embedding rows of a :class:`~._stacked_optim.StackedBertAdam`, and, lazily, their updates.

    Parameters
    ----------
    optimizer : StackedBertAdam
        Whose stack, moments, rates and decays the rows are of.
    name : str
        The word-embedding weight's parameter name.
    padding_idx : int
        The embedding's padding index (-1: none).
    lazy : bool
        Update only the rows a batch read (and replay the missed steps when a row is read again); ``False``: every
        row every step (the eager update), the rows used only for the embedding's gradient norm.
    """

    def __init__(self, optimizer, name: str, padding_idx: int, *, lazy: bool = True):
        self.optimizer, self.name, self.lazy = optimizer, name, lazy
        self.index = optimizer.names.index(name)
        self.group = next(g for g, (_, _, names) in enumerate(optimizer.groups) if name in names)
        self.vocab = optimizer.stack.params[name].shape[1]
        # rows 0 .. padding_idx stay in every sub-table, so the padding row keeps its index there
        self.always = np.arange(max(padding_idx, -1) + 1, dtype=np.int64)
        self.applied = np.zeros(self.vocab, dtype=np.int64)  # per row: steps applied since the last flush
        self.steps = 0  # steps taken since the last flush
        # (capacity, 2, K): per step, each run's clip factor and rate of the embedding
        self.history: torch.Tensor | None = None
        self.rows: torch.Tensor | None = None  # this step's rows (device, ascending)
        self._host_rows: np.ndarray | None = None
        self.table: torch.Tensor | None = None  # this step's sub-table, a leaf of shape (K, rows, H)

    @property
    def pending(self) -> bool:
        """Whether some row misses updates (a :meth:`flush` has work to do)."""
        return self.lazy and self.steps > 0 and bool((self.applied < self.steps).any())

    def prepare(self, input_ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Take the step's rows from its token ids (K, B, T) on the host; lazily, bring them up to date.

        Returns
        -------
        tuple of torch.Tensor
            The ids the forward reads (remapped to the sub-table's rows when lazy, else ``input_ids``) and the
            sub-table (K, rows, H) that replaces the weight in the forward (a leaf that takes the gradient), or
            ``None`` when not lazy.
        """
        ids = input_ids.numpy()
        rows = np.union1d(np.unique(ids), self.always)
        self._host_rows = rows
        self.rows = torch.from_numpy(rows).to(self.optimizer.stack.device, non_blocking=True)
        if not self.lazy:
            return input_ids, None
        self._catch_up(rows)
        weight = self.optimizer.stack.params[self.name]
        self.table = weight.detach().index_select(1, self.rows).requires_grad_(True)
        return torch.from_numpy(np.searchsorted(rows, ids)), self.table

    def gradient(self, stacked: torch.Tensor | None) -> torch.Tensor | None:
        """The gradient of this step's rows (K, rows, H): the sub-table's, or the rows of the whole one's."""
        if self.rows is None:
            return None
        if self.table is not None:
            return self.table.grad
        return stacked.index_select(1, self.rows) if stacked is not None else None

    @torch.no_grad()
    def gathered(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """This step's rows of the weight (the sub-table's storage) and of both moments, to update in place."""
        optimizer = self.optimizer
        return (self.table.detach(), optimizer.exp_avg[self.name].index_select(1, self.rows),
                optimizer.exp_avg_sq[self.name].index_select(1, self.rows))

    @torch.no_grad()
    def scatter(self, weight: torch.Tensor, exp_avg: torch.Tensor, exp_avg_sq: torch.Tensor) -> None:
        """Write the updated rows back and record the step: its rates, and that these rows have it."""
        optimizer = self.optimizer
        optimizer.stack.params[self.name].detach().index_copy_(1, self.rows, weight)
        optimizer.exp_avg[self.name].index_copy_(1, self.rows, exp_avg)
        optimizer.exp_avg_sq[self.name].index_copy_(1, self.rows, exp_avg_sq)
        self._record(optimizer._scale[:, self.index], optimizer._rates[:, self.group])
        self.applied[self._host_rows] = self.steps

    def release(self) -> None:
        """Forget this step's rows (after the update)."""
        self.rows = self._host_rows = self.table = None

    def _record(self, scales: torch.Tensor, rates: torch.Tensor) -> None:
        """Keep the step's clip factors and rates (K,) in the device history; count the step."""
        runs = rates.shape[0]
        if self.history is None or self.history.shape[0] <= self.steps or self.history.shape[2] != runs:
            grown = torch.empty((max(64, 2 * self.steps), 2, runs), dtype=rates.dtype, device=rates.device)
            if self.history is not None and self.steps:
                grown[:self.steps].copy_(self.history[:self.steps])
            self.history = grown
        self.history[self.steps, 0].copy_(scales)
        self.history[self.steps, 1].copy_(rates)
        self.steps += 1

    @torch.no_grad()
    def flush(self) -> None:
        """Bring every row up to date; the history starts again (nothing pending)."""
        if self.lazy and self.steps:
            self._catch_up(np.arange(self.vocab, dtype=np.int64))
        self.applied[:] = 0
        self.steps = 0

    @torch.no_grad()
    def _catch_up(self, rows: np.ndarray) -> None:
        """Replay the steps that ``rows`` (ascending) missed, in blocks of rows."""
        late = rows[self.applied[rows] < self.steps]
        if not len(late):
            return
        optimizer = self.optimizer
        weight = optimizer.stack.params[self.name]
        moments = optimizer.exp_avg[self.name], optimizer.exp_avg_sq[self.name]
        if replay_eligible(weight, *moments, self.history):  # in registers: each row read and written once
            first = int(self.applied[late].min())
            device = weight.device
            bert_adam_replay_rows_(weight.detach(), *moments, torch.from_numpy(late).to(device),
                                   torch.from_numpy(self.applied[late] - first).to(device),
                                   self.history[first:self.steps], optimizer._decays[self.index], *optimizer.betas,
                                   optimizer.config.adam_eps)
            self.applied[late] = self.steps
            return
        late = late[np.argsort(self.applied[late], kind="stable")]  # oldest first: each step's rows are a prefix
        per_row = weight.shape[0] * int(np.prod(weight.shape[2:]))
        block = max(1, _BLOCK // max(per_row, 1))
        for start in range(0, len(late), block):
            self._replay(late[start:start + block])
        self.applied[late] = self.steps

    def _replay(self, rows: np.ndarray) -> None:
        """Apply to ``rows`` (oldest first) every step each missed: BertAdam's operator with a zero gradient."""
        optimizer = self.optimizer
        index = torch.from_numpy(rows).to(optimizer.stack.device, non_blocking=True)
        weight = optimizer.stack.params[self.name].detach()
        blocks = [weight.index_select(1, index), optimizer.exp_avg[self.name].index_select(1, index),
                  optimizer.exp_avg_sq[self.name].index_select(1, index)]
        starts = self.applied[rows]
        first = int(starts[0])
        counts = np.searchsorted(starts, np.arange(first, self.steps), side="right").tolist()  # rows missing a step
        history = self.history[first:self.steps]
        bert_adam_replay_(*blocks, counts, history[:, 0], history[:, 1], optimizer._decays[self.index],
                          *optimizer.betas, optimizer.config.adam_eps)
        weight.index_copy_(1, index, blocks[0])
        optimizer.exp_avg[self.name].index_copy_(1, index, blocks[1])
        optimizer.exp_avg_sq[self.name].index_copy_(1, index, blocks[2])
