"""``diagnostics behave generate|run|list``."""

from __future__ import annotations

from pathlib import Path

import typer

behave_app = typer.Typer(help="CheckList-style behavioural tests (MFT / INV / DIR) per language.", no_args_is_help=True)


@behave_app.command("list")
def list_tests(lang: str = typer.Option(None, "--lang", help="Only this language (default: all).")) -> None:
    """List the tests of each template file: id, type, capability."""
    from diagnostics.behave import available_languages, load_templates

    for language in [lang] if lang else available_languages():
        spec = load_templates(language)
        for test in spec.tests.values():
            typer.echo(f"{language}\t{test.id}\t{test.type}\t{test.capability}")


@behave_app.command("generate")
def generate(out: Path = typer.Argument(..., help="Suite file to write (jsonl)."),
             lang: list[str] = typer.Option(..., "--lang", help="Language code or template file; repeatable."),
             seed: int = typer.Option(0, help="Generation seed (same seed -> identical suite)."),
             max_per_test: int = typer.Option(50, help="At most this many cases per test.")) -> None:
    """Generate a suite from the templates of one or more languages."""
    from diagnostics.behave import generate_suite, save_suite
    from diagnostics.core.errors import UserInputError
    from diagnostics.core.io_utils import atomic_path

    if max_per_test < 1:
        raise UserInputError(f"--max-per-test: expected a number >= 1, found {max_per_test}")
    _check_output_file(out, "OUT")
    cases = [c for language in lang for c in generate_suite(language, seed=seed, max_per_test=max_per_test)]
    out.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(out) as tmp:
        save_suite(cases, tmp)
    tests = len({(c.language, c.test) for c in cases})
    typer.echo(f"{out}: {len(cases)} cases, {tests} tests, languages {', '.join(sorted({c.language for c in cases}))}")


@behave_app.command("run")
def run(suite: Path = typer.Argument(..., help="Suite file (jsonl) from `behave generate`."),
        model: list[Path] = typer.Option(..., "--model", help="Run directory or model folder; repeat for seeds."),
        out: Path = typer.Option(None, help="Write per-case results here (.csv or .parquet) and their figure "
                                            "beside it (.png)."),
        by: str = typer.Option("capability", help="Print failure rates by test | capability | language."),
        batch_size: int = typer.Option(64, help="Pairs per forward pass."),
        precision: str = typer.Option("fp32", help="fp32, or bf16 (autocast where the CPU has native bf16)."),
        allow_untrained_head: bool = typer.Option(False, "--allow-untrained-head",
                                                  help="Score a model folder whose classification head is not "
                                                       "trained (a pretrained encoder: its head is random). By "
                                                       "default such a folder is refused.")) -> None:
    """Run models on a suite; print failure rates (and their spread across seeds when several models).

    Models are read from safetensors only; a folder holding only `pytorch_model.bin` is refused (convert it), and
    so is one without a trained classification head unless `--allow-untrained-head`.
    """
    from diagnostics.behave import failure_rates, load_suite, run_sweep, summarise_across_seeds
    from diagnostics.core.errors import UserInputError
    from diagnostics.core.tables import write_table
    from diagnostics.models import PRECISIONS

    if by not in ("test", "capability", "language"):
        raise UserInputError(f"--by: expected test, capability or language, found {by!r}")
    if batch_size < 1:
        raise UserInputError(f"--batch-size: expected a number >= 1, found {batch_size}")
    if precision not in PRECISIONS:
        raise UserInputError(f"--precision: expected {' or '.join(PRECISIONS)}, found {precision!r}")
    if out is not None:
        _check_output_file(out, "--out", (".csv", ".parquet"))
    try:
        cases = load_suite(suite)
    except UnicodeDecodeError:
        raise UserInputError(f"{suite}: expected a UTF-8 suite file (jsonl), found undecodable bytes") from None
    results = run_sweep(cases, model, batch_size=batch_size, precision=precision,
                        allow_untrained_head=allow_untrained_head)
    if out is not None:
        write_table(results, out)
        typer.echo(f"wrote {out}, {_write_figure(results, out, by)}")
    rates = failure_rates(results, by=by)
    typer.echo(rates.drop(columns=["experiment"]).to_string(index=False))
    if results["run"].nunique() > 1 and results["seed"].notna().all() and by != "language":
        summary = summarise_across_seeds(results, by=by)
        typer.echo("\nacross seeds:")
        typer.echo(summary.rates.to_string(index=False))
        typer.echo("\nstability:")
        typer.echo(summary.stability.to_string(index=False))


def _write_figure(results, out: Path, by: str) -> Path:
    """The failure rates as a figure beside ``out`` (``<stem>.png``): per seed when several seeded runs, else a
    capability (or test) x language heat map."""
    from diagnostics.plots import failure_by_seed, failure_heatmap, save

    rows = by if by in ("capability", "test") else "capability"
    seeded = results["run"].nunique() > 1 and results["seed"].notna().all()
    figure = failure_by_seed(results, by=rows) if seeded else failure_heatmap(results, by=rows)
    return save(figure, out.parent, out.stem)


def _check_output_file(path: Path, option: str, suffixes: tuple[str, ...] | None = None) -> None:
    """Refuse an output file of another type, a folder, or one under a file, before any work is done."""
    from diagnostics.core.errors import UserInputError

    if suffixes is not None and path.suffix.lower() not in suffixes:
        raise UserInputError(f"{option} {path}: expected a {' or '.join(suffixes)} file, found suffix {path.suffix!r}")
    if path.is_dir():
        raise UserInputError(f"{option} {path}: expected a file, found a folder")
    for folder in path.parents:
        if folder.exists():
            if not folder.is_dir():
                raise UserInputError(f"{option} {path}: expected a folder above it, but {folder} is a file")
            return
