"""The embeddings stand-in of an encoder cut into parts: hidden states pass through, nothing else is accepted."""

import pytest
import torch

from diagnostics.models._layers import PassThroughEmbeddings


def test_inputs_embeds_pass_through_unchanged_and_are_required():
    layer = PassThroughEmbeddings()
    hidden = torch.randn(2, 5, 8)
    assert layer(input_ids=torch.ones(2, 5, dtype=torch.long), inputs_embeds=hidden) is hidden
    assert list(layer.parameters()) == []  # nothing to train or to save
    with pytest.raises(ValueError, match="takes the cached hidden states"):
        layer(input_ids=torch.ones(2, 5, dtype=torch.long))
