"""Do other precisions predict what fp32 predicts? Two fixed runs per precision, their diagnostic predictions compared.

The same pair of runs (seeds 0 and 1 of a small random BERT with the embedded tokenizer, or of the embedded
multilingual-e5-small itself with ``--model embedded``; the paper config's jiant recipe, or another config's with
``--config``, at a higher learning rate on a small RTE subset, dropout off so that only the arithmetic differs,
trained as one fused group) is trained once per precision through ``diagnostics sweep run``; each precision's AX-b
predictions are compared with fp32's, example by example. A precision is eligible as the paper config's default
when it agrees with fp32 on at least 99 % of the diagnostic examples and fp32's predictions are not one class
(``entailment_share``); the speed of the eligible ones is a GPU question (``bench_fused_sweep.py --device cuda``).
On a CPU, ``bf16`` is bf16 autocast only where the CPU has native bf16 (AVX512-BF16 / AMX), else it runs fp32; the
report records which.

Run: ``python benchmarks/bench_precision_agreement.py [--device cpu] [--precisions fp32,bf16] [--size tiny]
[--model embedded --top-k 2] [--config configs/demo.yaml]``;
writes ``benchmarks/results/bench_precision_agreement_<device>.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"
ROOT = Path(__file__).resolve().parent.parent
SIZES = {"tiny": {}, "small": {"hidden_size": 128, "num_hidden_layers": 4, "num_attention_heads": 4,
                                "intermediate_size": 512}}


def train(work: Path, precision: str, device: str, train_size: int, epochs: int, lr: float,
          model: Path, top_k: int | None, config: Path) -> tuple[dict, float]:
    """Train the pair at ``precision``; its AX-b P(entailment) per (seed, example) and the training seconds."""
    import pandas as pd

    name = f"precision-{precision}"
    command = [sys.executable, "-m", "diagnostics", "sweep", "run", str(config.resolve())]
    for item in (f"experiment={name}", f"output_dir={work / 'runs'}", "seeds=[0,1]", "fuse=2", "dropout=0.0",
                 f"lr={lr}",
                 f"precision={precision}", f"device={device}", f"train_size={train_size}", f"max_epochs={epochs}",
                 "languages=[en]", "save_checkpoint=false", "progress=false",
                 f"models=[{{name: bench, path: {model}}}]", f"train_top_k_layers={top_k or 'null'}"):
        command += ["--set", item]
    subprocess.run(command, check=True, cwd=work, env=os.environ | {"HF_HUB_OFFLINE": "1"},
                   stdout=subprocess.DEVNULL)
    runs = sorted((work / "runs" / name / "en" / "bench").glob("seed=*"))
    table = pd.concat([pd.read_parquet(run / "predictions.parquet") for run in runs])
    table = table[table["dataset"] == "axb"]
    seconds = sum(json.loads((run / "metrics.json").read_text())["resources"]["train_s"] for run in runs[:1])
    autocast = json.loads((runs[0] / "versions.json").read_text()).get("autocast")
    return {"proba": table.set_index(["seed", "example_id"])["probability"], "autocast": autocast}, seconds


def main() -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--precisions", default="fp32,bf16")
    parser.add_argument("--size", choices=sorted(SIZES), default="small")
    parser.add_argument("--train-size", type=int, default=256)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--lr", type=float, default=5e-4, help="higher than the study's 1e-5, so that a small "
                        "random model learns enough in a few steps for its predictions to vary")
    parser.add_argument("--model", choices=["random", "embedded"], default="random",
                        help="a random BERT of --size, or the embedded multilingual-e5-small (pretrained weights)")
    parser.add_argument("--top-k", type=int, help="train only the top K encoder layers and the head")
    parser.add_argument("--config", type=Path, default=ROOT / "configs" / "paper.yaml",
                        help="the sweep config whose recipe the pair trains (configs/demo.yaml: the demo's)")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    import torch

    from diagnostics.models import tiny_random_model

    precisions = args.precisions.split(",")
    if precisions[0] != "fp32":
        precisions = ["fp32"] + [p for p in precisions if p != "fp32"]
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        if args.model == "embedded":
            from diagnostics.models import prepare_embedded

            model = prepare_embedded().path
        else:
            model = tiny_random_model(work / "model", seed=0, **SIZES[args.size])
        reference = None
        for precision in precisions:
            started = time.perf_counter()
            out, train_s = train(work, precision, args.device, args.train_size, args.epochs, args.lr, model,
                                 args.top_k, args.config)
            proba = out["proba"]
            reference = proba if reference is None else reference
            agree = ((proba >= 0.5) == (reference.loc[proba.index] >= 0.5)).mean()
            results[precision] = {"autocast": out["autocast"], "agreement_with_fp32": round(float(agree), 4),
                                  "max_abs_probability_difference": round(float((proba - reference).abs().max()), 4),
                                  "entailment_share": round(float((proba >= 0.5).mean()), 4),
                                  "train_s": round(train_s, 2), "wall_s": round(time.perf_counter() - started, 1),
                                  "examples": int(len(proba))}
    report = {"device": torch.cuda.get_device_name() if args.device.startswith("cuda")
              else platform.processor() or platform.machine(), "torch": torch.__version__, "model": args.model, "top_k": args.top_k, "config": args.config.name,
              "size": args.size if args.model == "random" else None,
              "train_size": args.train_size, "epochs": args.epochs, "lr": args.lr, "results": results,
              "eligible": [p for p, r in results.items() if r["agreement_with_fp32"] >= 0.99],
              "fp32_predicts_both_classes": 0 < results["fp32"]["entailment_share"] < 1}
    kind = "cuda" if args.device.startswith("cuda") else "cpu"
    out_path = args.out or RESULTS / f"bench_precision_agreement_{kind}.json"
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text(json.dumps(report, indent=2), encoding="utf-8")
    print(json.dumps(report, indent=2))
    return report


if __name__ == "__main__":
    main()
