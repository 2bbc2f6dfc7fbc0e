"""``diagnostics pipeline``: the main job."""

from __future__ import annotations

from pathlib import Path

import typer


def pipeline(scale: str = typer.Option("demo", help="tiny | demo | paper."),
             out: Path = typer.Option(None, help="Report folder (default reports/<scale>)."),
             runs: Path = typer.Option(None, help="Run store (default runs/<scale>); finished runs are reused."),
             notebook: list[str] = typer.Option(None, help="Only these notebooks (stems, repeatable).")) -> None:
    """Sweeps -> statistics -> probes -> executed notebooks -> <out>/index.html."""
    from .runner import run_pipeline
    from .scales import SCALES

    if scale not in SCALES:
        typer.echo(f"error: --scale must be one of {', '.join(SCALES)}, found {scale!r}", err=True)
        raise typer.Exit(2)
    index = run_pipeline(scale, out, runs, notebook or None)
    typer.echo(f"report: {index}")


def register(app: typer.Typer) -> None:
    """Attach the ``pipeline`` command."""
    app.command("pipeline")(pipeline)
