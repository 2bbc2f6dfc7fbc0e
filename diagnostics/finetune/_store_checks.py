"""Integrity of finished runs: verification against the checksums in ``DONE``, the store's status and collection.

A finished run is sound when every file of :data:`~diagnostics.finetune._store.RUN_FILES` exists and reads, its
recorded run hash matches its recorded settings and each file (``checkpoint/``'s too) still has the sha256
:func:`mark_done` recorded. :func:`collect_predictions` and :func:`sweep_status` skip / report (``corrupt``) the runs
that fail it.

Not every failure is damage (:func:`finished_state`): a file the operating system could not read (EIO, EACCES,
ESTALE on a flaky network mount) says nothing about its content, and a ``DONE`` of a newer version is not ours to
judge. Only *damage* (a readable file that differs from its record, a missing file, an unparsable one) withdraws a
finished run, and only under its lease (:func:`reopen_corrupt`).
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pandas as pd

from ._store import (DONE_FORMAT, PREDICTION_COLUMNS, PREDICTIONS_FILE, RUN_CONFIG, RUN_FILES, _load_json, _read_json,
                     _sha256, checkpoint_files, is_done, list_runs, run_state)

#: What :func:`finished_state` says of a run folder.
SOUND, DAMAGED, UNREADABLE, NEWER, UNFINISHED = "sound", "damaged", "unreadable", "newer", "unfinished"


class _Unreadable(Exception):
    """A file of the run could not be read by the operating system (not a statement about its content)."""


def _os_error(err: BaseException) -> OSError | None:
    """The operating-system error behind a reader's exception (EIO, EACCES, ESTALE ...), if that is what it is."""
    for error in (err, err.__cause__, err.__context__):
        if isinstance(error, OSError) and not isinstance(error, FileNotFoundError) and error.errno:
            return error
    return None


def _verify(path: Path) -> tuple[list[str], pd.DataFrame | None, str]:
    """Problems of the finished run in ``path``, its predictions table (``None`` when unreadable) and what they
    mean (:func:`finished_state`)."""
    path = Path(path)
    if not is_done(path):
        return [f"not finished ({run_state(path)})"], None, UNFINISHED
    try:
        done = _load_json(path / "DONE")
    except ValueError:
        done = None
    except OSError as err:
        return [_unreadable_line("DONE", err)], None, UNREADABLE
    version = done.get("format", 1) if isinstance(done, dict) else 1
    if isinstance(version, int) and version > DONE_FORMAT:
        return [f"DONE was written by a newer version of this toolkit (record format {version}; this version reads "
                f"up to {DONE_FORMAT}): left as it is; update the toolkit to use it"], None, NEWER
    try:
        problems, table = _problems(path)
    except _Unreadable as err:
        return [str(err)], None, UNREADABLE
    return problems, (None if problems else table), (DAMAGED if problems else SOUND)


def _unreadable_line(name: str, err: OSError) -> str:
    import errno as errno_names

    code = errno_names.errorcode.get(err.errno or 0, str(err.errno))
    return f"{name} could not be read ({code}: {err.strerror or err}); not judged damaged, left as it is"


def _problems(path: Path) -> tuple[list[str], pd.DataFrame | None]:
    """Damage of a finished run (``_Unreadable`` when the operating system could not read one of its files)."""
    from diagnostics.core.schema import PREDICTION_REQUIRED

    from ._config import SweepConfig

    problems = [f"DONE but {name} is missing" for name in RUN_FILES if not (path / name).is_file()]
    table = None
    if (path / PREDICTIONS_FILE).is_file():
        try:
            table = pd.read_parquet(path / PREDICTIONS_FILE)
        except Exception as err:  # noqa: BLE001 - any reader error but the operating system's means a damaged file
            if (os_error := _os_error(err)) is not None:
                raise _Unreadable(_unreadable_line(PREDICTIONS_FILE, os_error)) from err
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
            except OSError as err:
                raise _Unreadable(_unreadable_line(name, err)) from err
    if (path / RUN_CONFIG).is_file():
        try:
            stored = _load_json(path / RUN_CONFIG)
        except OSError as err:
            raise _Unreadable(_unreadable_line(RUN_CONFIG, err)) from err
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
    except OSError as err:
        raise _Unreadable(_unreadable_line("DONE", err)) from err
    recorded = done.get("sha256")
    if recorded is None:
        return []
    if not isinstance(recorded, dict):
        return [f"DONE has no valid sha256 record (found {type(recorded).__name__})"]
    problems = []
    for name, digest in sorted(recorded.items()):
        file = path / str(name)
        if any(problem.startswith(f"{name} ") or f" {name} " in problem for problem in found):
            continue
        if not file.is_file():
            if str(name).startswith("checkpoint/"):
                problems.append(f"{name} is missing (DONE recorded it)")
            continue
        try:
            actual = _sha256(file)
        except OSError as err:
            raise _Unreadable(_unreadable_line(str(name), err)) from err
        if actual != digest:
            problems.append(f"{name} changed after the run finished (sha256 {actual[:12]}..., DONE recorded "
                            f"{str(digest)[:12]}...)")
    covers_checkpoint = isinstance(done.get("format"), int) and done["format"] >= 2
    covered = list(RUN_FILES) + (checkpoint_files(path) if covers_checkpoint else [])
    missing = [name for name in covered if name not in recorded and (path / name).is_file()]
    if missing:
        problems.append(f"DONE records no sha256 for {', '.join(missing)}")
    return problems


def finished_state(path: str | Path) -> tuple[str, list[str]]:
    """What the checks of :func:`verify_run` mean for a run folder, and the problems they found.

    Parameters
    ----------
    path : str or Path
        A run folder.

    Returns
    -------
    tuple of (str, list of str)
        ``sound`` (no problem), ``damaged`` (a readable file differs from its record, is missing or does not parse:
        train the run again), ``unreadable`` (the operating system could not read a file: EIO, EACCES, ESTALE ...;
        leave it alone), ``newer`` (``DONE`` written by a newer version: leave it alone) or ``unfinished``.
    """
    problems, _, state = _verify(Path(path))
    return state, problems


def reopen_corrupt(path: str | Path, writer) -> list[str]:
    """Withdraw the ``DONE`` marker of a *damaged* finished run (:func:`finished_state`), so that it trains again.

    Parameters
    ----------
    path : str or Path
        A run folder.
    writer : RunWriter
        The writer of the run's held lease (:class:`~._run_writer.RunWriter`): only the lease's holder withdraws.

    Returns
    -------
    list of str
        The problems of the withdrawn run; empty, and nothing changed, for a sound, unfinished, unreadable or
        newer run. The run's files stay until the retraining clears them, so the problems can still be inspected.
    """
    state, problems = finished_state(path)
    if state != DAMAGED:
        return []
    writer.remove("DONE")
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
        problems, table, _ = _verify(run.path)
        if problems:
            warnings.warn(f"skipping run {run.path}: {'; '.join(problems)}", stacklevel=2)
            continue
        frames.append(table)
    if not frames:
        return pd.DataFrame(columns=PREDICTION_COLUMNS)
    return pd.concat(frames, ignore_index=True)
