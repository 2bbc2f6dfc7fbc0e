"""Which code made a result: the installed package version and, in a git checkout, the commit.

Recorded in every run's ``versions.json`` (key ``code``) and in the pipeline's ``manifest.json``. Finished runs
are reused by their settings (``run_hash``), not by the code version: see CONTRIBUTING.md, "Run store".
"""

from __future__ import annotations

import functools
import os
import subprocess
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path
from typing import Any

PACKAGE = "nli-diagnostics"
#: the folder holding the ``diagnostics`` package: the repository root in a checkout or editable install
SOURCE_ROOT = Path(__file__).resolve().parent.parent.parent  # this module is diagnostics/core/version.py
GIT_TIMEOUT_S = 5.0


def _git(*args: str) -> str | None:
    """Output of ``git -C SOURCE_ROOT ARGS`` (stripped), or ``None`` when git is missing, slow or fails."""
    # GIT_OPTIONAL_LOCKS=0: `git status` must not take index.lock (a commit may be running beside us)
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}
    try:
        done = subprocess.run(["git", "-C", str(SOURCE_ROOT), *args], capture_output=True, text=True,
                              timeout=GIT_TIMEOUT_S, env=env, check=False)
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


@functools.lru_cache(maxsize=1)
def _code_version() -> tuple[str | None, str | None, bool | None]:
    try:
        version = metadata.version(PACKAGE)
    except metadata.PackageNotFoundError:
        version = None
    commit, dirty = None, None
    # the package must be a tracked file of the repository: an installed copy in a virtual environment that
    # happens to sit inside some checkout (site-packages under .venv/) is not that checkout's code
    if _git("ls-files", "--error-unmatch", "--", "diagnostics/__init__.py") is not None:
        head = _git("rev-parse", "HEAD")
        if head is not None and len(head) == 40:
            commit = head
            porcelain = _git("status", "--porcelain")
            dirty = None if porcelain is None else bool(porcelain)
    return version, commit, dirty


def code_version() -> dict[str, Any]:
    """The code a result was made with; never raises.

    Read once per process (the code a process runs is the code it imported).

    Returns
    -------
    dict
        ``version``: the installed ``nli-diagnostics`` version (``None`` if not installed); ``commit``: the full
        git commit of the checkout the package is imported from, ``None`` outside a checkout or without git;
        ``dirty``: whether that checkout had uncommitted changes (``None`` without a commit).
    """
    version, commit, dirty = _code_version()
    return {"version": version, "commit": commit, "dirty": dirty}


def short_commit(code: dict[str, Any] | None) -> str | None:
    """Shorten a :func:`code_version` record to ``abc1234`` (``abc1234+dirty`` for uncommitted changes).

    Parameters
    ----------
    code : dict or None
        A :func:`code_version` record (as stored in a run's ``versions.json``).

    Returns
    -------
    str or None
        The first seven hex digits of the commit, with ``+dirty`` when the tree had uncommitted changes;
        ``None`` without a record or a commit.
    """
    if not isinstance(code, dict) or not code.get("commit"):
        return None
    return str(code["commit"])[:7] + ("+dirty" if code.get("dirty") else "")


def mixed_commits_notice(commits: Iterable[str | None]) -> str | None:
    """One notice line when finished runs were made by different commits (``None`` when they agree).

    Parameters
    ----------
    commits : iterable of str or None
        The ``code_commit`` of each finished run (from :func:`short_commit`); unknown ones (``None``) are ignored.

    Returns
    -------
    str or None
        The notice, naming the distinct commits (``+dirty`` ignored); ``None`` when fewer than two.
    """
    distinct = sorted({str(c).removesuffix("+dirty") for c in commits if c})
    if len(distinct) < 2:
        return None
    return (f"notice: the finished runs were made by {len(distinct)} different commits ({', '.join(distinct)}); "
            "finished runs are reused when their settings (run_hash) match, whatever code made them; after a code "
            "change that changes results, rerun into a new output directory (and bump the package version).")
