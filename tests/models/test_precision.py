"""CPU precision: bf16 autocast only where the CPU supports it natively, recorded, and close to fp32."""

import numpy as np
import pytest

from diagnostics.models import cpu_autocast, cpu_bf16_supported, effective_precision


def test_effective_precision_and_unknown_values(monkeypatch):
    import diagnostics.models._precision as precision

    assert effective_precision("fp32") == "fp32"
    monkeypatch.setattr(precision, "cpu_bf16_supported", lambda: False)
    assert precision.effective_precision("bf16") == "fp32"  # no emulation: it would be slower than fp32
    monkeypatch.setattr(precision, "cpu_bf16_supported", lambda: True)
    assert precision.effective_precision("bf16") == "bf16"
    with pytest.raises(ValueError, match="precision must be one of"):
        effective_precision("fp8")


@pytest.mark.parametrize(("cap", "allowed"), [("AVX2", False), ("avx512_core", False), ("SSE41", False),
                                             ("AVX512_CORE_BF16", True), ("AVX512_CORE_AMX", True), ("ALL", True)])
def test_a_onednn_cap_below_its_bf16_instructions_means_no_native_bf16(monkeypatch, cap, allowed):
    import torch

    import diagnostics.models._precision as precision

    monkeypatch.delenv("DNNL_MAX_CPU_ISA", raising=False)
    monkeypatch.setenv("ONEDNN_MAX_CPU_ISA", cap)
    hardware = bool(torch.backends.mkldnn.is_available() and torch.ops.mkldnn._is_mkldnn_bf16_supported())
    assert precision.cpu_bf16_supported() == (allowed and hardware)
    if not allowed:
        assert precision.effective_precision("bf16") == "fp32"


@pytest.mark.skipif(not cpu_bf16_supported(), reason="this CPU has no native bf16")
def test_bf16_sentence_vectors_are_close_to_fp32_and_cached_apart(tmp_path, tiny_model_dir):
    from diagnostics.probe._cache import cached_sentence_vectors, vector_key

    texts = ["The cat sat on the mat.", "Кошка сидела на коврике.", "Nobody came to the party yesterday."]
    full = cached_sentence_vectors(tiny_model_dir, texts, tmp_path, dtype="float32")
    half = cached_sentence_vectors(tiny_model_dir, texts, tmp_path, dtype="float32", precision="bf16")
    assert vector_key(tiny_model_dir, texts, precision="bf16") != vector_key(tiny_model_dir, texts)
    assert not np.array_equal(full, half)
    cosine = (full * half).sum(-1) / np.linalg.norm(full, axis=-1) / np.linalg.norm(half, axis=-1)
    assert cosine.min() > 0.99


def test_cpu_autocast_context_matches_the_effective_precision():
    import torch

    with cpu_autocast("bf16"):
        out = torch.ones(4, 4) @ torch.ones(4, 4)
    assert out.dtype == (torch.bfloat16 if cpu_bf16_supported() else torch.float32)
    with cpu_autocast("fp32"):
        assert (torch.ones(2, 2) @ torch.ones(2, 2)).dtype == torch.float32
