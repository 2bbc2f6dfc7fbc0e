"""Small ``torch.nn`` modules shared by the stages that cut encoders into parts (imports torch).

:class:`PassThroughEmbeddings` replaces an encoder's embeddings when its inputs are hidden states computed
elsewhere: the trained part of a top-k classifier (:mod:`diagnostics.finetune._modeling`) and the upper layers of
an encoder that shares its lower ones with another (:func:`diagnostics.models.upper_part`).
"""

from __future__ import annotations

from torch import nn


class PassThroughEmbeddings(nn.Module):
    """Stands in for a model's embeddings module: returns ``inputs_embeds`` unchanged (cached hidden states).

    Parameters
    ----------
    *args, **kwargs
        Passed to :class:`torch.nn.Module` (none are needed).
    """

    def forward(self, input_ids=None, position_ids=None, token_type_ids=None, inputs_embeds=None,
                past_key_values_length=0, **kwargs):
        """Return ``inputs_embeds`` unchanged; every other argument of an embeddings module is ignored.

        Parameters
        ----------
        input_ids, position_ids, token_type_ids : torch.Tensor, optional
            Ignored (the hidden states already hold what they would add).
        inputs_embeds : torch.Tensor
            Hidden states, shape (batch, tokens, hidden).
        past_key_values_length : int
            Ignored.
        **kwargs
            Ignored.

        Returns
        -------
        torch.Tensor
            ``inputs_embeds``.

        Raises
        ------
        ValueError
            When ``inputs_embeds`` is not given.
        """
        if inputs_embeds is None:
            raise ValueError("a top-k model takes the cached hidden states of its frozen layers as inputs_embeds")
        return inputs_embeds
