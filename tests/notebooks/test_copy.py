"""``diagnostics.notebooks._copy`` (``copy_notebooks``): editable jupytext pairs of the analysis notebooks whose
parameters cell names the run store they read; copies already in the folder are kept unless forced, and a package
without notebooks is refused."""

from __future__ import annotations

from pathlib import Path

import jupytext
import pytest

from diagnostics.core.errors import UserInputError
from diagnostics.core.resources import notebooks_dir
from diagnostics.notebooks import _copy, copy_notebooks


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


def test_a_folder_holding_a_copy_is_refused_before_anything_is_written(tmp_path):
    first = sorted(notebooks_dir().glob("[0-9][0-9]_*.py"))[0]
    kept = tmp_path / f"{first.stem}.ipynb"
    kept.write_text("my edits")
    with pytest.raises(UserInputError, match=rf"already holds {kept.name}; pass --force"):
        copy_notebooks(tmp_path, tmp_path / "runs")
    assert [p.name for p in tmp_path.iterdir()] == [kept.name] and kept.read_text() == "my edits"


def test_a_package_without_notebooks_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(_copy, "notebooks_dir", lambda: tmp_path / "empty")
    with pytest.raises(UserInputError, match="no analysis notebook"):
        copy_notebooks(tmp_path / "dest")
    assert not (tmp_path / "dest").exists()
