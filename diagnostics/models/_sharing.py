"""Lower layers shared by encoders: a top-k fine-tuned seed computes its embeddings and lower layers exactly as
the pretrained model (and every other seed of the sweep) does. Inference over several such models runs the shared
part once per batch and only each model's own upper layers (probing's :func:`diagnostics.probe._extract.encode_models`,
the behavioural suite's :func:`diagnostics.behave._predictors.predict_many`).
"""

from __future__ import annotations

# config keys that do not change what an encoder in eval mode computes (a classification checkpoint adds them)
_NOT_ARCHITECTURE = {"architectures", "id2label", "label2id", "num_labels", "problem_type", "finetuning_task",
                     "classifier_dropout", "hidden_dropout_prob", "attention_probs_dropout_prob", "_name_or_path",
                     "transformers_version", "torch_dtype", "dtype", "output_hidden_states", "return_dict"}


def shared_states(reference, model) -> int:
    """How many leading hidden states two BERT-like encoders compute identically from the same input ids.

    State 0 is the embeddings' output and state ``i`` the output of encoder layer ``i``: the count is 0 when the
    embeddings differ, else 1 + the number of leading layers whose parameters are bit-identical. A seed
    fine-tuned with only its top ``k`` of ``L`` layers trained shares ``L - k + 1`` states with its pretrained model.

    Parameters
    ----------
    reference, model : transformers.PreTrainedModel
        Base encoders with ``embeddings`` and ``encoder.layer`` (anything else shares nothing: 0).

    Returns
    -------
    int
        Between 0 and ``num_hidden_layers + 1``.
    """
    import torch

    def architecture(m) -> dict:
        return {k: v for k, v in m.config.to_dict().items() if k not in _NOT_ARCHITECTURE}

    if type(reference) is not type(model) or architecture(reference) != architecture(model):
        return 0
    try:
        ref_layers, layers = reference.encoder.layer, model.encoder.layer
        modules = [(reference.embeddings, model.embeddings)] + list(zip(ref_layers, layers))
    except AttributeError:
        return 0

    def identical(a, b) -> bool:
        sa, sb = a.state_dict(), b.state_dict()
        return sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)

    count = 0
    for ref_module, module in modules:
        if not identical(ref_module, module):
            break
        count += 1
    return count


def upper_part(model, start_layer: int):
    """A view of ``model`` that takes hidden states (``inputs_embeds``) and runs layers ``start_layer`` and up.

    Parameters are shared with ``model``, which is left unchanged.

    Parameters
    ----------
    model : transformers.PreTrainedModel
        A BERT-like base encoder (``embeddings`` and ``encoder.layer``).
    start_layer : int
        Index of the first encoder layer the view runs (its input is the output of layer ``start_layer - 1``).

    Returns
    -------
    transformers.PreTrainedModel
        A shallow copy whose embeddings pass ``inputs_embeds`` through and whose encoder holds the layers from
        ``start_layer`` up.
    """
    import copy

    import torch
    from torch import nn

    from ._layers import PassThroughEmbeddings

    # transformers 5 records hidden states through forward hooks that a model installs on its layers at its first
    # call; run it once first, so the view (which shares the layers) finds them installed and adds no duplicates
    with torch.inference_mode():
        model(input_ids=torch.zeros((1, 1), dtype=torch.long), output_hidden_states=True)
    upper = copy.copy(model)
    upper._modules = dict(model._modules)
    upper.encoder = copy.copy(model.encoder)
    upper.encoder._modules = dict(model.encoder._modules)
    upper.encoder.layer = nn.ModuleList(list(model.encoder.layer)[start_layer:])
    upper.embeddings = PassThroughEmbeddings()
    return upper


def same_input_ids(reference_tokenizer, tokenizer, *texts, max_length: int) -> bool:
    """Whether ``tokenizer`` turns ``texts`` (a list, or premises and hypotheses) into the reference's input ids.

    True at once for the same object (:func:`diagnostics.models.load_tokenizer` shares one per content);
    otherwise the pad ids and the truncated ids of every text must be equal.

    Parameters
    ----------
    reference_tokenizer : transformers.PreTrainedTokenizerBase
        The reference model's tokenizer.
    tokenizer : transformers.PreTrainedTokenizerBase
        The other model's tokenizer.
    *texts : list of str
        One list of texts, or premises and hypotheses (encoded as pairs).
    max_length : int
        Truncation length.

    Returns
    -------
    bool
        True when both give the same input ids (and pad id).
    """
    if tokenizer is reference_tokenizer:
        return True
    if tokenizer.pad_token_id != reference_tokenizer.pad_token_id:
        return False
    options = dict(truncation=True, max_length=max_length)
    return tokenizer(*texts, **options)["input_ids"] == reference_tokenizer(*texts, **options)["input_ids"]
