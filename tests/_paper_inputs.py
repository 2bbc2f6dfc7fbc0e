"""Stand-in files in the real formats of the paper scale's user data, written by the tests themselves.

MNLI as a GLUE ``train.tsv`` (its 12 columns), fr/de/sv training and validation data as RTE/TERRa JSONL and fr/de
diagnostics as LiDiRus JSONL, all made of real bundled pairs (SICK and AX-b for MNLI; RTE, TERRa and LiDiRus
records for the other languages: only the formats are under test, not the translations).
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

from diagnostics import data

#: The MNLI sizes of the study (Fig. 4), as printed in the paper.
STUDY_SIZES = (1000, 5000, 10000, 50000, 100000, 200000, 250000, 374000)
GLUE_MNLI_HEADER = ["index", "promptID", "pairID", "genre", "sentence1_binary_parse", "sentence2_binary_parse",
                    "sentence1_parse", "sentence2_parse", "sentence1", "sentence2", "label1", "gold_label"]


def _clean(text: str) -> str:
    return " ".join(text.replace("\t", " ").split())


def write_mnli_tsv(path: Path, n: int) -> Path:
    """``n`` MNLI-format rows cycling over AX-b (3-way labels) then SICK train pairs, unique pair ids."""
    axb = data.load("axb")
    sick = data.load("sick", "train")
    pool = [(r.premise, r.hypothesis, r.label3) for r in axb.itertuples()] + \
           [(r.premise, r.hypothesis, r.label3) for r in sick.itertuples()]
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("\t".join(GLUE_MNLI_HEADER) + "\n")
        for i, (premise, hypothesis, label3) in zip(range(n), itertools.cycle(pool)):
            cells = [str(i), str(i), f"{i}e", "fiction", "", "", "", "", _clean(premise), _clean(hypothesis),
                     label3, label3]
            handle.write("\t".join(cells) + "\n")
    return path


def _copy_jsonl(source: Path, target: Path, limit: int | None) -> Path:
    lines = source.read_text(encoding="utf-8").splitlines()
    target.write_text("\n".join(lines[:limit]) + "\n", encoding="utf-8")
    return target


def write_language_files(folder: Path, languages=("fr", "de", "sv"), train_rows: int | None = 80,
                         validation_rows: int | None = 40) -> dict[str, str]:
    """``--data`` entries ``<lang>.train / .validation`` (RTE JSONL) for each language and ``<lang>.diagnostics``
    (LiDiRus JSONL) for fr and de (sv keeps the bundled SweDiagnostics)."""
    root = data.datasets_root()
    entries = {}
    for lang in languages:
        target = folder / lang
        target.mkdir(parents=True, exist_ok=True)
        source = root / ("terra" if lang == "de" else "rte")
        entries[f"{lang}.train"] = str(_copy_jsonl(source / "train.jsonl", target / "train.jsonl", train_rows))
        entries[f"{lang}.validation"] = str(_copy_jsonl(source / "val.jsonl", target / "val.jsonl",
                                                        validation_rows))
        if lang != "sv":
            entries[f"{lang}.diagnostics"] = str(_copy_jsonl(root / "lidirus" / "LiDiRus.jsonl",
                                                            target / "diagnostic.jsonl", None))
    return entries


def data_options(entries: dict[str, str]) -> list[str]:
    """``["--data", "k=v", ...]`` for the command line."""
    return [item for key, value in entries.items() for item in ("--data", f"{key}={value}")]


def check_json(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))
