"""``diagnostics predictions import|export`` and ``diagnostics compare TABLE_A TABLE_B``."""

from __future__ import annotations

from pathlib import Path

import typer

predictions_app = typer.Typer(help="Bring your own predictions: import other tools' files as the predictions table "
                                   "(lm-evaluation-harness --log_samples, Trainer.predict scores, CSV / TSV / JSONL "
                                   "/ parquet tables), or export the table to them.", no_args_is_help=True)


def _separator(sep: str | None) -> str | None:
    if sep is None:
        return None
    return {"\\t": "\t", "tab": "\t", "TAB": "\t"}.get(sep, sep)


@predictions_app.command("import")
def import_files(
        files: list[Path] = typer.Argument(..., help="Prediction files: one per seed (lm-eval samples, Trainer "
                                                     "scores, tables) or tables with a seed / run column."),
        dataset: str = typer.Option(..., "--dataset", help="The dataset the predictions are for (axb, lidirus, "
                                                           "swediagnostics ...; NAME=PATH for a user diagnostic)."),
        out: Path = typer.Option(..., "--out", help="The predictions table to write (.parquet, .csv, .tsv or "
                                                    ".jsonl)."),
        fmt: str = typer.Option("auto", "--format", help="auto (by suffix and content), csv, tsv, jsonl, parquet, "
                                                         "lm-eval or trainer."),
        mapping: list[str] = typer.Option([], "--map", help="ROLE=COLUMN, repeatable: roles id, premise, "
                                                            "hypothesis, label, prediction, probability, logits "
                                                            "(COLUMN,COLUMN... in class order), seed (or the run "
                                                            "column), pretrain_seed, experiment, model, language; "
                                                            "lm-eval paths such as doc.idx."),
        label_map: str = typer.Option(None, "--label-map", help="VALUE=LABEL,...: which file value (or score / "
                                                                "choice index) is which label, e.g. "
                                                                "0=entailment,1=not_entailment; 3-way labels "
                                                                "collapse."),
        sep: str = typer.Option(None, "--sep", help="Separator of CSV files (default: sniffed; '\\t' or tab for "
                                                    "tabs)."),
        match: str = typer.Option("auto", "--match", help="How rows find their example: auto, id, text "
                                                          "(normalised premise and hypothesis) or position."),
        seeds: str = typer.Option(None, "--seeds", help="Seed of each file, in order (0,1,2); default a seed "
                                                        "column, --seed-pattern, else 0, 1, 2 ..."),
        pretrain_seeds: str = typer.Option(None, "--pretrain-seeds", help="Pretraining seed of each file (nested "
                                                                          "designs)."),
        seed_pattern: str = typer.Option(None, "--seed-pattern", help="Regular expression searched in each file's "
                                                                      "path as given, folders included (the last "
                                                                      "occurrence counts): group 'seed' (or the "
                                                                      "first) is the seed, group 'pretrain_seed' the "
                                                                      r"pretraining seed; e.g. 'seed(\d+)' for "
                                                                      "out/seed13/model/samples_rte_x.jsonl."),
        experiment: str = typer.Option("imported", "--experiment", help="experiment value of the rows."),
        model: str = typer.Option("imported", "--model", help="model value of the rows (without a model column)."),
        language: str = typer.Option(None, "--language", help="language value of the rows (default: the "
                                                              "dataset's)."),
        order: Path = typer.Option(None, "--order", help="Text file with the example id of each row of a "
                                                         "position-matched file (default: the dataset's order)."),
        lm_eval_filter: str = typer.Option(None, "--filter", help="lm-eval samples logged under several filters: "
                                                                  "the filter to import."),
        allow_partial: bool = typer.Option(False, "--allow-partial", help="Import the matched rows even when some "
                                                                          "rows did not match or runs lack "
                                                                          "examples (listed in the report)."),
        trust_labels: bool = typer.Option(False, "--trust-labels", help="Keep the files' gold labels where they "
                                                                        "differ from the dataset's (else refused)."),
        report: Path = typer.Option(None, "--report", help="Folder of the import report (default: "
                                                           "<out>_import_report next to --out).")) -> None:
    """Import prediction files of other tools as the one predictions table, with a report of how rows matched.

    Every row is matched to an example of --dataset by id, by its premise and hypothesis (after Unicode NFKC,
    quote and white-space normalisation) or by position; gold labels come from the dataset. Rows that do not match
    and examples a run lacks are listed in the report (unmatched.csv, missing.csv) and refuse the import unless
    --allow-partial; files whose own gold labels differ from the dataset's are refused unless --trust-labels.
    """
    from diagnostics.core.errors import UserInputError
    from diagnostics.core.file_checks import check_output_path
    from diagnostics.data import user_file_refs
    from diagnostics.predictions import TABLE_SUFFIXES, ImportRefusedError, import_with_report, write_table
    from diagnostics.settings import split_pair

    from ._options import int_list, key_values

    if out.suffix.lower() not in TABLE_SUFFIXES:
        raise UserInputError(f"--out {out}: expected a {', '.join(TABLE_SUFFIXES)} file name")
    report = report if report is not None else out.with_name(f"{out.stem}_import_report")
    check_output_path(out)  # both outputs are checked before anything is read or written
    check_output_path(report, folder=True, option="--report")
    if report.resolve() == out.resolve():
        raise UserInputError(f"--report {report}: the same path as --out")
    name = split_pair(dataset)[0]
    user_file = user_file_refs([dataset], names=True).get(name)
    try:
        result = import_with_report(
            files, name, dataset_file=user_file.path if user_file else None, fmt=fmt,
            columns=key_values(mapping, "--map"), label_map=label_map, sep=_separator(sep),
            match=match, seeds=int_list(seeds, "--seeds"), pretrain_seeds=int_list(pretrain_seeds, "--pretrain-seeds"),
            seed_pattern=seed_pattern, experiment=experiment, model=model, language=language, order=order,
            lm_eval_filter=lm_eval_filter, allow_partial=allow_partial, trust_labels=trust_labels)
    except ImportRefusedError as err:
        err.result.write(report)
        typer.echo(err.result.summary(), err=True)
        raise ImportRefusedError(f"{err} (report: {report})", err.result) from None
    result.write(report)
    write_table(result.table, out)  # last: a table on disk always has its report beside it
    typer.echo(result.summary())
    typer.echo(f"wrote {out} ({len(result.table)} rows) and the report {report}")


@predictions_app.command("export")
def export_table(
        table: Path = typer.Argument(..., help="A predictions table (.parquet, .csv, .tsv or .jsonl)."),
        to: str = typer.Option(..., "--to", help="lm-eval (one --log_samples file per run), trainer (one score "
                                                 "array per run) or table (a colleague's table: .csv, .tsv, "
                                                 ".jsonl or .parquet)."),
        out: Path = typer.Option(..., "--out", help="Folder (lm-eval, trainer) or file (table)."),
        text: bool = typer.Option(False, "--text", help="table: write premise and hypothesis instead of the id."),
        label_map: str = typer.Option(None, "--label-map", help="table: codes of the labels "
                                                                "(0=entailment,1=not_entailment)."),
        run_column: str = typer.Option("seed", "--run-column", help="table: name of the seed column."),
        trainer_format: str = typer.Option("npy", "--trainer-format", help="trainer: npy, npz or json."),
        select: list[str] = typer.Option([], "--select", help="KEY=VALUE filter of the table's rows, repeatable "
                                                              "(one dataset is exported at a time).")) -> None:
    """Write a predictions table in another tool's format (the inverse of `diagnostics predictions import`)."""
    from diagnostics.core.errors import UserInputError
    from diagnostics.predictions import to_columns, to_lm_eval, to_trainer
    from diagnostics.stats import read_predictions

    from ._options import key_values

    frame = read_predictions(table)
    for key, value in key_values(select, "--select").items():
        if key not in frame.columns:
            raise UserInputError(f"--select {key}={value}: no column {key!r}")
        frame = frame[frame[key].astype(str) == value]
    if frame.empty:
        raise UserInputError(f"{table}: no row left after --select")
    try:
        if to == "lm-eval":
            paths = to_lm_eval(frame, out)
        elif to == "trainer":
            paths = to_trainer(frame, out, fmt=trainer_format)
        elif to == "table":
            paths = [to_columns(frame, out, text=text, label_map=label_map, run_column=run_column)]
        else:
            raise UserInputError(f"--to {to!r}: expected lm-eval, trainer or table")
    except ValueError as err:
        if isinstance(err, UserInputError):
            raise
        raise UserInputError(f"{table}: {err}") from None
    typer.echo("wrote " + ", ".join(str(p) for p in paths))


def compare(table_a: Path = typer.Argument(..., help="Predictions table of the baseline A (.parquet, .csv, .tsv or "
                                                     ".jsonl)."),
            table_b: Path = typer.Argument(..., help="Predictions table of B (deltas are B - A); may be TABLE_A "
                                                     "with another --select-b."),
            out: Path = typer.Option(Path("compare_out"), "--out", help="Folder for comparison.csv, comparison.png "
                                                                        "and summary.md."),
            select_a: list[str] = typer.Option([], "--select-a", help="KEY=VALUE picking A's setting in a table "
                                                                      "of several, repeatable."),
            select_b: list[str] = typer.Option([], "--select-b", help="KEY=VALUE picking B's setting, repeatable."),
            metric: str = typer.Option("mcc", "--metric", help="mcc or accuracy."),
            by: str = typer.Option("category", "--by", help="category (fine, with their mean) or coarse."),
            bootstrap: int = typer.Option(1000, "--bootstrap", help="Multi-Bootstrap samples."),
            seed: int = typer.Option(0, "--seed", help="Seed of the resampling."),
            level: float = typer.Option(0.95, "--level", help="Confidence level of the intervals."),
            alternative: str = typer.Option("two-sided", "--alternative", help="What the p-values test of B - A: "
                                                                            "two-sided, greater or less."),
            adjust: str = typer.Option("holm", "--adjust", help="Adjustment of the p-values over the categories: "
                                                                "holm, bh or none."),
            alpha: float = typer.Option(0.05, "--alpha", help="Level at which an adjusted p-value is significant."),
            pairing: str = typer.Option("auto", "--pairing", help="auto (paired when both sides have the same "
                                                                  "seeds), paired or unpaired."),
            dataset: list[str] = typer.Option([], "--dataset", help="NAME=PATH: the file of a user-supplied "
                                                                    "diagnostic the tables name; repeatable."),
            trust_labels: bool = typer.Option(False, "--trust-labels", help="Read the tables' gold labels even "
                                                                            "where they differ from the dataset's."),
            name_a: str = typer.Option(None, "--name-a", help="Name of A in the summary and figure."),
            name_b: str = typer.Option(None, "--name-b", help="Name of B in the summary and figure."),
            aso: bool = typer.Option(False, "--aso", help="Also compare the runs' per-category scores with Almost "
                                                          "Stochastic Order (Dror et al. 2019): columns aso_eps_min "
                                                          "(upper bound, at --level, of how much the order A >= B "
                                                          "is violated), aso_a_dominant, and the same for B over A; "
                                                          "--bootstrap resamples, --seed, --adjust over the "
                                                          "categories. Needs at least 2 runs per side."),
            aso_tau: float = typer.Option(0.5, "--aso-tau", help="Threshold of ASO dominance (eps_min below it). "
                                                                 "0.5 is the original, lenient threshold: with "
                                                                 "3-5 seeds the bootstrap sees few distinct "
                                                                 "resamples and eps_min reaches 0 for runs that do "
                                                                 "not overlap by chance; use 0.2 or below for a "
                                                                 "confident claim.")) -> None:
    """Compare two systems or settings on one diagnostic set: per category, the Multi-Bootstrap delta B - A.

    Writes comparison.csv (per category: both scores, the delta with its interval, the p-value (--alternative) and
    the adjusted one; McNemar's exact test when each side is a single run; with --aso, Almost Stochastic Order of
    the runs' scores), comparison.png (the deltas with their intervals) and summary.md under --out.
    """
    import warnings

    from diagnostics.core.file_checks import check_output_path
    from diagnostics.data import user_file_refs
    from diagnostics.plots import write_comparison
    from diagnostics.predictions import compare_tables
    from diagnostics.stats import ExampleSetWarning, read_predictions

    from ._options import key_values

    check_output_path(out, folder=True)
    datasets = user_file_refs(dataset, names=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExampleSetWarning)
        a = read_predictions(table_a, trust_labels=trust_labels, datasets=datasets)
        b = a if table_b.resolve() == table_a.resolve() else read_predictions(table_b, trust_labels=trust_labels,
                                                                              datasets=datasets)
    names = None
    if name_a is not None or name_b is not None:
        names = (name_a or "A", name_b or "B")
    result = compare_tables(a, b, select_a=key_values(select_a, "--select-a"),
                            select_b=key_values(select_b, "--select-b"),
                            metric=metric, by=by, n_boot=bootstrap, seed=seed, level=level, pairing=pairing,
                            alternative=alternative, adjust=adjust, alpha=alpha, names=names, datasets=datasets,
                            aso=aso, aso_tau=aso_tau)
    paths = write_comparison(result, out)
    typer.echo(result.summary())
    typer.echo("wrote " + ", ".join(str(p) for p in paths.values()))
