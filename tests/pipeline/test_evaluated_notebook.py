"""Notebook 12 on a store written by ``diagnostics evaluate``: three tiny random checkpoints named as three seeds of
one model, scored on AX-b and on six crafted English pairs, executed with papermill as the main job executes the
other notebooks. The main job itself skips the notebook (``NOT_IN_MAIN_JOB``): it makes no such store."""

from __future__ import annotations

import json

import pytest

from _nli_heads import classifier, write_pairs

from diagnostics.evaluate import evaluate_models
from diagnostics.pipeline import NOT_IN_MAIN_JOB, execute_notebook

from _paths import ROOT

NOTEBOOK = ROOT / "notebooks" / "12_evaluate_any_model.py"


def _outputs(cell) -> str:
    """The text and HTML a cell showed."""
    parts = []
    for output in cell.get("outputs", []):
        data = output.get("data", {})
        parts += [output.get("text", ""), data.get("text/plain", ""), data.get("text/html", ""),
                  data.get("text/markdown", "")]
    return "".join("".join(p) if isinstance(p, list) else p for p in parts)


@pytest.mark.slow  # three evaluations on AX-b, a kernel, spaCy
def test_notebook_12_runs_on_an_evaluated_store(tiny_model_dir, tmp_path):
    assert NOTEBOOK.stem in NOT_IN_MAIN_JOB
    pairs = write_pairs(tmp_path / "pairs.jsonl")
    models = [classifier(tiny_model_dir, tmp_path / "ckpt" / f"seed{s}", ["contradiction", "neutral", "entailment"],
                         seed=s) for s in (1, 2, 3)]
    store = tmp_path / "store"
    evaluate_models([str(m) for m in models], ["axb", f"rte_en={pairs}"], out=store, name="tiny-mnli",
                    seed_pattern=r"seed(\d+)", progress=False)
    out = tmp_path / "report"
    execute_notebook(NOTEBOOK, None, out, store, parameters={"min_pairs": 1})
    executed = json.loads((out / "notebooks" / f"{NOTEBOOK.stem}.ipynb").read_text(encoding="utf-8"))
    code = [c for c in executed["cells"] if c["cell_type"] == "code"]
    assert code and all(c.get("execution_count") for c in code), "a code cell did not run"
    errors = [o for c in code for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors, errors
    assert executed["metadata"]["papermill"]["parameters"] == {
        "output_dir": str((out / "figures").resolve()), "runs_dir": str(store.resolve()), "min_pairs": 1}
    shown = "\n".join(_outputs(c) for c in code)
    assert "3 evaluated runs" in shown and "diagnostic sets ['axb'], NLI test sets ['rte_en']" in shown
    assert "0=contradiction -&gt; not_entailment" in shown or "0=contradiction -> not_entailment" in shown
    figures = sorted(p.name for p in (out / "figures").glob("12_*.png"))
    assert figures == ["12_category_conclusions.png", "12_category_seed_mcc_evaluated_en_tiny-mnli_axb.png",
                       "12_category_seed_mcc_evaluated_en_tiny-mnli_rte_en.png", "12_feature_conclusions.png",
                       "12_feature_slices.png"]
