"""``diagnostics report DIR``."""

from __future__ import annotations

from pathlib import Path

import typer


def report(run_dir: Path = typer.Argument(..., help="Finished pipeline directory holding notebooks/*.ipynb."),
           title: str = typer.Option(None, help="Page title.")) -> None:
    """Render the HTML report (index.html, figures embedded) of a finished run directory."""
    from ._html import render_report

    _check_inputs(run_dir)
    out = render_report(run_dir, title)
    typer.echo(f"wrote {out}")


def _check_inputs(run_dir: Path) -> None:
    """Refuse a missing folder, unreadable notebooks or manifest with one line naming the file."""
    import json

    import nbformat

    from diagnostics.errors import UserInputError

    if not run_dir.exists():
        raise UserInputError(f"{run_dir}: no such pipeline directory")
    if not run_dir.is_dir():
        raise UserInputError(f"{run_dir}: expected a pipeline directory, found a file")
    if (run_dir / "index.html").is_dir():
        raise UserInputError(f"{run_dir / 'index.html'}: expected a file to write the report to, found a folder")
    for path in sorted((run_dir / "notebooks").glob("*.ipynb")):
        try:
            nbformat.read(path, as_version=4)
        except Exception as err:  # noqa: BLE001 - any reader error means the file is not a notebook
            reason = " ".join(str(err).split())[:160] or type(err).__name__
            raise UserInputError(f"{path}: expected an executed notebook, found an unreadable file "
                                 f"({reason})") from None
    manifest = run_dir / "manifest.json"
    if manifest.exists():
        try:
            json.loads(manifest.read_text(encoding="utf-8"))
        except (ValueError, OSError) as err:
            reason = " ".join(str(err).split())[:160]
            raise UserInputError(f"{manifest}: expected JSON, found an unreadable file ({reason})") from None


def register(app: typer.Typer) -> None:
    """Attach the ``report`` command.

    Parameters
    ----------
    app : typer.Typer
        The ``diagnostics`` application.
    """
    app.command("report")(report)
