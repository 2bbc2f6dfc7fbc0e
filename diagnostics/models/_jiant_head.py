"""jiant v1's classifier for a sentence pair under a fine-tuned BERT-style encoder (a sweep's ``classifier_head: jiant``).

What jiant v1 built for the study's tasks (``superglue_bert.conf``: ``classifier = log_reg``, ``sent_enc = none``,
``transfer_paradigm = finetune``, ``pytorch_transformers_output_mode = top``), read from its source:

* ``models.py::build_pair_sentence_module``: an input module that embeds the joined pair (BERT) gets a
  ``SingleClassifier(pooler, classifier)``; ``project_before_pooling`` is false when a transformers encoder is
  fine-tuned, so the pooler has no projection; ``pool_type = "auto"`` is ``"first"`` for BERT with no sentence
  encoder;
* ``modules/sentence_encoder.py``: the encoder's top-layer states go through dropout (the run's ``dropout``, 0.1)
  and padding is zeroed;
* ``modules/simple_modules.py``: ``Pooler`` with ``pool_type="first"`` takes the first token's state;
  ``Classifier`` with ``cls_type="log_reg"`` is one ``nn.Linear(d_inp, n_classes)`` (its ``classifier_dropout`` is
  used by the MLP types only), left at torch's default initialisation.

No pretrained NSP pooler (dense + tanh) runs, and no pooler weights are loaded. Parameter names below the encoder
are jiant's own below ``<task>_mdl``: ``classifier.classifier.weight`` and ``classifier.classifier.bias``.
Dropout is applied to the first token's state only: the other states never reach the classifier, so the
distribution of the logits is jiant's (the random stream of a run is not, as it never is across torch versions).
"""

from __future__ import annotations

import json
from pathlib import Path

import torch
from torch import nn

from ._folders import CLASSIFIER_HEAD_WEIGHTS as HEAD_FILE

#: The key of a checkpoint's ``config.json`` that names its head.
HEAD_CONFIG_KEY = "classifier_head"


class FirstTokenPooler(nn.Module):
    """jiant's ``Pooler(project=False, pool_type="first")``: the first token's state, no parameters."""

    def forward(self, states: torch.Tensor) -> torch.Tensor:
        """(batch, tokens, hidden) -> (batch, hidden)."""
        return states[..., 0, :]


class LogRegClassifier(nn.Module):
    """jiant's ``Classifier(cls_type="log_reg")``: one linear layer, under the attribute jiant names ``classifier``."""

    def __init__(self, d_inp: int, n_classes: int):
        super().__init__()
        self.classifier = nn.Linear(d_inp, n_classes)

    def forward(self, pooled: torch.Tensor) -> torch.Tensor:
        """(batch, hidden) -> logits (batch, n_classes)."""
        return self.classifier(pooled)


class JiantPairClassifier(nn.Module):
    """A transformers encoder under jiant v1's pair classifier: dropout, first token, one linear layer.

    Parameters
    ----------
    encoder : transformers.PreTrainedModel
        The base encoder (``AutoModel``, built without its pooler).
    n_classes : int
        Classes of the task.
    dropout : float
        Dropout on the top layer's states (jiant's ``dropout``).
    """

    def __init__(self, encoder: nn.Module, n_classes: int, dropout: float):
        super().__init__()
        self.encoder = encoder
        self.dropout = nn.Dropout(dropout)
        self.pooler = FirstTokenPooler()
        self.classifier = LogRegClassifier(encoder.config.hidden_size, n_classes)

    @property
    def config(self):
        """The encoder's configuration (labels included)."""
        return self.encoder.config

    @property
    def base_model(self) -> nn.Module:
        """The encoder, where the layers are (as ``PreTrainedModel.base_model``)."""
        return self.encoder

    def set_attn_implementation(self, implementation: str) -> None:
        """Choose the encoder's attention kernel (as transformers' models do).

        Parameters
        ----------
        implementation : str
            ``"eager"``, ``"sdpa"`` ... (transformers' names).
        """
        self.encoder.set_attn_implementation(implementation)

    def forward(self, input_ids=None, attention_mask=None, token_type_ids=None, inputs_embeds=None, **kwargs):
        """Compute the logits of each pair.

        Parameters
        ----------
        input_ids, attention_mask, token_type_ids, inputs_embeds : torch.Tensor, optional
            The encoder's inputs, as for any transformers encoder (``attention_mask`` may be the additive 4-D mask).
        **kwargs
            Passed to the encoder.

        Returns
        -------
        transformers.modeling_outputs.SequenceClassifierOutput
            ``logits`` of shape (batch, n_classes).
        """
        from transformers.modeling_outputs import SequenceClassifierOutput

        states = self.encoder(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids,
                              inputs_embeds=inputs_embeds, **kwargs).last_hidden_state
        return SequenceClassifierOutput(logits=self.classifier(self.dropout(self.pooler(states))))


def build_jiant_classifier(path: str | Path, *, n_classes: int, dropout: float, labels: dict) -> JiantPairClassifier:
    """Load the encoder of ``path`` without a pooler and put jiant's head on it (torch's RNG must be seeded).

    Parameters
    ----------
    path : str or Path
        A pretrained model folder.
    n_classes : int
        Classes of the task.
    dropout : float
        Hidden, attention and head dropout.
    labels : dict
        ``id2label`` and ``label2id`` for the encoder's config (saved with a checkpoint).

    Returns
    -------
    JiantPairClassifier
        The pretrained encoder with a fresh head, initialised from torch's current random state.
    """
    from transformers import AutoModel

    try:
        encoder = AutoModel.from_pretrained(str(path), add_pooling_layer=False, hidden_dropout_prob=dropout,
                                            attention_probs_dropout_prob=dropout, **labels)
    except TypeError:  # an encoder class without a pooler switch
        encoder = AutoModel.from_pretrained(str(path), hidden_dropout_prob=dropout,
                                            attention_probs_dropout_prob=dropout, **labels)
    return JiantPairClassifier(encoder, n_classes, dropout)


def save_jiant_classifier(model: JiantPairClassifier, folder: Path) -> None:
    """Write the encoder as a Hugging Face folder and the head beside it (:data:`HEAD_FILE`), named in the config.

    Parameters
    ----------
    model : JiantPairClassifier
        The fine-tuned classifier.
    folder : Path
        An empty folder (a staging folder of :func:`diagnostics.models.model_folder_writer`).
    """
    from safetensors.torch import save_file

    model.encoder.save_pretrained(folder, safe_serialization=True)
    head = {f"classifier.{name}": t.detach().cpu().contiguous() for name, t in model.classifier.state_dict().items()}
    save_file(head, str(folder / HEAD_FILE))
    config_path = folder / "config.json"
    config = json.loads(config_path.read_text(encoding="utf-8"))
    config[HEAD_CONFIG_KEY] = "jiant"
    config_path.write_text(json.dumps(config, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def is_jiant_checkpoint(folder: str | Path) -> bool:
    """Tell whether a checkpoint folder holds jiant's head (its ``config.json`` says so).

    Parameters
    ----------
    folder : str or Path
        A model folder.

    Returns
    -------
    bool
        ``False`` for any other folder, one without a readable ``config.json`` included.
    """
    config_path = Path(folder) / "config.json"
    try:
        return json.loads(config_path.read_text(encoding="utf-8")).get(HEAD_CONFIG_KEY) == "jiant"
    except (OSError, ValueError):
        return False


def load_jiant_checkpoint(folder: str | Path) -> JiantPairClassifier:
    """Rebuild a fine-tuned jiant-head classifier from a checkpoint folder (safetensors only), in eval mode.

    Parameters
    ----------
    folder : str or Path
        A checkpoint written by :func:`save_jiant_classifier`.

    Returns
    -------
    JiantPairClassifier
        The classifier, dropout off.
    """
    from safetensors.torch import load_file
    from transformers import AutoModel

    folder = Path(folder)
    try:
        encoder = AutoModel.from_pretrained(str(folder), add_pooling_layer=False, use_safetensors=True)
    except TypeError:
        encoder = AutoModel.from_pretrained(str(folder), use_safetensors=True)
    head = load_file(str(folder / HEAD_FILE))
    n_classes = head["classifier.classifier.weight"].shape[0]
    model = JiantPairClassifier(encoder, n_classes, dropout=0.0)
    model.classifier.load_state_dict({k.removeprefix("classifier."): v for k, v in head.items()})
    return model.eval()
