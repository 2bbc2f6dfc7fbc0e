"""``diagnostics pipeline``: the main job, and its plan (``--dry-run``)."""

from __future__ import annotations

import json
from pathlib import Path

import typer


def pipeline(scale: str = typer.Option("demo", help="tiny | demo | paper."),
             out: Path = typer.Option(None, help="Report folder (default <project root>/reports/<scale>)."),
             runs: Path = typer.Option(None, help="Run store (default <project root>/runs/<scale>, where the "
                                       "notebooks look); finished runs are reused."),
             notebook: list[str] = typer.Option(None, help="Only these notebooks (stems, repeatable)."),
             data: list[str] = typer.Option([], "--data", "-d", help="A data file: mnli=PATH (GLUE train.tsv or "
                                            "MultiNLI train.jsonl), <lang>.train=PATH, <lang>.validation=PATH "
                                            "(RTE/TERRa JSONL), <lang>.diagnostics=PATH (AX-b/LiDiRus JSONL) for "
                                            "lang in fr, de, sv (en, ru replace the bundled sets). Repeatable."),
             overrides: list[str] = typer.Option([], "--set", "-s", help="key=value: a scale setting "
                                                 "(extra_sizes=[1000,5000], presence_shares=[0.5], extra_source=sick "
                                                 "...) or any sweep key as in `sweep run --set` (seeds=[0,1], "
                                                 "executor=submitit, executor_options.slurm_partition=gpu). "
                                                 "Repeatable."),
             dry_run: bool = typer.Option(False, "--dry-run", help="List every run with its mixture and state, "
                                          "the counts, the cost, and what stops the plan; train nothing."),
             as_json: bool = typer.Option(False, "--json", help="With --dry-run: the plan as one JSON document."),
             detach: bool = typer.Option(False, "--detach", help="Submit the runs still to train to the cluster "
                                         "(--set executor=submitit) and return at once; the same command without "
                                         "--detach writes the report once they have finished.")
             ) -> None:
    """Run sweeps -> statistics -> probes -> executed notebooks -> <out>/index.html.

    Data files and --set overrides also come from the scale config's `pipeline:` section (configs/<scale>.yaml);
    the ones a run used are recorded in <runs>/pipeline.json, where the notebooks read them. A wrong setting is one
    `error:` line naming its --set override or file:line; a source missing or too small, a model not available
    locally or a language that trains without a diagnostic set (see --set score_missing=skip|train) is one line
    per problem. Either exits 2 before anything trains.
    """
    from diagnostics.core.errors import USER_ERROR_EXIT, UserInputError
    from diagnostics.core.resources import default_runs_dir
    from diagnostics.pipeline import SCALES, PipelineInputs, PlanError, ScalePlan, parse_data, run_pipeline

    if scale not in SCALES:
        raise UserInputError(f"--scale: expected one of {', '.join(SCALES)}, found {scale!r}")
    runs = runs if runs is not None else default_runs_dir(scale)
    for item in overrides:
        if "=" not in item:
            raise UserInputError(f"--set {item}: expected key=value, found no '='")
    given = PipelineInputs(parse_data(data), list(overrides))
    if dry_run:
        from diagnostics.pipeline import check_plan

        plan = check_plan(ScalePlan.resolve(scale, runs, given))  # a wrong setting: one error line, exit 2
        if as_json:
            typer.echo(json.dumps(plan.to_dict(), indent=1, default=str))
        else:
            for line in plan.lines():
                typer.echo(line)
        for problem in plan.problems if as_json else ():
            typer.echo(f"problem: {problem}", err=True)
        raise typer.Exit(USER_ERROR_EXIT if plan.problems else 0)
    if detach:
        _detach(scale, runs, given, data, overrides)
        return
    try:
        index = run_pipeline(scale, out, runs, notebook or None, inputs=given)
    except PlanError as err:
        for problem in err.problems:
            typer.echo(f"error: {' '.join(problem.split())}", err=True)
        raise typer.Exit(USER_ERROR_EXIT) from None
    typer.echo(f"report: {index}")


def _detach(scale: str, runs: Path, given, data: list[str], overrides: list[str]) -> None:
    """Submit the scale's unfinished runs and say how to follow them and finish the report."""
    import shlex

    from diagnostics.core.errors import USER_ERROR_EXIT
    from diagnostics.finetune import detached_lines
    from diagnostics.pipeline import PlanError, detach_pipeline

    try:
        record = detach_pipeline(scale, runs, given)
    except PlanError as err:
        for problem in err.problems:
            typer.echo(f"error: {' '.join(problem.split())}", err=True)
        raise typer.Exit(USER_ERROR_EXIT) from None
    again = shlex.join(["diagnostics", "pipeline", "--scale", scale, "--runs", str(runs),
                        *(f"--data={item}" for item in data), *(f"--set={item}" for item in overrides)])
    if record is None:
        typer.echo(f"every run is finished: nothing submitted; write the report with `{again}`")
        return
    for line in detached_lines(record):
        typer.echo(line)
    typer.echo(f"once they have finished (`diagnostics sweep wait {runs}`), write the report with `{again}`: it "
               "trains nothing")
