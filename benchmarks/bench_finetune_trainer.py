"""Training-step throughput of our loop against the transformers ``Trainer`` (target ratio >= 1.0).

Same model (the embedded multilingual-e5-small, or a random model of its size with ``--random``), same data (an
RTE train subset, tokenised to 128 tokens), same hyperparameters (batch 16, AdamW lr 2e-5, weight decay 0.01,
linear warm-up/decay, gradient clipping 1.0, dropout 0.1), same head initialisation and even the same batches:
the Trainer's sampler is replaced by our loop's seeded order, so both pad exactly the same batches dynamically.
Word embeddings are frozen in both (``freeze_embeddings``: the 250k-row word-embedding matrix holds most of the
model's parameters, and its optimizer update would dominate a CPU step). Our loop is measured twice: as it runs by
default (``ours``: padded positions skipped in the token-wise layers, :mod:`diagnostics.finetune._unpadding`; the
same logits) and computing every padded position like the Trainer (``ours-plain``: ``skip_padding: false``). Each
measurement runs in a fresh process after a 2-step warm-up of our loop there, and rounds rotate which side goes
first, so drift in machine load hits all; throughput is examples per second of the training loop (optimizer creation excluded for both; the
Trainer's whole ``train()`` call is reported too).

Run: ``python benchmarks/bench_finetune_trainer.py [--steps 12] [--rounds 2] [--threads 2]``;
writes ``benchmarks/results/bench_finetune_trainer.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"
SIDES = ["ours", "ours-plain", "trainer"]


def model_folder(random: bool, tmp: Path) -> Path:
    from diagnostics.models import resolve_model, tiny_random_model

    if random:
        return tiny_random_model(tmp / "random", seed=0, hidden_size=384, num_hidden_layers=12,
                                 num_attention_heads=12, intermediate_size=1536)
    return resolve_model("embedded").path


def ours(folder: Path, steps: int, batch: int, threads: int, tmp: Path, tag: str, skip_padding: bool = True) -> dict:
    from diagnostics.finetune import SweepConfig
    from diagnostics.finetune._train import RunSpec, spec_dict, train_run

    cfg = SweepConfig(experiment=f"ours-{tag}", output_dir=str(tmp / "runs"), models=[{"name": "m", "path": str(folder)}],
                      languages=["en"], seeds=[0], data={"en": {"diagnostics": []}}, train_size=steps * batch,
                      max_seq_length=128, batch_size=batch, lr=2e-5, weight_decay=0.01, warmup_ratio=0.1,
                      max_epochs=1, freeze_embeddings=True, num_threads=threads, progress=False,
                      skip_padding=skip_padding)
    metrics = train_run(RunSpec(cfg.to_dict(), "en", spec_dict(cfg.models[0]), 0))["metrics"]
    res = metrics["resources"]
    return {"examples_per_s": res["train_examples_per_s"], "train_s": res["train_s"],
            "mean_padded_length": res["mean_padded_length"]}


def trainer(folder: Path, steps: int, batch: int, threads: int, tmp: Path) -> dict:
    import numpy as np
    import torch
    from transformers import DataCollatorWithPadding, Trainer, TrainerCallback, TrainingArguments

    from diagnostics.finetune import SweepConfig
    from diagnostics.finetune._batching import batch_order, encode_pairs
    from diagnostics.finetune import training_mixture
    from diagnostics.finetune._modeling import load_classifier
    from diagnostics.finetune._train import label_ids
    from diagnostics.models import load_tokenizer

    torch.set_num_threads(threads)
    cfg = SweepConfig(models=["m"], languages=["en"], train_size=steps * batch)
    frame = training_mixture(cfg, "en")
    tok = load_tokenizer(folder)
    enc = encode_pairs(tok, frame, 128)
    labels = label_ids(frame["label"])
    dataset = [{"input_ids": ids, "attention_mask": [1] * len(ids), "labels": int(y)}
               for ids, y in zip(enc.input_ids, labels)]
    order = np.concatenate(batch_order(enc.lengths, batch, torch.Generator().manual_seed(0))).tolist()

    class SameOrder(Trainer):
        def _get_train_sampler(self, train_dataset=None):
            return order

    class Clock(TrainerCallback):
        def on_train_begin(self, args, state, control, **kw):
            self.t0 = time.perf_counter()

        def on_train_end(self, args, state, control, **kw):
            self.t1 = time.perf_counter()

    model = load_classifier(folder, seed=0, dropout=0.1, freeze_embeddings=True)
    args = TrainingArguments(output_dir=str(tmp / "trainer"), per_device_train_batch_size=batch, learning_rate=2e-5,
                             weight_decay=0.01, warmup_steps=int(round(0.1 * steps)), lr_scheduler_type="linear",
                             max_grad_norm=1.0, max_steps=steps, num_train_epochs=1, logging_strategy="no",
                             save_strategy="no", eval_strategy="no", report_to="none", use_cpu=True, seed=0,
                             dataloader_num_workers=0, disable_tqdm=True)
    clock = Clock()
    run = SameOrder(model=model, args=args, train_dataset=dataset, data_collator=DataCollatorWithPadding(tok),
                    callbacks=[clock])
    t0 = time.perf_counter()
    run.train()
    total = time.perf_counter() - t0
    loop = clock.t1 - clock.t0
    return {"examples_per_s": steps * batch / loop, "train_s": loop, "train_call_s": total}


def measure(side: str, folder: Path, steps: int, batch: int, threads: int, tmp: Path, tag: str) -> dict:
    """One side's measurement after a 2-step warm-up of our loop in the same process (kernels, allocator)."""
    tag = f"{side}-{tag}"  # run folders of their own: the run store would return a finished run's figures
    ours(folder, 2, batch, threads, tmp, f"warmup-{tag}")
    if side == "trainer":
        return trainer(folder, steps, batch, threads, tmp)
    return ours(folder, steps, batch, threads, tmp, tag, skip_padding=side == "ours")


def isolated(*args) -> dict:
    """:func:`measure` in a fresh process, so neither side runs in memory the other one left behind."""
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=1, mp_context=mp.get_context("spawn")) as pool:
        return pool.submit(measure, *args).result()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--random", action="store_true", help="random model of the embedded model's size")
    args = parser.parse_args()
    import torch
    import transformers

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        folder = model_folder(args.random, tmp)
        rounds = []
        for r in range(args.rounds):
            common = (folder, args.steps, args.batch, args.threads, tmp, str(r))
            order = SIDES[r % len(SIDES):] + SIDES[:r % len(SIDES)]  # rotate who goes first
            row = {side: isolated(side, *common) for side in order}
            trainer_rate = row["trainer"]["examples_per_s"]
            row.update(ratio=row["ours"]["examples_per_s"] / trainer_rate,
                       ratio_plain=row["ours-plain"]["examples_per_s"] / trainer_rate,
                       load_average=os.getloadavg()[0])
            rounds.append(row)
            print(f"round {r}: ours {row['ours']['examples_per_s']:.2f} ex/s, ours-plain "
                  f"{row['ours-plain']['examples_per_s']:.2f} ex/s, Trainer {trainer_rate:.2f} ex/s, ratio "
                  f"{row['ratio']:.3f} (plain {row['ratio_plain']:.3f})")
    best = {side: max(r[side]["examples_per_s"] for r in rounds) for side in SIDES}
    result = {"benchmark": "training throughput, ours vs transformers Trainer", "model": "random" if args.random
              else "embedded multilingual-e5-small", "steps": args.steps, "batch_size": args.batch,
              "threads": args.threads, "max_seq_length": 128, "rounds": rounds,
              "ratio_best_of_rounds": best["ours"] / best["trainer"],
              "ratio_median": sorted(r["ratio"] for r in rounds)[len(rounds) // 2],
              "ratio_plain_best_of_rounds": best["ours-plain"] / best["trainer"],
              "ratio_plain_median": sorted(r["ratio_plain"] for r in rounds)[len(rounds) // 2], "target": ">= 1.0",
              "versions": {"torch": torch.__version__, "transformers": transformers.__version__}}
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "bench_finetune_trainer.json").write_text(json.dumps(result, indent=2))
    print(f"ratio (best of rounds) ours / Trainer = {result['ratio_best_of_rounds']:.3f} (target >= 1.0); "
          f"without skipping padding {result['ratio_plain_best_of_rounds']:.3f}")


if __name__ == "__main__":
    main()
