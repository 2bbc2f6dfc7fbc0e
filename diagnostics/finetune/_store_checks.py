"""Integrity of finished runs: verification against the checksums in ``DONE``, the store's status and collection.

A finished run is sound when every file of :data:`~diagnostics.finetune._store.RUN_FILES` exists and reads, its
recorded run hash matches its recorded settings and each file still has the sha256 :func:`mark_done` recorded.
:func:`collect_predictions` and :func:`sweep_status` skip / report (``corrupt``) the runs that fail it.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pandas as pd

from ._store import (PREDICTION_COLUMNS, PREDICTIONS_FILE, RUN_CONFIG, RUN_FILES, _load_json, _read_json, _sha256,
                     is_done, list_runs, run_state)


def _verify(path: Path) -> tuple[list[str], pd.DataFrame | None]:
    """Problems of the finished run in ``path`` and its predictions table (``None`` when unreadable)."""
    from diagnostics.core.schema import PREDICTION_REQUIRED

    from ._config import SweepConfig

    path = Path(path)
    if not is_done(path):
        return [f"not finished ({run_state(path)})"], None
    problems = [f"DONE but {name} is missing" for name in RUN_FILES if not (path / name).is_file()]
    table = None
    if (path / PREDICTIONS_FILE).is_file():
        try:
            table = pd.read_parquet(path / PREDICTIONS_FILE)
        except Exception as err:  # noqa: BLE001 - any reader error means a damaged file
            problems.append(f"predictions.parquet is unreadable ({type(err).__name__}: {err})")
        else:
            missing = [c for c in PREDICTION_REQUIRED if c not in table.columns]
            if missing:
                problems.append(f"predictions.parquet lacks the columns {', '.join(missing)}")
            elif table.empty:
                problems.append("predictions.parquet has no rows")
    for name in ("metrics.json", "versions.json"):
        if (path / name).is_file():
            try:
                _load_json(path / name)
            except ValueError as err:
                problems.append(f"{name} is unreadable ({err})")
    if (path / RUN_CONFIG).is_file():
        try:
            stored = _load_json(path / RUN_CONFIG)
        except ValueError as err:
            problems.append(f"config.json is unreadable ({err})")
        else:
            recorded = (stored.get("run") or {}).get("run_hash")
            try:
                actual = SweepConfig.from_dict(stored["sweep"]).run_hash()
            except (KeyError, TypeError, ValueError) as err:
                problems.append(f"config.json has no valid sweep settings ({type(err).__name__}: {err})")
            else:
                if recorded != actual:
                    problems.append(f"config.json was edited: its sweep settings hash to {actual}, "
                                    f"the run recorded run_hash {recorded}")
    problems += _checksum_problems(path, problems)
    return problems, (None if problems else table)


def _checksum_problems(path: Path, found: list[str]) -> list[str]:
    """Files that differ from the sha256 ``DONE`` recorded (runs finished before checksums record none).

    A file that already has a problem in ``found`` is not reported twice.
    """
    try:
        done = _load_json(path / "DONE")
    except ValueError as err:
        return [f"DONE is unreadable ({err})"]
    recorded = done.get("sha256")
    if recorded is None:
        return []
    if not isinstance(recorded, dict):
        return [f"DONE has no valid sha256 record (found {type(recorded).__name__})"]
    problems = []
    for name, digest in sorted(recorded.items()):
        file = path / str(name)
        if any(problem.startswith(f"{name} ") or f" {name} " in problem for problem in found) or not file.is_file():
            continue
        actual = _sha256(file)
        if actual != digest:
            problems.append(f"{name} changed after the run finished (sha256 {actual[:12]}..., DONE recorded "
                            f"{str(digest)[:12]}...)")
    missing = [name for name in RUN_FILES if name not in recorded and (path / name).is_file()]
    if missing:
        problems.append(f"DONE records no sha256 for {', '.join(missing)}")
    return problems


def reopen_corrupt(path: str | Path) -> list[str]:
    """Withdraw the ``DONE`` marker of a finished run that fails :func:`verify_run`, so that a sweep trains it again.

    Returns the problems found (empty, and nothing changed, for a sound or unfinished run). The run's files stay until
    the retraining clears them, so the problems can still be inspected.
    """
    path = Path(path)
    if not is_done(path):
        return []
    problems = verify_run(path)
    if problems:
        (path / "DONE").unlink(missing_ok=True)
    return problems


def verify_run(path: str | Path) -> list[str]:
    """Integrity problems of a finished run; an empty list when it is sound.

    Checks that every file of :data:`RUN_FILES` exists, that ``predictions.parquet`` reads, has rows and the
    required columns (:data:`diagnostics.core.schema.PREDICTION_REQUIRED`), that the JSON files read, that
    ``config.json``'s recorded ``run.run_hash`` is the hash of its recorded ``sweep`` settings (else the file was
    edited after the run), and that each file's sha256 equals the one :func:`mark_done` recorded in ``DONE`` (a
    truncated, edited or replaced file). Runs finished before ``DONE`` recorded checksums pass on the other checks.

    Parameters
    ----------
    path : str or Path
        A run folder.

    Returns
    -------
    list of str
        One line per problem; ``["not finished (<state>)"]`` for a run without ``DONE``.
    """
    return _verify(Path(path))[0]


def sweep_status(root: str | Path) -> pd.DataFrame:
    """Report the state of every run folder under ``root`` (a run store, one experiment, or one run).

    Parameters
    ----------
    root : str or Path
        Searched as in :func:`list_runs`.

    Returns
    -------
    pandas.DataFrame
        ``experiment, language, model, seed, state, best_validation, minutes, code_commit, path``; state as in
        :func:`run_state`, or ``corrupt`` for a finished run that fails :func:`verify_run` (a warning names its
        problems); ``code_commit`` is the short git commit recorded in the run's ``versions.json``
        (``+dirty``: uncommitted changes; ``None``: not recorded or not made in a checkout).
    """
    from diagnostics.core.version import short_commit

    rows = []
    for run in list_runs(root):
        state = run.state
        if state == "done":
            problems = verify_run(run.path)
            if problems:
                state = "corrupt"
                warnings.warn(f"run {run.path} is corrupt: {'; '.join(problems)}", stacklevel=2)
        config = _read_json(run.path / RUN_CONFIG) or {}
        metrics = _read_json(run.path / "metrics.json") or {}
        versions = _read_json(run.path / "versions.json") or {}
        recorded = config.get("run", {}) if isinstance(config.get("run"), dict) else {}
        best = metrics.get("best", {}) if isinstance(metrics.get("best"), dict) else {}
        resources = metrics.get("resources") or {}
        rows.append({
            "experiment": recorded.get("experiment", run.experiment),
            "language": recorded.get("language", run.language),
            "model": recorded.get("model", run.model),
            "seed": run.seed,
            "state": state,
            "best_validation": best.get("validation_" + str(metrics.get("selection_metric", ""))),
            "minutes": round(resources["total_s"] / 60, 2) if "total_s" in resources else None,
            "code_commit": short_commit(versions.get("code")),
            "path": str(run.path),
        })
    return pd.DataFrame(rows, columns=["experiment", "language", "model", "seed", "state", "best_validation",
                                       "minutes", "code_commit", "path"])


def collect_predictions(root: str | Path) -> pd.DataFrame:
    """Concatenate the predictions tables of every finished run under ``root``.

    Unfinished runs are skipped; so are finished runs that fail :func:`verify_run`, each with a warning naming
    the run and its problems.

    Parameters
    ----------
    root : str or Path
        Searched as in :func:`list_runs`.

    Returns
    -------
    pandas.DataFrame
        The rows of every sound finished run; no rows (columns :data:`PREDICTION_COLUMNS`) when there is none.
    """
    frames = []
    for run in list_runs(root, state="done"):
        problems, table = _verify(run.path)
        if problems:
            warnings.warn(f"skipping run {run.path}: {'; '.join(problems)}", stacklevel=2)
            continue
        frames.append(table)
    if not frames:
        return pd.DataFrame(columns=PREDICTION_COLUMNS)
    return pd.concat(frames, ignore_index=True)
