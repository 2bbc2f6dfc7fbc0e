"""``diagnostics report DIR``."""

from __future__ import annotations

from pathlib import Path

import typer


def report(run_dir: Path = typer.Argument(..., help="Finished pipeline directory holding notebooks/*.ipynb."),
           title: str = typer.Option(None, help="Page title."),
           compare_a: list[str] = typer.Option([], "--compare-a", help="KEY=VALUE naming setting A (the baseline) "
                                                                        "of the instability explorer's data, "
                                                                        "repeatable (experiment=base): explorer.html "
                                                                        "opens with A and B side by side."),
           compare_b: list[str] = typer.Option([], "--compare-b", help="KEY=VALUE naming setting B, repeatable "
                                                                        "(experiment=extra-1000).")) -> None:
    """Render the HTML report (index.html, figures embedded) of a finished run directory.

    With --compare-a and --compare-b, the instability explorer's page (explorer.html) opens with those two settings
    side by side: per category both settings' per-seed MCC, per example which seeds of A and of B are right
    (fixed by B, broken by B, unstable in either).
    """
    from diagnostics.report import render_report

    _check_inputs(run_dir)
    compare = _compare_options(run_dir, compare_a, compare_b)
    out = render_report(run_dir, title, compare=compare)
    typer.echo(f"wrote {out}")
    if compare is not None:
        typer.echo(f"explorer.html opens with {_text(compare[0])} (A) and {_text(compare[1])} (B) side by side")


def _text(selection: dict) -> str:
    return ",".join(f"{k}={v}" for k, v in selection.items())


def _selection(items: list[str], option: str) -> dict[str, str]:
    """``KEY=VALUE`` options as a dict (the value may hold ``=``)."""
    from ._options import key_values

    return key_values(items, option, f"KEY=VALUE, e.g. {option} experiment=base")


def _compare_options(run_dir: Path, compare_a: list[str], compare_b: list[str]) -> tuple[dict, dict] | None:
    """The two selections of --compare-a / --compare-b, checked against the explorer's data before anything is
    written; None without them."""
    from diagnostics.core.errors import UserInputError
    from diagnostics.explorer import PAYLOAD_NAME, read_payload
    from diagnostics.report import resolve_pair

    if not compare_a and not compare_b:
        return None
    if not compare_a or not compare_b:
        given, missing = ("--compare-a", "--compare-b") if compare_a else ("--compare-b", "--compare-a")
        raise UserInputError(f"{given} needs {missing} too: name both settings, e.g. --compare-a experiment=base "
                             "--compare-b experiment=extra-1000")
    selections = (_selection(compare_a, "--compare-a"), _selection(compare_b, "--compare-b"))
    source = run_dir / "figures" / PAYLOAD_NAME
    if not source.is_file():
        raise UserInputError(f"{source}: no instability explorer data to compare settings in; run notebook "
                             "10_instability_explorer (the pipeline does) first")
    resolve_pair(read_payload(source), *selections)
    return selections


def _check_inputs(run_dir: Path) -> None:
    """Refuse a missing folder, unreadable notebooks or manifest with one line naming the file."""
    import json

    import nbformat

    from diagnostics.core.errors import UserInputError

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
