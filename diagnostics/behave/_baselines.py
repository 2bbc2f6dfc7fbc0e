"""Transparent reference predictors: what a suite measures when the model is a simple heuristic."""

from __future__ import annotations

import re
from collections.abc import Sequence

from diagnostics.core.schema import ENTAILMENT, NOT_ENTAILMENT

_TOKEN = re.compile(r"\w+")


def _tokens(text: str) -> set[str]:
    return {t.lower() for t in _TOKEN.findall(text)}


class LexicalOverlapPredictor:
    """Predict entailment when (almost) every hypothesis word occurs in the premise (McCoy et al.'s heuristic).

    Parameters
    ----------
    threshold : float
        Minimum share of hypothesis word types found in the premise for ``entailment``.
    """

    def __init__(self, threshold: float = 1.0):
        if not 0.0 < threshold <= 1.0:
            raise ValueError(f"threshold must be in (0, 1], got {threshold}")
        self.threshold = threshold

    def __call__(self, premises: Sequence[str], hypotheses: Sequence[str]) -> list[str]:
        out = []
        for premise, hypothesis in zip(premises, hypotheses, strict=True):
            hyp = _tokens(hypothesis)
            share = len(hyp & _tokens(premise)) / len(hyp) if hyp else 1.0
            out.append(ENTAILMENT if share >= self.threshold else NOT_ENTAILMENT)
        return out
