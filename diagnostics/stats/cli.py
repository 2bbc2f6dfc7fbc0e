"""``diagnostics stats PREDICTIONS [--by category|coarse] [--bootstrap N] [--out DIR]``."""

from __future__ import annotations

from pathlib import Path

import typer


def stats(predictions: Path = typer.Argument(..., help="Predictions table (.parquet, .csv, .tsv or .jsonl)."),
          by: str = typer.Option("category", help="Category level: category (33 fine) or coarse (4)."),
          bootstrap: int = typer.Option(0, help="Multi-Bootstrap samples per setting for CIs (0: skip)."),
          out: Path = typer.Option(Path("stats_out"), help="Folder for the CSV tables and summary.md."),
          seed: int = typer.Option(0, help="Seed of the bootstrap resampling."),
          level: float = typer.Option(0.95, help="Confidence level of the intervals.")) -> None:
    """Per-category MCC, seed stability, RS corr, agreement and Multi-Bootstrap CIs of a predictions table."""
    from ..data.errors import DataFormatError
    from .report import write_report
    from .table import read_predictions

    if by not in ("category", "coarse"):
        typer.echo(f"error: --by must be 'category' or 'coarse', found {by!r}", err=True)
        raise typer.Exit(2)
    if bootstrap < 0 or not 0 < level < 1:
        typer.echo("error: --bootstrap must be >= 0 and --level in (0, 1)", err=True)
        raise typer.Exit(2)
    try:
        table = read_predictions(predictions)
    except (DataFormatError, FileNotFoundError) as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(1) from None
    paths = write_report(table, out, by=by, n_boot=bootstrap, seed=seed, level=level)
    typer.echo(paths["summary"].read_text(encoding="utf-8"))
    typer.echo("wrote " + ", ".join(str(p) for p in paths.values()))


def register(app: typer.Typer) -> None:
    """Attach the ``stats`` command."""
    app.command("stats")(stats)
