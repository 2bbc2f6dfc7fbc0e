"""``diagnostics probe run``: layer-wise probing of a pretrained model and its fine-tuned seeds."""

from __future__ import annotations

from pathlib import Path

import typer

probe_app = typer.Typer(help="Layer-wise linear probing of pretrained and fine-tuned models.", no_args_is_help=True)


@probe_app.command("run")
def run(model: list[str] = typer.Option(..., "--model", "-m",
                                        help="Model name ('embedded'), model folder, run folder (seed=<k>) or a "
                                             "run-store folder whose seed=<k> runs are all probed. Repeatable."),
        lang: str = typer.Option("en", help="Language with annotator rules (en, ru, fr, de, sv ...). Bundled data: "
                                            "en (RTE -> AX-b), ru (TERRa -> LiDiRus), sv (-> SweDiagnostics); "
                                            "others need --train and --test."),
        train: Path = typer.Option(None, help="RTE/TERRa-format JSONL in --lang to train the probes on (labelled "
                                              "by the rule annotator), instead of the bundled RTE-style data."),
        test: Path = typer.Option(None, help="AX-b/LiDiRus-format JSONL with gold tags in --lang to score the "
                                             "probes on, instead of the bundled diagnostic set."),
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
        probe_labels: str = typer.Option("presence", help="How the rule annotator labels the training and "
                                                          "selection pairs: 'presence' (the study's, §5.4: a "
                                                          "task's feature in either sentence, over its 15 "
                                                          "annotation features: the twelve §5.4 names and three "
                                                          "read off morphosyntactic tags; feature_list "
                                                          "'study-text' in probe.csv) or 'differs' (the rules' "
                                                          "pair reading: the evidence differs between the "
                                                          "sentences, every feature they detect)."),
        gold_cv: bool = typer.Option(False, help="Also cross-validate the probes on the diagnostic set's gold "
                                                 "tags (5 stratified folds): probe_<lang>_gold_cv.csv."),
        mdl: bool = typer.Option(False, help="Also MDL-probe every layer (Voita & Titov's online code on the "
                                             "cached vectors, with its control task): probe_<lang>_mdl.csv, "
                                             "probe_<lang>_mdl_summary.csv, probe_<lang>_mdl.png."),
        mdl_alpha: str = typer.Option("0.1", help="L2 strength of the MDL probes: one number for every task, "
                                                 "layer and block (default 0.1, the strongest of the study's "
                                                 "grid), or 'probe' (the strength each accuracy probe chose for "
                                                 "its task and layer)."),
        mdl_data: str = typer.Option("train", help="Labels the online code transmits: 'train' (the annotated "
                                                   "training pairs, as the accuracy probes learn them) or 'test' "
                                                   "(the diagnostic set's gold tags)."),
        seed: int = typer.Option(0, help="Seed of subsets, held-out split and control permutations."),
        max_length: int = typer.Option(128, help="Tokens per sentence."),
        dtype: str = typer.Option("float16", help="Cache storage dtype: float16 or float32."),
        threads: int = typer.Option(None, help="torch CPU threads (default: torch's choice)."),
        jobs: int = typer.Option(1, "--jobs", "-j", help="Processes fitting the probes of a model's layers in "
                                                         "parallel (the results do not depend on it)."),
        precision: str = typer.Option("fp32", help="fp32, or bf16 (autocast where the CPU has native bf16)."),
        progress: bool = typer.Option(True, help="Progress bars.")) -> None:
    """Probe every layer for each task; write probe.csv, probe_summary.csv and one figure per metric.

    With `--mdl`, also the online codelength and compression of every task, layer and model (MDL probing).
    Options are checked before any model is loaded; a bad one is refused with one line naming it. Files of an
    earlier call in `--out` that this call does not write (`probe_<lang>_gold_cv.csv` without `--gold-cv`,
    `probe_<lang>_mdl*` without `--mdl`) are removed.
    """
    import warnings

    from diagnostics.core.errors import UserInputError
    from diagnostics.probe import MDL_DATA, probe_gold_cv, probe_mdl, probe_models, resolve_models

    weight = _class_weight(class_weight)
    _check_options(lang=lang, tasks=tasks, selection=selection, dtype=dtype, precision=precision,
                   probe_labels=probe_labels, train=train, test=test,
                   sizes={"--max-train": max_train, "--max-test": max_test, "--max-selection": max_selection,
                          "--max-length": max_length, "--threads": threads, "--jobs": jobs})
    if mdl_data not in MDL_DATA:
        raise UserInputError(f"--mdl-data: expected {' or '.join(MDL_DATA)}, found {mdl_data!r}")
    strength = _mdl_alpha(mdl_alpha)
    _check_folder(out, "--out")
    if cache_dir is not None:
        _check_folder(cache_dir, "--cache-dir")
    if threads:
        import torch

        torch.set_num_threads(threads)
    common = dict(seed=seed, max_test=max_test, max_length=max_length, dtype=dtype, progress=progress,
                  precision=precision, n_jobs=jobs)
    try:
        models = resolve_models(model)
    except ValueError as err:
        raise UserInputError(f"--model: {err}") from None
    try:
        frames = _user_frames(lang, train, test, cache_dir or out / "cache", progress, probe_labels)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", UserWarning)
            table = probe_models(models, lang, tasks, cache_dir or out / "cache", selection=selection,
                                 class_weight=weight, max_train=max_train, max_selection=max_selection,
                                 probe_labels=probe_labels, **frames, **common)
        for warning in caught:
            typer.echo(f"warning: {warning.message}", err=True)
        gold = (probe_gold_cv(models, lang, tasks, cache_dir or out / "cache", class_weight=weight,
                              test=frames.get("test"), **common)
                if gold_cv else None)
        codes = (probe_mdl(models, lang, tasks, cache_dir or out / "cache", alpha=strength, accuracy=table,
                           data=mdl_data, selection=selection, class_weight=weight, max_train=max_train,
                           max_selection=max_selection, probe_labels=probe_labels, **frames, **common)
                 if mdl else None)
    except ImportError as err:  # an optional dependency (the rule annotator's spaCy model ...) is missing
        raise UserInputError(str(err)) from None
    written = _write_outputs(table, gold, lang, out) + _write_mdl(codes, lang, out)
    best = table.loc[table.groupby(["model", "task"])["balanced_accuracy"].idxmax(),
                     ["model", "task", "layer", "accuracy", "majority", "balanced_accuracy", "selectivity"]]
    where = {"test": "the annotated RTE-style test split", "holdout": "20% held out of the training pairs"}
    typer.echo(f"protocol: L2 strength chosen on {where[table['selection'].iloc[0]]}; class weighting: {weight}; "
               f"training labels: {probe_labels}")
    typer.echo(best.to_string(index=False))
    if codes is not None:
        typer.echo(f"MDL ({codes['data'].iloc[0]} labels, L2 strength "
                   f"{'of the accuracy probes' if strength == 'probe' else strength}): best compression per model "
                   f"and task")
        top = codes.loc[codes.groupby(["model", "task"])["compression"].idxmax(),
                        ["model", "task", "layer", "online_codelength", "compression", "control_compression",
                         "mdl_selectivity"]]
        typer.echo(top.round(3).to_string(index=False))
    typer.echo(f"wrote {out}/" + ", ".join(written))


def _user_frames(lang: str, train: Path | None, test: Path | None, cache_dir: Path, progress: bool,
                 probe_labels: str) -> dict:
    """``train=`` / ``test=`` frames of :func:`diagnostics.probe.probe_models` read from the user's files: the
    training pairs labelled by the rule annotator as the bundled ones are, the diagnostic pairs with their gold
    tags."""
    from diagnostics.data import load
    from diagnostics.probe import annotate_frame

    frames = {}
    if train is not None:
        pairs = load("rte_format", path=train, language=lang)
        frames["train"] = annotate_frame(pairs, lang, cache_dir=cache_dir, progress=progress, labels=probe_labels)
    if test is not None:
        frames["test"] = load("diagnostic_format", path=test, language=lang)
    return frames


def _mdl_alpha(value: str) -> float | str:
    from diagnostics.core.errors import UserInputError

    if value.strip().lower() == "probe":
        return "probe"
    try:
        number = float(value)
    except ValueError:
        number = float("nan")
    if not number > 0 or number == float("inf"):
        raise UserInputError(f"--mdl-alpha: expected a number > 0 or 'probe', found {value!r}")
    return number


def _class_weight(value: str) -> str | None:
    from diagnostics.core.errors import UserInputError

    if value.lower() in ("none", ""):
        return None
    if value.lower() == "balanced":
        return "balanced"
    raise UserInputError(f"--class-weight: expected 'none' or 'balanced', found {value!r}")


def _check_options(*, lang: str, tasks: str, selection: str, dtype: str, precision: str, probe_labels: str,
                   sizes: dict[str, int | None], train: Path | None = None, test: Path | None = None) -> None:
    """Refuse a bad option with one line naming it, before any model or data is loaded."""
    from diagnostics.annotate import available_languages
    from diagnostics.core.errors import UserInputError
    from diagnostics.models import PRECISIONS
    from diagnostics.probe import CACHE_DTYPES, DIAGNOSTIC_SETS, PROBE_LABELS, SELECTIONS, TRAIN_SETS, parse_tasks

    languages = available_languages()
    if lang not in languages:
        raise UserInputError(f"--lang: expected a language with annotator rules ({', '.join(languages)}), "
                             f"found {lang!r}")
    if train is None and lang not in TRAIN_SETS:
        raise UserInputError(f"--lang {lang}: no bundled RTE-style training data in {lang!r} (bundled: "
                             f"{', '.join(TRAIN_SETS)}); give --train FILE (RTE/TERRa-format JSONL in {lang})")
    if test is None and lang not in DIAGNOSTIC_SETS:
        raise UserInputError(f"--lang {lang}: no bundled diagnostic set in {lang!r} (bundled: "
                             f"{', '.join(DIAGNOSTIC_SETS)}); give --test FILE (AX-b/LiDiRus-format JSONL with "
                             "gold tags)")
    for option, path in (("--train", train), ("--test", test)):
        if path is not None and not path.is_file():
            raise UserInputError(f"{option} {path}: no such file")
    try:
        parse_tasks(tasks)
    except (ValueError, KeyError) as err:
        raise UserInputError(f"--tasks: {err.args[0] if err.args else err}") from None
    if selection not in SELECTIONS:
        raise UserInputError(f"--selection: expected {' or '.join(SELECTIONS)}, found {selection!r}")
    if dtype not in CACHE_DTYPES:
        raise UserInputError(f"--dtype: expected {' or '.join(CACHE_DTYPES)}, found {dtype!r}")
    if precision not in PRECISIONS:
        raise UserInputError(f"--precision: expected {' or '.join(PRECISIONS)}, found {precision!r}")
    if probe_labels not in PROBE_LABELS:
        raise UserInputError(f"--probe-labels: expected {' or '.join(PROBE_LABELS)}, found {probe_labels!r}")
    for option, value in sizes.items():
        if value is not None and value < 1:
            raise UserInputError(f"{option}: expected a number >= 1, found {value}")


def _check_folder(folder: Path, option: str) -> None:
    """Refuse an output folder that is a file or lies under one."""
    from diagnostics.core.errors import UserInputError

    for part in (folder, *folder.parents):
        if part.exists():
            if not part.is_dir():
                where = "is a file" if part == folder else f"lies under {part}, which is a file"
                raise UserInputError(f"{option} {folder}: expected a folder, but it {where}")
            return


def _write_outputs(table, gold, lang: str, out: Path) -> list[str]:
    """Tables and one figure per metric under ``out``; the written file names."""
    from diagnostics.core.io_utils import atomic_path
    from diagnostics.core.tables import write_table
    from diagnostics.plots import accuracy_by_layer
    from diagnostics.probe import layer_summary

    out.mkdir(parents=True, exist_ok=True)
    written = [f"probe_{lang}.csv", f"probe_{lang}_summary.csv"]
    write_table(table, out / written[0])
    write_table(layer_summary(table), out / written[1])
    for metric in ("accuracy", "balanced_accuracy", "selectivity"):
        fig = accuracy_by_layer(table, metric=metric)
        with atomic_path(out / f"probe_{lang}_{metric}.png") as tmp:
            fig.savefig(tmp, dpi=120, bbox_inches="tight", format="png")
        written.append(f"probe_{lang}_{metric}.png")
    gold_path = out / f"probe_{lang}_gold_cv.csv"
    if gold is not None:
        write_table(gold, gold_path)
        written.append(gold_path.name)
    else:  # an earlier call's gold table would read as this call's
        gold_path.unlink(missing_ok=True)
    return written


def _write_mdl(codes, lang: str, out: Path) -> list[str]:
    """The MDL table, its per-layer summary and figure under ``out`` (or the removal of an earlier call's)."""
    names = [f"probe_{lang}_mdl.csv", f"probe_{lang}_mdl_summary.csv", f"probe_{lang}_mdl.png"]
    if codes is None:  # an earlier call's MDL files would read as this call's
        for name in names:
            (out / name).unlink(missing_ok=True)
        return []
    import pandas as pd

    from diagnostics.core.io_utils import atomic_path
    from diagnostics.core.tables import write_table
    from diagnostics.plots import mdl_by_layer
    from diagnostics.probe import layer_summary

    write_table(codes, out / names[0])
    summary = pd.concat([layer_summary(codes, metric).assign(metric=metric)
                         for metric in ("compression", "online_codelength", "mdl_selectivity")], ignore_index=True)
    write_table(summary, out / names[1])
    fig = mdl_by_layer(codes)
    with atomic_path(out / names[2]) as tmp:
        fig.savefig(tmp, dpi=120, bbox_inches="tight", format="png")
    return names
