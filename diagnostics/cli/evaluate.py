"""``diagnostics evaluate MODEL... --dataset NAME|NAME:SPLIT|NAME=PATH ...``: score classifiers you already have."""

from __future__ import annotations

from pathlib import Path

import typer


def evaluate(models: list[str] = typer.Argument(..., help="Sequence classifiers: model folders (a Trainer output, "
                                                          "a sweep's .../seed=<k>/checkpoint), hub ids (cached, or "
                                                          "downloaded when the hub may be asked) or 'embedded'."),
             dataset: list[str] = typer.Option(..., "--dataset", help="A set to score, repeatable: axb, lidirus, "
                                                                      "swediagnostics, rte:validation, "
                                                                      "terra:validation, or NAME=PATH for a user "
                                                                      "file in NAME's format (diagnostic_fr=fr.tsv)."),
             out: Path = typer.Option(Path("runs"), "--out", help="The run store the runs go into."),
             experiment: str = typer.Option("evaluated", "--experiment", help="experiment of the runs."),
             name: str = typer.Option(None, "--name", help="model of every run (several checkpoints as seeds of one "
                                                           "model); default: a sweep checkpoint's own model, the "
                                                           "path without its seed with --seed-pattern, else the "
                                                           "model's name."),
             seeds: str = typer.Option(None, "--seeds", help="Seed of each model, in order (0,1,2)."),
             seed_pattern: str = typer.Option(None, "--seed-pattern", help="Regular expression searched in each "
                                                                           "model as given (the last occurrence "
                                                                           "counts): group 'seed' (or the first) is "
                                                                           r"the seed, e.g. 'seed(\d+)' for "
                                                                           "ckpt/seed13/."),
             label_map: str = typer.Option(None, "--label-map", help="Which head class is which label, overriding "
                                                                     "the rule read from config.id2label: "
                                                                     "INDEX=LABEL or NAME=LABEL items, e.g. "
                                                                     "0=not_entailment,1=entailment or "
                                                                     "LABEL_0=contradiction,LABEL_1=neutral,"
                                                                     "LABEL_2=entailment (3-way labels collapse)."),
             batch_size: int = typer.Option(64, "--batch-size", help="Pairs per forward pass."),
             max_length: int = typer.Option(None, "--max-length", help="Tokens per pair (default: a sweep "
                                                                       "checkpoint's own setting, else the "
                                                                       "tokenizer's limit, at most 512)."),
             device: str = typer.Option("auto", "--device", help="auto (CUDA, then Apple mps, then CPU), cpu, "
                                                                 "cuda, cuda:<n> or mps."),
             precision: str = typer.Option("fp32", "--precision", help="fp32, bf16 or fp16 (autocast; fp16 on a "
                                                                       "GPU only)."),
             table: Path = typer.Option(None, "--table", help="Where to write the predictions of every run of the "
                                                              "experiment (default: <out>/<experiment>/"
                                                              "predictions.parquet), for stats and compare."),
             progress: bool = typer.Option(True, "--progress/--no-progress", help="Show progress bars.")) -> None:
    """Score NLI classifiers on diagnostic or NLI sets; every model and language becomes a run of the store.

    The head's labels come from the model's config.id2label (entailment / neutral / contradiction or entailment /
    not_entailment, any order and case); neutral and contradiction collapse to not_entailment. The rule applied is
    printed and recorded in each run's config.json; --label-map overrides it. P(entailment) is the softmax mass of
    the entailment classes; the prediction is entailment when it is at least 0.5. A run finished before with the
    same model, sets, label rule, length and precision is not evaluated again.
    """
    from diagnostics.core.file_checks import check_output_path
    from diagnostics.core.tables import write_table
    from diagnostics.evaluate import evaluate_models
    from diagnostics.finetune import collect_predictions

    from ._options import int_list

    seed_list = int_list(seeds, "--seeds")
    table = table if table is not None else out / experiment / "predictions.parquet"
    check_output_path(table, option="--table")
    result = evaluate_models(models, dataset, out=out, experiment=experiment, name=name, seeds=seed_list,
                             seed_pattern=seed_pattern, label_map=label_map, batch_size=batch_size,
                             max_length=max_length, device=device, precision=precision, progress=progress)
    for run in result.runs.itertuples():
        typer.echo(f"{run.language}/{run.model}/seed={run.seed}: {run.state} ({run.rows} rows) {run.path}")
    rules = {}
    for path in result.runs["path"]:
        from diagnostics.evaluate import stored_evaluation

        record = stored_evaluation(Path(path)) or {}
        rules.setdefault(record.get("model_given"), record.get("label_rule"))
    for given, rule in rules.items():
        shown = ", ".join(f"{k} -> {v}" for k, v in (rule or {}).items())
        typer.echo(f"labels of {given}: {shown}")
    write_table(collect_predictions(out / experiment), table)
    typer.echo(f"wrote {table}; next: diagnostics stats {table}")
