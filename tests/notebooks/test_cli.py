"""``diagnostics notebooks copy DEST``: editable, paired copies that read the run store they name."""

from __future__ import annotations

from pathlib import Path

import jupytext
from typer.testing import CliRunner

from diagnostics.cli import app
from diagnostics.core.resources import notebooks_dir
from diagnostics.notebooks import copy_notebooks


def test_copies_are_pairs_that_name_the_run_store(tmp_path):
    runs = tmp_path / "store"
    written = copy_notebooks(tmp_path / "mine", runs)
    sources = sorted(notebooks_dir().glob("[0-9][0-9]_*.py"))
    assert [p.name for p in written] == sorted(f"{s.stem}{x}" for s in sources for x in (".py", ".ipynb"))
    for source in sources:
        copy = jupytext.read(tmp_path / "mine" / f"{source.stem}.py")
        pair = jupytext.read(tmp_path / "mine" / f"{source.stem}.ipynb")
        assert [c.source for c in copy.cells] == [c.source for c in pair.cells]  # a jupytext pair
        assert pair.metadata["jupytext"]["formats"] == "ipynb,py:percent"
        original = jupytext.read(source)
        changed = [(a.source, b.source) for a, b in zip(original.cells, copy.cells) if a.source != b.source]
        parameters = [c for c in copy.cells if "parameters" in c.metadata.get("tags", [])]
        if any("runs_dir = None" in c.source for c in original.cells):
            assert len(changed) == 1 and len(parameters) == 1
            namespace = {}
            exec(parameters[0].source, namespace)  # the parameters cell still runs and names <runs>/<scale>
            assert Path(namespace["runs_dir"]) == runs.resolve() / namespace["scale"]
        else:
            assert not changed


def test_cli_refuses_to_overwrite_without_force(tmp_path):
    runner = CliRunner()
    result = runner.invoke(app, ["notebooks", "copy", str(tmp_path / "nb"), "--runs", str(tmp_path / "runs")])
    assert result.exit_code == 0, result.output
    assert "copied to" in result.output and (tmp_path / "nb" / "10_instability_explorer.ipynb").is_file()
    result = runner.invoke(app, ["notebooks", "copy", str(tmp_path / "nb")])
    assert result.exit_code == 2 and "--force" in result.output and "Traceback" not in result.output
    result = runner.invoke(app, ["notebooks", "copy", str(tmp_path / "nb"), "--force", "--scale", "tiny"])
    assert result.exit_code == 0, result.output
    parameters = [c for c in jupytext.read(tmp_path / "nb" / "02_seed_stability.py").cells
                  if "parameters" in c.metadata.get("tags", [])][0]
    assert 'scale = "tiny"' in parameters.source or "scale = 'tiny'" in parameters.source
    result = runner.invoke(app, ["notebooks", "copy", str(tmp_path / "nb"), "--force", "--scale", "huge"])
    assert result.exit_code == 2 and "tiny, demo or paper" in result.output
