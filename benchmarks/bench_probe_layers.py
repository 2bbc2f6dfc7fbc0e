"""One forward pass returning every layer against one pass per layer (the extraction behind probing).

On real RTE sentences, with the embedded model (or ``--random``: a random BERT of its size), three ways:

* ``all_layers``: :func:`diagnostics.probe.encode_sentences`, one pass per batch, all 13 states;
* ``per_layer_full``: for each of the 13 states a separate full pass, keeping only that state (the naive loop);
* ``per_layer_truncated``: for each state a pass through only the layers below it (the strongest per-layer
  baseline: the encoder truncated to ``l`` layers, one layer for the embeddings state).

Checks that all three give the same vectors, and prints and saves timings and ratios to
``benchmarks/results/bench_probe_layers.json``.

Run: ``python benchmarks/bench_probe_layers.py [--random] [--sentences 256] [--threads 2]``
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sentences", type=int, default=256)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--random", action="store_true", help="random model of the embedded model's size")
    args = parser.parse_args()
    import numpy as np
    import torch
    import transformers

    from diagnostics.data import load
    from diagnostics.models import resolve_model, tiny_random_model
    from diagnostics.probe import encode_sentences, load_encoder

    torch.set_num_threads(args.threads)
    frame = load("rte", "validation")
    texts = list(dict.fromkeys(frame["premise"].tolist() + frame["hypothesis"].tolist()))
    texts = [texts[i] for i in np.random.default_rng(0).permutation(len(texts))[:args.sentences]]
    with tempfile.TemporaryDirectory() as tmp:
        folder = (tiny_random_model(Path(tmp) / "random", seed=0, hidden_size=384, num_hidden_layers=12,
                                    num_attention_heads=12, intermediate_size=1536)
                  if args.random else resolve_model("embedded").path)
        model, tokenizer = load_encoder(folder)
    n_states = model.config.num_hidden_layers + 1
    run = dict(batch_size=args.batch, max_length=128)
    encode_sentences(model, tokenizer, texts[:args.batch], **run)  # warm-up

    start = time.perf_counter()
    all_layers = encode_sentences(model, tokenizer, texts, **run)
    t_all = time.perf_counter() - start

    start = time.perf_counter()
    full = np.concatenate([encode_sentences(model, tokenizer, texts, layers=[layer], **run)
                           for layer in range(n_states)])
    t_full = time.perf_counter() - start

    layers = model.encoder.layer
    truncated = []
    start = time.perf_counter()
    try:
        for layer in range(n_states):
            model.encoder.layer = layers[:max(layer, 1)]  # state 0 (embeddings) via one layer: none breaks HF
            truncated.append(encode_sentences(model, tokenizer, texts, layers=[layer], **run))
    finally:
        model.encoder.layer = layers
    t_trunc = time.perf_counter() - start
    truncated = np.concatenate(truncated)
    max_diff = float(max(np.abs(all_layers - full).max(), np.abs(all_layers - truncated).max()))

    result = {"benchmark": "one forward pass for all layers vs one pass per layer",
              "model": "random (embedded size)" if args.random else "embedded multilingual-e5-small",
              "sentences": len(texts), "batch_size": args.batch, "threads": args.threads, "states": n_states,
              "timings_s": {"all_layers": t_all, "per_layer_full": t_full, "per_layer_truncated": t_trunc},
              "ratio_per_layer_full_vs_all": t_full / t_all, "ratio_per_layer_truncated_vs_all": t_trunc / t_all,
              "max_abs_diff": max_diff, "load_average": os.getloadavg()[0],
              "versions": {"torch": torch.__version__, "transformers": transformers.__version__}}
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "bench_probe_layers.json").write_text(json.dumps(result, indent=2))
    print(f"all layers in one pass {t_all:.2f} s; one full pass per layer {t_full:.2f} s "
          f"(ratio {result['ratio_per_layer_full_vs_all']:.1f}); truncated pass per layer {t_trunc:.2f} s "
          f"(ratio {result['ratio_per_layer_truncated_vs_all']:.1f}); max |diff| {max_diff:.2e}")


if __name__ == "__main__":
    main()
