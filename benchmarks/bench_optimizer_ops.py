"""What one optimizer step of a fused group costs, counted: ops dispatched and bytes moved per parameter element.

K runs (default 8) of a BERT with mBERT's tensor structure (12 layers; every parameter tensor of ``BertModel``
without its pooler, plus jiant's pair head, as the study's recipe builds it with ``classifier_head: jiant``) are
stacked with ``StackedClassifiers``. Only the width is narrow (hidden 256, intermediate 1,024, vocabulary 1,000): ops
per step depend on the tensor structure, bytes per element on the structure and the dtype; the width enters only
through the per-(run, tensor) norms and clip factors, K x 199 scalars whatever the width (about 0.002 bytes per
element at this width, 0.03 at hidden 64, 0.0001 at mBERT's size). Every stacked parameter gets a random gradient,
then one ``StackedBertAdam.step(factors)`` (the ``jiant`` recipe) and one ``StackedAdamW.step(factors)`` (the
``epoch`` recipe) run under a ``TorchDispatchMode`` that records every op of the ``aten`` and ``diagnostics``
namespaces they dispatch (others, such as the profiler's markers, are left out). A step is counted after one
uncounted step, so that state made lazily on a first step is not.

BertAdam's update is one operator of the package, ``diagnostics::bert_adam_`` (one Triton kernel per stacked tensor
on CUDA): the mode sees it as one op and counts what its schema reads and writes, which is what the CUDA kernel
moves. On the CPU (or without Triton) it runs as torch ops with temporaries: ``bert_adam_torch_form`` counts the
same step with the operator replaced by that form (:func:`~diagnostics.finetune._bert_adam_kernel.bert_adam_torch_`),
every aten op of it seen.

Ops: every op dispatched (``ops``), view ops included; view ops (an output aliasing an input, nothing written:
``view``, ``select``, ``expand``, ``detach`` ...) cost host time but move no data, and are also counted apart
(``view_ops``; ``data_ops`` are the others). Bytes moved by an op: every tensor argument is read
(``numel * element_size``, tensors inside lists too); every tensor it returns new and every argument its schema
marks written (``add_``, ``_foreach_mul_``, ``out=``) is written, except where torch's kernels write an argument
only on a condition: ``_fused_adam_`` / ``_fused_adamw_`` mark their gradients written, but their CPU and CUDA kernels
store a gradient back only when given a ``grad_scale`` (they divide by it and keep the unscaled gradient, for AMP's
``GradScaler``), so without one the gradients are counted as read only (:data:`WRITTEN_ONLY_WITH`). Views' bytes
are left out of ``bytes_per_element`` (``bytes_per_element_with_views`` keeps them).
``bytes_per_element`` is a step's bytes over the stacked parameter elements (K x the trainable elements of one
run); a float32 update must at least read the weight, its gradient and its moments and write the weight and the
moments (28), and a clip must read the gradient once more for its norm (32). The baseline, measured in the same run
on the same structure: ``torch.optim.AdamW`` (its fused kernel where this build has one) over ONE run's parameters,
torch's own single-run update; ``ratio_to_torch_adamw`` divides each stacked step's bytes per element by its. One
forward and one backward of the stack at batch 4 x 64 tokens are counted too, for scale. The counts are those of the
CPU dispatch; a CUDA step dispatches the same ops except where a fused kernel exists on one device only.

Run: ``PYTHONPATH=. python benchmarks/bench_optimizer_ops.py [--runs 8] [--layers 12] [--out PATH]``; writes
``benchmarks/results/bench_optimizer_ops.json``. ``bench_optimizer_ops_before.json`` holds the counts of the engine
before its rewrite, ``bench_optimizer_ops_before_kernel.json`` those before BertAdam's own kernel (torch's fused
AdamW kernel without bias correction, after a separate pass scaling the gradients by both clips).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import math
import platform
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if importlib.util.find_spec("diagnostics") is None:  # a checkout without the package installed or on PYTHONPATH
    sys.path.insert(0, str(ROOT))

RESULTS = Path(__file__).resolve().parent / "results"
NARROW = {"vocab_size": 1000, "hidden_size": 256, "num_hidden_layers": 12, "num_attention_heads": 4,
          "intermediate_size": 1024, "max_position_embeddings": 512, "type_vocab_size": 2}
#: The study's recipe (configs/paper.yaml): the settings the optimizer steps read.
RECIPE = {"batch_size": 4, "lr": 1e-5, "dropout": 0.1, "adam_eps": 1e-6, "weight_decay": 0.01,
          "max_grad_norm": 5.0, "bert_adam_max_grad_norm": 1.0, "warmup_ratio": 0.1, "classifier_head": "jiant",
          "progress": False}


#: The namespaces whose ops are counted: torch's and the package's own (BertAdam's kernel).
COUNTED = ("aten", "diagnostics")
#: Ops that move only the rows they index: the bytes of those rows (and of the index) are counted, not the whole
#: tensor indexed (``index_select`` reads the rows it returns; ``index_copy_`` reads its source and writes as much).
ROW_OPS = {"index_select", "index_copy_", "index_copy"}
#: Per op: its argument that its kernels write only when another argument is given (see the module's docstring).
WRITTEN_ONLY_WITH = {"_fused_adam_": ("grads", "grad_scale"), "_fused_adamw_": ("grads", "grad_scale")}


def _tensors(value) -> list:
    """The tensors inside an argument (a tensor, a list of tensors, nested containers)."""
    import torch
    from torch.utils._pytree import tree_leaves

    return [leaf for leaf in tree_leaves(value) if isinstance(leaf, torch.Tensor)]


def _nbytes(tensors) -> int:
    return sum(t.numel() * t.element_size() for t in tensors)


def op_counter():
    """A ``TorchDispatchMode`` that counts the aten ops dispatched under it and the bytes they read and write."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class OpCounter(TorchDispatchMode):
        """Per op name: calls and bytes; view ops (no data moved) apart."""

        def __init__(self):
            super().__init__()
            self.calls, self.bytes, self.views = Counter(), Counter(), Counter()
            self.view_bytes = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            out = func(*args, **kwargs)
            if func.namespace not in COUNTED:  # e.g. the profiler's record_function markers of Optimizer.step
                return out
            schema = func._schema

            names = [argument.name for argument in schema.arguments]

            def value(name: str):
                position = names.index(name)
                return args[position] if position < len(args) else kwargs.get(name)

            written, condition = WRITTEN_ONLY_WITH.get(schema.name.split("::")[-1], (None, None))
            skipped = written if condition is not None and value(condition) is None else None
            mutated = []
            for argument in schema.arguments:
                if argument.alias_info is not None and argument.alias_info.is_write and argument.name != skipped:
                    mutated += _tensors(value(argument.name))
            # a returned tensor that aliases a written argument is that argument: counted once
            fresh = [r for r in schema.returns if r.alias_info is None]
            aliased_read = [r for r in schema.returns if r.alias_info is not None and not r.alias_info.is_write]
            reads = _nbytes(_tensors(args) + _tensors(kwargs))
            writes = _nbytes(mutated) + (_nbytes(_tensors(out)) if fresh else 0)
            name = str(func)
            if schema.name.split("::")[-1] in ROW_OPS:
                moved = _tensors(value("source")) if "source" in names else _tensors(out)
                reads, writes = _nbytes(moved + _tensors(value("index"))), _nbytes(moved)
            if aliased_read and not mutated:
                self.views[name] += 1
                self.view_bytes += reads + _nbytes(_tensors(out))
            else:
                self.calls[name] += 1
                self.bytes[name] += reads + writes
            return out

        def summary(self, elements: int | None = None) -> dict:
            """Ops dispatched (views among them), bytes (per element of ``elements``), ops by name, most bytes first."""
            moved = sum(self.bytes.values())
            data_ops, view_ops = sum(self.calls.values()), sum(self.views.values())
            out = {"ops": data_ops + view_ops, "view_ops": view_ops, "data_ops": data_ops, "bytes": moved}
            if elements:
                out["bytes_per_element"] = round(moved / elements, 2)
                out["bytes_per_element_with_views"] = round((moved + self.view_bytes) / elements, 2)
            out["by_op"] = {name: {"calls": self.calls[name], "bytes": self.bytes[name]}
                            for name, _ in sorted(self.bytes.items(), key=lambda kv: (-kv[1], kv[0]))}
            out["view_ops_by_op"] = dict(sorted(self.views.items()))
            return out

    return OpCounter()


def _random_grads(stack, generator) -> None:
    """A random gradient for every stacked parameter, written into the one it has (an optimizer may hold it)."""
    import torch

    for p in stack.params.values():
        grad = torch.randn(p.shape, generator=generator, dtype=p.dtype).to(p.device)
        if p.grad is None:
            p.grad = grad
        else:
            p.grad.copy_(grad)


@contextlib.contextmanager
def _torch_form():
    """BertAdam's operator replaced by its torch form (what the CPU runs), so that its aten ops are seen."""
    from diagnostics.finetune import _stacked_optim
    from diagnostics.finetune._bert_adam_kernel import bert_adam_torch_

    kept = _stacked_optim.bert_adam_
    _stacked_optim.bert_adam_ = bert_adam_torch_
    try:
        yield
    finally:
        _stacked_optim.bert_adam_ = kept


def count_ops(structure: dict | None = None, runs: int = 8, batch: tuple[int, int] = (4, 64), seed: int = 0) -> dict:
    """Count the aten ops and bytes of one step of each stacked optimizer, and of one forward and backward.

    Parameters
    ----------
    structure : dict, optional
        ``BertConfig`` fields of the model (default :data:`NARROW`: mBERT's 12 layers, narrow width).
    runs : int
        K, the runs stacked.
    batch : tuple of int
        Pairs per run and tokens per pair of the forward / backward counted for scale.
    seed : int
        Seed of the model, the gradients and the token ids.

    Returns
    -------
    dict
        ``model`` (structure, parameter tensors and elements of one run, K), ``bert_adam`` and ``adamw`` (the stacked
        steps), ``bert_adam_torch_form`` (BertAdam's step as the CPU runs it), ``torch_adamw_one_run`` (the
        baseline), ``ratio_to_torch_adamw``, ``forward`` and ``backward``.
    """
    import torch
    from transformers import BertConfig, BertModel

    from diagnostics.finetune import SweepConfig
    from diagnostics.finetune._fused import StackedAdamW, StackedBertAdam, StackedClassifiers
    from diagnostics.finetune._modeling import load_classifier

    structure = {**NARROW, **(structure or {})}
    generator = torch.Generator().manual_seed(seed)
    with tempfile.TemporaryDirectory() as tmp:
        torch.manual_seed(seed)
        BertModel(BertConfig(**structure)).save_pretrained(tmp, safe_serialization=True)
        models = [load_classifier(tmp, seed=seed + k, dropout=RECIPE["dropout"], head="jiant") for k in range(runs)]
    stack = StackedClassifiers(models, "cpu")
    per_run = sum(p[0].numel() for p in stack.params.values())
    elements = per_run * runs
    report = {"model": {"structure": structure, "head": "jiant", "runs": runs,
                        "parameter_tensors": len(stack.params), "elements_per_run": per_run,
                        "stacked_elements": elements, "dtype": str(next(iter(stack.params.values())).dtype)}}

    jiant = SweepConfig(recipe="jiant", optimizer="bert_adam", **RECIPE)
    bert_adam = StackedBertAdam(stack, models[0], jiant)
    factors = [1.0] * runs
    _random_grads(stack, generator)
    bert_adam.step(factors)  # uncounted: state a first step may make
    _random_grads(stack, generator)
    with op_counter() as counter:
        bert_adam.step(factors)
    report["bert_adam"] = counter.summary(elements)
    _random_grads(stack, generator)
    with _torch_form(), op_counter() as counter:
        bert_adam.step(factors)
    report["bert_adam_torch_form"] = counter.summary(elements)

    epoch_settings = {k: v for k, v in RECIPE.items() if k != "classifier_head"}  # the head is the jiant recipe's
    epoch = SweepConfig(recipe="epoch", optimizer="adamw", **{**epoch_settings, "max_grad_norm": 1.0})
    adamw = StackedAdamW(stack, models[0], epoch)
    _random_grads(stack, generator)
    adamw.step(factors)
    _random_grads(stack, generator)
    with op_counter() as counter:
        adamw.step(factors)
    report["adamw"] = counter.summary(elements)

    # baseline: torch's own AdamW over one run's parameters, as a solo run of the epoch recipe steps
    solo = models[0]
    trainable = [p for p in solo.parameters() if p.requires_grad]
    try:
        optimizer = torch.optim.AdamW(trainable, lr=epoch.lr, eps=epoch.adam_eps, fused=True)
    except (RuntimeError, TypeError):
        optimizer = torch.optim.AdamW(trainable, lr=epoch.lr, eps=epoch.adam_eps)
    for _ in range(2):  # the counts of the second step are kept (the first makes the state)
        for p in trainable:
            p.grad = torch.randn(p.shape, generator=generator)
        with op_counter() as counter:
            optimizer.step()
    report["torch_adamw_one_run"] = counter.summary(per_run) | {"fused": bool(optimizer.defaults.get("fused"))}
    base = report["torch_adamw_one_run"]["bytes_per_element"]
    report["ratio_to_torch_adamw"] = {name: round(report[name]["bytes_per_element"] / base, 2)
                                      for name in ("bert_adam", "adamw")}

    pairs, tokens = batch
    ids = torch.randint(5, structure["vocab_size"], (runs, pairs, tokens), generator=generator)
    inputs = {"input_ids": ids, "attention_mask": torch.ones_like(ids), "token_type_ids": torch.zeros_like(ids)}
    labels = torch.randint(0, 2, (runs * pairs,), generator=generator)
    with op_counter() as counter:
        logits = stack.logits(inputs)
        loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), labels)
    report["forward"] = counter.summary() | {"batch": {"runs": runs, "pairs": pairs, "tokens": tokens}}
    with op_counter() as counter:
        loss.backward()
    report["backward"] = counter.summary()
    return report


def count_lazy_rows(structure: dict | None = None, runs: int = 8, batch: tuple[int, int] = (4, 64),
                    steps: int = 50, seed: int = 0) -> dict:
    """Count BertAdam's step with lazy word-embedding rows against the eager step, on Zipf token ids.

    ``steps`` steps run on batches of ids drawn from the RTE text's Zipf law (``benchmarks/data/token_zipf.json``,
    ranks onto the vocabulary at random) with random gradients on the rows read, the eager optimizer and the lazy
    one side by side; the last step of each is counted (the lazy one's replay of its batch's stale rows
    included), then the lazy one's :meth:`flush` (every row brought up to date, as at a check), whose bytes are
    also given per step since the last flush.

    Returns
    -------
    dict
        ``vocab``, ``rows_per_step`` (mean distinct rows read per step over the group), ``eager`` and ``lazy``
        (counted steps), ``flush`` (with ``bytes_per_element_per_step``) and ``flush_in_registers`` (the same flush
        by the in-register replay kernel: each late row's weight and moments read and written once, counted from the
        late rows, since the kernel runs on CUDA only).
    """
    import numpy as np
    import torch
    from transformers import BertConfig, BertModel

    from diagnostics.finetune import SweepConfig
    from diagnostics.finetune._fused import StackedBertAdam, StackedClassifiers
    from diagnostics.finetune._modeling import load_classifier

    structure = {**NARROW, **(structure or {})}
    vocab = structure["vocab_size"]
    fit = json.loads((Path(__file__).resolve().parent / "data" / "token_zipf.json").read_text())["datasets"]["rte"]
    rng = np.random.default_rng(seed)
    support = min(fit["types"], vocab - 5)
    weights = np.arange(1, support + 1, dtype=np.float64) ** -fit["exponent"]
    weights /= weights.sum()
    ids_of_rank = rng.permutation(np.arange(5, vocab))
    with tempfile.TemporaryDirectory() as tmp:
        torch.manual_seed(seed)
        BertModel(BertConfig(**structure)).save_pretrained(tmp, safe_serialization=True)
        models = [load_classifier(tmp, seed=seed + k, dropout=0.0, head="jiant") for k in range(runs)]
    jiant = SweepConfig(recipe="jiant", optimizer="bert_adam", **RECIPE)
    pair = []
    for lazy in (False, True):
        stack = StackedClassifiers(models, "cpu")
        pair.append((stack, StackedBertAdam(stack, models[0], jiant, lazy_rows=lazy)))
    elements = sum(p.numel() for p in pair[0][0].params.values())
    generator = torch.Generator().manual_seed(seed)
    rows, report = [], {"vocab": vocab, "runs": runs, "batch": list(batch), "steps": steps,
                        "stacked_elements": elements}
    for step in range(steps):
        ids = torch.from_numpy(ids_of_rank[rng.choice(support, size=(runs,) + tuple(batch), p=weights)])
        grads = {n: torch.randn(p.shape, generator=generator) for n, p in pair[0][0].params.items()}
        for lazy, (stack, optimizer) in zip((False, True), pair):
            name = optimizer.rows.name
            last = step == steps - 1
            with op_counter() if last else contextlib.nullcontext() as counter:
                _, table = optimizer.rows.prepare(ids)
                for n, p in stack.params.items():
                    if n == name and table is not None:
                        table.grad = grads[n].index_select(1, optimizer.rows.rows)
                    else:
                        p.grad = grads[n].clone()
                if lazy:
                    rows.append(len(optimizer.rows.rows))
                optimizer.step([1.0] * runs)
            if last:
                report["lazy" if lazy else "eager"] = counter.summary(elements)
    lazy_rows = pair[1][1].rows
    late = int((lazy_rows.applied < lazy_rows.steps).sum())
    row_elements = runs * int(np.prod(pair[1][0].params[lazy_rows.name].shape[2:]))
    with op_counter() as counter:
        pair[1][1].flush()
    report["flush"] = counter.summary(elements)
    report["flush"]["bytes_per_element_per_step"] = round(report["flush"]["bytes_per_element"] / steps, 2)
    # the in-register replay kernel (CUDA): each late row's weight and moments read once and written once (float32)
    in_registers = late * row_elements * 3 * 2 * 4 / elements
    report["flush_in_registers"] = {"late_rows": late, "bytes_per_element": round(in_registers, 2),
                                    "bytes_per_element_per_step": round(in_registers / steps, 2)}
    report["rows_per_step"] = round(sum(rows) / len(rows), 1)
    return report


def main() -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=8, help="K, the runs stacked")
    parser.add_argument("--layers", type=int, default=NARROW["num_hidden_layers"])
    parser.add_argument("--out", type=Path, default=RESULTS / "bench_optimizer_ops.json")
    parser.add_argument("--label", help="what code was counted (e.g. a commit), recorded as is")
    parser.add_argument("--lazy-vocab", type=int, default=30000,
                        help="vocabulary of the lazy word-embedding rows count (its model: 2 layers, hidden 64)")
    args = parser.parse_args()
    import torch

    counts = count_ops({"num_hidden_layers": args.layers}, runs=args.runs)
    import diagnostics

    report = {"benchmark": "optimizer_ops", "label": args.label, "diagnostics": diagnostics.__version__,
              "torch": torch.__version__, "python": platform.python_version(), "recipe": RECIPE, **counts}
    report["lazy_rows"] = count_lazy_rows({"vocab_size": args.lazy_vocab, "num_hidden_layers": 2, "hidden_size": 64,
                                           "intermediate_size": 256}, runs=args.runs)
    for name in ("bert_adam", "bert_adam_torch_form", "adamw", "torch_adamw_one_run"):
        step = report[name]
        assert math.isfinite(step["bytes_per_element"])
        print(f"{name:>20}: {step['ops']:6d} ops ({step['view_ops']} of them views), "
              f"{step['bytes_per_element']:7.2f} bytes per parameter element")
    print(f"{'ratio to torch AdamW':>20}: {report['ratio_to_torch_adamw']}")
    lazy = report["lazy_rows"]
    print(f"{'lazy rows':>20}: {lazy['rows_per_step']} of {lazy['vocab']} rows per step; bytes per element: eager "
          f"step {lazy['eager']['bytes_per_element']}, lazy step {lazy['lazy']['bytes_per_element']}, flush "
          f"{lazy['flush']['bytes_per_element']} ({lazy['flush']['bytes_per_element_per_step']} per step), in "
          f"registers {lazy['flush_in_registers']['bytes_per_element']} "
          f"({lazy['flush_in_registers']['bytes_per_element_per_step']} per step)")
    print(f"{'forward / backward':>20}: {report['forward']['ops']} / {report['backward']['ops']} ops")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return report


if __name__ == "__main__":
    main()
