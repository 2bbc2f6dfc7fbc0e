"""``diagnostics notebooks copy DEST``: editable, paired copies that read the run store they name."""

from __future__ import annotations

import jupytext
from typer.testing import CliRunner

from diagnostics.cli import app


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
