"""Hidden states of every layer, mean-pooled per sentence, in one forward pass per batch.

Each sentence is encoded on its own (the study's SentEval-style protocol); the pooled vector of a sentence is
the mean of its token states over the attention mask, so padding never enters it. Sentences are batched by
length (dynamic padding) and returned in input order.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

POOLINGS = ("mean", "cls")


def find_model_folder(path: str | Path) -> Path:
    """Return the Hugging Face model folder inside ``path`` (itself, or a single nested folder with weights).

    A fine-tuned run folder (``runs/<exp>/<lang>/<model>/seed=<k>/``) keeps its model under ``checkpoint/``;
    any folder holding ``config.json`` and a weights file is accepted.

    Parameters
    ----------
    path : str or Path
        A model folder or a folder containing exactly one model folder (up to two levels down).

    Returns
    -------
    Path

    Raises
    ------
    FileNotFoundError
        When no model folder, or more than one, is found.
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"model path {path} does not exist")

    def _is_model(folder: Path) -> bool:
        return (folder / "config.json").is_file() and any(
            (folder / name).is_file() for name in ("model.safetensors", "model.safetensors.index.json",
                                                   "pytorch_model.bin"))

    if _is_model(path):
        return path
    found = sorted({c.parent for pattern in ("*/config.json", "*/*/config.json") for c in path.glob(pattern)
                    if _is_model(c.parent)})
    if len(found) == 1:
        return found[0]
    if not found:
        raise FileNotFoundError(f"no model folder (config.json + model.safetensors) in {path}; a fine-tuned run "
                                f"keeps it only when the sweep ran with save_checkpoint=True")
    raise FileNotFoundError(f"{len(found)} model folders under {path}: {', '.join(map(str, found))}; pass one")


def load_encoder(path: str | Path):
    """Load the base encoder and tokenizer from a model folder (a classification checkpoint works too).

    Parameters
    ----------
    path : str or Path
        See :func:`find_model_folder`.

    Returns
    -------
    (transformers.PreTrainedModel, tokenizer)
        The model is in eval mode, on CPU, in float32.
    """
    from transformers import AutoModel, AutoTokenizer
    from transformers.utils import logging as hf_logging

    folder = find_model_folder(path)
    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()  # a classification checkpoint loaded as a base model warns about its head
    try:
        model = AutoModel.from_pretrained(folder, dtype="float32")
        tokenizer = AutoTokenizer.from_pretrained(folder)
    finally:
        hf_logging.set_verbosity(verbosity)
    model.eval()
    return model, tokenizer


def pool(hidden, attention_mask, pooling: str = "mean"):
    """Pool token states ``[batch, tokens, hidden]`` into ``[batch, hidden]``.

    Parameters
    ----------
    hidden : torch.Tensor
    attention_mask : torch.Tensor
        ``[batch, tokens]``, 1 for real tokens and 0 for padding.
    pooling : {"mean", "cls"}
        ``mean`` averages the real tokens (special tokens included, padding excluded); ``cls`` takes the first.

    Returns
    -------
    torch.Tensor
    """
    if pooling == "cls":
        return hidden[:, 0]
    if pooling != "mean":
        raise ValueError(f"unknown pooling {pooling!r}; choose one of {', '.join(POOLINGS)}")
    mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
    return (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1.0)


def encode_sentences(model, tokenizer, texts: list[str], *, batch_size: int = 64, max_length: int = 128,
                     pooling: str = "mean", layers: list[int] | None = None, progress: bool = False,
                     precision: str = "fp32") -> np.ndarray:
    """Pooled states of every layer for each text, one forward pass per batch.

    Parameters
    ----------
    model, tokenizer
        From :func:`load_encoder` (any model whose forward accepts ``output_hidden_states``).
    texts : list of str
    batch_size : int
    max_length : int
        Longer texts are truncated to this many tokens.
    pooling : {"mean", "cls"}
    layers : list of int, optional
        Keep only these hidden-state indices (0 = embeddings); all by default. The forward pass is the same.
    progress : bool
        Show a tqdm bar.
    precision : {"fp32", "bf16"}
        ``bf16``: bf16 autocast where the CPU supports it natively (see :mod:`diagnostics.models.precision`).

    Returns
    -------
    numpy.ndarray
        float32, shape ``[n_layers + 1, len(texts), hidden]`` (or ``[len(layers), ...]``), in input order.
    """
    import torch
    from tqdm.auto import tqdm

    if pooling not in POOLINGS:
        raise ValueError(f"unknown pooling {pooling!r}; choose one of {', '.join(POOLINGS)}")
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, found {batch_size}")
    texts = [str(t) for t in texts]
    n_states = model.config.num_hidden_layers + 1
    keep = list(range(n_states)) if layers is None else list(layers)
    out = np.zeros((len(keep), len(texts), model.config.hidden_size), dtype=np.float32)
    if not texts:
        return out
    lengths = [len(ids) for ids in tokenizer(texts, truncation=True, max_length=max_length)["input_ids"]]
    order = np.argsort(lengths, kind="stable")[::-1]  # longest first: the peak memory shows up at once
    from diagnostics.models.precision import cpu_autocast

    accepted = _forward_args(model)
    with torch.inference_mode(), cpu_autocast(precision):
        for start in tqdm(range(0, len(texts), batch_size), disable=not progress, desc="encode", unit="batch"):
            idx = order[start:start + batch_size]
            batch = tokenizer([texts[i] for i in idx], padding=True, truncation=True, max_length=max_length,
                              return_tensors="pt")
            inputs = {k: v for k, v in batch.items() if k in accepted}
            outputs = model(**inputs, output_hidden_states=True)
            states = outputs.hidden_states
            for j, layer in enumerate(keep):
                out[j, idx] = pool(states[layer], batch["attention_mask"], pooling).float().numpy()
    return out


def _forward_args(model) -> set[str]:
    import inspect

    return set(inspect.signature(model.forward).parameters)


def pair_vectors(sentence_vectors: np.ndarray, premise_index: np.ndarray, hypothesis_index: np.ndarray) -> np.ndarray:
    """Concatenate ``[premise; hypothesis]`` vectors per layer.

    Parameters
    ----------
    sentence_vectors : numpy.ndarray
        ``[layers, n_sentences, hidden]``.
    premise_index, hypothesis_index : numpy.ndarray
        Row of each pair's premise / hypothesis in ``sentence_vectors``.

    Returns
    -------
    numpy.ndarray
        ``[layers, n_pairs, 2 * hidden]``, same dtype as the input.
    """
    return np.concatenate([sentence_vectors[:, premise_index], sentence_vectors[:, hypothesis_index]], axis=-1)
