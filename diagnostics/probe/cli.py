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
        max_selection: int = typer.Option(None, help="Seeded subset of the selection set (default: --max-train)."),
        selection: str = typer.Option("test", help="Where each probe's L2 strength is chosen: 'test' (the study's "
                                                   "protocol: the language's RTE-style test split labelled by the "
                                                   "rule annotator; languages without one fall back to 'holdout' "
                                                   "with a warning) or 'holdout' (20% held out of train + "
                                                   "validation)."),
        class_weight: str = typer.Option("none", help="'none' (the study's protocol) or 'balanced' (classes "
                                                      "weighted inversely to their training frequency)."),
        gold_cv: bool = typer.Option(False, help="Also cross-validate the probes on the diagnostic set's gold "
                                                 "tags (5 stratified folds): probe_<lang>_gold_cv.csv."),
        seed: int = typer.Option(0, help="Seed of subsets, held-out split and control permutations."),
        max_length: int = typer.Option(128, help="Tokens per sentence."),
        dtype: str = typer.Option("float16", help="Cache storage dtype: float16 or float32."),
        threads: int = typer.Option(None, help="torch CPU threads (default: torch's choice)."),
        precision: str = typer.Option("fp32", help="fp32, or bf16 (autocast where the CPU has native bf16)."),
        progress: bool = typer.Option(True, help="Progress bars.")) -> None:
    """Probe every layer for each task; write probe.csv, probe_summary.csv and one figure per metric."""
    import warnings

    from .discover import resolve_models
    from .gold import probe_gold_cv
    from .runner import probe_models

    if threads:
        import torch

        torch.set_num_threads(threads)
    common = dict(seed=seed, max_test=max_test, max_length=max_length, dtype=dtype, progress=progress,
                  precision=precision)
    try:
        weight = _class_weight(class_weight)
        models = resolve_models(model)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", UserWarning)
            table = probe_models(models, lang, tasks, cache_dir or out / "cache", selection=selection,
                                 class_weight=weight, max_train=max_train, max_selection=max_selection, **common)
        for warning in caught:
            typer.echo(f"warning: {warning.message}", err=True)
        gold = (probe_gold_cv(models, lang, tasks, cache_dir or out / "cache", class_weight=weight, **common)
                if gold_cv else None)
    except (FileNotFoundError, ValueError, KeyError, ImportError) as err:
        typer.echo(f"error: {err.args[0] if isinstance(err, KeyError) else err}", err=True)
        raise typer.Exit(1) from None
    written = _write_outputs(table, gold, lang, out)
    best = table.loc[table.groupby(["model", "task"])["balanced_accuracy"].idxmax(),
                     ["model", "task", "layer", "accuracy", "majority", "balanced_accuracy", "selectivity"]]
    where = {"test": "the annotated RTE-style test split", "holdout": "20% held out of the training pairs"}
    typer.echo(f"protocol: L2 strength chosen on {where[table['selection'].iloc[0]]}; class weighting: {weight}")
    typer.echo(best.to_string(index=False))
    typer.echo(f"wrote {out}/" + ", ".join(written))


def _class_weight(value: str) -> str | None:
    if value.lower() in ("none", ""):
        return None
    if value.lower() == "balanced":
        return "balanced"
    raise ValueError(f"--class-weight must be 'none' or 'balanced', found {value!r}")


def _write_outputs(table, gold, lang: str, out: Path) -> list[str]:
    """Tables and one figure per metric under ``out``; the written file names."""
    from diagnostics.plots.probe import accuracy_by_layer

    from .runner import layer_summary

    out.mkdir(parents=True, exist_ok=True)
    written = [f"probe_{lang}.csv", f"probe_{lang}_summary.csv"]
    table.to_csv(out / written[0], index=False)
    layer_summary(table).to_csv(out / written[1], index=False)
    for metric in ("accuracy", "balanced_accuracy", "selectivity"):
        fig = accuracy_by_layer(table, metric=metric)
        fig.savefig(out / f"probe_{lang}_{metric}.png", dpi=120, bbox_inches="tight")
        written.append(f"probe_{lang}_{metric}.png")
    if gold is not None:
        gold.to_csv(out / f"probe_{lang}_gold_cv.csv", index=False)
        written.append(f"probe_{lang}_gold_cv.csv")
    return written


def register(app: typer.Typer) -> None:
    """Add the ``probe`` command group to the main app."""
    app.add_typer(probe_app, name="probe")
