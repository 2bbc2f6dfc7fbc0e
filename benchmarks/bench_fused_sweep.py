"""Fused training at the study's recipe: K runs trained as one group against one run alone, per precision.

Everything is made in the process, so the script runs on a bare GPU machine from a checkout with
``PYTHONPATH=.`` (no install, no weights, no tokenizer, no network):

* the model: a randomly initialised ``BertModel`` of mBERT's size (vocabulary 119,547, 12 layers x 768, 12 heads,
  3072 intermediate, 512 positions), written to a temporary folder as safetensors and loaded per run by
  ``load_classifier`` with jiant's pair head and dropout 0.1, each run from its own seed (``--size tiny``: a
  2-layer, 32-wide model with a vocabulary of 1,000, to check the script on a CPU);
* the training pairs: lengths those of the real train pairs (``--dataset rte`` or ``terra``: every pair's length
  once, from ``benchmarks/data/pair_lengths.json``; lengths in the embedded model's XLM-R tokens, truncated at 256,
  see that file), token ids drawn from a Zipf law fitted to the same text (``benchmarks/data/token_zipf.json``: the
  exponent over the text's distinct ids that reads as many distinct ids per batch of 4 pairs as the text, 181 for
  RTE where uniform ids read about 320; ranks mapped onto the model's ids by a seeded permutation; ``--ids uniform``:
  ids at random), random labels;
* the recipe: the study's (``configs/paper.yaml``: jiant's trainer, BertAdam, batch 4, lr 1e-5, global clipping 5.0
  then per tensor 1.0, weight decay 0.01, warm-up 0.1), trained by ``fit_fused`` with a constant validation.

Arms, all in one process: ``fuse=1`` (one run through ``fit_fused`` with K = 1, fp32: the baseline) and K = 8, 12,
16 runs as one group, each at fp32, tf32 (fp32 weights, TF32 matrix products) and bf16 (autocast). An arm that
runs out of device memory is recorded as such, and the larger K of its precision are skipped. Timing: a check
(the constant validation) every ``--warmup`` steps; the clock runs from the second check (so the warm-up and the
first check's copy of the best weights are left out) to the last, ``--steps`` steps later, with the device
synchronised at both ends. Per arm: aggregate pairs/s (K x batch x steps / seconds), its ratio to the baseline,
peak device memory (``torch.cuda.max_memory_allocated``), and the padding share of the batches the arm trained
(1 - real tokens / padded tokens over all its steps, warm-up included, from ``fit_fused``'s run counters; a group
pads its runs' batches to one width). The runs are loaded once: an arm starts from the weights the arm before left
(a step's cost does not depend on them).

``--profile`` adds a short ``torch.profiler`` record of one fused step (K = the first fused K, the first precision):
the top 15 kernels by device time, the step's kernel count and device time, and its host syncs, counted twice:
synchronising calls the profiler saw (``cuda*Synchronize``, device-to-host copies) and
``torch.cuda.set_sync_debug_mode("warn")`` warnings, by the source line that made them. The window runs from a
check (its bookkeeping after the validation included) to the next one: one training step.

``--static-widths 128,...`` adds, per width and precision, the engine's step on fixed inputs (K = the largest
of ``--ks``) timed eagerly and replayed as one captured CUDA graph, without and with dropout: eager time minus
graph time is what the host's launching of kernels costs a step (``static_width`` in the JSON).
``--static-variants sdpa,compiled_bert_adam,fused_adamw`` times other forms of the step at those widths (eagerly,
with dropout): attention through SDPA under ``vmap``, BertAdam as one compiled pass per stacked tensor, and
BertAdam as the engine ran it before its own kernel (a scaling pass of both clips, then torch's fused AdamW kernel
without bias correction) (``static_step_arm``).

Run: ``PYTHONPATH=. python benchmarks/bench_fused_sweep.py [--device cuda] [--quick] [--profile]``; writes
``benchmarks/results/bench_fused_sweep_<device>.json`` (``--out`` to change) after every arm, so a run stopped at a
time limit keeps what it measured. The default set took 136 s on an H100 (models written and loaded in 21 s).
``--quick`` trains the baseline and K = 8 at fp32 for a few steps.
``--size tiny --device cpu`` checks the script on a CPU in seconds (set ``OMP_NUM_THREADS=1`` where other processes
share the cores: a thread pool that waits for descheduled threads makes each op take milliseconds).
``--rows-arms`` adds, per fused K at the first precision, an arm with the word embedding's rows updated every step
and one with lazy rows (``fit_fused(..., lazy_rows=...)``), each recording the rows its steps read
(``rows_arms``).
``--capture-arms`` adds, per fused K at the first precision, an arm trained with its step captured
(``fit_fused(..., capture=True)``: on CUDA one CUDA graph per width bucket, replayed; on a CPU the module's
recorded stand-in, which checks the script, not a speed-up), recording the steps run eagerly (a width's first),
captured (one per width bucket met) and replayed (``capture_arms``). ``--capture-check`` trains the largest K at
the first precision for ``--steps`` steps, dropout off, from the same weights with every step eager and with its
steps replayed, and records how far the final weights and losses differ (``capture_check``; 0 on a CPU, where a
replay is its eager step bit for bit).
``--write-lengths`` remakes ``benchmarks/data/pair_lengths.json``, ``--write-zipf``
``benchmarks/data/token_zipf.json`` (both need the package's data and embedded model).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import itertools
import importlib.util
import json
import platform
import subprocess
import sys
import tempfile
import time
import traceback
import warnings
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if importlib.util.find_spec("diagnostics") is None:  # a checkout without the package installed or on PYTHONPATH
    sys.path.insert(0, str(ROOT))

RESULTS = Path(__file__).resolve().parent / "results"
LENGTHS = Path(__file__).resolve().parent / "data" / "pair_lengths.json"
ZIPF = Path(__file__).resolve().parent / "data" / "token_zipf.json"
SIZES = {"mbert": {"vocab_size": 119547, "hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12,
                   "intermediate_size": 3072, "max_position_embeddings": 512, "type_vocab_size": 2},
         "tiny": {"vocab_size": 1000, "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2,
                  "intermediate_size": 64, "max_position_embeddings": 512, "type_vocab_size": 2}}
#: The study's recipe (configs/paper.yaml), the settings a training step reads.
RECIPE = {"recipe": "jiant", "optimizer": "bert_adam", "batch_size": 4, "lr": 1e-5, "dropout": 0.1,
          "adam_eps": 1e-6, "weight_decay": 0.01, "max_grad_norm": 5.0, "bert_adam_max_grad_norm": 1.0,
          "warmup_ratio": 0.1, "max_epochs": 10, "max_seq_length": 256, "classifier_head": "jiant",
          "selection_metric": "accuracy", "val_schedule": "custom", "progress": False}
PRECISIONS = ("fp32", "tf32", "bf16")
KS = (8, 12, 16)
MAX_SEQ_LENGTH = 256


# --- inputs -------------------------------------------------------------------------------------------------------

def pair_lengths(dataset: str, path: Path = LENGTHS) -> list[int]:
    """Every train pair's length in tokens (one entry per pair, shortest first), from the histogram file."""
    counts = json.loads(path.read_text(encoding="utf-8"))["datasets"][dataset]["counts"]
    return [int(length) for length, n in sorted(counts.items(), key=lambda kv: int(kv[0])) for _ in range(n)]


def random_pairs(lengths: list[int], vocab_size: int, seed: int = 0):
    """Pairs of the given lengths with random token ids, random labels; ``(TokenInputs, gold)``.

    Ids: the first token 101 and the last 102 (BERT's [CLS] / [SEP]), the others drawn above the first 1000 ids
    (below 5 for a vocabulary that small); segment ids 0 for the first 70 % of a pair, 1 after (no cost depends on
    either). The pairs come in a seeded random order.
    """
    import numpy as np
    import torch

    from diagnostics.finetune._batching import TokenInputs

    rng = np.random.default_rng(seed)
    low = 1000 if vocab_size > 2000 else 5
    ids, types = [], []
    for n in rng.permutation(np.asarray(lengths)):
        n = int(n)
        row = rng.integers(low, vocab_size, size=n)
        row[0], row[-1] = 101 % vocab_size, 102 % vocab_size
        ids.append(row.tolist())
        first = max(1, int(0.7 * n))
        types.append([0] * first + [1] * (n - first))
    gold = torch.from_numpy(rng.integers(0, 2, size=len(ids)).astype(np.int64))
    return TokenInputs(ids, types, 0), gold


def zipf_weights(exponent: float, types: int):
    """P(rank) of a Zipf law over ranks 1 .. ``types``: ``rank ** -exponent``, normalised (float64 numpy)."""
    import numpy as np

    weights = np.arange(1, types + 1, dtype=np.float64) ** -exponent
    return weights / weights.sum()


def zipf_pairs(lengths: list[int], vocab_size: int, exponent: float, types: int, seed: int = 0):
    """As :func:`random_pairs`, but the ids inside a pair drawn from a Zipf law (``exponent`` over ``types`` ranks,
    fitted to real text: :data:`ZIPF`), rank r mapped to the r-th id of a seeded permutation of the model's ids
    above the special ones (the ranks past the vocabulary's size folded onto it)."""
    import numpy as np
    import torch

    from diagnostics.finetune._batching import TokenInputs

    rng = np.random.default_rng(seed)
    low = 1000 if vocab_size > 2000 else 5
    ids_of_rank = rng.permutation(np.arange(low, vocab_size))
    support = min(types, len(ids_of_rank))
    weights = zipf_weights(exponent, support)
    lengths = rng.permutation(np.asarray(lengths))
    drawn = np.split(ids_of_rank[rng.choice(support, size=int(lengths.sum()), p=weights)], np.cumsum(lengths)[:-1])
    ids, types_ = [], []
    for row in drawn:
        n = len(row)
        row[0], row[-1] = 101 % vocab_size, 102 % vocab_size
        ids.append(row.tolist())
        first = max(1, int(0.7 * n))
        types_.append([0] * first + [1] * (n - first))
    gold = torch.from_numpy(rng.integers(0, 2, size=len(ids)).astype(np.int64))
    return TokenInputs(ids, types_, 0), gold


def distinct_per_batch(pairs: list[list[int]], batch: int = 4, groups: int = 1, draws: int = 2000,
                       seed: int = 0) -> float:
    """Mean number of distinct ids in ``groups`` batches of ``batch`` pairs drawn at random (the rows a fused step
    of ``groups`` runs reads)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    total = 0
    for _ in range(draws):
        chosen = rng.choice(len(pairs), size=batch * groups, replace=False)
        total += len(set().union(*(pairs[i] for i in chosen)))
    return total / draws


def fit_zipf(pairs: list[list[int]], types: int, batch: int = 4, seed: int = 0) -> tuple[float, float, float]:
    """The Zipf exponent over ``types`` ranks whose ids, in pairs of the same lengths, give the real pairs' mean
    number of distinct ids per batch; (exponent, that number for the text, for the fitted law)."""
    import numpy as np

    target = distinct_per_batch(pairs, batch, seed=seed)
    lengths = [len(p) for p in pairs]
    low, high = 0.5, 2.5
    for _ in range(20):
        exponent = (low + high) / 2
        rng = np.random.default_rng(seed)
        weights = zipf_weights(exponent, types)
        flat = rng.choice(types, size=sum(lengths), p=weights)
        drawn = [part.tolist() for part in np.split(flat, np.cumsum(lengths)[:-1])]
        value = distinct_per_batch(drawn, batch, seed=seed, draws=500)
        low, high = (exponent, high) if value > target else (low, exponent)
    return round(exponent, 4), round(target, 2), round(value, 2)


def write_model(folder: Path, size: str, seed: int = 0) -> dict:
    """A randomly initialised ``BertModel`` of ``SIZES[size]`` saved as safetensors in ``folder``; its config."""
    import torch
    from transformers import BertConfig, BertModel

    torch.manual_seed(seed)
    config = BertConfig(**SIZES[size])
    BertModel(config).save_pretrained(folder, safe_serialization=True)
    return SIZES[size]


# --- timing -------------------------------------------------------------------------------------------------------

def _sync(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize()


class CheckClock:
    """A constant validation for ``fit_fused`` that stamps the time of every check, the device synchronised."""

    def __init__(self, device: str):
        self.device, self.times = device, []

    def __call__(self, stack, members) -> list[dict[str, float]]:
        _sync(self.device)
        self.times.append(time.perf_counter())
        return [{"accuracy": 0.5, "mcc": 0.0} for _ in members]


def sweep_config(interval: int, max_steps: int, device: str, precision: str):
    """The study's recipe, with a check every ``interval`` steps and no stopping rule before ``max_steps``."""
    from diagnostics.finetune import SweepConfig

    return SweepConfig(**RECIPE, val_interval=interval, max_steps=max_steps, max_vals=10**6, patience=10**6,
                       lr_patience=10**6, device=device.split(":")[0], precision=precision)


def _oom_error():
    import torch

    return getattr(torch, "OutOfMemoryError", torch.cuda.OutOfMemoryError)


def _precision_settings(precision: str):
    """(autocast dtype, TF32 matmul flag) of a precision."""
    import torch

    return (torch.bfloat16 if precision == "bf16" else None), precision == "tf32"


@contextlib.contextmanager
def counting_rows():
    """Record how many word-embedding rows each training step reads (the union over the group's batches)."""
    from diagnostics.finetune._lazy_rows import EmbeddingRows

    counts: list[int] = []
    prepare = EmbeddingRows.prepare

    def counted(self, input_ids):
        out = prepare(self, input_ids)
        counts.append(len(self._host_rows))
        return out

    EmbeddingRows.prepare = counted
    try:
        yield counts
    finally:
        EmbeddingRows.prepare = prepare


@contextlib.contextmanager
def counting_graphs(eager_only: bool = False):
    """Keep the engine's step graphs made meanwhile (their logs: steps run eagerly, captured, replayed);
    ``eager_only``: graphs that never capture (every step eager on the static buffers)."""
    from diagnostics.finetune import _fused

    made: list = []
    original = _fused.StepGraphs

    class Kept(original):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            if eager_only:
                self.warmup = 10**9
            made.append(self)

    _fused.StepGraphs = Kept
    try:
        yield made
    finally:
        _fused.StepGraphs = original


def run_arm(models, train, gold, precision: str, device: str, warmup: int, steps: int, first_seed: int = 0,
            lazy_rows: bool | None = None, capture: bool = False) -> dict:
    """Train ``models`` (seeded ``first_seed``, ``first_seed + 1`` ...) as one group for ``2 * warmup + steps``
    steps; the figures of the timed ``steps``. ``lazy_rows``: the engine's option (``None``: its default); when
    given, the arm also records the word-embedding rows its steps read. ``capture``: the engine's step through
    graphs per width bucket; the arm records how many steps ran eagerly, were captured and were replayed."""
    import torch

    from diagnostics.finetune._fused import fit_fused

    k = len(models)
    amp, tf32 = _precision_settings(precision)
    torch.backends.cuda.matmul.allow_tf32 = tf32
    cuda = device.startswith("cuda")
    if cuda:
        gc.collect()
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
    clock = CheckClock(device)
    config = sweep_config(warmup, 2 * warmup + steps, device, precision)
    arm = {"k": k, "precision": precision, "autocast": str(amp) if amp else None, "tf32": tf32}
    if lazy_rows is not None:
        arm["lazy_rows"] = lazy_rows
    if capture:
        arm["capture"] = True
    started = time.perf_counter()
    try:
        with counting_rows() if lazy_rows is not None else contextlib.nullcontext() as rows, \
                counting_graphs() as graphs:
            results = fit_fused(models, train, gold, config, seeds=[first_seed + i for i in range(k)],
                                validate=clock, device=device, amp=amp, desc=f"K={k} {precision}",
                                lazy_rows=lazy_rows, capture=capture)
    except _oom_error() as err:
        results, arm["error"] = None, str(err).splitlines()[0][:300]
    wall = time.perf_counter() - started
    if results is None:  # the traceback (and the group's tensors) are released by now
        arm["status"] = "out_of_memory"
        if cuda:
            arm["peak_memory_mib"] = round(torch.cuda.max_memory_allocated() / 2**20, 1)
            gc.collect()
            torch.cuda.empty_cache()
        return arm
    if len(clock.times) < 3:
        raise RuntimeError(f"K={k} {precision}: {len(clock.times)} checks where at least 3 were expected: the "
                           "engine no longer validates every val_interval steps, so this benchmark cannot time it")
    seconds = clock.times[-1] - clock.times[1]
    real = sum(r.counters.real_tokens for r in results)
    padded = sum(r.counters.padded_tokens for r in results)
    arm |= {"status": "ok", "steps_trained": sorted({r.counters.step for r in results}), "timed_steps": steps,
            "checks": len(clock.times), "seconds": round(seconds, 4),
            "pairs_per_s": round(k * RECIPE["batch_size"] * steps / seconds, 2),
            "steps_per_s": round(steps / seconds, 3),
            "padding_share": round(1 - real / padded, 4) if padded else None,
            "real_tokens": real, "padded_tokens": padded, "arm_wall_s": round(wall, 2)}
    if capture:
        log = [entry for kept in graphs for entry in kept.log]
        arm["graphs"] = {kind: log.count(kind) for kind in ("eager", "capture", "replay")}
    if rows:
        vocab = models[0].config.vocab_size
        arm |= {"rows_per_step": round(sum(rows) / len(rows), 1), "rows_per_step_max": max(rows), "vocab": vocab,
                "rows_share": round(sum(rows) / len(rows) / vocab, 5)}
    if cuda:
        arm["peak_memory_mib"] = round(torch.cuda.max_memory_allocated() / 2**20, 1)
        arm["peak_reserved_mib"] = round(torch.cuda.max_memory_reserved() / 2**20, 1)
    return arm


# --- profile of one step ------------------------------------------------------------------------------------------

def _source(filename: str) -> str:
    """A source file named without the machine's folders: relative to the checkout, or from the package root."""
    path = Path(filename)
    if path.is_relative_to(ROOT):
        return path.relative_to(ROOT).as_posix()
    parts = path.parts
    for marker in ("site-packages", "dist-packages"):
        if marker in parts:
            return "/".join(parts[parts.index(marker) + 1:])
    return path.name


class ProfileWindow:
    """A constant validation that records, from check ``open_at`` to the next one, a profile and the host syncs."""

    def __init__(self, device: str, open_at: int):
        self.device, self.open_at, self.checks = device, open_at, 0
        self.cuda = device.startswith("cuda")
        self.profiler = self._warnings = None
        self.log: list = []
        self.closed = False

    def __call__(self, stack, members) -> list[dict[str, float]]:
        import torch
        from torch.profiler import ProfilerActivity, profile

        self.checks += 1
        if self.checks == self.open_at:
            _sync(self.device)
            activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if self.cuda else [])
            self.profiler = profile(activities=activities)
            self.profiler.start()
            self._warnings = warnings.catch_warnings(record=True)
            self.log = self._warnings.__enter__()
            warnings.simplefilter("always")
            if self.cuda:
                torch.cuda.set_sync_debug_mode("warn")
        elif self.checks == self.open_at + 1:
            self.close()
        return [{"accuracy": 0.5, "mcc": 0.0} for _ in members]

    def close(self) -> bool:
        """End the window if it is open (also after an error); whether a window was recorded."""
        import torch

        if self._warnings is not None:
            if self.cuda:
                torch.cuda.set_sync_debug_mode(0)
            self._warnings.__exit__(None, None, None)
            self._warnings = None
            _sync(self.device)  # one cudaDeviceSynchronize of ours, taken off the count below
            self.profiler.stop()
            self.closed = True
        return self.closed

    def summary(self) -> dict:
        """The window's top 15 kernels (ops on a CPU), kernel count, device time and host syncs."""
        from torch.autograd import DeviceType

        events = self.profiler.key_averages()
        key = "self_device_time_total" if self.cuda else "self_cpu_time_total"

        def own_time(event) -> float:
            value = getattr(event, key, None)
            return float(value if value is not None else getattr(event, "self_cuda_time_total", 0.0))

        if self.cuda:
            kernels = [e for e in events if e.device_type == DeviceType.CUDA]
        else:
            kernels = [e for e in events if e.device_type == DeviceType.CPU and e.key.startswith("aten::")]
        top = sorted(kernels, key=own_time, reverse=True)[:15]
        try:
            table = events.table(sort_by=key, row_limit=15, max_name_column_width=80)
        except (AttributeError, KeyError):
            table = events.table(sort_by="self_cuda_time_total", row_limit=15, max_name_column_width=80)
        out = {"window": f"from the check after step {self.open_at} (its bookkeeping after the validation "
                         f"included) to the check after step {self.open_at + 1}: one training step",
               "time_unit": "us", "sorted_by": key,
               "top": [{"name": e.key[:200], "calls": e.count, "time_us": round(own_time(e), 1)} for e in top],
               "launches" if self.cuda else "aten_ops": sum(e.count for e in kernels),
               "total_us": round(sum(own_time(e) for e in kernels), 1), "table": table}
        if self.cuda:
            names = Counter(e.name for e in self.profiler.events())
            syncs = {name: n for name, n in names.items() if "Synchronize" in name}
            if syncs.get("cudaDeviceSynchronize"):
                syncs["cudaDeviceSynchronize"] -= 1
            by_line = Counter(f"{_source(w.filename)}:{w.lineno}" for w in self.log
                              if "synchroniz" in str(w.message).lower())
            out["host_syncs"] = {
                "sync_calls": {name: n for name, n in sorted(syncs.items()) if n},
                "device_to_host_copies": sum(n for name, n in names.items() if "DtoH" in name),
                "sync_debug_warnings": sum(by_line.values()),
                "sync_debug_warnings_by_line": dict(by_line.most_common())}
        return out


def profile_step(models, train, gold, precision: str, device: str, first_seed: int = 0) -> dict:
    """Profile one fused step after 3 (a check after every step, the window from the third to the fourth)."""
    import torch

    from diagnostics.finetune._fused import fit_fused

    amp, tf32 = _precision_settings(precision)
    torch.backends.cuda.matmul.allow_tf32 = tf32
    window = ProfileWindow(device, open_at=3)
    config = sweep_config(1, 4, device, precision)
    try:
        fit_fused(models, train, gold, config, seeds=[first_seed + i for i in range(len(models))], validate=window,
                  device=device, amp=amp, desc="profile")
    except _oom_error() as err:
        return {"k": len(models), "precision": precision, "status": "out_of_memory",
                "error": str(err).splitlines()[0][:300]}
    finally:
        recorded = window.close()
        if device.startswith("cuda"):
            gc.collect()
            torch.cuda.empty_cache()
    if not recorded:
        return {"k": len(models), "precision": precision, "status": "no_window",
                "error": f"{window.checks} checks in 4 steps, where a check after every step was expected"}
    return {"k": len(models), "precision": precision, "status": "ok", **window.summary()}


def capture_check(models, train, gold, precision: str, device: str, steps: int, first_seed: int = 0) -> dict:
    """The engine's captured step against the same step run eagerly: ``steps`` steps of ``models`` as one group,
    dropout off, from the same weights, once with every step eager on the static buffers and once with steps
    captured per width bucket and replayed; how far the final weights and the training losses differ (0 where a
    replay is its eager step, as on the CPU)."""
    import torch
    from torch import nn

    from diagnostics.finetune._fused import fit_fused

    amp, tf32 = _precision_settings(precision)
    torch.backends.cuda.matmul.allow_tf32 = tf32
    config = sweep_config(steps, steps, device, precision)  # one check, after the last step: its weights are kept
    start = [{n: t.clone() for n, t in model.state_dict().items()} for model in models]
    dropouts = [m for model in models for m in model.modules() if isinstance(m, nn.Dropout)]
    rates = [m.p for m in dropouts]
    check = {"k": len(models), "precision": precision, "steps": steps, "dropout": False}
    trained, losses = None, None
    try:
        for m in dropouts:
            m.p = 0.0
        for mode in ("eager", "captured"):
            for model, state in zip(models, start):
                model.load_state_dict(state)
            with counting_graphs(eager_only=mode == "eager") as graphs:
                started = time.perf_counter()
                results = fit_fused(models, train, gold, config, seeds=[first_seed + i for i in range(len(models))],
                                    validate=CheckClock(device), device=device, amp=amp, capture=True)
                _sync(device)
            log = [entry for kept in graphs for entry in kept.log]
            check[mode] = {"seconds": round(time.perf_counter() - started, 2)} | \
                {kind: log.count(kind) for kind in ("eager", "capture", "replay")}
            weights = [{n: p.detach() for n, p in model.named_parameters()} for model in models]
            history = [[h["train_loss"] for h in r.history] for r in results]
            if trained is None:
                trained = [{n: t.clone() for n, t in w.items()} for w in weights]
                losses = history
                continue
            check["max_abs_diff"] = max(float((a[n] - b[n]).abs().max()) for a, b in zip(trained, weights) for n in a)
            check["losses_max_abs_diff"] = max(abs(x - y) for a, b in zip(losses, history) for x, y in zip(a, b))
            check["equal"] = check["max_abs_diff"] == 0 and check["losses_max_abs_diff"] == 0
    except _oom_error() as err:
        check["error"] = str(err).splitlines()[0][:300]
    finally:
        for m, rate in zip(dropouts, rates):
            m.p = rate
        for model, state in zip(models, start):
            model.load_state_dict(state)
    return check


# --- the step at a fixed width: eager against one CUDA graph ------------------------------------------------------

def _bert_adam_stacked(params, grads, exp_avgs, exp_avg_sqs, scales, rates, decays, eps: float, beta1: float,
                       beta2: float) -> None:
    """BertAdam over stacked (K, ...) tensors: each gradient times its (K, 1, ...) clip scale, then the moments and
    the update ``p -= rate * (m / (sqrt(v) + eps) + decay * p)`` with each run's rate as a (K, 1, ...) column."""
    for p, g, m, v, scale, rate, decay in zip(params, grads, exp_avgs, exp_avg_sqs, scales, rates, decays):
        g = g * scale
        m.mul_(beta1).add_(g, alpha=1 - beta1)
        v.mul_(beta2).addcmul_(g, g, value=1 - beta2)
        p.sub_(rate * (m / (v.sqrt() + eps) + decay * p))


class _CompiledBertAdam:
    """``StackedBertAdam.step`` with its kernel replaced by one ``torch.compile``d update per stacked tensor."""

    def __init__(self, optimizer):
        import torch

        self.optimizer = optimizer
        stack = optimizer.stack
        base = {name: (lr, decay) for lr, decay, names in optimizer.groups for name in names}
        self.base_rates = [base[name][0] for name in optimizer.names]
        self.decays = [base[name][1] for name in optimizer.names]
        self.update = torch.compile(_bert_adam_stacked, fullgraph=True, dynamic=False)
        self.factors = torch.ones(stack.size, dtype=torch.float32, device=stack.device)

    def __call__(self, factors) -> None:
        import torch

        optimizer, config = self.optimizer, self.optimizer.config
        stack = optimizer.stack
        with torch.no_grad():
            stacked = optimizer._gradients()
            optimizer.clip_scales(optimizer._norms(stacked))
            self.factors.copy_(torch.as_tensor(list(factors), dtype=torch.float32), non_blocking=True)
            columns = [self.factors.view(column.shape) * rate
                       for column, rate in zip(optimizer._scale_columns, self.base_rates)]
            params = [stack.params[name] for name in optimizer.names]
            self.update([p.detach() for p in params], stacked, [optimizer.exp_avg[n] for n in optimizer.names],
                        [optimizer.exp_avg_sq[n] for n in optimizer.names], optimizer._scale_columns, columns,
                        self.decays, config.adam_eps, *optimizer.betas)
            optimizer._release()


class _FusedAdamWBertAdam:
    """``StackedBertAdam.step`` as it was before its own kernel: the gradients scaled by both clips' factors in one
    ``_foreach_mul_``, then torch's fused AdamW kernel per parameter group with its bias corrections at 1 (a step
    count at which ``beta ** step`` is 0) and the decay applied apart (``p (1 - lr wd)``), at the rate of the first
    run (the runs of a fixed-width arm share theirs)."""

    def __init__(self, optimizer):
        import torch

        self.optimizer = optimizer
        self.count = torch.full((), 1e9, dtype=torch.float32, device=optimizer.stack.device)

    def __call__(self, factors) -> None:
        import torch

        optimizer = self.optimizer
        with torch.no_grad():
            stacked = optimizer._gradients()
            optimizer.clip_scales(optimizer._norms(stacked))
            torch._foreach_mul_(stacked, optimizer._scale_columns)
            first = 0
            for base_lr, decay, names in optimizer.groups:
                torch._fused_adamw_([optimizer.stack.params[n] for n in names], stacked[first:first + len(names)],
                                    [optimizer.exp_avg[n] for n in names], [optimizer.exp_avg_sq[n] for n in names],
                                    [], [self.count] * len(names), lr=base_lr * float(factors[0]),
                                    beta1=optimizer.betas[0], beta2=optimizer.betas[1], weight_decay=decay,
                                    eps=optimizer.config.adam_eps, amsgrad=False, maximize=False)
                first += len(names)
            optimizer._release()


#: The forms of BertAdam's step a fixed-width arm can time instead of the engine's (its own kernel).
_UPDATE_VARIANTS = {"compiled_bert_adam": _CompiledBertAdam, "fused_adamw": _FusedAdamWBertAdam}


def static_step_arm(models, precision: str, device: str, width: int, steps: int, graph: bool, seed: int = 0,
                    dropout: bool = True, capture_mode: str = "global", variant: str = "engine") -> dict:
    """The engine's training step (stacked forward, per-run losses, backward, stacked BertAdam) on fixed inputs of
    ``width`` tokens, timed eagerly and, with ``graph``, replayed as one captured CUDA graph.

    Not a training run: the inputs and learning rates stay the same at every step (a graph replays the rates it was
    captured with). What it measures is the cost of the host launching the step's kernels: eager time minus graph
    time at one shape. The engine's steps vary in width, so a graph per width bucket is what it would need.

    ``variant`` tries a change to the step: ``"engine"`` is the engine's own step; ``"sdpa"`` runs attention through
    ``scaled_dot_product_attention`` under ``vmap`` (the engine uses the eager form); ``"compiled_bert_adam"``
    times one ``torch.compile``d update per stacked tensor instead of the engine's kernel (clip scale, moments,
    decay and the per-run rate in one pass; :func:`_bert_adam_stacked`); ``"fused_adamw"`` the step the engine took
    before its kernel (:class:`_FusedAdamWBertAdam`).
    """
    import torch

    from diagnostics.finetune._fused import StackedClassifiers
    from diagnostics.finetune._stacked_optim import StackedBertAdam

    k, rows = len(models), RECIPE["batch_size"]
    amp, tf32 = _precision_settings(precision)
    torch.backends.cuda.matmul.allow_tf32 = tf32
    cuda = device.startswith("cuda")
    arm = {"k": k, "precision": precision, "width": width, "timed_steps": steps, "dropout": dropout,
           "capture_mode": capture_mode, "variant": variant}
    if cuda:
        gc.collect()
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
    generator = torch.Generator().manual_seed(seed)
    vocab = models[0].config.vocab_size
    inputs = {"input_ids": torch.randint(1000 if vocab > 2000 else 5, vocab, (k, rows, width), generator=generator),
              "attention_mask": torch.ones((k, rows, width), dtype=torch.long),
              "token_type_ids": torch.zeros((k, rows, width), dtype=torch.long)}
    inputs = {key: value.to(device) for key, value in inputs.items()}
    labels = torch.randint(0, 2, (k, rows), generator=generator).to(device)
    side = torch.cuda.Stream() if cuda else None
    with torch.cuda.stream(side) if cuda else contextlib.nullcontext():  # the stack made on the stream it steps on
        stack = StackedClassifiers(models, device)
        optimizer = StackedBertAdam(stack, models[0], sweep_config(1, 1, device, precision))
        if variant == "sdpa":
            stack.template.set_attn_implementation("sdpa")
        update = _UPDATE_VARIANTS[variant](optimizer) if variant in _UPDATE_VARIANTS else optimizer.step
    factors = [1.0] * k

    def step():
        logits = stack.logits(inputs, amp=amp, train=dropout)
        losses = torch.nn.functional.cross_entropy(logits.flatten(0, 1), labels.flatten(), reduction="none")
        per_run = losses.view(k, rows).mean(1)
        per_run.sum().backward()
        update(factors)
        return per_run.detach()

    def timed(run_once) -> float:
        _sync(device)
        started = time.perf_counter()
        for _ in range(steps):
            run_once()
        _sync(device)
        return (time.perf_counter() - started) / steps

    # every step on one side stream: the parameters' gradient accumulators remember the stream of their first
    # backward, and a capture on another stream fails
    try:
        if cuda:
            side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side) if cuda else contextlib.nullcontext():
            for _ in range(3):
                step()
            eager = timed(step)
            arm |= {"status": "ok", "eager_ms": round(1000 * eager, 2),
                    "eager_pairs_per_s": round(k * rows / eager, 1)}
            if graph and cuda:
                try:
                    captured = torch.cuda.CUDAGraph()
                    torch.cuda.set_sync_debug_mode("error")  # a synchronising op raises where it is called
                    try:
                        with torch.cuda.graph(captured, stream=side, capture_error_mode=capture_mode):
                            step()
                    finally:
                        torch.cuda.set_sync_debug_mode(0)
                    replay = timed(captured.replay)
                    arm |= {"graph_ms": round(1000 * replay, 2), "graph_pairs_per_s": round(k * rows / replay, 1),
                            "graph_speedup": round(eager / replay, 2)}
                except Exception as err:  # noqa: BLE001 - recorded: whether capture works is one of the findings
                    arm["graph_error"] = f"{type(err).__name__}: {str(err).splitlines()[0][:300]}"
                    frames = traceback.extract_tb(err.__traceback__)
                    arm["graph_error_at"] = [f"{_source(f.filename)}:{f.lineno} {f.line}" for f in frames[-8:]]
        if cuda:
            torch.cuda.current_stream().wait_stream(side)
    except _oom_error() as err:
        arm |= {"status": "out_of_memory", "error": str(err).splitlines()[0][:300]}
    if cuda:
        arm["peak_memory_mib"] = round(torch.cuda.max_memory_allocated() / 2**20, 1)
    del stack, optimizer
    if cuda:
        gc.collect()
        torch.cuda.empty_cache()
    return arm


# --- the machine --------------------------------------------------------------------------------------------------

def machine(device: str) -> dict:
    """Card, driver, CUDA runtime and library versions (the CPU and thread count on a CPU)."""
    import numpy
    import torch
    import transformers

    facts = {"device": device, "python": platform.python_version(), "torch": torch.__version__,
             "transformers": transformers.__version__, "numpy": numpy.__version__}
    if not device.startswith("cuda"):
        return facts | {"cpu": platform.processor() or platform.machine(), "torch_threads": torch.get_num_threads()}
    index = torch.device(device).index or 0
    props = torch.cuda.get_device_properties(index)
    facts |= {"card": torch.cuda.get_device_name(index), "cuda_runtime": torch.version.cuda,
              "capability": ".".join(map(str, torch.cuda.get_device_capability(index))),
              "memory_gib": round(props.total_memory / 2**30, 1), "driver": None}
    try:
        rows = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                              capture_output=True, text=True, timeout=30, check=True).stdout.splitlines()
        name, driver = (part.strip() for part in rows[index].split(","))
        facts |= {"card": name, "driver": driver}
    except (OSError, subprocess.SubprocessError, IndexError, ValueError):
        facts["driver_note"] = "nvidia-smi not available: card from torch, no driver version"
    return facts


# --- the length histogram -----------------------------------------------------------------------------------------

def write_lengths(path: Path = LENGTHS, cache: str | None = None) -> dict:
    """Tokenise the RTE and TERRa train pairs with the embedded tokenizer; write their length histogram to ``path``."""
    import numpy as np

    from diagnostics import data
    from diagnostics.models import load_tokenizer, resolve_model

    tokenizer = load_tokenizer(resolve_model("embedded", cache=cache).path)
    datasets = {}
    for name in ("rte", "terra"):
        frame = data.load(name, "train")
        premises, hypotheses = frame["premise"].astype(str).tolist(), frame["hypothesis"].astype(str).tolist()
        full = np.array([len(x) for x in tokenizer(premises, hypotheses, truncation=False)["input_ids"]])
        cut = np.array([len(x) for x in tokenizer(premises, hypotheses, truncation=True,
                                                  max_length=MAX_SEQ_LENGTH)["input_ids"]])
        values, counts = np.unique(cut, return_counts=True)
        datasets[name] = {"source": f"diagnostics.data.load({name!r}, 'train')",
                          "language": str(frame["language"].iloc[0]), "pairs": int(len(cut)),
                          "truncated": int((full > MAX_SEQ_LENGTH).sum()),
                          "mean": round(float(cut.mean()), 2), "median": float(np.median(cut)),
                          "max": int(cut.max()), "counts": {str(v): int(c) for v, c in zip(values, counts)}}
    record = {
        "description": "Token lengths of the RTE (en) and TERRa (ru) train pairs: length -> number of pairs, per "
                       "dataset. benchmarks/bench_fused_sweep.py trains random token ids of these lengths.",
        "tokens": "the embedded model's tokenizer (multilingual-e5-small: XLM-R SentencePiece, 250,002 pieces), the "
                  "project's offline default; mBERT's own WordPiece tokenizer cannot be fetched offline, so these "
                  "are XLM-R token counts, not mBERT's",
        "pair": f"premise and hypothesis as one pair with the tokenizer's special tokens (<s> A </s></s> B </s>), "
                f"truncated to max_seq_length {MAX_SEQ_LENGTH} longest side first ('truncated' counts the pairs "
                "that were longer)",
        "max_seq_length": MAX_SEQ_LENGTH, "made_by": "python benchmarks/bench_fused_sweep.py --write-lengths",
        "datasets": datasets}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return record


def write_zipf(path: Path = ZIPF, cache: str | None = None) -> dict:
    """Tokenise the RTE and TERRa train pairs with the embedded tokenizer; fit each a Zipf law of its ids (the
    exponent that gives the text's distinct ids per batch of 4 pairs); write the fits to ``path``."""
    from diagnostics import data
    from diagnostics.models import load_tokenizer, resolve_model

    tokenizer = load_tokenizer(resolve_model("embedded", cache=cache).path)
    datasets = {}
    for name in ("rte", "terra"):
        frame = data.load(name, "train")
        pairs = tokenizer(frame["premise"].astype(str).tolist(), frame["hypothesis"].astype(str).tolist(),
                          truncation=True, max_length=MAX_SEQ_LENGTH)["input_ids"]
        counts = Counter(token for pair in pairs for token in pair)
        exponent, text, fitted = fit_zipf(pairs, len(counts))
        datasets[name] = {"source": f"diagnostics.data.load({name!r}, 'train')", "pairs": len(pairs),
                          "tokens": sum(counts.values()), "types": len(counts), "exponent": exponent,
                          "distinct_per_batch": text, "fitted_distinct_per_batch": fitted,
                          "distinct_per_8_batches": round(distinct_per_batch(pairs, groups=8, draws=500), 1),
                          "top_share": round(sum(n for _, n in counts.most_common(100)) / sum(counts.values()), 4)}
    record = {
        "description": "A Zipf law of the token ids of the RTE (en) and TERRa (ru) train pairs, per dataset: "
                       "P(rank) ~ rank ** -exponent over the text's distinct ids ('types'), the exponent fitted so "
                       "that pairs of the text's lengths drawn from it read as many distinct ids per batch of 4 "
                       "pairs as the text does ('distinct_per_batch'; the fitted law's 'fitted_distinct_per_batch'"
                       "). benchmarks/bench_fused_sweep.py draws its token ids from it.",
        "tokens": "the embedded model's tokenizer (XLM-R SentencePiece), as benchmarks/data/pair_lengths.json",
        "max_seq_length": MAX_SEQ_LENGTH, "made_by": "python benchmarks/bench_fused_sweep.py --write-zipf",
        "datasets": datasets}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return record


def training_pairs(dataset: str, vocab_size: int, ids: str, seed: int = 0):
    """The benchmark's training pairs: the dataset's lengths, ids drawn from its Zipf fit or (``"uniform"``) at
    random."""
    lengths = pair_lengths(dataset)
    if ids == "uniform":
        return random_pairs(lengths, vocab_size, seed)
    fit = json.loads(ZIPF.read_text(encoding="utf-8"))["datasets"][dataset]
    return zipf_pairs(lengths, vocab_size, fit["exponent"], fit["types"], seed)


# --- main ---------------------------------------------------------------------------------------------------------

def _ints(text: str) -> list[int]:
    return [int(part) for part in text.split(",") if part]


def _progress(arm: dict) -> str:
    name = f"K={arm['k']:>2} {arm['precision']:>4}"
    if arm["status"] != "ok":
        return f"{name}: {arm['status']} {arm.get('error') or arm.get('reason', '')}"
    memory = f", peak {arm['peak_memory_mib'] / 1024:.1f} GiB" if "peak_memory_mib" in arm else ""
    return (f"{name}: {arm['pairs_per_s']:9.1f} pairs/s ({arm['ratio']:.2f}x){memory}, padding "
            f"{arm['padding_share']:.2f}, {arm['timed_steps']} steps in {arm['seconds']:.1f} s "
            f"(arm {arm['arm_wall_s']:.0f} s)")


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cuda", help="cuda, cuda:<n> or cpu")
    parser.add_argument("--size", choices=sorted(SIZES), default="mbert")
    parser.add_argument("--dataset", choices=("rte", "terra"), default="rte", help="whose pair lengths to train")
    parser.add_argument("--ks", default=",".join(map(str, KS)), help="group sizes of the fused arms")
    parser.add_argument("--precisions", default=",".join(PRECISIONS), help="precisions of the fused arms")
    parser.add_argument("--warmup", type=int, default=5, help="steps between checks; 2 x warmup steps untimed")
    parser.add_argument("--steps", type=int, default=30, help="timed steps of a fused arm")
    parser.add_argument("--baseline-steps", type=int, default=100, help="timed steps of the fuse=1 arm")
    parser.add_argument("--quick", action="store_true", help="the baseline and K=8 fp32, few steps")
    parser.add_argument("--profile", action="store_true", help="profile one fused step")
    parser.add_argument("--static-widths", default="",
                        help="widths at which to time the step eagerly and as a CUDA graph (K = the largest of --ks)")
    parser.add_argument("--static-variants", default="",
                        help="other forms of the step to time too at those widths: sdpa, compiled_bert_adam, "
                        "fused_adamw")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--ids", choices=("zipf", "uniform"), default="zipf",
                        help="token ids drawn from the dataset's Zipf fit (data/token_zipf.json) or uniformly")
    parser.add_argument("--rows-arms", action="store_true",
                        help="also train each fused K at the first precision with lazy word-embedding rows on and "
                        "off (rows read per step, timing)")
    parser.add_argument("--capture-arms", action="store_true",
                        help="also train each fused K at the first precision with its step captured (one graph per "
                        "width bucket)")
    parser.add_argument("--capture-check", action="store_true",
                        help="train the largest K at the first precision for --steps steps, dropout off, with every "
                        "step eager and with steps replayed from captures; how far the weights differ")
    parser.add_argument("--write-lengths", action="store_true", help=f"remake {LENGTHS.name} and stop")
    parser.add_argument("--write-zipf", action="store_true", help=f"remake {ZIPF.name} and stop")
    parser.add_argument("--embedded-cache", help="cache root of the embedded model, for --write-lengths")
    args = parser.parse_args(argv)
    if args.write_lengths:
        record = write_lengths(cache=args.embedded_cache)
        print(json.dumps({k: {f: v[f] for f in ("pairs", "mean", "median", "max", "truncated")}
                          for k, v in record["datasets"].items()}, indent=1))
        return record
    if args.write_zipf:
        record = write_zipf(cache=args.embedded_cache)
        print(json.dumps(record["datasets"], indent=1))
        return record
    ks, precisions = _ints(args.ks), [p for p in args.precisions.split(",") if p]
    warmup, steps, baseline_steps = args.warmup, args.steps, args.baseline_steps
    if args.quick:
        ks, precisions, warmup, steps, baseline_steps = [8], ["fp32"], 2, 10, 20
    unknown = sorted(set(precisions) - set(PRECISIONS))
    if unknown or not ks or min(ks) < 1 or min(warmup, steps, baseline_steps) < 1:
        parser.error(f"precisions from {PRECISIONS}, group sizes >= 1, steps >= 1 (got {unknown or ks})")
    started = time.perf_counter()
    import torch

    from diagnostics.finetune._modeling import load_classifier

    if args.device.startswith("cuda") and not torch.cuda.is_available():
        parser.error("torch sees no CUDA device here: use --device cpu (with --size tiny for a quick check)")
    facts = machine(args.device)
    print(f"{facts.get('card') or facts.get('cpu')}, torch {facts['torch']}: {args.size} model, "
          f"{args.dataset} lengths, K {ks}, {precisions}", flush=True)
    tf32_before = torch.backends.cuda.matmul.allow_tf32
    train, gold = training_pairs(args.dataset, SIZES[args.size]["vocab_size"], args.ids, args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "model"
        write_model(folder, args.size, args.seed)
        models = [load_classifier(folder, seed=args.seed + k, dropout=RECIPE["dropout"], head="jiant")
                  for k in range(max(ks + [1]))]
    print(f"model written and {len(models)} runs loaded in {time.perf_counter() - started:.0f} s", flush=True)
    kind = "cuda" if args.device.startswith("cuda") else "cpu"
    out = args.out or RESULTS / f"bench_fused_sweep_{kind}.json"
    arms: list[dict] = []
    rows_arms: list[dict] = []
    capture_arms: list[dict] = []
    checks: list[dict] = []
    static: list[dict] = []
    profile = None

    def write_report() -> dict:
        """Write the arms measured so far (after every arm, so a run stopped at its time limit keeps them)."""
        lengths = json.loads(LENGTHS.read_text(encoding="utf-8"))["datasets"][args.dataset]
        report = {
            "benchmark": "fused_sweep", "machine": facts,
            "settings": {"size": args.size, "model": SIZES[args.size], "head": "jiant", "dataset": args.dataset,
                         "pairs": len(gold), "mean_length": lengths["mean"],
                         "lengths": f"{LENGTHS.relative_to(ROOT).as_posix()} (XLM-R tokens, truncated at "
                                    f"{MAX_SEQ_LENGTH})",
                         "recipe": RECIPE, "warmup_steps": 2 * warmup, "check_every": warmup, "fused_steps": steps,
                         "baseline_steps": baseline_steps, "ks": ks, "precisions": precisions,
                         "quick": args.quick, "seed": args.seed, "ids": args.ids},
            "arms": arms, "rows_arms": rows_arms, "capture_arms": capture_arms, "capture_check": checks,
            "ratio": {f"K={a['k']} {a['precision']}": a["ratio"] for a in arms[1:] if a["status"] == "ok"},
            "profile": profile, "static_width": static, "total_s": round(time.perf_counter() - started, 1)}
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
        return report

    try:
        baseline = run_arm(models[:1], train, gold, "fp32", args.device, warmup, baseline_steps, args.seed)
        if baseline["status"] != "ok":
            raise SystemExit(f"the baseline (one run, fp32) did not train: {baseline.get('error')}")
        baseline = {"fuse": 1, **baseline, "ratio": 1.0}
        print(_progress(baseline), flush=True)
        arms.append(baseline)
        write_report()
        for precision in precisions:
            too_big = None
            for k in ks:
                if too_big is not None:
                    arm = {"k": k, "precision": precision, "status": "skipped",
                           "reason": f"K={too_big} ran out of device memory at this precision"}
                else:
                    print(f"K={k:>2} {precision:>4}: {2 * warmup + steps} steps ...", flush=True)
                    arm = run_arm(models[:k], train, gold, precision, args.device, warmup, steps, args.seed)
                    if arm["status"] == "ok":
                        arm["ratio"] = round(arm["pairs_per_s"] / baseline["pairs_per_s"], 2)
                    else:
                        too_big = k
                arms.append({"fuse": k, **arm})
                print(_progress(arms[-1]), flush=True)
                write_report()
        for k in ks if args.rows_arms else []:  # the word embedding's rows updated every step, then lazily
            for lazy in (False, True):
                arm = run_arm(models[:k], train, gold, precisions[0], args.device, warmup, steps, args.seed,
                              lazy_rows=lazy)
                if arm["status"] == "ok":
                    arm["ratio"] = round(arm["pairs_per_s"] / baseline["pairs_per_s"], 2)
                rows_arms.append({"fuse": k, **arm})
                print(f"{'lazy' if lazy else 'eager'} rows: {_progress(rows_arms[-1])}"
                      + (f", {arm['rows_per_step']} of {arm['vocab']} rows per step" if "rows_per_step" in arm
                         else ""), flush=True)
                write_report()
        for k in ks if args.capture_arms else []:  # the step captured per width bucket and replayed
            arm = run_arm(models[:k], train, gold, precisions[0], args.device, warmup, steps, args.seed,
                          capture=True)
            if arm["status"] == "ok":
                arm["ratio"] = round(arm["pairs_per_s"] / baseline["pairs_per_s"], 2)
            capture_arms.append({"fuse": k, **arm})
            print(f"captured: {_progress(capture_arms[-1])}, {json.dumps(arm.get('graphs'))}", flush=True)
            write_report()
        if args.capture_check:
            checks.append(capture_check(models[:max(ks)], train, gold, precisions[0], args.device, steps,
                                        args.seed))
            print(f"capture check: {json.dumps(checks[-1])}", flush=True)
            write_report()
        if args.profile:
            profile = profile_step(models[:ks[0]], train, gold, precisions[0], args.device, args.seed)
            print(f"profile of one step, K={ks[0]} {precisions[0]}: "
                  f"{json.dumps(profile.get('host_syncs', profile.get('status')))}", flush=True)
            write_report()
        # the engine's step as a graph, without dropout first (a capture that fails can leave the random generator
        # unusable), then with; each variant eagerly, with dropout: what it changes in the step's own cost
        kinds = [(False, "global", True, "engine"), (True, "relaxed", True, "engine")] + \
            [(True, "global", False, v) for v in args.static_variants.split(",") if v]
        for width, precision, (dropout, mode, graph, variant) in itertools.product(
                _ints(args.static_widths), precisions, kinds):
            try:
                static.append(static_step_arm(models[:max(ks)], precision, args.device, width, steps, graph=graph,
                                              seed=args.seed, dropout=dropout, capture_mode=mode, variant=variant))
            except Exception as err:  # noqa: BLE001 - kept as a finding (a failed capture can leave the device
                # unusable): what was timed before stays
                static.append({"k": max(ks), "precision": precision, "width": width, "variant": variant,
                               "status": "error", "error": f"{type(err).__name__}: {str(err).splitlines()[0][:300]}"})
            print(f"static width {width}, K={max(ks)} {precision}: {json.dumps(static[-1])}", flush=True)
            write_report()
    finally:
        torch.backends.cuda.matmul.allow_tf32 = tf32_before
    report = write_report()
    print(f"ratios to one run (fp32): {json.dumps(report['ratio'])}; {report['total_s']:.0f} s; wrote {out}",
          flush=True)
    return report


if __name__ == "__main__":
    main()
