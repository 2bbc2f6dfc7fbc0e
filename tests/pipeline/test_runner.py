"""The main job's plumbing: which notebooks run first, what a notebook opened by hand reads, and that nothing trains
without being asked (the tiny main job itself is run and checked in ``test_notebooks.py``)."""


import pytest

from diagnostics.pipeline import ScalePlan, ensure_runs, notebook_paths
from diagnostics.pipeline._runner import SLOWEST_FIRST, RunsNotFinishedError

from _paths import ROOT



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


def test_notebook_paths_resolve_from_the_project_root(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("DIAGNOSTICS_ROOT", raising=False)
    monkeypatch.chdir(tmp_path)  # a kernel started elsewhere, e.g. in notebooks/
    runs, figures = notebook_paths("demo", output_dir=tmp_path / "figures")
    assert runs == ROOT / "runs" / "demo" and figures == tmp_path / "figures" and figures.is_dir()
    root = tmp_path / "project"
    root.mkdir()
    monkeypatch.setenv("DIAGNOSTICS_ROOT", str(root))
    assert notebook_paths("tiny") == (root.resolve() / "runs" / "tiny", root.resolve() / "reports" / "tiny" / "figures")
    assert notebook_paths("tiny", "store", "figs") == (root.resolve() / "store", root.resolve() / "figs")
    assert str(root.resolve() / "reports" / "tiny" / "figures") in capsys.readouterr().out
