"""``diagnostics data list|show|validate``."""

from __future__ import annotations

from pathlib import Path

import typer

from .registry import KINDS

data_app = typer.Typer(help="Bundled datasets: list, inspect, validate files.", no_args_is_help=True)


@data_app.command("list")
def list_datasets() -> None:
    """List registered datasets with language, kind and splits."""
    from .registry import available

    table = available()
    table["splits"] = table["splits"].map(lambda s: ",".join(s) or "(path=)")
    typer.echo(table.to_string(index=False))


@data_app.command("show")
def show(name: str = typer.Argument(..., help="Registered dataset name (see `diagnostics data list`)."),
         path: Path = typer.Option(None, help="Read this file in the dataset's format instead of the bundled copy.")) -> None:
    """Counts per split, label balance and rows per diagnostic category."""
    from .errors import DataFormatError
    from .summary import summarise

    try:
        typer.echo(summarise(name, path=path))
    except (DataFormatError, KeyError, FileNotFoundError) as err:
        typer.echo(f"error: {err.args[0] if isinstance(err, KeyError) else err}", err=True)
        raise typer.Exit(1) from None


@data_app.command("validate")
def validate(path: Path = typer.Argument(..., help="File to check."),
             kind: str = typer.Option("rte", help=f"File format: {', '.join(KINDS)}."),
             language: str = typer.Option("xx", help="Language code recorded for the rows.")) -> None:
    """Check a file strictly; exit 0 when valid, 1 with `file:line: expected ..., found ...` on stderr."""
    from .errors import DataFormatError
    from .registry import load

    if kind not in KINDS:
        typer.echo(f"error: --kind must be one of {', '.join(KINDS)}, found {kind!r}", err=True)
        raise typer.Exit(2)
    if not path.is_file():
        typer.echo(f"error: {path}: no such file", err=True)
        raise typer.Exit(1)
    try:
        frame = load(KINDS[kind], path=path, language=language)
    except DataFormatError as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(1) from None
    typer.echo(f"{path}: OK, {len(frame)} records ({kind} format)")


def register(app: typer.Typer) -> None:
    """Attach the ``data`` command group."""
    app.add_typer(data_app, name="data")
