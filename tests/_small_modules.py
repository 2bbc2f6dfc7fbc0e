"""Small torch modules for optimizer tests: tensors of several shapes under the parameter names that decide a
parameter's group (``LayerNorm``, biases, ``classifier``)."""

from __future__ import annotations

import torch
from torch import nn


class Small(nn.Module):
    """A linear layer, a LayerNorm and a head: tensors of several shapes, two parameter groups' names."""

    def __init__(self, seed: int):
        super().__init__()
        torch.manual_seed(seed)
        self.dense = nn.Linear(48, 40)
        self.LayerNorm = nn.LayerNorm(40)
        self.classifier = nn.Linear(40, 2)
        with torch.no_grad():
            self.LayerNorm.weight.uniform_(0.5, 1.5)
            self.LayerNorm.bias.normal_(0.0, 0.1)
