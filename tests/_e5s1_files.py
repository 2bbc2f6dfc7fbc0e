"""A small E5S1 header in memory (a handful of pieces, no tensors), for tests of what is read from an E5S1 file."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from diagnostics.models._e5s1 import E5S1File

#: The pieces of the small vocabulary: XLM-R's four specials first, then words and pieces, "<mask>" last.
PIECES = ["<s>", "<pad>", "</s>", "<unk>", "\u2581the", "\u2581cat", "\u2581sat", "\u2581s", "at", "\u2581",
          "t", "h", "e", "c", "a", "s", "<mask>"]


def small_e5s1(**changes) -> E5S1File:
    """An E5S1 header over :data:`PIECES` (scores: longer pieces likelier), with ``changes`` applied."""
    scores = np.array([0.0] * 4 + [-1.0, -1.5, -1.5, -3.0, -3.0, -4.0] + [-6.0] * 6 + [0.0], dtype=np.float32)
    fields = dict(path=Path("small.bin"), version=1, hidden_size=8, num_layers=2, num_heads=2, intermediate_size=16,
                  vocab_size=len(PIECES), max_position_embeddings=32, type_vocab_size=2,
                  layer_norm_eps=float(np.float32(1e-12)), block_size=32, pieces=list(PIECES), scores=scores,
                  bos_id=0, eos_id=2, pad_id=1, unk_id=3, normalisation={0x00A0: (0x20,)}, tensors={})
    return E5S1File(**{**fields, **changes})
