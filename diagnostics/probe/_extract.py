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

    A fine-tuned run folder (``runs/<exp>/<lang>/<model>/seed=<k>/``) gives its ``checkpoint/``
    (:meth:`diagnostics.finetune.Run.model_folder`); any folder holding ``config.json`` and a weights file is
    accepted.

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
    from diagnostics.finetune import Run, seed_of_folder
    from diagnostics.models import is_model_folder, model_folders_below

    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"model path {path} does not exist")
    if is_model_folder(path):
        return path
    if seed_of_folder(path.name) is not None:
        return Run.at(path).model_folder()
    found = model_folders_below(path, depth=2)
    if len(found) == 1:
        return found[0]
    if not found:
        raise FileNotFoundError(f"no model folder (config.json + model.safetensors) in {path}; a fine-tuned run "
                                f"keeps it only when the sweep ran with `save_checkpoint: true`")
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
    from transformers import AutoModel
    from transformers.utils import logging as hf_logging

    from diagnostics.models import check_model_folder, load_tokenizer

    folder = find_model_folder(path)
    check_model_folder(folder)  # a damaged config.json or weights file: one line naming it
    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()  # a classification checkpoint loaded as a base model warns about its head
    try:
        model = AutoModel.from_pretrained(folder, dtype="float32")
        tokenizer = load_tokenizer(folder)
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
    model : transformers.PreTrainedModel
        From :func:`load_encoder` (any model whose forward accepts ``output_hidden_states``).
    tokenizer : transformers.PreTrainedTokenizerBase
        Its tokenizer, from :func:`load_encoder`.
    texts : list of str
        The texts to encode.
    batch_size : int
        Texts per forward pass.
    max_length : int
        Longer texts are truncated to this many tokens.
    pooling : {"mean", "cls"}
        Mean over the real tokens, or the first token's state.
    layers : list of int, optional
        Keep only these hidden-state indices (0 = embeddings); all by default. The forward pass is the same.
    progress : bool
        Show a tqdm bar.
    precision : {"fp32", "bf16"}
        ``bf16``: bf16 autocast where the CPU supports it natively (see :mod:`diagnostics.models._precision`).

    Returns
    -------
    numpy.ndarray
        float32, shape ``[n_layers + 1, len(texts), hidden]`` (or ``[len(layers), ...]``), in input order.
    """
    vectors = encode_models({"model": (model, tokenizer)}, texts, batch_size=batch_size, max_length=max_length,
                            pooling=pooling, progress=progress, precision=precision)["model"]
    return vectors if layers is None else vectors[list(layers)]


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


def encode_models(encoders: dict, texts: list[str], *, batch_size: int = 64, max_length: int = 128,
                  pooling: str = "mean", progress: bool = False, precision: str = "fp32") -> dict[str, np.ndarray]:
    """:func:`encode_sentences` for several models in one pass over the batches, sharing identical lower layers.

    The first model is the reference and runs in full. A later model whose tokenizer gives the same input ids
    for ``texts`` and that shares its first ``n`` hidden states (:func:`diagnostics.models.shared_states`:
    a top-k fine-tuned seed of the reference) starts from the reference's state ``n - 1`` of the same batch and
    runs only the layers above; its pooled states below ``n`` are the reference's. The vectors equal those of a
    full forward pass per model (same batches, same kernels); only the repeated lower layers are skipped. Models
    that share nothing run in full.

    ``encoders`` maps label -> ``(model, tokenizer)`` as from :func:`load_encoder`, the first entry being the reference.
    Longer texts are truncated to ``max_length`` tokens; ``pooling`` (``mean`` / ``cls``) and ``precision`` (``fp32`` /
    ``bf16``) as for :func:`encode_sentences`. Returns label -> float32 ``[n_layers + 1, len(texts), hidden]``.
    """
    import torch
    from tqdm.auto import tqdm

    from diagnostics.models import cpu_autocast
    from diagnostics.models import same_input_ids, shared_states, upper_part

    if pooling not in POOLINGS:
        raise ValueError(f"unknown pooling {pooling!r}; choose one of {', '.join(POOLINGS)}")
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, found {batch_size}")
    if not encoders:
        return {}
    labels = list(encoders)
    reference, tokenizer = encoders[labels[0]]
    texts = [str(t) for t in texts]
    ids = tokenizer(texts, truncation=True, max_length=max_length)["input_ids"]
    out = {}
    upper = {}
    for label in labels[1:]:
        model, model_tokenizer = encoders[label]
        same_ids = same_input_ids(tokenizer, model_tokenizer, texts, max_length=max_length)
        shared = shared_states(reference, model) if same_ids else 0
        if shared == 0:
            out[label] = encode_sentences(model, model_tokenizer, texts, batch_size=batch_size,
                                          max_length=max_length, pooling=pooling, progress=progress,
                                          precision=precision)
        else:
            upper[label] = (shared, upper_part(model, shared - 1) if shared <= model.config.num_hidden_layers
                            else None)
    n_states = reference.config.num_hidden_layers + 1
    for label in [labels[0], *upper]:
        out[label] = np.zeros((n_states, len(texts), reference.config.hidden_size), dtype=np.float32)
    if not texts:
        return out
    order = np.argsort([len(row) for row in ids], kind="stable")[::-1]  # longest first: peak memory at once
    accepted = _forward_args(reference)
    with torch.inference_mode(), cpu_autocast(precision):
        for start in tqdm(range(0, len(texts), batch_size), disable=not progress, desc="encode", unit="batch"):
            idx = order[start:start + batch_size]
            batch = tokenizer([texts[i] for i in idx], padding=True, truncation=True, max_length=max_length,
                              return_tensors="pt")
            mask = batch["attention_mask"]
            states = reference(**{k: v for k, v in batch.items() if k in accepted},
                               output_hidden_states=True).hidden_states
            pooled = [pool(s, mask, pooling).float().numpy() for s in states]
            for layer, vectors in enumerate(pooled):
                out[labels[0]][layer, idx] = vectors
            for label, (shared, part) in upper.items():
                for layer in range(shared):
                    out[label][layer, idx] = pooled[layer]
                if part is None:
                    continue
                top = part(inputs_embeds=states[shared - 1], attention_mask=mask,
                           output_hidden_states=True).hidden_states
                for offset, state in enumerate(top[1:]):
                    out[label][shared + offset, idx] = pool(state, mask, pooling).float().numpy()
    return out
