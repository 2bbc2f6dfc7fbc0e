"""Running the real ``diagnostics`` command in a subprocess, and what a user error must look like."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from diagnostics.core.errors import USER_ERROR_EXIT

ENV = {**os.environ, "PYTHONHASHSEED": "0", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
       "TOKENIZERS_PARALLELISM": "false"}
ENV.pop("DIAGNOSTICS_TRACEBACK", None)


def run_cli(*args: str | Path, cwd: str | Path | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    """Run ``python -m diagnostics ARGS`` as a user would, capturing its output."""
    return subprocess.run([sys.executable, "-m", "diagnostics", *map(str, args)], cwd=cwd, env=ENV,
                          capture_output=True, text=True, timeout=timeout)


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
