"""``diagnostics report DIR``."""

from __future__ import annotations

from pathlib import Path

import typer


def report(run_dir: Path = typer.Argument(..., help="Finished pipeline directory holding notebooks/*.ipynb."),
           title: str = typer.Option(None, help="Page title.")) -> None:
    """Render the HTML report (index.html, figures embedded) of a finished run directory."""
    from .html import render_report

    try:
        out = render_report(run_dir, title)
    except FileNotFoundError as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(1) from None
    typer.echo(f"wrote {out}")


def register(app: typer.Typer) -> None:
    """Attach the ``report`` command."""
    app.command("report")(report)
