"""MOROCCO resource figures of encoders of real sizes, randomly initialised, by ``diagnostics models measure``.

Model folders of real checkpoints are too large to move to a GPU host, and the resource figures do not depend on
the weights' values: this builds XLM-R-family encoders of three real sizes with random weights (seeded) and the
tokenizer of a given folder (default: the embedded model's, the XLM-R vocabulary of 250,002 pieces), then measures
each with :func:`diagnostics.models.measure_model` (N = 2000 records of AX-b, batch 32, median of 5):

* ``e5-small``: hidden 384, 12 layers (the embedded multilingual-e5-small's shape);
* ``xlmr-base``: hidden 768, 12 layers (xlm-roberta-base);
* ``xlmr-large``: hidden 1024, 24 layers (xlm-roberta-large).

Ratios are against ``e5-small`` measured in the same run (throughput and peak memory). Fitness needs a quality
score; with the same ``Q`` for every model, the fitness ratio of two models is their throughput ratio times the
inverse ratio of ``log M``; the script reports that ratio with ``M`` in bytes (the paper's unit) and in MiB, to
show that the unit is not a constant rescaling.

Run: ``python benchmarks/bench_models_measure.py --device cuda [--tokenizer FOLDER] [--records 2000]
[--repeats 5] [--sizes e5-small,xlmr-base,xlmr-large]``; writes ``benchmarks/results/bench_models_measure_<device
type>.json``.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import shutil
import tempfile
from pathlib import Path

#: hidden size, layers, attention heads, feed-forward size.
SIZES = {"e5-small": (384, 12, 12, 1536), "xlmr-base": (768, 12, 12, 3072), "xlmr-large": (1024, 24, 16, 4096)}
BASELINE = "e5-small"


def build_encoder(folder: Path, size: str, tokenizer_folder: Path, seed: int = 0) -> Path:
    """Write a randomly initialised XLM-R encoder of ``size`` with the tokenizer files of ``tokenizer_folder``."""
    import torch
    from transformers import XLMRobertaConfig, XLMRobertaModel

    from diagnostics.models._loading import TOKENIZER_FILES

    hidden, layers, heads, ffn = SIZES[size]
    config = XLMRobertaConfig(vocab_size=250002, hidden_size=hidden, num_hidden_layers=layers,
                              num_attention_heads=heads, intermediate_size=ffn, max_position_embeddings=514,
                              type_vocab_size=1, pad_token_id=1, bos_token_id=0, eos_token_id=2)
    torch.manual_seed(seed)
    XLMRobertaModel(config).save_pretrained(folder, safe_serialization=True)
    for name in TOKENIZER_FILES:
        if (tokenizer_folder / name).is_file():
            shutil.copy2(tokenizer_folder / name, folder / name)
    return folder


def main() -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--tokenizer", type=Path, default=None, help="folder with tokenizer files (default: the "
                        "embedded model's)")
    parser.add_argument("--records", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--sizes", default=",".join(SIZES))
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()

    import torch
    import transformers

    from diagnostics.models import measure_model

    if args.tokenizer is None:
        from diagnostics.models import embedded_dir

        args.tokenizer = embedded_dir()
    sizes = args.sizes.split(",")
    unknown = [s for s in sizes if s not in SIZES]
    if unknown:
        parser.error(f"unknown sizes {unknown}; choose from {list(SIZES)}")
    figures = {}
    with tempfile.TemporaryDirectory() as tmp:
        for size in sizes:
            folder = build_encoder(Path(tmp) / size, size, args.tokenizer)
            parameters = sum(p.stat().st_size for p in folder.glob("*.safetensors")) // 4
            result = measure_model(folder, dataset="axb", records=args.records, repeats=args.repeats,
                                   device=args.device)
            figures[size] = {"parameters_approx": parameters, "init_s": result.init_s,
                             "inference_s": result.inference_s, "throughput": result.throughput,
                             "peak_memory_bytes": result.peak_memory_bytes, "memory_kind": result.memory_kind,
                             "peak_memory_mib": round(result.peak_memory_bytes / 2**20, 1),
                             "repetitions": result.repetitions}
            print(f"{size:11s} Tp {result.throughput:8.1f} rec/s  T_init {result.init_s:6.2f} s  "
                  f"M {result.peak_memory_bytes / 2**20:8.1f} MiB", flush=True)
    ratios = {}
    if BASELINE in figures:
        base = figures[BASELINE]
        for size, fig in figures.items():
            if size == BASELINE:
                continue
            tp = fig["throughput"] / base["throughput"]
            log_bytes = math.log(base["peak_memory_bytes"]) / math.log(fig["peak_memory_bytes"])
            log_mib = math.log(base["peak_memory_bytes"] / 2**20) / math.log(fig["peak_memory_bytes"] / 2**20)
            ratios[f"{size}_vs_{BASELINE}"] = {
                "throughput": tp, "peak_memory": fig["peak_memory_bytes"] / base["peak_memory_bytes"],
                "fitness_same_q_bytes": tp * log_bytes, "fitness_same_q_mib": tp * log_mib}
    gpu = torch.cuda.get_device_name(0) if args.device.startswith("cuda") else None
    result = {"benchmark": "models_measure", "device": args.device, "gpu": gpu, "machine": platform.machine(),
              "torch": torch.__version__, "transformers": transformers.__version__, "records": args.records,
              "batch_size": 32, "repeats": args.repeats, "dataset": "axb", "figures": figures, "ratios": ratios}
    out = args.out or Path(__file__).parent / "results" / f"bench_models_measure_{args.device.split(':')[0]}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(ratios, indent=2))
    return result


if __name__ == "__main__":
    main()
