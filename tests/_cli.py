"""Running the real ``diagnostics`` command (in a subprocess, or in this process), and what a user error must look
like."""

from __future__ import annotations

import os
import subprocess
import sys
import traceback
from pathlib import Path

from typer.testing import CliRunner

from diagnostics.core.errors import USER_ERROR_EXIT

ENV = {**os.environ, "PYTHONHASHSEED": "0", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
       "TOKENIZERS_PARALLELISM": "false"}
ENV.pop("DIAGNOSTICS_TRACEBACK", None)


def run_cli(*args: str | Path, cwd: str | Path | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    """Run ``python -m diagnostics ARGS`` as a user would, capturing its output."""
    return subprocess.run([sys.executable, "-m", "diagnostics", *map(str, args)], cwd=cwd, env=ENV,
                          capture_output=True, text=True, timeout=timeout)


def invoke_cli(*args: str | Path, cwd: str | Path | None = None) -> subprocess.CompletedProcess:
    """Run the ``diagnostics`` app in this process, as :func:`run_cli` runs it in a subprocess.

    An exception that escapes a command is a crash: exit code 1 and its traceback on stderr, as ``python -m
    diagnostics`` would print it. Returns the exit code and the output like :func:`run_cli`.
    """
    from diagnostics.cli import app

    argv = list(map(str, args))
    before = Path.cwd()
    os.chdir(cwd or before)
    try:
        result = CliRunner().invoke(app, argv, env={"DIAGNOSTICS_TRACEBACK": None, "TOKENIZERS_PARALLELISM": "false"})
    finally:
        os.chdir(before)
    stderr = result.stderr
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        stderr += "Traceback (most recent call last):\n" + "".join(traceback.format_exception(*result.exc_info))
    return subprocess.CompletedProcess(["diagnostics", *argv], result.exit_code, result.stdout, stderr)


def assert_user_error(result: subprocess.CompletedProcess, *names: str) -> str:
    """Assert a refused input: exit code 2, no traceback, one ``error:`` line that names every ``names``.

    Returns the error line.
    """
    assert "Traceback" not in result.stderr, result.stderr
    assert result.returncode == USER_ERROR_EXIT, (result.returncode, result.stdout, result.stderr)
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, result.stderr
    for name in names:
        assert name in errors[0], (name, errors[0])
    return errors[0]
