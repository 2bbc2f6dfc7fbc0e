"""The one writer of a run folder: every file of a run is written by the holder of its lease, and only while it is.

A :class:`RunWriter` belongs to one :class:`~._run_lock.RunLock`. Each file is first written whole into the
staging folder of the lease's token (``.staging/<token>/`` in the run folder), then committed into place by one
``rename`` right after :meth:`~._run_lock.RunLock.ensure` has read from the folder that the newest lease is still
this writer's. A writer whose lease was taken over (its process froze past the bound and another host took the run)
raises :class:`~._run_lock.RunLockLost` and leaves the run to its new owner; the new owner discards the stale
staging folder when it clears the run. ``DONE`` is committed last, with the sha256 of every file of the run,
``checkpoint/`` included (:func:`~._store.done_record`).

What remains between the check and the rename is one system call: a process frozen in exactly that instant and
woken after another owner finished could still replace one file, which the new ``DONE``'s checksums then report
(:func:`~._store_checks.verify_run`) instead of passing a mixed run as sound.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import pandas as pd

from diagnostics.core.io_utils import move_into_place, write_json_atomic, write_text_atomic
from diagnostics.core.tables import write_table

from . import _store as store
from ._run_lock import DISK_ERRORS, LEASE_FOLDER, RunLock, RunLockLost, RunStoreError

#: The folder of staged files inside a run folder (one sub-folder per lease token).
STAGING_FOLDER = ".staging"


class RunWriter:
    """Writes into one run folder for the holder of its lease (see the module's text).

    Parameters
    ----------
    lock : RunLock
        The held lease of the run.
    """

    def __init__(self, lock: RunLock):
        self.lock = lock
        self.path = lock.path
        self.staging = lock.path / STAGING_FOLDER / str(lock.token)

    @contextmanager
    def _writing(self, name: str) -> Iterator[Path]:
        """A staging path for ``name``; a disk error names the run's file, not the staging one."""
        target = self.path / name
        try:
            self.staging.mkdir(parents=True, exist_ok=True)
            yield self.staging / name
        except RunStoreError:
            raise
        except OSError as err:
            if err.errno in DISK_ERRORS:
                raise RunStoreError(err.errno, f"cannot write: {err.strerror or err}", str(target)) from None
            raise

    def _commit(self, name: str) -> None:
        """Rename the staged ``name`` into the run folder, after checking that the lease is still ours."""
        staged, target = self.staging / name, self.path / name
        self.lock.ensure()
        try:
            move_into_place(staged, target)
        except OSError as err:
            if err.errno in DISK_ERRORS:
                raise RunStoreError(err.errno, f"cannot write: {err.strerror or err}", str(target)) from None
            raise

    def write_json(self, name: str, value: Any) -> None:
        """Write and commit a JSON file of the run (the store's format).

        Parameters
        ----------
        name : str
            The file's name in the run folder.
        value : object
            Anything ``json.dumps`` accepts.
        """
        with self._writing(name) as staged:
            write_json_atomic(staged, value)
        self._commit(name)

    def write_text(self, name: str, text: str) -> None:
        """Write and commit a text file of the run.

        Parameters
        ----------
        name : str
            The file's name in the run folder.
        text : str
            Its content (UTF-8).
        """
        with self._writing(name) as staged:
            write_text_atomic(staged, text)
        self._commit(name)

    def write_predictions(self, predictions: pd.DataFrame) -> None:
        """Write and commit the run's ``predictions.parquet``.

        Parameters
        ----------
        predictions : pandas.DataFrame
            The run's predictions table.
        """
        with self._writing(store.PREDICTIONS_FILE) as staged:
            write_table(predictions, staged)
        self._commit(store.PREDICTIONS_FILE)

    def write_folder(self, name: str, fill: Callable[[Path], None]) -> None:
        """Commit a folder of the run (e.g. ``checkpoint/``) that ``fill(folder)`` writes whole first.

        Parameters
        ----------
        name : str
            The folder's name in the run folder (a folder already there is replaced).
        fill : callable
            ``fill(folder)`` writes the folder's files into ``folder`` (a staging path).
        """
        with self._writing(name) as staged:
            if staged.exists():
                shutil.rmtree(staged)
            fill(staged)
        self._commit(name)

    def remove(self, name: str) -> None:
        """Remove a file of the run (e.g. the ``DONE`` of a damaged run), while the lease is ours.

        Parameters
        ----------
        name : str
            The file's name in the run folder.
        """
        self.lock.ensure()
        (self.path / name).unlink(missing_ok=True)

    def remove_folder(self, name: str) -> None:
        """Remove a folder of the run (e.g. its resume state once it finished), while the lease is ours.

        Parameters
        ----------
        name : str
            The folder's name in the run folder.
        """
        self.lock.ensure()
        shutil.rmtree(self.path / name, ignore_errors=True)

    def clear_partial(self, keep: tuple[str, ...] = ()) -> None:
        """Remove what an earlier attempt left (its files, markers and staging), keeping ``LOCK`` and the leases.

        Parameters
        ----------
        keep : tuple of str
            Names to keep as well (a resume state this attempt takes up).
        """
        self.lock.ensure()
        for child in self.path.iterdir():
            if child.name in ("LOCK", LEASE_FOLDER) or child.name in keep:
                continue
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child)
            else:
                child.unlink()

    def mark_done(self, summary: dict[str, Any]) -> None:
        """Commit ``DONE`` last: ``summary`` with the checksums of every file of the run.

        Parameters
        ----------
        summary : dict
            What ``DONE`` records besides the checksums (:func:`~._store.done_record`).
        """
        self.write_json("DONE", store.done_record(self.path, summary))
        self.discard()

    def mark_failed(self, report: str) -> bool:
        """Commit ``FAILED`` (a failed attempt's traceback) if the lease is still ours.

        A disk error here is ignored: it is called while the training error propagates, the error to report.

        Parameters
        ----------
        report : str
            The traceback.

        Returns
        -------
        bool
            Whether it was written.
        """
        return self._marker("FAILED", report)

    def mark_interrupted(self, reason: str) -> bool:
        """Commit ``INTERRUPTED`` (why the attempt was stopped from outside) in an unfinished run whose lease is still
        ours. Disk errors are ignored.

        Parameters
        ----------
        reason : str
            The signal or the job's fate.

        Returns
        -------
        bool
            Whether it was written.
        """
        if store.is_done(self.path):
            return False
        return self._marker("INTERRUPTED", reason.rstrip() + "\n")

    def _marker(self, name: str, text: str) -> bool:
        with suppress(OSError, RunLockLost):
            if self.lock.holds():
                self.write_text(name, text)
                return True
        return False

    def discard(self) -> None:
        """Remove this token's staging folder (and the staging parent when empty)."""
        shutil.rmtree(self.staging, ignore_errors=True)
        with suppress(OSError):
            self.staging.parent.rmdir()


def mark_owned_interrupted(reason: str, *, keep: bool = False) -> list[Path]:
    """Mark ``INTERRUPTED`` in every unfinished run whose lease this process holds now (a signal's handler).

    Runs of the job that this process never claimed, or that another process holds, are not touched.

    Parameters
    ----------
    reason : str
        Why (the signal, the job's fate).
    keep : bool
        Keep a reason already written (e.g. a requeue's, before the SIGTERM that follows it).

    Returns
    -------
    list of Path
        The run folders marked.
    """
    from ._run_lock import held_locks

    marked = []
    for lock in held_locks():
        if keep and (lock.path / "INTERRUPTED").exists():
            continue
        if RunWriter(lock).mark_interrupted(reason):
            marked.append(lock.path)
    return marked
