"""``diagnostics stats PREDICTIONS [--by category|coarse] [--bootstrap N] [--out DIR]``."""

from __future__ import annotations

from pathlib import Path

import typer


def stats(predictions: Path = typer.Argument(..., help="Predictions table (.parquet, .csv, .tsv or .jsonl)."),
          by: str = typer.Option("category", help="Category level: category (33 fine) or coarse (4)."),
          bootstrap: int = typer.Option(0, help="Multi-Bootstrap samples per setting for CIs (0: skip)."),
          out: Path = typer.Option(Path("stats_out"), help="Folder for the CSV tables and summary.md."),
          seed: int = typer.Option(0, help="Seed of the bootstrap resampling."),
          level: float = typer.Option(0.95, help="Confidence level of the intervals."),
          dataset: list[str] = typer.Option([], "--dataset", help="NAME=PATH: the file of a user-supplied "
                                            "diagnostic the table names (e.g. diagnostic_fr=fr/diagnostic.jsonl); "
                                            "repeatable.")) -> None:
    """Per-category MCC, seed stability, RS corr, agreement and Multi-Bootstrap CIs of a predictions table."""
    from ..data import bind_files
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
        for item in dataset:
            name, sep, path = item.partition("=")
            if not sep or not name.strip() or not path.strip():
                raise ValueError(f"--dataset {item!r} is not of the form NAME=PATH")
            bind_files(name.strip(), {"test": path.strip()})
    except (ValueError, KeyError, FileNotFoundError) as err:
        typer.echo(f"error: {str(err).strip(chr(34))}", err=True)
        raise typer.Exit(2) from None
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
