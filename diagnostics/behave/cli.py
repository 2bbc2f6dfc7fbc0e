"""``diagnostics behave generate|run|list``."""

from __future__ import annotations

from pathlib import Path

import typer

behave_app = typer.Typer(help="CheckList-style behavioural tests (MFT / INV / DIR) per language.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    """Add the ``behave`` command group to the main app."""
    app.add_typer(behave_app, name="behave")


@behave_app.command("list")
def list_tests(lang: str = typer.Option(None, "--lang", help="Only this language (default: all).")) -> None:
    """List the tests of each template file: id, type, capability."""
    from .errors import TemplateError
    from .templates import available_languages, load_templates

    try:
        for language in [lang] if lang else available_languages():
            spec = load_templates(language)
            for test in spec.tests.values():
                typer.echo(f"{language}\t{test.id}\t{test.type}\t{test.capability}")
    except (TemplateError, FileNotFoundError) as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(1) from None


@behave_app.command("generate")
def generate(out: Path = typer.Argument(..., help="Suite file to write (jsonl)."),
             lang: list[str] = typer.Option(..., "--lang", help="Language code or template file; repeatable."),
             seed: int = typer.Option(0, help="Generation seed (same seed -> identical suite)."),
             max_per_test: int = typer.Option(50, help="At most this many cases per test.")) -> None:
    """Generate a suite from the templates of one or more languages."""
    from .errors import TemplateError
    from .generate import generate_suite
    from .suite import save_suite

    if max_per_test < 1:
        typer.echo("error: --max-per-test must be >= 1", err=True)
        raise typer.Exit(2)
    try:
        cases = [c for language in lang for c in generate_suite(language, seed=seed, max_per_test=max_per_test)]
    except (TemplateError, FileNotFoundError) as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(1) from None
    save_suite(cases, out)
    tests = len({(c.language, c.test) for c in cases})
    typer.echo(f"{out}: {len(cases)} cases, {tests} tests, languages {', '.join(sorted({c.language for c in cases}))}")


@behave_app.command("run")
def run(suite: Path = typer.Argument(..., help="Suite file (jsonl) from `behave generate`."),
        model: list[Path] = typer.Option(..., "--model", help="Run directory or model folder; repeat for seeds."),
        out: Path = typer.Option(None, help="Write per-case results here (.csv or .parquet)."),
        by: str = typer.Option("capability", help="Print failure rates by test | capability | language."),
        batch_size: int = typer.Option(64, help="Pairs per forward pass."),
        precision: str = typer.Option("fp32", help="fp32, or bf16 (autocast where the CPU has native bf16).")) -> None:
    """Run models on a suite; print failure rates (and their spread across seeds when several models)."""
    from .errors import SuiteFormatError
    from .runner import failure_rates, run_sweep, summarise_across_seeds
    from .suite import load_suite

    if by not in ("test", "capability", "language"):
        typer.echo("error: --by must be test, capability or language", err=True)
        raise typer.Exit(2)
    try:
        cases = load_suite(suite)
        results = run_sweep(cases, model, batch_size=batch_size, precision=precision)
    except (SuiteFormatError, FileNotFoundError, ValueError) as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(1) from None
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        results.to_parquet(out, index=False) if out.suffix == ".parquet" else results.to_csv(out, index=False)
    rates = failure_rates(results, by=by)
    typer.echo(rates.drop(columns=["experiment"]).to_string(index=False))
    if results["run"].nunique() > 1 and results["seed"].notna().all() and by != "language":
        summary = summarise_across_seeds(results, by=by)
        typer.echo("\nacross seeds:")
        typer.echo(summary.rates.to_string(index=False))
        typer.echo("\nstability:")
        typer.echo(summary.stability.to_string(index=False))
