"""``diagnostics notebooks copy DEST``: editable copies of the analysis notebooks for an installed package
(:func:`diagnostics.notebooks.copy_notebooks` writes them)."""

from __future__ import annotations

from pathlib import Path

import typer

notebooks_app = typer.Typer(help="The analysis notebooks: editable copies.", no_args_is_help=True)


@notebooks_app.command("copy")
def copy_command(dest: Path = typer.Argument(..., help="Folder for the copies (created)."),
                 runs: Path = typer.Option(None, "--runs", help="Folder holding the run stores (<runs>/<scale>); "
                                           "default: runs/ of the project root, or of the working directory "
                                           "for an installed package."),
                 scale: str = typer.Option(None, "--scale", help="The scale the copies read (tiny, demo, paper); "
                                           "default: the notebooks' own, demo."),
                 force: bool = typer.Option(False, "--force", help="Overwrite copies already in DEST.")) -> None:
    """Write editable copies of the analysis notebooks (paired .py and .ipynb) into DEST.

    Parameters
    ----------
    dest : Path
        Folder for the copies.
    runs : Path, optional
        Folder holding the run stores.
    scale : str, optional
        The scale the copies read.
    force : bool
        Overwrite existing copies.
    """
    from diagnostics.core.errors import UserInputError
    from diagnostics.notebooks import copy_notebooks

    if scale is not None and scale not in ("tiny", "demo", "paper"):
        raise UserInputError(f"--scale: expected tiny, demo or paper, found {scale!r}")
    written = copy_notebooks(dest, runs, scale=scale, force=force)
    typer.echo(f"{len(written) // 2} notebooks (paired .py and .ipynb) copied to {Path(dest).resolve()}; open them "
               f"with `jupyter lab {Path(dest)}`")
