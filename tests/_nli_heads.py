"""Tiny random NLI classifiers with chosen heads, and six crafted English pairs to score them on."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from diagnostics.core.schema import ENTAILMENT, NOT_ENTAILMENT

PAIRS = [("A man is sleeping on a bench in the park.", "Nobody sleeps.", NOT_ENTAILMENT),
         ("The cat sat on the mat.", "A cat sat.", ENTAILMENT),
         ("Two dogs run across a green field while children watch.", "Animals are running.", ENTAILMENT),
         ("She did not go to school yesterday.", "She went to school.", NOT_ENTAILMENT),
         ("Paris is the capital of France.", "France has a capital.", ENTAILMENT),
         ("The concert was cancelled because of the storm.", "The concert took place.", NOT_ENTAILMENT)]


def write_pairs(path: Path) -> Path:
    """Write :data:`PAIRS` as an RTE JSONL file (``rte_en=PATH``)."""
    path.write_text("".join(json.dumps({"idx": i, "premise": p, "hypothesis": h, "label": y}) + "\n"
                            for i, (p, h, y) in enumerate(PAIRS)), encoding="utf-8")
    return path


def classifier(tiny: Path, folder: Path, names: list[str], seed: int) -> Path:
    """A tiny sequence classifier with ``names`` as its id2label, its head drawn from ``seed``."""
    import torch
    from transformers import AutoModelForSequenceClassification

    torch.manual_seed(seed)
    model = AutoModelForSequenceClassification.from_pretrained(
        str(tiny), num_labels=len(names), id2label=dict(enumerate(names)),
        label2id={n: i for i, n in enumerate(names)})
    with torch.no_grad():  # weights of std 0.02 barely tell pairs apart: unit-variance layers make them differ
        for module in model.modules():
            if isinstance(module, torch.nn.Linear):
                module.weight.normal_(0.0, module.in_features ** -0.5)
        model.classifier.weight.normal_(0.0, 0.3)
        model.classifier.bias.zero_()
    model.save_pretrained(str(folder), safe_serialization=True)
    for name in os.listdir(tiny):
        if name.startswith(("tokenizer", "special_tokens", "sentencepiece")):
            shutil.copyfile(tiny / name, folder / name)
    return folder


def permuted(source: Path, folder: Path, order: list[int], names: list[str]) -> Path:
    """``source`` with its head's classes reordered (new class i = old class ``order[i]``), named ``names``."""
    from safetensors.torch import load_file, save_file

    folder.mkdir(parents=True)
    state = load_file(str(source / "model.safetensors"))
    for key in ("classifier.weight", "classifier.bias"):
        state[key] = state[key][order].contiguous()
    save_file(state, str(folder / "model.safetensors"), metadata={"format": "pt"})
    config = json.loads((source / "config.json").read_text())
    config["id2label"] = {str(i): n for i, n in enumerate(names)}
    config["label2id"] = {n: i for i, n in enumerate(names)}
    (folder / "config.json").write_text(json.dumps(config))
    for name in os.listdir(source):
        if name not in ("model.safetensors", "config.json"):
            shutil.copyfile(source / name, folder / name)
    return folder




def evaluate_pairs(models, pairs_file: Path, out: Path, **options):
    """``evaluate_models`` of ``models`` on the pairs of ``pairs_file`` (``rte_en``) into the store ``out``."""
    from diagnostics.evaluate import evaluate_models

    return evaluate_models([str(m) for m in models], [f"rte_en={pairs_file}"], out=out, progress=False, **options)
