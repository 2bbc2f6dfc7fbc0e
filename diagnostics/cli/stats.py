"""``diagnostics stats PREDICTIONS [--by category|coarse|feature] [--bootstrap N] [--out DIR]`` and
``diagnostics stats plan TABLE --half-width W | --delta D [--power P] [--by category|coarse|overall] [--out DIR]``.

``stats`` is a group whose default command is the report: arguments that do not start with ``plan`` go to it, so
``diagnostics stats PREDICTIONS ...`` works as before (a table file literally named ``plan`` needs ``./plan``).
"""

from __future__ import annotations

from pathlib import Path

import click
import typer
from typer.core import TyperCommand, TyperGroup


def stats(predictions: Path = typer.Argument(..., help="Predictions table (.parquet, .csv, .tsv or .jsonl)."),
          by: str = typer.Option("category", help="category (33 fine) or coarse (4); or feature: slices by the "
                                 "rule annotator's features (any NLI set with gold labels in a language with "
                                 "annotator rules; each pair annotated once, cached) and a diagnostic set's own "
                                 "categories: per feature, MCC / accuracy with and without it, σ over seeds and the "
                                 "flipping pairs (feature_*.csv, feature_summary.md, feature_slices.png)."),
          bootstrap: int = typer.Option(0, help="Multi-Bootstrap samples per setting for CIs (0: skip)."),
          out: Path = typer.Option(Path("stats_out"), help="Folder for the CSV tables and summary.md (results of an "
                                                           "earlier call there are replaced, other files kept)."),
          seed: int = typer.Option(0, help="Seed of the bootstrap resampling."),
          level: float = typer.Option(0.95, help="Confidence level of the intervals."),
          resample: str = typer.Option("both", help="What the Multi-Bootstrap resamples: both (seeds and "
                                       "examples), seeds (examples fixed) or examples (seeds fixed)."),
          stratify: bool = typer.Option(True, "--stratify/--no-stratify", help="Resample each category within "
                                        "itself (fixed size; default) or the whole set, then take the category."),
          dataset: list[str] = typer.Option([], "--dataset", help="NAME=PATH: the file of a user-supplied "
                                            "diagnostic the table names (e.g. diagnostic_fr=fr/diagnostic.jsonl); "
                                            "repeatable."),
          trust_labels: bool = typer.Option(False, "--trust-labels", help="Score the table's gold labels even where "
                                            "they differ from the dataset's (by default such a table is refused: "
                                            "inverted labels, or a dataset column naming the wrong set)."),
          cache: Path = typer.Option(None, "--cache", help="--by feature: the annotations' cache (default: "
                                     "annotations/ under the toolkit's cache, $DIAGNOSTICS_CACHE)."),
          language: str = typer.Option(None, "--language", help="--by feature: the language of the sets' texts "
                                       "(default: each set's own)."),
          split: list[str] = typer.Option([], "--split", help="--by feature: NAME=SPLIT, the split of a set whose "
                                          "ids repeat across splits (rte, terra; default validation when it holds "
                                          "every id); repeatable."),
          progress: bool = typer.Option(True, "--progress/--no-progress", help="Show progress bars (on stderr): "
                                        "the Multi-Bootstrap's settings, the annotation of --by feature.")) -> None:
    """Per-category MCC, seed stability, RS corr, agreement and Multi-Bootstrap CIs of a predictions table.

    The table is checked against the dataset each row names: unknown example ids and gold labels that differ from
    the dataset's are refused (`--trust-labels` keeps the table's labels). Runs of one experiment, language and
    model that cover different examples are reported with a warning (and refused by `--bootstrap`).
    """
    import warnings

    from diagnostics.core.errors import UserInputError
    from diagnostics.data import user_file_refs
    from diagnostics.stats import (RESAMPLE, ExampleSetWarning, example_set_differences, read_predictions,
                                   write_report)

    if by not in ("category", "coarse", "feature"):
        raise UserInputError(f"--by: expected category, coarse or feature, found {by!r}")
    if resample not in RESAMPLE:
        raise UserInputError(f"--resample: expected one of {', '.join(RESAMPLE)}, found {resample!r}")
    if bootstrap < 0:
        raise UserInputError(f"--bootstrap: expected a number >= 0, found {bootstrap}")
    if not 0 < level < 1:
        raise UserInputError(f"--level: expected a number in (0, 1), found {level}")
    _check_out_folder(out)
    datasets = user_file_refs(dataset)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ExampleSetWarning)
        table = read_predictions(predictions, trust_labels=trust_labels, datasets=datasets)
    for warning in caught:
        if issubclass(warning.category, ExampleSetWarning):
            typer.echo(f"warning: {warning.message}", err=True)
        else:
            warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
    if by == "feature":
        from diagnostics.evaluate import slice_by_feature
        from diagnostics.stats import write_feature_report

        from ._options import key_values

        splits = key_values(split, "--split", "NAME=SPLIT (rte=validation)")
        slices = slice_by_feature(table, datasets, cache_dir=cache if cache is not None else True,
                                  language=language, splits=splits, progress=progress)
        paths = write_feature_report(slices, out, source=predictions)
        from diagnostics.plots import feature_slices_figure, save

        paths["figure"] = save(feature_slices_figure(slices.table), out, "feature_slices")
        typer.echo(paths["summary"].read_text(encoding="utf-8"))
        typer.echo("wrote " + ", ".join(str(p) for p in paths.values()))
        return
    if bootstrap > 0:
        differences = example_set_differences(table)
        if not differences.empty:
            row = differences.iloc[0]
            raise UserInputError(f"{predictions}: --bootstrap needs every run of a setting on the same examples; "
                                 f"seed {row['seed']} of experiment={row['experiment']}, language={row['language']}, "
                                 f"model={row['model']} has {row['n_examples']} of {row['n_union']} "
                                 f"({len(differences)} run(s) short in all)")
    paths = write_report(table, out, by=by, n_boot=bootstrap, seed=seed, level=level, source=predictions,
                         resample=resample, stratify=stratify, datasets=datasets, progress=progress)
    typer.echo(paths["summary"].read_text(encoding="utf-8"))
    typer.echo("wrote " + ", ".join(str(p) for p in paths.values()))


def plan(table: Path = typer.Argument(..., help="Pilot predictions table (.parquet, .csv, .tsv or .jsonl), at least 2 "
                                               "seeds per setting."),
         half_width: float = typer.Option(None, "--half-width", help="Target half-width of the confidence interval "
                                          "(MCC units), e.g. 0.05. Give this or --delta."),
         of: str = typer.Option("mean", "--of", help="With --half-width: the interval of the mean MCC over seeds "
                                "(mean) or of the seed standard deviation (sigma)."),
         delta: float = typer.Option(None, "--delta", help="Difference of mean MCC between two settings to detect "
                                     "(two-sided Welch test). Give this or --half-width."),
         power: float = typer.Option(0.8, "--power", help="Target power with --delta."),
         by: str = typer.Option("category", "--by", help="Units: category (33 fine), coarse (4) or overall (the "
                                "mean of the per-feature MCCs)."),
         examples: str = typer.Option("fixed", "--examples", help="fixed: the diagnostic set is the population "
                                      "(seed spread only); resampled: its examples are a sample too (adds the "
                                      "example variance, which no number of seeds removes)."),
         example_scale: list[float] = typer.Option([1.0], "--example-scale", help="Study set size as a multiple of "
                                                   "the pilot's (repeatable, e.g. --example-scale 1 "
                                                   "--example-scale 2)."),
         max_seeds: int = typer.Option(30, "--max-seeds", help="Largest number of seeds simulated."),
         level: float = typer.Option(0.95, "--level", help="Confidence level of the interval."),
         alpha: float = typer.Option(0.05, "--alpha", help="Significance level of the test (--delta)."),
         sims: int = typer.Option(2000, "--sims", help="Simulated studies per number of seeds."),
         boot: int = typer.Option(200, "--boot", help="Bootstrap resamples of the examples when fitting the "
                                  "example variances."),
         pilot_level: float = typer.Option(0.8, "--pilot-level", help="Confidence level of the pilot's seed-variance "
                                           "limits (the optimistic and conservative plans)."),
         seed_shape: str = typer.Option("normal", "--seed-shape", help="Simulated seed effects: normal, or pilot "
                                        "(resampled from the pilot's standardised per-seed scores)."),
         example_correlation: float = typer.Option(0.0, "--example-correlation", help="Correlation of the two "
                                                   "settings' example effects (--delta with --examples resampled; "
                                                   "0 is conservative)."),
         seed: int = typer.Option(0, "--seed", help="Seed of the resampling and the simulation."),
         out: Path = typer.Option(None, "--out", help="Folder for plan_curve.csv, plan_needed.csv, "
                                  "plan_components.csv, plan_summary.csv, plan.json and the figure plan_curve.png "
                                  "(default: print only)."),
         dataset: list[str] = typer.Option([], "--dataset", help="NAME=PATH: the file of a user-supplied diagnostic "
                                           "the table names; repeatable."),
         progress: bool = typer.Option(True, "--progress/--no-progress", help="Show a progress bar of the "
                                       "simulations (on stderr).")) -> None:
    """Plan how many seeds a study needs, by simulation from pilot runs (see diagnostics.stats._planner).

    Fits per setting and category the pilot's seed variance and, by a bootstrap of the examples, the example and
    seed x example variances; then simulates studies of 2..--max-seeds seeds and reports the expected CI half-width
    (or the power to detect --delta), and the smallest number of seeds meeting the target: as estimated, and at
    the upper confidence limit of the pilot's seed variance (conservative: a pilot of few seeds is uncertain).
    """
    import json
    import warnings

    from diagnostics.core.errors import UserInputError, one_line
    from diagnostics.core.io_utils import output_folder
    from diagnostics.core.tables import write_table_to
    from diagnostics.data import user_file_refs
    from diagnostics.stats import (BY, EXAMPLES, SEED_SHAPES, ExampleSetWarning, markdown_table, plan_seeds,
                                   read_predictions)

    if (half_width is None) == (delta is None):
        raise UserInputError("--half-width / --delta: give exactly one target (a CI half-width, or a difference to "
                             "detect with --power)")
    for name, value, choices in (("--of", of, ("mean", "sigma")), ("--by", by, BY), ("--examples", examples, EXAMPLES),
                                 ("--seed-shape", seed_shape, SEED_SHAPES)):
        if value not in choices:
            raise UserInputError(f"{name}: expected {' or '.join(choices)}, found {value!r}")
    checks = [("--half-width", half_width, half_width is None or half_width > 0, "a number > 0"),
              ("--delta", delta, delta is None or delta != 0, "a non-zero number"),
              ("--max-seeds", max_seeds, max_seeds >= 2, "a number >= 2"),
              ("--sims", sims, sims >= 10, "a number >= 10"), ("--boot", boot, boot >= 2, "a number >= 2"),
              ("--example-scale", example_scale, all(x > 0 for x in example_scale), "numbers > 0"),
              ("--example-correlation", example_correlation, -1 <= example_correlation <= 1, "a number in [-1, 1]")]
    checks += [(name, value, 0 < value < 1, "a number in (0, 1)") for name, value in
               (("--power", power), ("--level", level), ("--alpha", alpha), ("--pilot-level", pilot_level))]
    for name, value, ok, expected in checks:
        if not ok:
            raise UserInputError(f"{name}: expected {expected}, found {value}")
    if of == "sigma" and (delta is not None or examples != "fixed"):
        raise UserInputError("--of sigma: σ is the seed spread on a given set of examples; plan it with "
                             "--half-width and --examples fixed")
    if out is not None:
        _check_out_folder(out)
    datasets = user_file_refs(dataset)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExampleSetWarning)  # the planner refuses such runs itself, naming them
        predictions = read_predictions(table, datasets=datasets)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            result = plan_seeds(predictions, half_width=half_width, quantity=of, delta=delta, power=power, by=by,
                                examples=examples, example_scales=example_scale, max_seeds=max_seeds, level=level,
                                alpha=alpha, n_sims=sims, n_boot=boot, pilot_level=pilot_level,
                                seed_shape=seed_shape, example_correlation=example_correlation, dataset=datasets,
                                validate=False, seed=seed, progress=progress)
    except ValueError as err:
        if isinstance(err, UserInputError):
            raise
        raise UserInputError(f"{table}: {one_line(err)}") from None
    target = result.target
    of_what = "mean MCC over seeds" if target["quantity"] == "mean" else "seed standard deviation σ"
    what = (f"CI half-width <= {target['target']:g} of the {of_what} ({target['level']:.0%})"
            if target["metric"] == "half_width" else
            f"power >= {target['target']:g} to detect a difference of {target['delta']:g} (alpha {target['alpha']:g})")
    typer.echo(f"Seeds needed for {what}, examples {target['examples']}, {target['n_sims']} simulated studies per "
               f"point; conservative: at the {target['pilot_level']:.0%} upper limit of the pilot's seed variance.")
    for skipped in result.skipped:
        typer.echo(f"warning: left out (a single seed): {skipped}", err=True)
    summary = result.summary()
    shown = summary.astype(object).where(summary.notna(), f">{max_seeds}")
    typer.echo(markdown_table(shown, digits=2))
    if out is not None:
        frames = {"plan_curve.csv": result.curve, "plan_needed.csv": result.needed,
                  "plan_components.csv": result.components, "plan_summary.csv": summary}
        with output_folder(out, PLAN_OUTPUTS) as files:
            for name, frame in frames.items():
                with files.file(name) as tmp:
                    write_table_to(frame, tmp, "csv")
            with files.file("plan.json") as tmp:
                tmp.write_text(json.dumps(target | {"source": str(table)}, indent=2) + "\n", encoding="utf-8")
        from diagnostics.plots import save, seed_plan_figure

        figure = save(seed_plan_figure(result.curve, target["target"]), out, "plan_curve")
        typer.echo("wrote " + ", ".join([*(str(files.path(name)) for name in PLAN_OUTPUTS), str(figure)]))


class _DefaultCommand(TyperCommand):
    """The report command, run as ``diagnostics stats PREDICTIONS``: its usage and hints name no sub-command."""

    def make_context(self, info_name: str | None, args: list[str], parent: click.Context | None = None,
                     **extra) -> click.Context:
        """Make the context as the ``stats`` command's own (``command_path`` ``diagnostics stats``)."""
        if parent is not None and parent.parent is not None:
            info_name, parent = parent.info_name, parent.parent
        return super().make_context(info_name, args, parent=parent, **extra)


class _StatsGroup(TyperGroup):
    """``diagnostics stats PREDICTIONS ...`` runs the report; ``diagnostics stats plan TABLE ...`` the planner."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """Route arguments that do not start with a sub-command name to the report command."""
        if not args or args[0] not in self.commands:
            args = [_REPORT, *args]
        return super().parse_args(ctx, args)


_REPORT = "report"
#: The files of ``stats plan --out``, written as one set.
PLAN_OUTPUTS = ("plan_curve.csv", "plan_needed.csv", "plan_components.csv", "plan_summary.csv", "plan.json")


def _check_out_folder(out: Path) -> None:
    """Refuse an ``--out`` that is a file, lies under one, or sits where nothing can be written, before any work."""
    from diagnostics.core.file_checks import check_output_path

    check_output_path(out, folder=True)


#: ``diagnostics stats``: the report (its default command) and ``plan``.
stats_app = typer.Typer(cls=_StatsGroup, help="Per-category MCC, seed stability and Multi-Bootstrap CIs of a "
                        "predictions table (diagnostics stats PREDICTIONS); how many seeds a study needs "
                        "(diagnostics stats plan TABLE).")
stats_app.command(_REPORT, cls=_DefaultCommand, epilog="How many seeds does a study need? See diagnostics stats plan "
                  "--help.")(stats)
stats_app.command("plan")(plan)
