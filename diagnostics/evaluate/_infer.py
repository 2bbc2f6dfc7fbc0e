"""Batched inference of a sequence classifier: every class's logit for every pair, on the device asked for.

The pairs are tokenised as the sweep tokenises them (:func:`diagnostics.finetune.encode_pairs`: premise first,
hypothesis second, the joined pair cut to ``max_length`` tokens, longest side first), cut into batches sorted by
length (:func:`diagnostics.finetune.length_sorted_batches`) and run through the model under the autocast the
sweep's engine uses for a group of one (``cache_enabled=False``; none at fp32), so a checkpoint of the sweep scores
as the sweep scored it. Weights load from safetensors only (never a pickle).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from diagnostics.core.errors import UserInputError

#: Precisions of ``evaluate``: full float32, or autocast to bfloat16 / float16.
PRECISIONS = ("fp32", "bf16", "fp16")
#: Devices: ``auto`` picks CUDA, then Apple's ``mps``, then the CPU.
DEVICES = ("auto", "cpu", "cuda", "mps")


def pick_device(device: str = "auto") -> str:
    """Resolve ``auto`` to the first available of CUDA, Apple ``mps`` and the CPU.

    Parameters
    ----------
    device : str
        ``auto``, ``cpu``, ``cuda``, ``cuda:<n>`` or ``mps``.

    Returns
    -------
    str
        A torch device name.

    Raises
    ------
    UserInputError
        An unknown name, or a device this machine lacks.
    """
    import torch

    if device == "auto":
        if torch.cuda.is_available():
            return "cuda"
        mps = getattr(torch.backends, "mps", None)
        return "mps" if mps is not None and mps.is_available() else "cpu"
    if device.split(":")[0] not in DEVICES[1:]:
        raise UserInputError(f"--device {device!r}: expected one of {', '.join(DEVICES)} (or cuda:<n>)")
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise UserInputError(f"--device {device}: torch sees no CUDA device here (use auto or cpu)")
    if device == "mps" and not (getattr(torch.backends, "mps", None) and torch.backends.mps.is_available()):
        raise UserInputError("--device mps: Apple's Metal backend is not available here (use auto or cpu)")
    return device


def autocast_dtype(precision: str, device: str):
    """The autocast dtype of ``precision`` on ``device`` (``None`` for fp32).

    Parameters
    ----------
    precision : str
        ``fp32``, ``bf16`` or ``fp16``.
    device : str
        A torch device name.

    Returns
    -------
    torch.dtype or None
        ``torch.bfloat16`` / ``torch.float16``, or ``None`` for full precision.

    Raises
    ------
    UserInputError
        An unknown precision, or fp16 on the CPU (no half-precision matrix products there).
    """
    import torch

    if precision not in PRECISIONS:
        raise UserInputError(f"--precision {precision!r}: expected one of {', '.join(PRECISIONS)}")
    if precision == "fp32":
        return None
    if precision == "fp16" and device == "cpu":
        raise UserInputError("--precision fp16: needs a GPU (cuda or mps); on the CPU use bf16 or fp32")
    return torch.bfloat16 if precision == "bf16" else torch.float16


def require_classifier(path: str | Path) -> None:
    """Refuse a model folder whose model has no sequence-classification head (a bare encoder would get a random one).

    Parameters
    ----------
    path : str or Path
        A resolved model folder.

    Raises
    ------
    UserInputError
        ``config.json`` names architectures, none of them a ``*ForSequenceClassification``; or a damaged file.
    """
    from diagnostics.models import check_model_folder, read_model_config

    check_model_folder(path)
    architectures = read_model_config(Path(path)).get("architectures") or []
    if architectures and not any("ForSequenceClassification" in a for a in architectures):
        raise UserInputError(f"{path}: a {', '.join(architectures)} without a sequence-classification head; "
                             "evaluate needs a fine-tuned NLI classifier (a *ForSequenceClassification model)")


def load_classifier_head(path: str | Path):
    """Load a sequence classifier from a model folder, safetensors weights only, in eval mode on the CPU.

    Parameters
    ----------
    path : str or Path
        A resolved model folder (see :func:`diagnostics.models.resolve_model`).

    Returns
    -------
    transformers.PreTrainedModel
        The ``*ForSequenceClassification`` model.

    Raises
    ------
    UserInputError
        A folder whose model has no classification head (a bare encoder would get a random one).
    """
    from transformers import AutoModelForSequenceClassification
    from transformers.utils import logging as hf_logging

    require_classifier(path)
    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()
    try:
        model = AutoModelForSequenceClassification.from_pretrained(str(path), use_safetensors=True)
    finally:
        hf_logging.set_verbosity(verbosity)
    return model.eval()


def class_logits(model, inputs, *, batch_size: int, device: str, amp=None, progress: bool = False,
                 desc: str = "evaluate") -> np.ndarray:
    """Every class's logit for every encoded pair, in input order.

    Parameters
    ----------
    model : torch.nn.Module
        A sequence classifier (moved to ``device`` here).
    inputs : TokenInputs
        The encoded pairs (:func:`diagnostics.finetune.encode_pairs`).
    batch_size : int
        Pairs per forward pass.
    device : str
        Torch device.
    amp : torch.dtype, optional
        Autocast dtype (:func:`autocast_dtype`); ``None``: float32.
    progress : bool
        Show a progress bar (tqdm) over the batches.
    desc : str
        The bar's label.

    Returns
    -------
    numpy.ndarray of float64, shape (len(inputs), n_classes)
    """
    import torch
    from tqdm.auto import tqdm

    from diagnostics.finetune import length_sorted_batches

    model = model.to(device).eval()
    device_type = device.split(":")[0]
    out = np.empty((len(inputs), model.config.num_labels), dtype=np.float64)
    batches = length_sorted_batches(inputs.lengths, batch_size)
    with torch.no_grad():
        for batch in tqdm(batches, desc=desc, unit="batch", leave=False, disable=not progress):
            kwargs = {k: v.to(device) for k, v in inputs.batch(batch).items()}
            with torch.autocast(device_type, dtype=amp or torch.float32, enabled=amp is not None,
                                cache_enabled=False):
                logits = model(**kwargs).logits
            out[batch] = logits.float().cpu().numpy()
    return out
