"""Build the classifier of a run: full fine-tuning, or only the top ``k`` encoder layers + head.

Top-k training splits a BERT-like encoder (anything whose base model has ``embeddings`` and ``encoder.layer``, e.g.
BERT, RoBERTa, XLM-R, ELECTRA) in two:

* the *frozen part* (embeddings + the lower ``L - k`` layers) runs once per sweep, in eval mode (dropout off), and its
  outputs are cached (:mod:`diagnostics.finetune._features`);
* the *trained part* (the top ``k`` layers, pooler, classifier) is the same ``*ForSequenceClassification`` model with
  its lower layers removed and its embeddings replaced by a pass-through, fed ``inputs_embeds`` = cached states.

Trade-off: per seed, only ``k/L`` of the encoder runs forward and backward, and the frozen part's cost is paid once
for all seeds. The lower layers keep their pretrained weights, so the fine-tuned model is a different (less
adapted) model than the study's, and seed-to-seed variance comes only from the head, the top layers and the data
order — stability figures from the cheap recipe are a lower bound on those of full fine-tuning.
"""

from __future__ import annotations

from pathlib import Path

import torch
from torch import nn

from diagnostics.core.schema import CLASS_LABELS
from diagnostics.models import PassThroughEmbeddings


def encoder_layers(model: nn.Module) -> nn.ModuleList:
    """Return the ``ModuleList`` of transformer layers of a BERT-like model (``base_model.encoder.layer``).

    Lowest layer first. ``ValueError`` when the model has no embeddings or ``encoder.layer``.
    """
    base = model.base_model
    try:
        layers = base.encoder.layer
        base.embeddings  # noqa: B018 - presence check
    except AttributeError:
        raise ValueError(f"{type(model).__name__} is not BERT-like (no embeddings / encoder.layer): top-k training "
                         "supports BERT, RoBERTa, XLM-R, ELECTRA style encoders; use full fine-tuning") from None
    return layers


def load_classifier(path: str | Path, *, seed: int, dropout: float, top_k: int | None = None,
                    freeze_embeddings: bool = False, head: str = "transformers") -> nn.Module:
    """A sequence classifier (2 classes: not_entailment, entailment) with a fresh head initialised under ``seed``.

    ``seed`` seeds torch before loading, so the new head (and pooler, if absent in the checkpoint) is a function of
    it. ``dropout`` is the hidden, attention and classifier dropout. ``top_k`` keeps only the top ``k`` layers (inputs
    are then cached hidden states; ``None``: the full model). ``freeze_embeddings``, with full fine-tuning, does not
    train the embeddings (the biggest matrices of multilingual models). ``head`` is ``"transformers"``
    (``AutoModelForSequenceClassification``) or ``"jiant"`` (:mod:`diagnostics.finetune._jiant_head`; full
    fine-tuning only).
    """
    from transformers import AutoModelForSequenceClassification
    from transformers.utils import logging as hf_logging

    from diagnostics.models import build_jiant_classifier

    torch.manual_seed(seed)
    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()  # "newly initialised head" notices are expected
    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    labels = {"id2label": dict(enumerate(CLASS_LABELS)), "label2id": {name: i for i, name in enumerate(CLASS_LABELS)}}
    try:
        if head == "jiant":
            model = build_jiant_classifier(path, n_classes=2, dropout=dropout, labels=labels)
        else:
            model = AutoModelForSequenceClassification.from_pretrained(
                str(path), num_labels=2, hidden_dropout_prob=dropout, attention_probs_dropout_prob=dropout,
                classifier_dropout=dropout, **labels)
    finally:
        hf_logging.set_verbosity(verbosity)
        if bars:
            hf_logging.enable_progress_bar()
    if top_k is not None:
        layers = encoder_layers(model)
        total = len(layers)
        k = min(top_k, total)
        model.base_model.encoder.layer = nn.ModuleList(list(layers)[total - k:])
        model.base_model.embeddings = PassThroughEmbeddings()
        model.config.num_hidden_layers = k
        model.top_k_of = total
    elif freeze_embeddings:
        model.base_model.embeddings.requires_grad_(False)
    return model


def load_frozen_part(path: str | Path, top_k: int) -> tuple[nn.Module, int]:
    """Load the base encoder cut to embeddings + its lower ``L - top_k`` layers, in eval mode, without gradients.

    Returns the frozen part (no pooler) and the number of layers it keeps (``L - top_k``, at least 0).
    """
    from transformers import AutoModel
    from transformers.utils import logging as hf_logging

    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()
    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        base = AutoModel.from_pretrained(str(path), add_pooling_layer=False)
    except TypeError:
        base = AutoModel.from_pretrained(str(path))
    finally:
        hf_logging.set_verbosity(verbosity)
        if bars:
            hf_logging.enable_progress_bar()
    layers = base.encoder.layer if hasattr(base, "encoder") else encoder_layers(base)
    frozen = max(len(layers) - top_k, 0)
    base.encoder.layer = nn.ModuleList(list(layers)[:frozen])
    base.config.num_hidden_layers = frozen
    if hasattr(base, "pooler"):
        base.pooler = None
    base.eval().requires_grad_(False)
    return base, frozen


def parameter_groups(model: nn.Module, lr: float, head_lr: float | None, weight_decay: float, *,
                     decay_all: bool = False) -> list[dict]:
    """Group the trainable parameters for AdamW: no weight decay on biases/LayerNorm; ``head_lr`` for the head.

    Only parameters with ``requires_grad`` are grouped. ``lr`` is the encoder's rate, ``head_lr`` the pooler's and
    classifier's (``None``: ``lr``). ``decay_all`` decays biases and LayerNorm weights too (jiant v1 gave its
    optimizer every trainable parameter in one group). Each group has ``params``, ``lr`` and ``weight_decay``.
    """
    groups: dict[tuple[bool, bool], list] = {}
    for name, param in model.named_parameters():
        if not param.requires_grad:
            continue
        is_head = name.startswith(("classifier", "pre_classifier")) or ".pooler." in f".{name}"
        no_decay = not decay_all and (name.endswith("bias") or "LayerNorm" in name or "layer_norm" in name)
        groups.setdefault((is_head, no_decay), []).append(param)
    out = []
    for (is_head, no_decay), params in sorted(groups.items()):
        out.append({"params": params, "lr": head_lr if (is_head and head_lr) else lr,
                    "weight_decay": 0.0 if no_decay else weight_decay})
    return out


def trainable_state(model: nn.Module) -> dict[str, torch.Tensor]:
    """Copy the trainable tensors (kept in memory for the best epoch).

    Parameter name -> a detached CPU copy, for the parameters with ``requires_grad``.
    """
    return {name: p.detach().cpu().clone() for name, p in model.named_parameters() if p.requires_grad}


def save_checkpoint(model: nn.Module, pretrained: str | Path, folder: Path, tokenizer) -> None:
    """Write the best model as a full Hugging Face folder (safetensors), re-attaching frozen lower layers.

    Top-k models carry ``top_k_of`` (the full number of layers); their frozen lower layers come from
    ``pretrained``. ``tokenizer`` is saved alongside (``pretrained``'s own tokenizer files, copied: see
    :func:`diagnostics.models.save_tokenizer`). ``RuntimeError`` when the trained weights do not fit the full model.
    """
    from transformers import AutoModelForSequenceClassification

    from diagnostics.models import JiantPairClassifier, model_folder_writer, save_jiant_classifier, save_tokenizer

    if isinstance(model, JiantPairClassifier):
        with model_folder_writer(folder) as staging:
            save_jiant_classifier(model, staging)
            save_tokenizer(tokenizer, staging, pretrained)
        return
    if getattr(model, "top_k_of", None) is None:
        full = model
    else:
        full = AutoModelForSequenceClassification.from_pretrained(str(pretrained), num_labels=2,
                                                                  id2label=model.config.id2label,
                                                                  label2id=model.config.label2id)
        total, k = model.top_k_of, len(encoder_layers(model))
        state = {}
        for name, tensor in model.state_dict().items():
            marker = "encoder.layer."
            if marker in name:
                head, rest = name.split(marker, 1)
                index, tail = rest.split(".", 1)
                name = f"{head}{marker}{int(index) + total - k}.{tail}"
            state[name] = tensor
        missing = full.load_state_dict(state, strict=False)
        if missing.unexpected_keys:
            raise RuntimeError(f"checkpoint keys not in the full model: {missing.unexpected_keys[:5]}")
    with model_folder_writer(folder) as staging:  # a killed save leaves no half-written checkpoint
        full.save_pretrained(staging, safe_serialization=True)
        save_tokenizer(tokenizer, staging, pretrained)
