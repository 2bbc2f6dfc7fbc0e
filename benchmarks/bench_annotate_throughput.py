"""Annotation throughput (pairs/s) and its overhead over the bare backend pipeline on the same texts.

Baseline: ``nlp.pipe`` over the distinct texts of the pairs with the same pipeline (for English the full
en_core_web_sm pipeline the rules need: tagger, parser, NER). Annotated: :func:`diagnostics.annotate.annotate`
on the pairs (which also runs the Matcher, derivation rules and pair logic). Target: ratio <= 1.3.

Run: ``python benchmarks/bench_annotate_throughput.py [--lang en] [--pairs 400]``; writes
``benchmarks/results/annotate_throughput_<lang>.json``.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

from diagnostics import data
from diagnostics.annotate import annotate, get_annotator
from diagnostics.annotate.evaluation import DIAGNOSTIC_SETS


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lang", default="en")
    parser.add_argument("--pairs", type=int, default=400)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    frame = data.load(DIAGNOSTIC_SETS[args.lang]).head(args.pairs)
    annotator = get_annotator(args.lang)  # load once, outside the timings
    texts = list(dict.fromkeys(frame.premise.tolist() + frame.hypothesis.tolist()))
    annotate(frame.head(8), args.lang)  # warm-up (lazy imports, caches)
    bare, full = [], []
    for _ in range(args.repeats):  # interleaved, best of n: robust to other load on a shared machine
        start = time.perf_counter()
        for _doc in annotator.nlp.pipe(texts, batch_size=64):
            pass
        bare.append(time.perf_counter() - start)
        start = time.perf_counter()
        annotate(frame, args.lang, batch_size=64)
        full.append(time.perf_counter() - start)
    result = {"lang": args.lang, "pairs": len(frame), "distinct_texts": len(texts), "pipeline": annotator.nlp.pipe_names,
              "bare_pipeline_s": min(bare), "annotate_s": min(full), "pairs_per_s": len(frame) / min(full),
              "bare_pairs_per_s": len(frame) / min(bare), "overhead_ratio": min(full) / min(bare), "target_ratio": 1.3,
              "python": platform.python_version(), "machine": platform.machine()}
    out = Path(__file__).parent / "results" / f"annotate_throughput_{args.lang}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2), encoding="utf-8")
    print(f"{args.lang}: {result['pairs_per_s']:.1f} pairs/s annotated, {result['bare_pairs_per_s']:.1f} pairs/s bare "
          f"pipeline; overhead x{result['overhead_ratio']:.2f} (target <= 1.3) -> {out}")


if __name__ == "__main__":
    main()
