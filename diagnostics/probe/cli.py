"""``diagnostics probe run``: layer-wise probing of a pretrained model and its fine-tuned seeds."""

from __future__ import annotations

from pathlib import Path

import typer

probe_app = typer.Typer(help="Layer-wise linear probing of pretrained and fine-tuned models.", no_args_is_help=True)


@probe_app.command("run")
def run(model: list[str] = typer.Option(..., "--model", "-m",
                                        help="Model name ('embedded'), model folder, run folder (seed=<k>) or a "
                                             "run-store folder whose seed=<k> runs are all probed. Repeatable."),
        lang: str = typer.Option("en", help="Language: en (RTE -> AX-b), ru (TERRa -> LiDiRus)."),
        tasks: str = typer.Option("logic,lexical_semantics,predicate_argument_structure",
                                  help="Comma-separated coarse or fine categories."),
        out: Path = typer.Option(Path("reports/probe"), help="Output folder (tables + figures)."),
        cache_dir: Path = typer.Option(None, help="Vector cache folder (default: <out>/cache)."),
        max_train: int = typer.Option(None, help="Seeded subset of training pairs (default: all)."),
        max_test: int = typer.Option(None, help="Seeded subset of diagnostic pairs (default: all)."),
        seed: int = typer.Option(0, help="Seed of subsets, held-out split and control permutations."),
        max_length: int = typer.Option(128, help="Tokens per sentence."),
        dtype: str = typer.Option("float16", help="Cache storage dtype: float16 or float32."),
        threads: int = typer.Option(None, help="torch CPU threads (default: torch's choice)."),
        precision: str = typer.Option("fp32", help="fp32, or bf16 (autocast where the CPU has native bf16)."),
        progress: bool = typer.Option(True, help="Progress bars.")) -> None:
    """Probe every layer for each task; write probe.csv, probe_summary.csv and one figure per metric."""
    from diagnostics.plots.probe import accuracy_by_layer

    from .discover import resolve_models
    from .runner import layer_summary, probe_models

    if threads:
        import torch

        torch.set_num_threads(threads)
    try:
        models = resolve_models(model)
        table = probe_models(models, lang, tasks, cache_dir or out / "cache", max_train=max_train,
                             max_test=max_test, seed=seed, max_length=max_length, dtype=dtype, progress=progress,
                             precision=precision)
    except (FileNotFoundError, ValueError, KeyError, ImportError) as err:
        typer.echo(f"error: {err.args[0] if isinstance(err, KeyError) else err}", err=True)
        raise typer.Exit(1) from None
    out.mkdir(parents=True, exist_ok=True)
    table.to_csv(out / f"probe_{lang}.csv", index=False)
    layer_summary(table).to_csv(out / f"probe_{lang}_summary.csv", index=False)
    for metric in ("accuracy", "selectivity"):
        fig = accuracy_by_layer(table, metric=metric)
        fig.savefig(out / f"probe_{lang}_{metric}.png", dpi=120, bbox_inches="tight")
    best = table.loc[table.groupby(["model", "task"])["accuracy"].idxmax(),
                     ["model", "task", "layer", "accuracy", "majority", "selectivity"]]
    typer.echo(best.to_string(index=False))
    typer.echo(f"wrote {out}/probe_{lang}.csv, probe_{lang}_summary.csv, probe_{lang}_accuracy.png, "
               f"probe_{lang}_selectivity.png")


def register(app: typer.Typer) -> None:
    """Add the ``probe`` command group to the main app."""
    app.add_typer(probe_app, name="probe")
