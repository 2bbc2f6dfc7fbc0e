"""The main job end to end at the tiny scale, run once for this module: sweeps, the notebooks in two lanes, the
manifest and the report; a rerun reuses every finished run. Every notebook executes top to bottom, and its .ipynb
pair matches the .py source. The default suite runs the main job with the :data:`QUICK` notebooks; the slow target
runs it whole (every notebook, the manifest's timings and notebook 05's probe results).

The module is collected first (``runs_first``): under ``--dist loadfile`` the whole module goes to one worker, and
its few minutes of main job start at once instead of last."""

import json
import shutil

import jupytext
import pytest

from diagnostics.core.tables import read_table
from diagnostics.pipeline import (NOT_IN_MAIN_JOB, PROBE_RESULTS, PipelineInputs, ScalePlan, ensure_runs,
                                  notebook_paths, run_pipeline)

from _paths import ROOT

pytestmark = pytest.mark.runs_first

NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.py"))
#: The notebooks the main job executes (``NOT_IN_MAIN_JOB`` read stores it does not make; tested on their own).
MAIN_JOB = [p for p in NOTEBOOKS if p.stem not in NOT_IN_MAIN_JOB]
#: The notebooks the default suite executes (one of each kind: datasets, seed statistics, the paper's verdict); the
#: slow target executes every notebook in the whole main job.
QUICK = ("00_datasets", "02_seed_stability", "11_against_the_paper")
#: ``--set num_threads=1``: the suite runs two workers on two cores, where the tiny scale's two torch threads per
#: sweep spend more CPU time spinning at OpenMP barriers than computing. The thread count is no part of a run's hash:
#: the same runs, and a rerun without it reads the inputs recorded in the run store.
ONE_THREAD = PipelineInputs({}, ["num_threads=1"])


def _main_job(root, notebooks=None):
    out, runs = root / "report", root / "runs"
    index = run_pipeline("tiny", out_dir=out, runs_dir=runs, notebooks=notebooks, lanes=2, inputs=ONE_THREAD)
    return out, runs, index


@pytest.fixture(scope="module")
def tiny_pipeline(tmp_path_factory):
    """The main job at the tiny scale, run once per module: every notebook executed once, in two lanes.

    Returns ``(report folder, run store, index.html)``; tests read its outputs and must not change them.
    """
    return _main_job(tmp_path_factory.mktemp("tiny-pipeline"))


@pytest.fixture(scope="module")
def quick_pipeline(tmp_path_factory):
    """The main job at the tiny scale with the :data:`QUICK` notebooks only, run once per module."""
    return _main_job(tmp_path_factory.mktemp("quick-pipeline"), list(QUICK))


@pytest.mark.parametrize("script", [pytest.param(p, marks=() if p.stem in QUICK else pytest.mark.slow)
                                    for p in MAIN_JOB], ids=lambda p: p.stem)
def test_notebook_runs_at_tiny_scale(script, request):
    out, _, _ = request.getfixturevalue("quick_pipeline" if script.stem in QUICK else "tiny_pipeline")
    executed = json.loads((out / "notebooks" / f"{script.stem}.ipynb").read_text(encoding="utf-8"))
    code = [c for c in executed["cells"] if c["cell_type"] == "code"]
    assert code and all(c.get("execution_count") for c in code), "a code cell did not run"
    errors = [o for c in code for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors, errors
    assert executed["metadata"]["papermill"]["parameters"]["scale"] == "tiny"
    prefix = script.stem.split("_")[0]
    assert any((out / "figures").glob(f"{prefix}_*.png")), "the notebook saved no figure"


@pytest.mark.parametrize("script", NOTEBOOKS, ids=lambda p: p.stem)
def test_ipynb_pair_in_sync(script):
    pair = script.with_suffix(".ipynb")
    assert pair.exists(), f"missing paired notebook; run `jupytext --sync {script}`"
    sources = [c.source for c in jupytext.read(script).cells]
    assert [c.source for c in jupytext.read(pair).cells] == sources, f"run `jupytext --sync {script}`"


def test_the_quick_main_job_writes_the_report_and_a_rerun_trains_nothing(quick_pipeline, tmp_path):
    out, runs, index = quick_pipeline
    assert index.is_file()
    manifest = json.loads((out / "manifest.json").read_text())
    assert sorted(manifest["timings_s"]["notebooks"]) == list(QUICK)
    assert manifest["runs"] == 2 * 2 + 1 * 2 + 2 * 2  # base en+ru, extra-32 en, presence 0.25 / 0.75 en; 2 seeds
    done = sorted(p.stat().st_mtime_ns for p in runs.rglob("DONE"))
    # the rerun executes no notebook (none trains; a kernel costs more than the rest of the rerun): its report is
    # made of the notebooks the first run executed
    shutil.copytree(out / "notebooks", tmp_path / "again" / "notebooks")
    assert run_pipeline("tiny", out_dir=tmp_path / "again", runs_dir=runs, notebooks=[]).is_file()
    assert sorted(p.stat().st_mtime_ns for p in runs.rglob("DONE")) == done  # nothing retrained


@pytest.mark.slow
def test_tiny_pipeline_writes_report_manifest_and_reuses_runs(tiny_pipeline, tmp_path):
    out, runs, index = tiny_pipeline
    assert index.is_file() and index.stat().st_size > 10_000
    manifest = json.loads((out / "manifest.json").read_text())
    stems = [p.stem for p in MAIN_JOB]
    assert sorted(manifest["timings_s"]["notebooks"]) == stems
    assert manifest["runs"] == 2 * 2 + 1 * 2 + 2 * 2  # base en+ru, extra-32 en, presence 0.25 / 0.75 en; 2 seeds
    assert manifest["code"]["version"] and manifest["versions"]["code"] == manifest["code"]  # which code made it
    probes = read_table(out / "figures" / PROBE_RESULTS)  # notebook 05's results, for notebook 11's probing rows
    models = {json.loads(p.read_text())["run"]["model"] for p in runs.rglob("config.json")
              if p.parent.name.startswith("seed=")}
    assert set(probes["run_model"]) == models and probes["seed"].isna().any() and probes["seed"].notna().any()
    commits = {json.loads(p.read_text())["code"]["commit"] for p in runs.rglob("versions.json")}
    assert commits == {manifest["code"]["commit"]}
    done = sorted(p.stat().st_mtime_ns for p in runs.rglob("DONE"))
    again = run_pipeline("tiny", out_dir=tmp_path / "again", runs_dir=runs, notebooks=["00_datasets"])
    assert again.is_file()
    assert sorted(p.stat().st_mtime_ns for p in runs.rglob("DONE")) == done  # nothing retrained
    assert len(ensure_runs(ScalePlan.resolve("tiny", runs), train=False))  # a finished store reads without training
    assert notebook_paths("tiny", runs, tmp_path / "figures", needs=("base", "extra", "presence"))[0] == runs.resolve()
