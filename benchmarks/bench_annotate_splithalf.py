"""Split-half check of the rule tuning: per feature, the ``pair`` mode chosen on one half, scored on the other.

Run: ``python benchmarks/bench_annotate_splithalf.py``. Prints, per language, the full-set macro-F1 of the
committed rules and the held-out macro-F1 for two splits (even/odd ids; groups of pairs sharing a sentence,
which keeps the mirrored pair 2k/2k+1 on one side) and writes benchmarks/results/annotate_splithalf.json.
"""

import json
from pathlib import Path

from diagnostics.annotate import split_half

if __name__ == "__main__":
    out = {}
    for lang in ("en", "ru", "sv"):
        out[lang] = {}
        for split in ("id", "group"):
            table = split_half(lang, split=split)
            macro = table.iloc[-1]
            out[lang][split] = {"full_f1_rules": round(float(macro.full_f1_rules), 4),
                                "heldout_f1_chosen": round(float(macro.heldout_f1), 4),
                                "heldout_f1_rules": round(float(macro.heldout_f1_rules), 4),
                                "chosen_modes": dict(zip(table.feature[:-1], table.chosen_mode[:-1]))}
            print(f"{lang} split={split:5s} full(rules)={macro.full_f1_rules:.3f} "
                  f"held-out(chosen on fit half)={macro.heldout_f1:.3f} held-out(rules)={macro.heldout_f1_rules:.3f}")
    path = Path(__file__).parent / "results" / "annotate_splithalf.json"
    path.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {path}")
