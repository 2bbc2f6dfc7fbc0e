"""Every notebook executes top to bottom at the tiny scale, and its .ipynb pair matches the .py source."""

from pathlib import Path

import jupytext
import papermill
import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("[0-9][0-9]_*.py"))


@pytest.fixture(scope="session")
def tiny_runs(tmp_path_factory):
    """One run store shared by every notebook: the tiny sweeps run once per session."""
    return tmp_path_factory.mktemp("tiny-runs")


@pytest.mark.parametrize("script", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs_at_tiny_scale(script, tmp_path, tiny_runs):
    notebook = jupytext.read(script)
    source = tmp_path / f"{script.stem}.ipynb"
    jupytext.write(notebook, source)
    papermill.execute_notebook(str(source), str(tmp_path / "out.ipynb"), cwd=str(script.parents[1]),
                               parameters={"scale": "tiny", "output_dir": str(tmp_path / "figures"),
                                           "runs_dir": str(tiny_runs), "train_missing": True},
                               kernel_name="python3", progress_bar=False)
    assert any((tmp_path / "figures").glob("*.png")), "the notebook saved no figure"


@pytest.mark.parametrize("script", NOTEBOOKS, ids=lambda p: p.stem)
def test_ipynb_pair_in_sync(script):
    pair = script.with_suffix(".ipynb")
    assert pair.exists(), f"missing paired notebook; run `jupytext --sync {script}`"
    sources = [c.source for c in jupytext.read(script).cells]
    assert [c.source for c in jupytext.read(pair).cells] == sources, f"run `jupytext --sync {script}`"
