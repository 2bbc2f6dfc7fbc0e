"""The whole paper plan end to end: the study's experiments (every language with training data, MNLI sizes for
English and Russian and the largest for every language, presence of four features in an MNLI subset) on the tiny
random model with stand-in files in the real formats, sizes reduced through ``--set``; the base experiment through
submitit's local executor; every notebook executed."""

from __future__ import annotations

import json

import pytest

from _paper_inputs import write_language_files, write_mnli_tsv
from diagnostics.core.resources import notebooks_dir
from diagnostics.finetune import collect_predictions, run_sweeps
from diagnostics.pipeline import NOT_IN_MAIN_JOB, ScalePlan, run_pipeline
from diagnostics.pipeline._inputs import PipelineInputs
from diagnostics.pipeline._runner import prepare

#: The documented way to shrink the paper plan (README "Paper scale on a GPU"): same experiments, fewer seeds and
#: pairs, the tiny model; one check per epoch of these small mixtures (the default reading checks every 625 steps).
REDUCED = ["seeds=[0,1]", "train_size=48", "max_epochs=1", "val_schedule=per_epoch", "batch_size=16",
           "max_seq_length=48", "eval_batch_size=128", "num_threads=1", "progress=false", "extra_sizes=[40,80]", "presence_train_size=48",
           "presence_extra_size=24", "probe_max_train=60", "probe_finetuned_seeds=1", "n_boot=50"]


@pytest.mark.slow
def test_paper_plan_end_to_end(tmp_path, tiny_model_dir):
    files = write_language_files(tmp_path / "data", train_rows=60, validation_rows=30)
    files["mnli"] = str(write_mnli_tsv(tmp_path / "data" / "mnli_train.tsv", 3000))
    inputs = PipelineInputs(files, [f"models=[{{name: tiny, path: {tiny_model_dir}}}]", *REDUCED])
    runs, out = tmp_path / "runs", tmp_path / "report"

    plan = ScalePlan.resolve("paper", runs, inputs)
    prepare(plan)  # checks the plan, records the inputs, builds the presence mixtures
    base = plan.base
    status = run_sweeps([base.with_overrides({"executor": "submitit", "executor_options": {"cluster": "local"}})])
    assert status["state"].tolist() == ["done"] * 10
    assert any((runs / "base" / ".submitit").iterdir())

    index = run_pipeline("paper", out_dir=out, runs_dir=runs)  # the recorded inputs apply
    manifest = json.loads((out / "manifest.json").read_text())
    # base: 5 languages x 2 seeds; extra: en, ru at both sizes, fr, de, sv at the largest; presence: en, ru
    assert manifest["runs"] == 5 * 2 + (2 * 2 + 3 * 1) * 2 + 4 * 2 * 3 * 2
    assert manifest["inputs"]["data"]["mnli"] == files["mnli"]
    assert [e["label"] for e in manifest["substitutions"]["sv"]] == ["sv (SweDiagnostics)"]
    for notebook in (out / "notebooks").glob("*.ipynb"):
        cells = json.loads(notebook.read_text())["cells"]
        assert not [o for c in cells for o in c.get("outputs", []) if o.get("output_type") == "error"], notebook
    executed = sorted(path.stem for path in (out / "notebooks").glob("*.ipynb"))
    assert executed == sorted(path.stem for path in notebooks_dir().glob("[0-9][0-9]_*.py")
                              if path.stem not in NOT_IN_MAIN_JOB) and index.is_file()

    table = collect_predictions(runs / "base")
    datasets = table.groupby("language")["dataset"].unique().map(sorted).to_dict()
    assert datasets == {"de": ["diagnostic_de"], "en": ["axb"], "fr": ["diagnostic_fr"], "ru": ["lidirus"],
                        "sv": ["swediagnostics"]}
    presence = collect_predictions(runs / "presence-disjunction-0.75")
    assert sorted(presence["language"].unique()) == ["en", "ru"]
    metrics = json.loads(next((runs / "presence-disjunction-0.75").rglob("metrics.json")).read_text())
    assert metrics["presence"]["share"] == 0.75 and metrics["presence"]["controlled_pairs"] == 24
