"""Small ``torch.nn`` modules shared by the stages that cut encoders into parts (imports torch).

:class:`PassThroughEmbeddings` replaces an encoder's embeddings when its inputs are hidden states computed
elsewhere: the trained part of a top-k classifier (:mod:`diagnostics.finetune.modeling`) and the upper layers of
an encoder that shares its lower ones with another (:func:`diagnostics.models.sharing.upper_part`).
"""

from __future__ import annotations

from torch import nn


class PassThroughEmbeddings(nn.Module):
    """Stands in for a model's embeddings module: returns ``inputs_embeds`` unchanged (cached hidden states)."""

    def forward(self, input_ids=None, position_ids=None, token_type_ids=None, inputs_embeds=None,
                past_key_values_length=0, **kwargs):
        if inputs_embeds is None:
            raise ValueError("a top-k model takes the cached hidden states of its frozen layers as inputs_embeds")
        return inputs_embeds
