"""The main job's plumbing: which notebooks run first and how side by side, what a notebook opened by hand reads, and
that nothing trains without being asked (the tiny main job itself is run and checked in ``test_notebooks.py``)."""

import os

import pytest

from diagnostics.pipeline import ScalePlan, ensure_runs, notebook_paths
from diagnostics.pipeline._runner import SLOWEST_FIRST, RunsNotFinishedError


def test_slowest_notebooks_exist():
    from diagnostics.core.resources import notebooks_dir

    assert {p.stem for p in notebooks_dir().glob("[0-9][0-9]_*.py")} >= set(SLOWEST_FIRST)


def test_ensure_runs_without_training_names_the_command_and_trains_nothing(tmp_path, monkeypatch):
    import diagnostics.finetune
    import diagnostics.finetune._sweep

    def no_training(*args, **kwargs):
        raise AssertionError("trained")

    monkeypatch.setattr(diagnostics.finetune, "run_sweeps", no_training)
    monkeypatch.setattr(diagnostics.finetune._sweep, "run_sweeps", no_training)
    runs = tmp_path / "runs"
    with pytest.raises(RunsNotFinishedError, match=r"runs of the demo scale .*bash scripts/demo\.sh"):
        ensure_runs(ScalePlan.resolve("demo", runs), only=("base",), train=False)
    with pytest.raises(RunsNotFinishedError, match=r"diagnostics pipeline --scale tiny"):
        ensure_runs(ScalePlan.resolve("tiny", runs), train=False)
    with pytest.raises(RunsNotFinishedError, match="bash scripts/demo.sh"):  # a notebook opened by hand
        notebook_paths("demo", runs, tmp_path / "figures", needs=("base",))
    assert not any(runs.rglob("seed=*")) and not (runs / "base").exists()  # no run started


@pytest.mark.slow
def test_notebooks_side_by_side_yield_their_cores(tmp_path, monkeypatch, capsys):
    """Lanes oversubscribe the cores: their kernels' OpenMP threads wait passively, unless the user chose."""
    from diagnostics.pipeline._runner import SHARED_CORES_ENV, _share_cores, execute_notebooks

    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    header = "# ---\n# jupyter:\n#   kernelspec: {display_name: Python 3, language: python, name: python3}\n# ---\n\n"
    record = (header + "# %% tags=['parameters']\nscale = output_dir = runs_dir = train_missing = None\n"
              "# %%\nimport os, pathlib\n"
              "pathlib.Path(output_dir, 'NAME.env').write_text(os.environ.get('OMP_WAIT_POLICY', 'unset'))\n")
    for name in ("00_first", "01_second"):
        (notebooks / f"{name}.py").write_text(record.replace("NAME", name))
    monkeypatch.setenv("DIAGNOSTICS_ROOT", str(tmp_path))
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    out = tmp_path / "report"
    (out / "figures").mkdir(parents=True)
    assert set(execute_notebooks("tiny", out, tmp_path / "runs", lanes=2)) == {"00_first", "01_second"}
    lines = capsys.readouterr().err.splitlines()  # no silent phase: a line as each notebook finishes
    assert lines[0] == "notebooks: executing 2, 2 at a time"
    assert sorted(line.split(":")[0] for line in lines[1:]) == ["notebook 00_first", "notebook 01_second"]
    assert all(" done in " in line for line in lines[1:]) and lines[-1].endswith("(2/2)")
    assert {p.read_text() for p in (out / "figures").glob("*.env")} == {SHARED_CORES_ENV["OMP_WAIT_POLICY"]}
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")
    _share_cores()
    assert os.environ["OMP_WAIT_POLICY"] == "ACTIVE"


def test_notebooks_one_at_a_time_say_which_runs_and_how_long_it_took(tmp_path, monkeypatch, capsys):
    from diagnostics.pipeline import _runner

    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    for name in ("00_first", "01_second", *_runner.NOT_IN_MAIN_JOB):  # the main job skips the last
        (notebooks / f"{name}.py").write_text("")
    monkeypatch.setenv("DIAGNOSTICS_ROOT", str(tmp_path))
    monkeypatch.setattr(_runner, "execute_notebook", lambda script, *args: 1.25)
    assert _runner.execute_notebooks("tiny", tmp_path / "report", tmp_path / "runs") == {"00_first": 1.25,
                                                                                        "01_second": 1.25}
    assert capsys.readouterr().err.splitlines() == [
        "notebooks: executing 2, 1 at a time", "notebook 00_first: running", "notebook 00_first: done in 1.2 s (1/2)",
        "notebook 01_second: running", "notebook 01_second: done in 1.2 s (2/2)"]
