"""Which runs of a sweep train together (``fuse``), and how many fit one device.

Runs fuse when everything but the seed is equal: one experiment (one recipe and training mixture), one language and
one model. Their mixtures then have the same size, so the runs take the same number of steps per epoch and stay in
step. A group is sent to the executor as one job; every run still gets its own folder in the run store.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

from ._config import SweepConfig

#: Share of the device's free memory a group may plan to use (the rest is the margin for activations' peaks,
#: the allocator's fragmentation and evaluation batches).
MEMORY_SHARE = 0.8
#: Most runs ``fuse: auto`` puts in one group (beyond this a step's kernels are large enough on one GPU).
MAX_AUTO_GROUP = 32


def group_runs(specs: Sequence, size: int) -> list[list]:
    """Cut runs into groups of at most ``size`` runs that differ only in their seed.

    Parameters
    ----------
    specs : sequence of RunSpec
        Runs of one or several sweeps, in plan order.
    size : int
        Most runs per group (1: every run alone).

    Returns
    -------
    list of list of RunSpec
        Groups in plan order; a group's runs share experiment, language and model.
    """
    groups: dict[tuple, list[list]] = {}
    order: list[tuple] = []
    for spec in specs:
        key = (spec.config["experiment"], spec.config["output_dir"], spec.language, spec.model_spec.slug)
        if key not in groups:
            groups[key] = [[]]
            order.append(key)
        if len(groups[key][-1]) >= size:
            groups[key].append([])
        groups[key][-1].append(spec)
    return [group for key in order for group in groups[key]]


def run_memory_bytes(model_path: str | Path, config: SweepConfig, trainable_share: float = 1.0) -> int:
    """Estimate the device memory one fused run needs, in bytes: weights, gradients, two moments, activations.

    The sizes come from ``model_path``'s ``config.json`` (no weights are loaded) and from ``config``'s
    ``batch_size``, ``max_seq_length`` and ``precision``; gradients and moments are stored per run for the
    ``trainable_share`` of the parameters that train. State counts as fp32; activations for a full
    ``max_seq_length`` batch with attention probabilities (eager attention, as the fused step runs it).
    """
    from transformers import AutoConfig

    model = AutoConfig.from_pretrained(str(model_path))
    hidden, layers = model.hidden_size, model.num_hidden_layers
    params = (model.vocab_size + model.max_position_embeddings + 2) * hidden \
        + layers * (4 * hidden * hidden + 2 * hidden * model.intermediate_size + 9 * hidden) + hidden * hidden
    state = 4 * params * (1 + 3 * trainable_share)
    tokens = config.batch_size * config.max_seq_length
    # per layer: ~a dozen hidden-sized tensors and the attention scores and probabilities, kept for backward
    activations = 4 * layers * (14 * tokens * hidden + 3 * config.batch_size * model.num_attention_heads
                                * config.max_seq_length ** 2)
    return int(state + activations)


def auto_group_size(model_path: str | Path, config: SweepConfig, device: str, runs: int) -> int:
    """``fuse: auto``: as many runs as fit :data:`MEMORY_SHARE` of the device's free memory (at most ``runs``).

    ``runs`` is the number waiting to train in the largest group. On a CPU ``device`` the size is 1 (fusing is not
    faster there than one run after another); otherwise between 1 and ``min(runs, MAX_AUTO_GROUP)``.
    """
    if not device.startswith("cuda"):
        return 1
    import torch

    free, _ = torch.cuda.mem_get_info(torch.device(device))
    fits = math.floor(MEMORY_SHARE * free / run_memory_bytes(model_path, config))
    return max(1, min(fits, runs, MAX_AUTO_GROUP))
