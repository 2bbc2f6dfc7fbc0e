"""Editable copies of the analysis notebooks for an installed package (``diagnostics notebooks copy DEST``).

An installed toolkit keeps its notebooks in its package data (``diagnostics/_resources/notebooks`` in
site-packages), a folder that is not for editing. The copies (each a jupytext pair, ``.py`` and ``.ipynb``) find
the bundled data through the package as the originals do; their ``runs_dir`` parameter names the run store they
read, so they work from any folder.
"""

from __future__ import annotations

import re
from pathlib import Path

from diagnostics.core.errors import UserInputError
from diagnostics.core.resources import notebooks_dir, work_root

_RUNS_LINE = re.compile(r"^runs_dir = None$", re.MULTILINE)
_SCALE_LINE = re.compile(r"^scale = \"[a-z]+\"$", re.MULTILINE)


def copy_notebooks(dest: str | Path, runs_root: str | Path | None = None, *, scale: str | None = None,
                   force: bool = False) -> list[Path]:
    """Write editable copies of the analysis notebooks (``.py`` and ``.ipynb`` of each pair) into ``dest``.

    Parameters
    ----------
    dest : str or Path
        Folder for the copies (created).
    runs_root : str or Path, optional
        Folder holding the run stores (``<runs_root>/<scale>``); default ``<work root>/runs``, where
        ``bash scripts/demo.sh`` and ``diagnostics pipeline`` write (:func:`diagnostics.core.resources.work_root`).
        Each copy's ``runs_dir`` parameter is set to ``<runs_root>/<scale>``.
    scale : str, optional
        The scale the copies read (``tiny``, ``demo``, ``paper``); default the notebooks' own (``demo``).
    force : bool
        Overwrite copies already in ``dest``.

    Returns
    -------
    list of Path
        The written files, sorted.

    Raises
    ------
    UserInputError
        When ``dest`` already holds a notebook of the same name (without ``force``), or no notebook is found.
    """
    import jupytext

    sources = sorted(notebooks_dir().glob("[0-9][0-9]_*.py"))
    if not sources:
        raise UserInputError(f"no analysis notebook in {notebooks_dir()}")
    dest = Path(dest).expanduser().resolve()
    runs = Path(runs_root).expanduser().resolve() if runs_root is not None else work_root() / "runs"
    targets = [dest / f"{s.stem}{suffix}" for s in sources for suffix in (".py", ".ipynb")]
    existing = [t.name for t in targets if t.exists()]
    if existing and not force:
        raise UserInputError(f"{dest} already holds {', '.join(existing[:3])}"
                             f"{' ...' if len(existing) > 3 else ''}; pass --force to overwrite them")
    dest.mkdir(parents=True, exist_ok=True)
    for source in sources:
        notebook = jupytext.read(source)
        for cell in notebook.cells:
            if "parameters" in cell.metadata.get("tags", []):
                if scale is not None:
                    cell.source = _SCALE_LINE.sub(f"scale = {scale!r}", cell.source)
                cell.source = _RUNS_LINE.sub(f"runs_dir = {str(runs)!r} + '/' + scale  # the run store these copies "
                                             "read (diagnostics notebooks copy)", cell.source)
        jupytext.write(notebook, dest / f"{source.stem}.py", fmt="py:percent")
        jupytext.write(notebook, dest / f"{source.stem}.ipynb")
    return sorted(targets)
