"""The ``diagnostics`` command line: one Typer app, one sub-command group per stage.

The commands sit above every stage, in one module per command group (``diagnostics/cli/stats.py`` holds
``diagnostics stats``, ``diagnostics/cli/sweep.py`` ``diagnostics sweep`` ...); this module adds each group or command
to :data:`app`. They use the stages through their public names; imports of heavy libraries (torch, spaCy) stay inside
the command functions so that ``diagnostics --help`` is instant.
"""

from __future__ import annotations

import functools
import os
import sys
import traceback

import click
import typer

from diagnostics.core.cli_help import plain_flags
from diagnostics.core.errors import USER_ERROR_EXIT, is_user_error, one_line, show_tracebacks

from . import (annotate, behave, data, evaluate, models, notebooks, pipeline, predictions, probe, report, settings,
               stats, sweep)

# Quiet per-load reports of transformers (set before it is imported; the user's own setting wins).
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

plain_flags()  # --help shows a flag without a <bool> type
__all__ = ["app", "main"]

app = typer.Typer(help="Multilingual NLI diagnostics and fine-tuning stability.", no_args_is_help=True,
                  pretty_exceptions_enable=False, add_completion=False)


def _reporting_user_errors(callback):
    """A command callback that reports user errors as one line (``error: ...``) with exit code 2."""

    @functools.wraps(callback)
    def wrapper(*args, **kwargs):
        try:
            return callback(*args, **kwargs)
        except (click.exceptions.Exit, click.ClickException, click.Abort):
            raise
        except Exception as err:
            if not is_user_error(err):
                raise
            if show_tracebacks():
                traceback.print_exc()
            typer.echo(f"error: {one_line(err)}", err=True)
            raise typer.Exit(USER_ERROR_EXIT) from None

    return wrapper


def _wrap_commands(group: typer.Typer) -> None:
    """Wrap every command of ``group`` and of its sub-groups (see :func:`_reporting_user_errors`)."""
    for command in group.registered_commands:
        if command.callback is not None and not hasattr(command.callback, "__wrapped__"):
            command.callback = _reporting_user_errors(command.callback)
    for sub in group.registered_groups:
        if sub.typer_instance is not None:
            _wrap_commands(sub.typer_instance)


app.add_typer(data.data_app, name="data")
app.add_typer(annotate.annotate_app, name="annotate")
app.add_typer(models.models_app, name="models")
app.add_typer(sweep.sweep_app, name="sweep")
app.add_typer(stats.stats_app, name="stats")
app.add_typer(predictions.predictions_app, name="predictions")
app.command("evaluate")(evaluate.evaluate)
app.add_typer(probe.probe_app, name="probe")
app.add_typer(behave.behave_app, name="behave")
app.command("report")(report.report)
app.command("pipeline")(pipeline.pipeline)
app.command("compare")(predictions.compare)
app.add_typer(notebooks.notebooks_app, name="notebooks")
app.command("settings")(settings.settings)
_wrap_commands(app)


def main() -> None:
    """Console-script entry point: runs :data:`app`; an interrupt (Ctrl-C) exits 130 without a traceback."""
    try:
        app()
    except KeyboardInterrupt:
        typer.echo("interrupted", err=True)
        sys.exit(130)
