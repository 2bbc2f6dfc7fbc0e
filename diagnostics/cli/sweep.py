"""``diagnostics sweep run CONFIG [--set key=value ...] [--detach]``, ``diagnostics sweep status DIR`` and
``diagnostics sweep wait DIR``."""

from __future__ import annotations

from pathlib import Path

import click
import typer
from typer.core import TyperCommand

sweep_app = typer.Typer(help="Seed sweeps: fine-tune one model many times, changing only the seed.",
                        no_args_is_help=True)


@sweep_app.command("run")
def run_command(
    config: Path = typer.Argument(..., help="Sweep config (YAML or TOML), e.g. configs/demo.yaml."),
    overrides: list[str] = typer.Option([], "--set", "-s", help="Override a config key: --set lr=5e-5 "
                                        "--set seeds=[0,1] --set extra_data.size=500 (repeatable)."),
    executor: str = typer.Option(None, help="inprocess | pool | submitit (default: the config's)."),
    workers: int = typer.Option(None, help="Processes for the pool executor (default: the config's)."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the runs and their state, train nothing."),
    detach: bool = typer.Option(False, "--detach", help="Submit the jobs to the cluster (executor submitit) and "
                                "return at once with their ids; follow them with `sweep status` or `sweep wait`."),
) -> None:
    """Run every unfinished (language, model, seed) of CONFIG; finished runs are skipped.

    The config is checked whole before anything runs, in a dry run too: its values, the models and data files it
    needs and the sizes it asks of them. A bad value or a missing input is one line ``error: <file>:<line>: <key>:
    ...`` with exit code 2; runs that fail while training, are interrupted (a cancelled, preempted or timed-out job),
    are locked by another process or were lost to another host (which took their lease over) are listed and exit
    with code 1.

    With --detach (executor submitit) the jobs are submitted and the command returns at once, printing their ids;
    what was submitted is recorded in <output_dir>/<experiment>/.submitit/detached.json. The jobs run on their own:
    logging out or Ctrl-C cancels nothing.
    """
    from diagnostics.finetune import load_config

    cfg = load_config(config, overrides)
    given = {key: value for key, value in (("executor", executor), ("workers", workers)) if value is not None}
    if given:
        cfg = cfg.with_overrides(given)
    cfg.check_inputs()
    # imports torch: after the checks
    from diagnostics.finetune import SettingsConflictError, run_states, settings_conflict

    if dry_run:
        states = run_states(cfg)
        for spec, state in states:
            typer.echo(f"{spec.describe():40s} {state}")
        conflicts = [spec for spec, state in states if state == "conflict"]
        if conflicts:
            raise SettingsConflictError(
                f"{config}: {len(conflicts)} finished run(s) were made with other settings, e.g. "
                f"{settings_conflict(cfg, conflicts[0])}; the real run refuses this sweep: choose another "
                "experiment name or output directory, or delete those folders")
        return
    if detach:
        _detach(cfg)
        return
    from diagnostics.finetune import PROBLEM_STATES, run_sweep

    results = run_sweep(cfg)
    typer.echo(results[["language", "model", "seed", "state"]].to_string(index=False))
    problems = results[results["state"].isin(PROBLEM_STATES)]
    for row in problems.itertuples():
        typer.echo(f"{row.language}/{row.model}/seed={row.seed}: {row.state}: {row.error}", err=True)
    typer.echo(f"runs in {Path(cfg.output_dir) / cfg.experiment}")
    if len(problems):
        raise typer.Exit(1)


def _detach(cfg) -> None:
    from diagnostics.finetune import detached_lines, submit_sweeps

    record = submit_sweeps([cfg])
    if record is None:
        typer.echo(f"every run is finished: nothing submitted; runs in {Path(cfg.output_dir) / cfg.experiment}")
        return
    for line in detached_lines(record):
        typer.echo(line)


class _PlotPathOptional(TyperCommand):
    """``--plot`` with or without its PATH: a bare ``--plot`` (last, or before another option) gets the empty path."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """Give a bare ``--plot`` the empty value (its default place) before the usual parsing."""
        args = list(args)
        for i, arg in enumerate(args):
            if arg == "--":
                break
            if arg == "--plot" and (i + 1 == len(args) or args[i + 1].startswith("-")):
                args.insert(i + 1, "")
                break
        return super().parse_args(ctx, args)


@sweep_app.command("status", cls=_PlotPathOptional)
def status_command(
    directory: Path = typer.Argument(..., help="A run store, one experiment folder, or one run folder."),
    plot: str = typer.Option(None, "--plot", metavar="[PATH]",
                             help="Also draw each run's validation curve (the selection metric per check, one line "
                             "per seed, a panel per experiment and language) as a PNG: PATH, or "
                             "validation_curves.png in DIR (beside a run folder when DIR is one)."),
) -> None:
    """Per run: done / running / failed / interrupted / pending, best validation score, minutes and the code commit.

    Finished runs are reused when their settings (run_hash) match, whatever code made them; a notice says when
    the finished runs listed were made by different commits. For a detached sweep (`sweep run --detach`) each run
    also shows its job and the scheduler's side: queued / training / ended, with the state SLURM reports.
    """
    from diagnostics.finetune import detached_status, find_detached

    if not directory.exists():
        raise FileNotFoundError(2, "does not exist (expected a run store, experiment or run folder)", str(directory))
    record = find_detached(directory)
    table = detached_status(directory)
    if table.empty:
        typer.echo(f"no runs under {directory}")
        return
    _show(table, record)
    if plot is not None:
        _plot_curves(directory, Path(plot) if plot else None)


def _plot_curves(directory: Path, path: Path | None) -> None:
    """Write the runs' validation curves as a PNG (never inside a run folder); exit 1 when no run has any yet."""
    from diagnostics.core.errors import UserInputError
    from diagnostics.finetune import run_folder
    from diagnostics.plots import save, validation_curves

    if path is None:
        folder = run_folder(directory)
        path = (folder.parent if folder is not None else directory) / "validation_curves.png"
    elif run_folder(path.resolve()) is not None:
        raise UserInputError(f"--plot {path}: inside a run folder; write the figure elsewhere")
    try:
        figure = validation_curves(directory)
    except ValueError as err:
        typer.echo(f"no figure written: {err}", err=True)
        raise typer.Exit(1) from None
    typer.echo(f"wrote {save(figure, path.parent, path.stem if path.suffix == '.png' else path.name)}")


def _show(table, record) -> None:
    """Print a status table, its counts, the commits notice and, for a detached sweep, its jobs' sides."""
    from diagnostics.core.version import mixed_commits_notice
    from diagnostics.finetune import describe_record

    shown = table.drop(columns=["path"])
    if record is None:
        shown = shown.drop(columns=["job", "scheduler", "job_state"])
    typer.echo(shown.to_string(index=False))
    counts = table["state"].value_counts()
    typer.echo(", ".join(f"{n} {state}" for state, n in counts.items()))
    notice = mixed_commits_notice(table.loc[table["state"] == "done", "code_commit"])
    if notice:
        typer.echo(notice)
    if record is not None:
        sides = table["scheduler"].dropna().value_counts()
        typer.echo(f"{describe_record(record)}; runs: " + ", ".join(f"{n} {side}" for side, n in sides.items()))


@sweep_app.command("wait")
def wait_command(
    directory: Path = typer.Argument(..., help="A run store, experiment or run folder of a detached sweep."),
    poll_s: float = typer.Option(None, "--poll-s", min=0.1, help="Seconds between two polls of the queue "
                                 "(default: the sweep's executor_options.poll_s)."),
) -> None:
    """Follow a detached sweep (`sweep run --detach`) until every one of its jobs has ended, then print the table.

    Prints a line for each run that finishes and, at least once a minute, what it waits for (jobs by SLURM state and
    reason, for how long, an squeue that does not answer). Exits 0 when every run of the detached sweep is done, 1
    otherwise. Ctrl-C stops following and cancels nothing (the jobs go on).
    """
    from diagnostics.finetune import find_detached, wait_detached

    if not directory.exists():
        raise FileNotFoundError(2, "does not exist (expected a run store, experiment or run folder)", str(directory))
    try:
        table = wait_detached(directory, poll_s=poll_s)
    except KeyboardInterrupt:
        typer.echo(f"stopped following; nothing was cancelled, the jobs go on: follow them again with "
                   f"`diagnostics sweep wait {directory}`", err=True)
        raise typer.Exit(130) from None
    _show(table, find_detached(directory))
    ours = table[table["job"].notna()]
    if not (ours["state"] == "done").all():
        raise typer.Exit(1)
