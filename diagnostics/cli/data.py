"""``diagnostics data list|show|validate``."""

from __future__ import annotations

from pathlib import Path

import typer

from diagnostics.data import KINDS

data_app = typer.Typer(help="Bundled datasets: list, inspect, validate files.", no_args_is_help=True)


@data_app.command("list")
def list_datasets() -> None:
    """List registered datasets with language, kind and splits."""
    from diagnostics.data import available

    table = available()
    table["splits"] = table["splits"].map(lambda s: ",".join(s) or "(--path)")
    typer.echo(table.to_string(index=False))


@data_app.command("show")
def show(name: str = typer.Argument(..., help="Registered dataset name (see `diagnostics data list`)."),
         path: Path = typer.Option(None, help="Read this file in the dataset's format instead of the bundled "
                                               "copy.")) -> None:
    """Show counts per split, label balance and rows per diagnostic category."""
    from diagnostics.core.errors import UserInputError
    from diagnostics.data import get_spec, summarise

    if path is None and get_spec(name).folder is None:  # the library's message names path=, the command --path
        raise UserInputError(f"dataset {name!r} is not bundled (no public copy is reachable offline): give your own "
                             f"copy with --path FILE, e.g. diagnostics data show {name} --path train.jsonl")
    typer.echo(summarise(name, path=path))  # a malformed file or an unknown name: one line, exit code 2


@data_app.command("validate")
def validate(path: Path = typer.Argument(..., help="File to check."),
             kind: str = typer.Option("rte", help=f"File format: {', '.join(KINDS)}."),
             language: str = typer.Option("xx", help="Language code recorded for the rows.")) -> None:
    """Check a file strictly; exit 0 when valid, 2 with `file:line: expected ..., found ...` on stderr."""
    from diagnostics.core.errors import UserInputError
    from diagnostics.data import load

    if kind not in KINDS:
        import difflib

        near = difflib.get_close_matches(kind, list(KINDS), n=1)
        raise UserInputError(f"--kind: expected one of {', '.join(KINDS)}, found {kind!r}"
                             + (f" (did you mean {near[0]!r}?)" if near else ""))
    if not path.is_file():
        raise (IsADirectoryError if path.is_dir() else FileNotFoundError)(2, "no such file", str(path))
    frame = load(KINDS[kind], path=path, language=language)
    labels = int(frame["label"].notna().sum())
    if labels == len(frame):
        state = "labelled"
    elif labels == 0:
        state = "unlabelled: usable as a test set, not for training"
    else:
        state = f"{labels} labelled"
    typer.echo(f"{path}: OK, {len(frame)} records ({kind} format, {state})")
