"""The main job end to end at the tiny scale: sweeps, notebooks in two lanes, manifest and report; a rerun reuses
every finished run."""

import json

from diagnostics.pipeline import run_pipeline
from diagnostics.pipeline.runner import SLOWEST_FIRST, execute_notebooks

NOTEBOOKS = ["00_datasets", "02_seed_stability", "06_multibootstrap"]


def test_tiny_pipeline_in_two_lanes_writes_report_and_reuses_runs(tmp_path):
    out, runs = tmp_path / "report", tmp_path / "runs"
    index = run_pipeline("tiny", out_dir=out, runs_dir=runs, notebooks=NOTEBOOKS, lanes=2)
    assert index.is_file() and index.stat().st_size > 10_000
    manifest = json.loads((out / "manifest.json").read_text())
    assert sorted(manifest["timings_s"]["notebooks"]) == NOTEBOOKS
    assert manifest["runs"] == 2 * 2 + 1 * 2 + 2 * 2  # base en+ru, extra-32 en, presence 0.25 / 0.75 en; 2 seeds
    assert manifest["code"]["version"] and manifest["versions"]["code"] == manifest["code"]  # which code made it
    commits = {json.loads(p.read_text())["code"]["commit"] for p in runs.rglob("versions.json")}
    assert commits == {manifest["code"]["commit"]}
    for stem in NOTEBOOKS:
        executed = json.loads((out / "notebooks" / f"{stem}.ipynb").read_text())
        assert not [o for c in executed["cells"] for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert any((out / "figures").glob("02_*.png"))
    done = sorted(p.stat().st_mtime_ns for p in runs.rglob("DONE"))
    execute_notebooks("tiny", out, runs, names=["00_datasets"], lanes=2)  # one notebook: no pool needed
    run_pipeline("tiny", out_dir=out, runs_dir=runs, notebooks=["00_datasets"])
    assert sorted(p.stat().st_mtime_ns for p in runs.rglob("DONE")) == done  # nothing retrained


def test_slowest_notebooks_exist():
    from diagnostics.pipeline.runner import NOTEBOOKS as FOLDER

    assert {p.stem for p in FOLDER.glob("[0-9][0-9]_*.py")} >= set(SLOWEST_FIRST)
