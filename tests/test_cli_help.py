"""Every command's ``--help``: flags shown as plain flags (no ``<bool>`` type), options with values keep theirs."""

from __future__ import annotations

import typer
from typer.testing import CliRunner

from diagnostics.cli import app


def _commands(group: typer.Typer, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = [(*prefix, c.name or c.callback.__name__) for c in group.registered_commands]
    for sub in group.registered_groups:
        found += _commands(sub.typer_instance, (*prefix, sub.name))
    return found


def test_no_help_shows_a_bool_type():
    runner = CliRunner()
    commands = _commands(app)
    assert ("annotate", "init") in commands and ("models", "convert") in commands
    for command in commands:
        result = runner.invoke(app, [*command, "--help"], env={"COLUMNS": "160"}, terminal_width=160)
        assert result.exit_code == 0, (command, result.output)
        assert "<bool>" not in result.output, f"{' '.join(command)} --help shows <bool>"
    shown = runner.invoke(app, ["probe", "run", "--help"], env={"COLUMNS": "160"}, terminal_width=160).output
    assert "--jobs" in shown and "<int>" in shown and "--no-progress" in shown
