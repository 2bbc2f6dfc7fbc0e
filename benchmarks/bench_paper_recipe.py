"""The study's fine-tuning recipe on a GPU: throughput and memory of full fine-tuning at mBERT's size, and the
GPU-hours of the whole paper plan.

A randomly initialised ``BertForSequenceClassification`` of mBERT's size (vocabulary 119,547, 12 layers x 768,
12 heads, 3072 intermediate; the study's model has hub weights this machine cannot fetch, the cost is the same),
the study's recipe (full fine-tuning, batch 4, AdamW lr 1e-5, weight decay 0.01, gradient clipping 1.0, dropout
0.1), on RTE-length inputs: each batch holds 4 real RTE train pairs' lengths in tokens
(whitespace words x 1.35 word pieces per word + 3 special tokens, at most 256 — mBERT's tokenizer is not
available offline), padded dynamically to the batch's longest. Reported: steps/s, examples/s and peak GPU memory,
for bf16 autocast and for fp32 (the baseline, same run: ``bf16_speedup`` is their ratio; on an H100 at batch 4 it
is about 0.3, which is why ``configs/paper.yaml`` trains in fp32).

With ``--plan PLAN.json`` (the output of ``diagnostics pipeline --scale paper --dry-run --json``) the plan's
pair-epochs (pairs x max_epochs per run, an upper bound: early stopping ends most runs sooner) are divided by the
measured examples/s: the projected GPU-hours of the whole plan, training only (evaluation passes add a few per
cent: they are forward-only, at batch 64).

Run: ``python benchmarks/bench_paper_recipe.py [--steps 60] [--batch-size 4] [--precisions fp32,bf16]
[--plan plan.json] [--device cuda]``; writes ``benchmarks/results/bench_paper_recipe.json`` (with ``--plan``, a
projection per precision). ``bench_paper_recipe_batches.json`` holds batch sizes 4, 16 and 32 (batch 4 in both
orders). ``--layers 2 --device cpu --steps 3`` checks the script itself.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).resolve().parent / "results"
MBERT = {"vocab_size": 119547, "hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12,
         "intermediate_size": 3072, "max_position_embeddings": 512, "type_vocab_size": 2}


def rte_lengths(max_length: int = 256) -> np.ndarray:
    """Estimated word-piece lengths of RTE train pairs (premise + hypothesis + 3 special tokens)."""
    from diagnostics import data

    rte = data.load("rte", "train")
    words = (rte["premise"].str.split().str.len() + rte["hypothesis"].str.split().str.len()).to_numpy()
    return np.minimum(np.round(words * 1.35).astype(int) + 3, max_length)


def measure(precision: str, device: str, steps: int, layers: int, batch_size: int, seed: int,
            vocab_size: int = MBERT["vocab_size"]) -> dict:
    """Train ``steps`` steps of the recipe after 5 warm-up steps; throughput and peak memory."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    torch.manual_seed(seed)
    config = BertConfig(**{**MBERT, "num_hidden_layers": layers, "vocab_size": vocab_size}, hidden_dropout_prob=0.1,
                        attention_probs_dropout_prob=0.1, num_labels=2)
    model = BertForSequenceClassification(config).to(device)
    model.train()
    no_decay = [p for n, p in model.named_parameters() if "bias" in n or "LayerNorm" in n]
    decay = [p for n, p in model.named_parameters() if not ("bias" in n or "LayerNorm" in n)]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01},
                                   {"params": no_decay, "weight_decay": 0.0}], lr=1e-5)
    rng = np.random.default_rng(seed)
    lengths = rte_lengths()
    autocast = torch.autocast(device_type=device.split(":")[0], dtype=torch.bfloat16,
                              enabled=precision == "bf16")
    if device.startswith("cuda"):
        torch.cuda.reset_peak_memory_stats()

    def step():
        batch = rng.choice(lengths, batch_size)
        width = int(batch.max())
        ids = torch.randint(1000, vocab_size, (batch_size, width), device=device)
        mask = (torch.arange(width, device=device)[None, :] < torch.as_tensor(batch, device=device)[:, None])
        labels = torch.randint(0, 2, (batch_size,), device=device)
        with autocast:
            loss = model(input_ids=ids, attention_mask=mask.long(), labels=labels).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return int(batch.sum())

    def sync():
        if device.startswith("cuda"):
            torch.cuda.synchronize()

    for _ in range(5):
        step()
    sync()
    t0 = time.perf_counter()
    tokens = sum(step() for _ in range(steps))
    sync()
    seconds = time.perf_counter() - t0
    peak = torch.cuda.max_memory_allocated() / 2**30 if device.startswith("cuda") else None
    return {"precision": precision, "steps": steps, "seconds": round(seconds, 3),
            "steps_per_s": round(steps / seconds, 2), "examples_per_s": round(steps * batch_size / seconds, 2),
            "real_tokens_per_s": round(tokens / seconds, 1), "peak_memory_gib": None if peak is None else round(peak, 2)}


def project(plan_path: Path, examples_per_s: float) -> dict:
    """GPU-hours of a dry-run plan's runs still to train, at ``examples_per_s``."""
    plan = json.loads(plan_path.read_text(encoding="utf-8"))
    todo = [r for r in plan["runs"] if r["state"] != "done"]
    pair_epochs = sum(r["max_pair_epochs"] or 0 for r in todo)
    by_experiment = {}
    for run in todo:
        family = run["experiment"].split("-")[0]
        by_experiment[family] = by_experiment.get(family, 0) + (run["max_pair_epochs"] or 0)
    return {"runs": len(todo), "max_pair_epochs": pair_epochs,
            "max_gpu_hours": round(pair_epochs / examples_per_s / 3600, 1),
            "max_gpu_hours_by_family": {k: round(v / examples_per_s / 3600, 1) for k, v in by_experiment.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--vocab-size", type=int, default=MBERT["vocab_size"], help="e.g. 250002 for "
                        "xlm-roberta-base's embedding size")
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--plan", type=Path, help="dry-run JSON of the paper plan, for the GPU-hours projection")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--precisions", default="fp32,bf16", help="measured in this order (both are needed for "
                        "bf16_speedup)")
    parser.add_argument("--out", type=Path, default=RESULTS / "bench_paper_recipe.json")
    args = parser.parse_args()
    import torch

    results = {p: measure(p, args.device, args.steps, args.layers, args.batch_size, args.seed, args.vocab_size)
               for p in args.precisions.split(",")}
    report = {"model": {**MBERT, "num_hidden_layers": args.layers, "vocab_size": args.vocab_size},
              "batch_size": args.batch_size,
              "order": list(results),
              "device": torch.cuda.get_device_name() if args.device.startswith("cuda") else platform.processor(),
              "torch": torch.__version__, "results": results,
              "bf16_speedup": round(results["bf16"]["examples_per_s"] / results["fp32"]["examples_per_s"], 2)}
    if args.plan is not None:
        report["projection"] = {p: project(args.plan, r["examples_per_s"]) for p, r in results.items()}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2), encoding="utf-8")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
