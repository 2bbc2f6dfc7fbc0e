"""The data of one run: its training mixture and evaluation sets, tokenised, or as cached frozen-layer features."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import torch

from diagnostics.models import load_tokenizer

from ._batching import encode_pairs
from ._config import SweepConfig
from ._mixtures import evaluation_sets, training_mixture


@dataclass
class RunInputs:
    """What a run trains and evaluates on.

    Parameters
    ----------
    tokenizer : transformers.PreTrainedTokenizerBase
        The model's tokenizer (saved with a checkpoint).
    train_frame : pandas.DataFrame
        The training mixture.
    eval_frames : dict of str to pandas.DataFrame
        Evaluation sets by name, ``validation`` included.
    inputs : dict
        ``train`` and every evaluation set -> what the model reads: token ids, or the hidden states of the
        frozen layers when only the top layers are trained.
    features_computed_s : float
        Seconds spent computing frozen-layer features that were not cached yet.
    """

    tokenizer: Any
    train_frame: pd.DataFrame
    eval_frames: dict[str, pd.DataFrame]
    inputs: dict[str, Any]
    features_computed_s: float = 0.0


def prepare_inputs(config: SweepConfig, language: str, model_path: Path, feature_folder: Path, *, device: str,
                   amp: torch.dtype | None, show: bool) -> RunInputs:
    """Build the training mixture and evaluation sets of a language and encode them for a model.

    ``model_path`` supplies the tokenizer (and the lower layers for cached features). ``feature_folder`` stores the
    frozen-layer features, used only with ``train_top_k_layers``; missing ones are computed on ``device`` under
    ``amp`` (part of the cache key). The result holds the frames, the model inputs per set and the seconds spent
    computing features not yet cached.
    """
    tokenizer = load_tokenizer(model_path)
    train_frame = training_mixture(config, language)
    eval_frames = evaluation_sets(config, language)
    encoded = {"train": encode_pairs(tokenizer, train_frame, config.max_seq_length, config.truncation)}
    encoded |= {name: encode_pairs(tokenizer, frame, config.max_seq_length, config.truncation)
                for name, frame in eval_frames.items()}
    if config.train_top_k_layers is None:
        return RunInputs(tokenizer, train_frame, eval_frames, encoded)
    features, seconds = _frozen_features(config, encoded, model_path, feature_folder, device, amp, show)
    return RunInputs(tokenizer, train_frame, eval_frames, features, seconds)


def _frozen_features(config: SweepConfig, encoded: dict, model_path: Path, folder: Path, device: str,
                     amp: torch.dtype | None, show: bool) -> tuple[dict, float]:
    """Hidden states below the trained top layers per set, and the seconds spent computing uncached ones."""
    from ._features import FeatureCache

    cache = FeatureCache(folder, model_path, config.train_top_k_layers, config.max_seq_length, config.feature_dtype,
                         device=device, batch_size=config.eval_batch_size, progress=show, autocast=amp)
    features, seconds = {}, 0.0
    for name, enc in encoded.items():
        started = time.perf_counter()
        features[name], computed = cache.get(name, enc)
        seconds += (time.perf_counter() - started) if computed else 0.0
    return features, seconds
