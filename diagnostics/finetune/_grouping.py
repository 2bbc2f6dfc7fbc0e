"""Which runs train together (``fuse``), and how many fit one device.

Runs may share a group when they share a model and the settings that shape a training step (:func:`training_key`:
batch size, sequence length, precision, optimizer and its hyperparameters, head ...): the experiment, language,
training data and size, validation schedule, stopping rules and seed are each run's own, and the engine
(:mod:`._fused`) keeps them apart. A group is sent to the executor as one job whose runs queue for its slots; every
run still gets its own folder in the run store.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path

from diagnostics.settings import fields_declaring

from ._config import SweepConfig

#: Settings each run of a group keeps for itself (its data, its schedule of checks, its stopping rules, its place
#: in the store), declared ``setting(per_run=True)``; every other setting must be equal for runs to share a group.
PER_RUN_SETTINGS = frozenset(fields_declaring(SweepConfig, "per_run"))
#: Rounds of its slots a job of a pool or cluster executor holds (the in-process executor keeps one job per
#: group): enough runs queue behind the slots to refill them as runs stop, and several jobs let several devices
#: share a plan.
JOB_ROUNDS = 4


def training_key(config: SweepConfig, model=None) -> str:
    """What runs of one group must share: every setting but :data:`PER_RUN_SETTINGS`, and the model.

    Parameters
    ----------
    config : SweepConfig
        A run's sweep.
    model : ModelSpec, optional
        The run's model (its name, folder and pretraining seed).

    Returns
    -------
    str
        Equal for runs that may train in one group.
    """
    values = {k: v for k, v in config.to_dict().items() if k not in PER_RUN_SETTINGS}
    if model is not None:
        values["model"] = {"name": model.name, "path": model.path, "pretrain_seed": model.pretrain_seed}
    return json.dumps(values, sort_keys=True, default=str)

#: Share of the device's free memory a group may plan to use (the rest is the margin for activations' peaks,
#: the allocator's fragmentation and evaluation batches).
MEMORY_SHARE = 0.8
#: Most runs ``fuse: auto`` puts in one group (beyond this a step's kernels are large enough on one GPU).
MAX_AUTO_GROUP = 32


def group_jobs(todo: Sequence[tuple[SweepConfig, object]], size_of, executor: str = "inprocess") -> list[list]:
    """Cut pending runs into the executor's jobs: runs alone, or groups that share a training key.

    Parameters
    ----------
    todo : sequence of (SweepConfig, RunSpec)
        Pending runs of one or several sweeps, in plan order.
    size_of : callable
        ``size_of(config, specs) -> int``: the slots of a group of ``specs`` (``fuse``, or what ``auto`` measures).
    executor : str
        ``inprocess`` keeps a group in one job; other executors get jobs of :data:`JOB_ROUNDS` rounds of slots.

    Returns
    -------
    list of list of RunSpec
        Jobs in plan order of their first run; with one slot, every run is a job of its own.
    """
    groups: dict[str, tuple[SweepConfig, list]] = {}
    for config, spec in todo:
        groups.setdefault(training_key(config, spec.model_spec), (config, []))[1].append(spec)
    jobs = []
    for config, specs in groups.values():
        size = size_of(config, specs)
        if size <= 1:
            jobs += [[spec] for spec in specs]
        else:
            step = len(specs) if executor == "inprocess" else size * JOB_ROUNDS
            jobs += [specs[i:i + step] for i in range(0, len(specs), step)]
    return jobs


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
