"""``diagnostics annotate run|evaluate|features|init|agree``."""

from __future__ import annotations

from pathlib import Path

import typer

annotate_app = typer.Typer(help="Rule-based diagnostic feature annotation (rules in annotators/<lang>.yaml).",
                           no_args_is_help=True)


def _user_error(err: Exception) -> Exception:
    """Turn ``err`` into a :class:`UserInputError` (printed as one line, exit code 2, by the command line).

    The rules and spaCy back ends report a language without rules (``KeyError``), a pipeline that is not
    installed (``RuntimeError``) or a language without a bundled diagnostic set (``ValueError``): input the user
    can fix.
    """
    from diagnostics.core.errors import UserInputError, one_line

    return UserInputError(one_line(err))


@annotate_app.command("run")
def run(input: str = typer.Argument(..., help="Registered dataset name or a file (.jsonl/.tsv/.txt/.csv/.parquet)."),
        output: Path = typer.Argument(..., help="Output file: .jsonl, .parquet or .csv (by extension)."),
        lang: str = typer.Option(..., "--lang", help="Language code (en, ru, fr, de, sv) or a rules .yaml file."),
        kind: str = typer.Option("auto", help="Input format: auto or rte, diagnostic, swediagnostics, glue-tsv, "
                                              "sick, mnli."),
        batch_size: int = typer.Option(64, help="Texts per nlp.pipe batch."),
        presence: bool = typer.Option(False, help="Count a feature when either side shows it (ignore pair: "
                                                  "differ/swap)."),
        progress: bool = typer.Option(True, help="Show a progress bar.")) -> None:
    """Add auto_features, auto_coarse and feature_sides (premise/hypothesis/both) to every pair."""
    from diagnostics.annotate import check_output, read_input, write_output
    from diagnostics.core.errors import UserInputError

    check_output(output)  # before any work: a bad output name must not cost an annotation pass
    if batch_size < 1:
        raise UserInputError(f"--batch-size: expected an integer >= 1, found {batch_size}")
    try:
        frame = read_input(input, Path(lang).stem if lang.endswith((".yaml", ".yml")) else lang, kind)
        from diagnostics.annotate import annotate  # spaCy: only once the input is known to be readable

        annotated = annotate(frame, lang, batch_size=batch_size, progress=progress, presence=presence)
    except UserInputError:
        raise
    except (KeyError, ValueError, RuntimeError) as err:
        raise _user_error(err) from err
    write_output(annotated, output)
    n = int(annotated["auto_features"].map(bool).sum())
    typer.echo(f"{output}: {len(annotated)} pairs, {n} with at least one feature")


@annotate_app.command("evaluate")
def evaluate(lang: str = typer.Option(..., "--lang", help="en (AX-b), ru (LiDiRus), sv (SweDiagnostics); fr/de "
                                                         "need --path."),
             path: Path = typer.Option(None, help="Diagnostic file in AX-b/LiDiRus JSONL format."),
             rules: Path = typer.Option(None, help="Rules file to use instead of annotators/<lang>.yaml."),
             presence: bool = typer.Option(False, help="Score the one-sentence reading (either side shows the "
                                                       "feature) instead of the rules' pair reading."),
             output: Path = typer.Option(None, "--output", "-o", help="Write the table (.csv or .md) and its "
                                                                      "figure beside it (.png).")) -> None:
    """Per-feature precision, recall, F1 and support of the rules against gold diagnostic tags, with macro average."""
    from diagnostics.annotate import check_output, evaluate as run_evaluation
    from diagnostics.core.errors import UserInputError
    from diagnostics.core.io_utils import atomic_path
    from diagnostics.core.tables import write_table_to

    if output is not None:
        check_output(output, (".csv", ".md"))
    from diagnostics.annotate import DIAGNOSTIC_SETS

    if path is None and lang not in DIAGNOSTIC_SETS and not lang.endswith((".yaml", ".yml")):
        bundled = ", ".join(f"{k} ({v})" for k, v in DIAGNOSTIC_SETS.items())
        raise UserInputError(f"no bundled diagnostic set for {lang!r} (bundled: {bundled}): give a file with gold "
                             "tags in AX-b/LiDiRus JSONL format with --path FILE")
    try:
        table = run_evaluation(lang, path, rules=rules, presence=presence)
    except UserInputError:
        raise
    except (KeyError, ValueError, RuntimeError) as err:
        raise _user_error(err) from err
    rounded = table.round(3)
    typer.echo(_markdown(rounded))
    if output is not None:
        output.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(output) as tmp:
            if output.suffix.lower() == ".md":
                tmp.write_text(_markdown(rounded), encoding="utf-8")
            else:
                write_table_to(table, tmp, "csv")
        from diagnostics.plots import evaluation_detail, save

        figure = save(evaluation_detail(table, lang=Path(lang).stem), output.parent, output.stem)
        typer.echo(f"wrote {output}, {figure}")


@annotate_app.command("features")
def features(lang: str = typer.Option(..., "--lang", help="Language code or rules .yaml file.")) -> None:
    """List the features the rules of a language detect."""
    from diagnostics.annotate import supported_features
    from diagnostics.core.errors import UserInputError

    try:
        typer.echo("\n".join(supported_features(lang)))
    except UserInputError:
        raise
    except KeyError as err:
        raise _user_error(err) from err


@annotate_app.command("agree")
def agree(lang: str = typer.Option(..., "--lang", help="Language of the rules to judge (a code with rules, e.g. ru)."),
          reference: str = typer.Option("en", help="Language of the trusted rules on the aligned pairs."),
          path: Path = typer.Option(None, help="Pairs in --lang (AX-b/LiDiRus JSONL); default: its bundled "
                                               "diagnostic set (ru: LiDiRus, AX-b's translation)."),
          reference_path: Path = typer.Option(None, help="The same pairs in --reference, same ids; default: its "
                                                         "bundled diagnostic set (en: AX-b)."),
          rules: Path = typer.Option(None, help="Rules file to use instead of annotators/<lang>.yaml."),
          presence: bool = typer.Option(False, help="Compare the one-sentence reading instead of the pair reading."),
          out: Path = typer.Option(Path("reports/annotate"), help="Folder for agree_<lang>_<reference>.csv / .png."),
          progress: bool = typer.Option(True, help="Show progress bars.")) -> None:
    """Judge rules without gold tags: per feature, how the --lang rules' detections agree with the --reference
    rules' on parallel pairs (a set and its translation), with real precision where --lang has gold tags."""
    from diagnostics.annotate import DIAGNOSTIC_SETS, agreement as run_agreement, diagnostic_set, tracking
    from diagnostics.core.errors import UserInputError
    from diagnostics.core.io_utils import atomic_path
    from diagnostics.core.tables import write_table_to
    from diagnostics.plots import agreement_figure, save

    for option, code, file in (("--path", lang, path), ("--reference-path", reference, reference_path)):
        if file is None and code not in DIAGNOSTIC_SETS:
            raise UserInputError(f"no bundled diagnostic set in {code!r} (bundled: {', '.join(DIAGNOSTIC_SETS)}): "
                                 f"give the pairs with {option} FILE (AX-b/LiDiRus JSONL, ids shared by both files)")
    try:
        table = run_agreement(diagnostic_set(lang, path), diagnostic_set(reference, reference_path), lang, reference,
                              rules=rules, presence=presence, progress=progress)
    except UserInputError:
        raise
    except (KeyError, ValueError, RuntimeError) as err:
        raise _user_error(err) from err
    out.mkdir(parents=True, exist_ok=True)
    name = f"agree_{lang}_{reference}"
    with atomic_path(out / f"{name}.csv") as tmp:
        write_table_to(table, tmp, "csv")
    save(agreement_figure(table, lang=lang, reference=reference), out, name)
    typer.echo(_markdown(table.round(3)))
    rho, n = tracking(table)
    if n:
        typer.echo(f"agreement precision vs gold precision over {n} features: Spearman rho = {rho:.2f}")
    typer.echo(f"wrote {out / (name + '.csv')}, {out / (name + '.png')}")


@annotate_app.command("init")
def init(lang: str = typer.Argument(..., help="ISO 639 code of the new language, e.g. uk or es."),
         out: Path = typer.Option(None, "--out", "-o", help="Rules file to write (default: ./LANG.yaml)."),
         backend: str = typer.Option(None, help="spacy, pymorphy3, hanta, simplemma or blank (default: the best "
                                                "one installed for LANG)."),
         force: bool = typer.Option(False, "--force", help="Overwrite --out if it exists.")) -> None:
    """Start the rules of a new language: every feature of the bundled rules, the ones the backend finds without word
    lists active, the others commented out with an English example to translate."""
    from diagnostics.annotate import TEMPLATE_FEATURES, write_template

    path, chosen = write_template(lang, out, backend, force)
    active = sum(1 for line in path.read_text(encoding="utf-8").splitlines()
                 if line.startswith("  ") and not line.startswith(("  #", "   ")) and line.rstrip().endswith(":"))
    typer.echo(f"wrote {path}: backend {chosen.name} ({chosen.source}); {active} of {len(TEMPLATE_FEATURES)} "
               f"features active, the others commented with an example. Next: "
               f"diagnostics annotate run --lang {path} PAIRS OUT")


def _markdown(table) -> str:
    """A GitHub markdown table without the optional ``tabulate`` dependency."""
    cols = list(table.columns)
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(str(v) for v in row) + " |" for row in table.itertuples(index=False)]
    return "\n".join(lines) + "\n"
