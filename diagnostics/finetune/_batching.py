"""Tokenised inputs, seeded batch orders (optionally grouped by length, or AllenNLP's buckets) and dynamic padding.

Two kinds of inputs feed the same loop: token ids (full fine-tuning) and cached hidden states of the frozen lower
layers (top-k training, see :mod:`diagnostics.finetune._features`). Both pad each batch only to its longest member.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from ._jiant import CHUNK


@dataclass
class TokenInputs:
    """Token ids of sentence pairs, unpadded (one list per example).

    Parameters
    ----------
    input_ids : list of list of int
        Token ids of each example.
    token_type_ids : list of list of int or None
        Segment ids of each example, for tokenizers that produce them.
    pad_id : int
        Token id used for padding.
    """

    input_ids: list[list[int]]
    token_type_ids: list[list[int]] | None
    pad_id: int

    @property
    def lengths(self) -> np.ndarray:
        """Number of tokens of each example (int64, shape (n_examples,))."""
        return np.fromiter((len(x) for x in self.input_ids), dtype=np.int64, count=len(self.input_ids))

    def __len__(self) -> int:
        return len(self.input_ids)

    def head(self, n: int) -> TokenInputs:
        """The first ``n`` examples (all of them when there are fewer)."""
        types = self.token_type_ids[:n] if self.token_type_ids is not None else None
        return TokenInputs(self.input_ids[:n], types, self.pad_id)

    def batch(self, indices, pad_to: int | None = None) -> dict[str, torch.Tensor]:
        """Build the model's keyword arguments for ``indices``, padded to the batch's longest member.

        ``input_ids``, ``attention_mask`` (and ``token_type_ids`` when the inputs have them), each a long tensor of
        shape (len(indices), width); ``pad_to`` pads to that width instead of the longest member.
        """
        seqs = [self.input_ids[i] for i in indices]
        width = pad_to or max(len(s) for s in seqs)
        ids = torch.full((len(seqs), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(seqs), width), dtype=torch.long)
        types = torch.zeros((len(seqs), width), dtype=torch.long) if self.token_type_ids is not None else None
        for row, i in enumerate(indices):
            n = len(self.input_ids[i])
            ids[row, :n] = torch.tensor(self.input_ids[i])
            mask[row, :n] = 1
            if types is not None:
                types[row, :n] = torch.tensor(self.token_type_ids[i])
        out = {"input_ids": ids, "attention_mask": mask}
        if types is not None:
            out["token_type_ids"] = types
        return out


@dataclass
class FeatureInputs:
    """Hidden states of the frozen lower layers: ``flat[offsets[i]:offsets[i+1]]`` belongs to example ``i``.

    Parameters
    ----------
    flat : torch.Tensor, shape (n_tokens, hidden_size)
        The hidden states of every example's tokens, concatenated.
    offsets : numpy.ndarray of int, shape (n_examples + 1,)
        Start of each example in ``flat``, then the total number of tokens.
    """

    flat: torch.Tensor
    offsets: np.ndarray

    @property
    def lengths(self) -> np.ndarray:
        """Number of tokens of each example (shape (n_examples,))."""
        return np.diff(self.offsets)

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def head(self, n: int) -> FeatureInputs:
        """The first ``n`` examples (all of them when there are fewer)."""
        offsets = self.offsets[:min(n, len(self)) + 1]
        return FeatureInputs(self.flat[:int(offsets[-1])], offsets)

    def batch(self, indices, pad_to: int | None = None) -> dict[str, torch.Tensor]:
        """Build ``inputs_embeds`` (float32) and ``attention_mask`` for ``indices``, dynamically padded.

        Shapes (len(indices), width, hidden_size) and (len(indices), width); ``pad_to`` pads to that width instead of
        the longest member.
        """
        lengths = [int(self.offsets[i + 1] - self.offsets[i]) for i in indices]
        width = pad_to or max(lengths)
        hidden = torch.zeros((len(indices), width, self.flat.shape[1]), dtype=torch.float32)
        mask = torch.zeros((len(indices), width), dtype=torch.long)
        for row, (i, n) in enumerate(zip(indices, lengths)):
            hidden[row, :n] = self.flat[self.offsets[i]:self.offsets[i + 1]].float()
            mask[row, :n] = 1
        return {"inputs_embeds": hidden, "attention_mask": mask}


def encode_pairs(tokenizer, frame: pd.DataFrame, max_length: int, truncation: str = "pair") -> TokenInputs:
    """Tokenise ``premise``/``hypothesis`` pairs, truncated to ``max_length`` tokens.

    ``truncation="pair"`` cuts the joined pair (``max_length`` counts the special tokens; longest side first).
    ``"per_sentence"`` is jiant v1's ``tokenize_and_truncate``: each sentence is cut to ``max_length - 2`` tokens on
    its own and the two are joined with the special tokens, uncut (so a pair may exceed ``max_length``).

    Parameters
    ----------
    tokenizer : transformers.PreTrainedTokenizerBase
        The model's tokenizer; the premise is its first sequence, the hypothesis its second.
    frame : pandas.DataFrame
        ``premise`` and ``hypothesis`` columns.
    max_length : int
        Tokens per pair (see above).
    truncation : str
        ``"pair"`` or ``"per_sentence"``.

    Returns
    -------
    TokenInputs
        One unpadded id list per row of ``frame``, in row order.
    """
    premises = frame["premise"].astype(str).tolist()
    hypotheses = frame["hypothesis"].astype(str).tolist()
    if truncation == "per_sentence":
        encoded = tokenizer(premises, hypotheses, truncation=False, padding=False)
        keep = [_sentence_heads(encoded.sequence_ids(i), max_length - 2) for i in range(len(premises))]
        ids = [[token for token, kept in zip(row, mask) if kept] for row, mask in zip(encoded["input_ids"], keep)]
        types = encoded.get("token_type_ids")
        if types is not None:
            types = [[t for t, kept in zip(row, mask) if kept] for row, mask in zip(types, keep)]
    else:
        encoded = tokenizer(premises, hypotheses, truncation=True, max_length=max_length, padding=False)
        ids, types = list(encoded["input_ids"]), encoded.get("token_type_ids")
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    return TokenInputs(list(ids), list(types) if types is not None else None, pad_id)


def _sentence_heads(sequence_ids: list[int | None], per_sentence: int) -> list[bool]:
    """Which tokens of a joined pair to keep: every special token, and the first ``per_sentence`` of each sentence."""
    seen: dict[int, int] = {}
    keep = []
    for sequence in sequence_ids:
        if sequence is None:
            keep.append(True)
            continue
        seen[sequence] = seen.get(sequence, 0) + 1
        keep.append(seen[sequence] <= per_sentence)
    return keep


def batch_order(lengths: np.ndarray, batch_size: int, generator: torch.Generator, *, shuffle: bool = True,
                bucketing: bool = False, multiplier: int = 50) -> list[np.ndarray]:
    """Cut one epoch into index arrays, one per batch, covering every example once (the last batch may be smaller).

    ``generator`` is seeded per run: the order is a function of the seed. ``shuffle``: random order (training) or input
    order (evaluation). ``bucketing`` groups examples of similar length: shuffle, cut into chunks of
    ``batch_size * multiplier``, sort each chunk by length, cut into batches and shuffle the batches. Less padding,
    still random.
    """
    n = len(lengths)
    order = torch.randperm(n, generator=generator).numpy() if shuffle else np.arange(n)
    if not bucketing:
        return [order[i:i + batch_size] for i in range(0, n, batch_size)]
    chunk = batch_size * multiplier
    batches = []
    for start in range(0, n, chunk):
        part = order[start:start + chunk]
        part = part[np.argsort(lengths[part], kind="stable")]
        batches.extend(part[i:i + batch_size] for i in range(0, len(part), batch_size))
    if shuffle:
        perm = torch.randperm(len(batches), generator=generator).numpy()
        batches = [batches[i] for i in perm]
    return batches


def bucket_batches(lengths: np.ndarray, batch_size: int, generator: torch.Generator, *, padding_noise: float = 0.1,
                   chunk: int = CHUNK) -> list[np.ndarray]:
    """One epoch of batches as AllenNLP 0.8's ``BucketIterator`` cuts them for jiant v1 (``biggest_batch_first``).

    The examples are taken in input order in chunks of ``chunk`` (jiant's ``max_instances_in_memory``). Each chunk
    is sorted by noisy length (each length, in tokens of the pair, moved by a uniform draw within the relative
    ``padding_noise`` of itself; AllenNLP's default is 0.1), cut into batches of ``batch_size`` from the shortest, and
    its batches are shuffled except the last two (the longest examples), which go first: the last (possibly partial)
    one, then the one before it. ``generator`` (seeded per run) draws the noise and the shuffles. Every example is in
    one batch.
    """
    n = len(lengths)
    batches: list[np.ndarray] = []
    for start in range(0, n, chunk):
        index = np.arange(start, min(start + chunk, n))
        draw = torch.rand(len(index), generator=generator, dtype=torch.float64).numpy()
        noisy = lengths[index] * (1.0 + padding_noise * (2.0 * draw - 1.0))
        order = index[np.argsort(noisy, kind="stable")]
        part = [order[i:i + batch_size] for i in range(0, len(order), batch_size)]
        if len(part) > 1:
            rest = part[:-2]
            perm = torch.randperm(len(rest), generator=generator).numpy()
            part = [part[-1], part[-2], *(rest[i] for i in perm)]
        batches.extend(part)
    return batches


def length_sorted_batches(lengths: np.ndarray, batch_size: int) -> list[np.ndarray]:
    """Cut evaluation examples into batches sorted by length (least padding); the caller restores the input order.

    Parameters
    ----------
    lengths : numpy.ndarray of int
        Tokens of each example.
    batch_size : int
        Examples per batch.

    Returns
    -------
    list of numpy.ndarray
        Index arrays, shortest examples first; the last batch may be smaller.
    """
    order = np.argsort(lengths, kind="stable")
    return [order[i:i + batch_size] for i in range(0, len(order), batch_size)]
