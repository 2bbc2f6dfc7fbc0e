"""Compute precision on CPU: bf16 autocast where the CPU multiplies bf16 natively, fp32 otherwise.

fp32 is every default. ``precision="bf16"`` is an opt-in speed knob (about 2x for a forward pass of the embedded
model on an AVX512-BF16 CPU); on a CPU without native bf16 the emulation would be slower than fp32, so it falls
back to fp32. Results record which one ran.
"""

from __future__ import annotations

import os
from contextlib import nullcontext

PRECISIONS = ("fp32", "bf16")
#: oneDNN's environment caps on the instruction set it may use (``ONEDNN_`` first, its older ``DNNL_`` name second).
ONEDNN_ISA_CAPS = ("ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA")


def _onednn_cap_allows_bf16() -> bool:
    """False where oneDNN is capped below its bf16 instructions (``AVX2``, ``AVX512_CORE`` ...): torch would still
    send bf16 products to oneDNN, which then runs its reference kernels, hundreds of times slower than fp32."""
    cap = next((os.environ[name] for name in ONEDNN_ISA_CAPS if os.environ.get(name)), "ALL").upper()
    return cap in ("ALL", "DEFAULT") or any(part in cap for part in ("BF16", "AMX", "FP16", "AVX10"))


def cpu_bf16_supported() -> bool:
    """Tell whether this CPU runs bf16 matrix products natively (AVX512-BF16 / AMX through oneDNN, not capped by
    ``ONEDNN_MAX_CPU_ISA``).

    Returns
    -------
    bool
        False too when torch cannot tell.
    """
    import torch

    if not _onednn_cap_allows_bf16():
        return False
    try:
        return bool(torch.backends.mkldnn.is_available() and torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except (AttributeError, RuntimeError):
        return False


def effective_precision(precision: str) -> str:
    """Resolve the precision a CPU run really uses for a requested one (``bf16`` -> ``fp32`` without native support).

    Parameters
    ----------
    precision : {"fp32", "bf16"}
        The requested precision.

    Returns
    -------
    str
        ``"bf16"`` or ``"fp32"``.

    Raises
    ------
    ValueError
        For another precision.
    """
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, found {precision!r}")
    return "bf16" if precision == "bf16" and cpu_bf16_supported() else "fp32"


def cpu_autocast(precision: str):
    """Open a ``torch.autocast`` context for CPU inference at ``precision`` (a no-op context for fp32).

    Parameters
    ----------
    precision : {"fp32", "bf16"}
        The requested precision (see :func:`effective_precision`).

    Returns
    -------
    contextlib.AbstractContextManager
        ``torch.autocast("cpu", dtype=torch.bfloat16)`` where bf16 runs natively, else a null context.
    """
    import torch

    if effective_precision(precision) == "bf16":
        return torch.autocast("cpu", dtype=torch.bfloat16)
    return nullcontext()
