"""The run store: one idempotent folder per run, a lock while it trains, ``DONE`` written last and atomically.

Layout::

    <output_dir>/<experiment>/<language>/<model>/seed=<k>/
        config.json         the sweep config + this run's coordinates
        versions.json       python, torch, transformers, numpy ..., the thread count and the code (version, commit)
        metrics.json        validation curve, best epoch, resource figures
        predictions.parquet the predictions table (diagnostic + extra evaluation sets)
        checkpoint/         optional: the best model as a Hugging Face folder (safetensors)
        LOCK                pid + host of the process training it (removed when it ends)
        FAILED              traceback of the last failure (removed when a retry starts)
        DONE                written last: the run is complete, with the sha256 of the four files above

This module is the one reader of that layout: :func:`list_runs` lists the runs of a store (filtered by
coordinates and state) as :class:`Run` objects, whose methods read their files and find their model
(:meth:`Run.model_folder`); :func:`run_coordinates` reads the coordinates of a run folder or of a path inside it;
:func:`verify_run` lists the integrity problems of a finished run (checksums recorded in ``DONE`` by
:func:`mark_done` included), and :func:`collect_predictions` / :func:`sweep_status` skip / report (``corrupt``) the
runs that fail it.

The lock (:class:`RunLock`) is an exclusive ``flock`` on ``LOCK`` where the file system supports it: the kernel
releases it when its process dies, so a killed owner never blocks a run and two processes never both hold it. The
file's content (pid, host) tells other readers who trains the run; a new owner writes it just after taking the
lock, so an empty ``LOCK`` younger than :data:`LOCK_GRACE_S` counts as live.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import platform
import re
import shutil
import socket
import sys
import time
import uuid
import warnings
from collections.abc import Iterable
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import pandas as pd

from diagnostics.io_utils import write_json_atomic, write_text_atomic
from diagnostics.models._folders import is_model_folder
from diagnostics.schema import TRAINER_COLUMNS
from diagnostics.tables import write_table

try:
    import fcntl
except ImportError:  # Windows: the lock falls back to a hard link (see RunLock)
    fcntl = None

#: Columns of the predictions tables runs write (:data:`diagnostics.schema.TRAINER_COLUMNS`: the required
#: columns + ``probability``; ``pretrain_seed`` follows for models that name one).
PREDICTION_COLUMNS = list(TRAINER_COLUMNS)


class RunLockedError(RuntimeError):
    """Another live process is training this run."""


def run_dir(output_dir: str | Path, experiment: str, language: str, model_slug: str, seed: int) -> Path:
    """Place the folder of one run: ``<output_dir>/<experiment>/<language>/<model>/seed=<k>``.

    Parameters
    ----------
    output_dir : str or Path
        Root of the run store.
    experiment : str
        Experiment name.
    language : str
        Language code.
    model_slug : str
        The model's folder name (:attr:`ModelSpec.slug`).
    seed : int
        Fine-tuning seed.

    Returns
    -------
    Path
        The run folder (not created).
    """
    return Path(output_dir) / experiment / language / model_slug / f"seed={seed}"


def is_done(path: Path) -> bool:
    """Tell whether the run in ``path`` finished (its ``DONE`` marker exists).

    Parameters
    ----------
    path : Path
        A run folder.

    Returns
    -------
    bool
        True when ``DONE`` exists.
    """
    return (Path(path) / "DONE").exists()


def mark_done(path: Path, summary: dict[str, Any]) -> None:
    """Write ``DONE`` atomically, the last step of a run, with the sha256 of the run's files.

    Parameters
    ----------
    path : Path
        The run folder, holding the files of :data:`RUN_FILES`.
    summary : dict
        What ``DONE`` records (best epoch, finish time ...); ``sha256`` (file name -> hex digest of each file of
        :data:`RUN_FILES` present) is added and checked by :func:`verify_run` before the run is reused.
    """
    path = Path(path)
    write_json_atomic(path / "DONE", {**summary, "sha256": file_checksums(path)})


def mark_failed(path: Path, report: str) -> None:
    """Write ``FAILED`` (the traceback of a failed attempt) atomically; a disk error here is ignored.

    Parameters
    ----------
    path : Path
        The run folder.
    report : str
        What failed (``traceback.format_exc()``).
    """
    # Called while the training error propagates: that error is the one to report, not a full disk's.
    with suppress(OSError):
        write_text_atomic(Path(path) / "FAILED", report)


def write_predictions(path: Path, predictions: pd.DataFrame) -> None:
    """Write a run's ``predictions.parquet`` atomically.

    Parameters
    ----------
    path : Path
        The run folder.
    predictions : pandas.DataFrame
        Its prediction table (columns :data:`PREDICTION_COLUMNS`).
    """
    write_table(predictions, Path(path) / PREDICTIONS_FILE)


def file_checksums(path: str | Path) -> dict[str, str]:
    """The sha256 of each file of :data:`RUN_FILES` in a run folder (missing files are left out).

    Parameters
    ----------
    path : str or Path
        A run folder.

    Returns
    -------
    dict
        File name -> hex digest.
    """
    path = Path(path)
    return {name: _sha256(path / name) for name in RUN_FILES if (path / name).is_file()}


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


#: Seconds during which an empty or partly written ``LOCK`` counts as held (its new owner is writing its pid).
LOCK_GRACE_S = 30.0


def lock_owner(path: Path) -> dict[str, Any] | None:
    """Read the ``LOCK`` content of a run.

    Parameters
    ----------
    path : Path
        A run folder.

    Returns
    -------
    dict or None
        ``{"pid": int, "host": str}``, or ``None`` when unlocked, unreadable or not a JSON object.
    """
    try:
        owner = json.loads((Path(path) / "LOCK").read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError, UnicodeDecodeError):
        return None
    return owner if isinstance(owner, dict) else None


def lock_is_live(owner: dict[str, Any] | None) -> bool:
    """Tell whether a lock's owner still runs (a lock from another host counts as live: we cannot check it).

    Parameters
    ----------
    owner : dict or None
        The lock's content, as :func:`lock_owner` returns it.

    Returns
    -------
    bool
        False for no owner, an unreadable pid or a dead pid on this host.
    """
    if not owner:
        return False
    if owner.get("host") != socket.gethostname():
        return True
    try:
        return _pid_alive(int(owner.get("pid", -1)))
    except (TypeError, ValueError):
        return False


def lock_held(path: str | Path) -> bool:
    """Whether a live process holds the lock of a run, as far as its ``LOCK`` file tells.

    Parameters
    ----------
    path : str or Path
        A run folder.

    Returns
    -------
    bool
        ``True`` when ``LOCK`` names a live owner (or one on another host), or is empty / partly written and
        younger than :data:`LOCK_GRACE_S` (an owner between taking the lock and writing its pid).
    """
    owner = lock_owner(path)
    if owner is not None:
        return lock_is_live(owner)
    try:
        age = time.time() - (Path(path) / "LOCK").stat().st_mtime
    except FileNotFoundError:
        return False
    return age < LOCK_GRACE_S


class RunLock:
    """Exclusive lock of one run folder, held by a pid; a lock whose owner died is taken over.

    Where the file system supports ``flock`` (POSIX), the lock is a kernel lock on ``LOCK``: taking it is one
    atomic step, and a dead owner's lock is free whatever its file says. ``LOCK`` then records the owner's pid and
    host (with ``"flock": true``) for readers. A ``LOCK`` without that mark (written by hand or by an older
    version) is honoured while its pid runs; one naming another host is always honoured (we cannot check it).
    Without ``flock``, the record is written to a temporary file and hard-linked into place, so ``LOCK`` never
    exists half written; taking over a dead owner's lock may then race with another process doing the same.

    Parameters
    ----------
    path : Path
        The run folder (created when missing).

    Raises
    ------
    RunLockedError
        From :meth:`acquire`, when a live process (or one on another host) holds the lock.
    """

    def __init__(self, path: Path):
        self.path = Path(path)
        self.file = self.path / "LOCK"
        self._fd: int | None = None

    def acquire(self) -> RunLock:
        """Take the lock.

        Returns
        -------
        RunLock
            ``self``.

        Raises
        ------
        RunLockedError
            When another live process, or this one, holds it.
        """
        self.path.mkdir(parents=True, exist_ok=True)
        if fcntl is None:
            return self._acquire_by_link()
        for _ in range(20):
            fd = os.open(self.file, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                self._refuse(lock_owner(self.path))
            except OSError as err:
                os.close(fd)
                if err.errno in (errno.ENOLCK, errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS):
                    return self._acquire_by_link()  # a file system without flock
                raise
            try:  # the owner may have removed the file between our open and our flock: lock the current one
                current = os.path.samestat(os.fstat(fd), os.stat(self.file))
            except FileNotFoundError:
                current = False
            if not current:
                os.close(fd)
                continue
            owner = self._read(fd)
            if owner is not None and (owner.get("host") != socket.gethostname()
                                      or (not owner.get("flock") and lock_is_live(owner))):
                os.close(fd)
                self._refuse(owner)
            record = json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "flock": True}).encode()
            os.ftruncate(fd, 0)
            os.pwrite(fd, record, 0)
            self._fd = fd
            return self
        raise RunLockedError(f"could not take the lock of {self.path} (contended)")

    @staticmethod
    def _read(fd: int) -> dict[str, Any] | None:
        try:
            owner = json.loads(os.pread(fd, 4096, 0).decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            return None
        return owner if isinstance(owner, dict) else None

    def _refuse(self, owner: dict[str, Any] | None) -> NoReturn:
        if owner is not None and owner.get("pid") == os.getpid() and owner.get("host") == socket.gethostname():
            raise RunLockedError(f"{self.path} is already locked by this process (pid {os.getpid()})")
        who = f"pid {owner.get('pid')} on {owner.get('host')}" if owner else "pid not yet recorded"
        raise RunLockedError(
            f"run {self.path} is being trained by another process ({who}); wait for it, or stop it. If that process "
            f"is gone (another machine), delete {self.file} by hand.")

    def _acquire_by_link(self) -> RunLock:
        """Without ``flock``: hard-link a complete record into place (fails when ``LOCK`` exists)."""
        record = json.dumps({"pid": os.getpid(), "host": socket.gethostname()})
        for _ in range(3):
            tmp = self.path / f".LOCK.{os.getpid()}.{uuid.uuid4().hex}"
            tmp.write_text(record, encoding="utf-8")
            try:
                os.link(tmp, self.file)
                return self
            except FileExistsError:
                pass
            finally:
                tmp.unlink(missing_ok=True)
            if lock_held(self.path):
                self._refuse(lock_owner(self.path))
            self.file.unlink(missing_ok=True)  # stale: the owner died (SIGKILL, power loss)
        raise RunLockedError(f"could not take the lock of {self.path} (contended)")

    def release(self) -> None:
        """Give the lock back and remove ``LOCK`` (only when this object holds it)."""
        if self._fd is None:
            owner = lock_owner(self.path)
            if owner and owner.get("pid") == os.getpid() and owner.get("host") == socket.gethostname():
                self.file.unlink(missing_ok=True)
            return
        try:
            try:
                ours = os.path.samestat(os.fstat(self._fd), os.stat(self.file))
            except FileNotFoundError:
                ours = False
            if ours:  # removed while still locked, so that no one takes over a file about to vanish
                self.file.unlink(missing_ok=True)
        finally:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> RunLock:
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()


def clear_partial(path: Path) -> None:
    """Remove everything a killed attempt may have left (except the lock we hold), to restart cleanly.

    Parameters
    ----------
    path : Path
        The run folder.
    """
    for child in Path(path).iterdir():
        if child.name == "LOCK":
            continue
        if child.is_dir():
            shutil.rmtree(child)
        else:
            child.unlink()


def library_versions() -> dict[str, Any]:
    """Record the versions of the libraries a run's numbers depend on (+ python, platform, torch threads, device).

    ``code`` is this package's version and git commit (:func:`diagnostics.version.code_version`).

    Returns
    -------
    dict
        ``python``, ``platform``, ``code``, one entry per library (``None`` when not installed) and, with torch,
        ``torch_threads``, ``cuda`` and ``device_name``.
    """
    import importlib.metadata as md

    from diagnostics.version import code_version

    versions: dict[str, Any] = {"python": sys.version.split()[0], "platform": platform.platform(),
                                "code": code_version()}
    for name in ("torch", "transformers", "tokenizers", "safetensors", "numpy", "pandas", "pyarrow",
                 "nli-diagnostics"):
        try:
            versions[name] = md.version(name)
        except md.PackageNotFoundError:
            versions[name] = None
    try:
        import torch

        versions["torch_threads"] = torch.get_num_threads()
        versions["cuda"] = torch.version.cuda if torch.cuda.is_available() else None
        versions["device_name"] = torch.cuda.get_device_name() if torch.cuda.is_available() else platform.processor()
    except ImportError:
        pass
    return versions


def run_state(path: Path) -> str:
    """Read the state of a run folder.

    Parameters
    ----------
    path : Path
        A run folder.

    Returns
    -------
    str
        ``done``, ``running`` (live lock), ``failed`` (``FAILED`` marker), ``interrupted`` (stale lock or partial
        files without a live owner) or ``pending`` (empty / missing).
    """
    path = Path(path)
    if is_done(path):
        return "done"
    if lock_held(path):
        return "running"
    if (path / "FAILED").exists():
        return "failed"
    if path.exists() and any(path.iterdir()):
        return "interrupted"
    return "pending"


#: Files every finished run holds besides ``DONE`` (``checkpoint/`` is optional).
#: The run's record of its settings and coordinates (not a model's configuration).
RUN_CONFIG = "config.json"
PREDICTIONS_FILE = "predictions.parquet"
RUN_FILES = (RUN_CONFIG, "versions.json", "metrics.json", PREDICTIONS_FILE)
_SEED_FOLDER = re.compile(r"seed=(\d+)")


def seed_of_folder(name: str) -> int | None:
    """Read the seed of a run folder name ``seed=<k>``.

    Parameters
    ----------
    name : str
        A folder name.

    Returns
    -------
    int or None
        ``k``; ``None`` for any other name.
    """
    match = _SEED_FOLDER.fullmatch(str(name))
    return int(match.group(1)) if match else None


def run_folder(path: str | Path) -> Path | None:
    """The run folder (``.../seed=<k>``) that is ``path`` or contains it, e.g. of its ``checkpoint/``.

    Parameters
    ----------
    path : str or Path
        A run folder or anything inside one; it need not exist.

    Returns
    -------
    Path or None
        ``None`` when no component of ``path`` is a ``seed=<k>`` folder.
    """
    path = Path(path)
    for folder in (path, *path.parents):
        if seed_of_folder(folder.name) is not None:
            return folder
    return None


def run_coordinates(path: str | Path) -> dict[str, Any]:
    """``experiment, language, model, seed`` of a run folder or of anything inside it (its checkpoint ...).

    Read from the layout ``<output_dir>/<experiment>/<language>/<model>/seed=<k>``; the folder names are the
    coordinates (``model`` is the model's folder name). Parts above the top of a short path are ``None``.

    Parameters
    ----------
    path : str or Path
        A run folder or a path inside one; it need not exist.

    Returns
    -------
    dict
        ``{"experiment": str | None, "language": str | None, "model": str | None, "seed": int}``.

    Raises
    ------
    ValueError
        When ``path`` is not in a run folder (no ``seed=<k>`` component).
    """
    folder = run_folder(path)
    if folder is None:
        raise ValueError(f"{path} is not in a run folder (.../<experiment>/<language>/<model>/seed=<k>)")
    above = [p.name or None for p in folder.parents[:3]] + [None] * 3
    return {"experiment": above[2], "language": above[1], "model": above[0], "seed": seed_of_folder(folder.name)}


@dataclass(frozen=True)
class Run:
    """One run folder of a store, with its coordinates and its state when it was listed.

    Parameters
    ----------
    experiment, language, model : str or None
        Coordinates from the folder layout (``model`` is the model's folder name).
    seed : int
        Fine-tuning seed.
    path : Path
        The ``seed=<k>`` folder.
    state : str
        :func:`run_state` when listed: ``done``, ``running``, ``failed``, ``interrupted`` or ``pending``.
    """

    experiment: str | None
    language: str | None
    model: str | None
    seed: int
    path: Path
    state: str

    @classmethod
    def at(cls, path: str | Path) -> Run:
        """Find the run whose folder is ``path`` or contains it (see :func:`run_coordinates`).

        Parameters
        ----------
        path : str or Path
            A run folder or a path inside one.

        Returns
        -------
        Run
            The run, with its current state.

        Raises
        ------
        ValueError
            When ``path`` is not in a run folder.
        """
        folder = run_folder(path)
        if folder is None:
            raise ValueError(f"{path} is not in a run folder (.../<experiment>/<language>/<model>/seed=<k>)")
        return cls(**run_coordinates(folder), path=folder, state=run_state(folder))

    @property
    def has_checkpoint(self) -> bool:
        """Whether the run kept its model (``checkpoint/``)."""
        return is_model_folder(self.path / "checkpoint")

    def model_folder(self) -> Path:
        """Find the run's fine-tuned model: its ``checkpoint/`` folder.

        Returns
        -------
        Path
            The checkpoint folder.

        Raises
        ------
        FileNotFoundError
            When the run kept no checkpoint (the sweep ran without ``save_checkpoint: true``).
        """
        if self.has_checkpoint:
            return self.path / "checkpoint"
        raise FileNotFoundError(
            f"run {self.path} kept no checkpoint (no checkpoint/ with config.json + model.safetensors): the sweep "
            f"saves the model only with `save_checkpoint: true`; rerun it with that setting in a new output folder")

    def config(self) -> dict[str, Any]:
        """Read ``config.json``.

        Returns
        -------
        dict
            ``run`` (coordinates, ``run_hash``) and ``sweep`` (the sweep's settings).
        """
        return _load_json(self.path / RUN_CONFIG)

    def metrics(self) -> dict[str, Any]:
        """Read ``metrics.json``.

        Returns
        -------
        dict
            Validation curve, best epoch, resource figures, diagnostics per set.
        """
        return _load_json(self.path / "metrics.json")

    def versions(self) -> dict[str, Any]:
        """Read ``versions.json``.

        Returns
        -------
        dict
            Python, platform, library versions, device and ``code`` (see :func:`library_versions`).
        """
        return _load_json(self.path / "versions.json")

    def predictions(self) -> pd.DataFrame:
        """Read ``predictions.parquet``.

        Returns
        -------
        pandas.DataFrame
            The predictions table of this run.
        """
        return pd.read_parquet(self.path / PREDICTIONS_FILE)


def _matches(value: Any, wanted: Any) -> bool:
    if wanted is None:
        return True
    if isinstance(wanted, (str, int)):
        return value == wanted
    return value in set(wanted)


def list_runs(root: str | Path, *, experiment: str | Iterable[str] | None = None,
              language: str | Iterable[str] | None = None, model: str | Iterable[str] | None = None,
              state: str | Iterable[str] | None = None) -> list[Run]:
    """Every run folder under ``root`` (a run store, one experiment or language folder, or one run).

    Parameters
    ----------
    root : str or Path
        Searched recursively for ``seed=<k>`` folders (``.cache`` excluded); a missing folder has no runs.
    experiment, language, model, state : str or iterable of str, optional
        Keep only runs with these coordinates / states (:func:`run_state`); ``None`` keeps all.

    Returns
    -------
    list of Run
        Sorted by experiment, language, model and seed.
    """
    root = Path(root)
    if seed_of_folder(root.name) is not None:
        folders = [root] if root.is_dir() else []
    elif root.is_dir():
        folders = [p for p in root.rglob("seed=*") if p.is_dir() and seed_of_folder(p.name) is not None
                   and ".cache" not in p.relative_to(root).parts and run_folder(p.parent) is None]
    else:
        folders = []
    runs = []
    for folder in folders:
        coords = run_coordinates(folder)
        if not (_matches(coords["experiment"], experiment) and _matches(coords["language"], language)
                and _matches(coords["model"], model)):
            continue
        run = Run(**coords, path=folder, state=run_state(folder))
        if _matches(run.state, state):
            runs.append(run)
    return sorted(runs, key=lambda r: (r.experiment or "", r.language or "", r.model or "", r.seed, str(r.path)))


def _verify(path: Path) -> tuple[list[str], pd.DataFrame | None]:
    """Problems of the finished run in ``path`` and its predictions table (``None`` when unreadable)."""
    from diagnostics.schema import PREDICTION_REQUIRED

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

    Parameters
    ----------
    path : str or Path
        A run folder.

    Returns
    -------
    list of str
        The problems found (empty, and nothing changed, for a sound or unfinished run). The run's files stay until
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
    required columns (:data:`diagnostics.schema.PREDICTION_REQUIRED`), that the JSON files read, that
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
    from diagnostics.version import short_commit

    rows = []
    for run in list_runs(root):
        state = run.state
        if state == "done":
            problems = verify_run(run.path)
            if problems:
                state = "corrupt"
                warnings.warn(f"run {run.path} is corrupt: {'; '.join(problems)}", stacklevel=2)
        config = _read_json(run.path / "config.json") or {}
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


def _load_json(path: Path) -> dict:
    """Read a JSON object; ``FileNotFoundError`` when missing, ``ValueError`` when unreadable or not an object."""
    try:
        value = json.loads(Path(path).read_text(encoding="utf-8"))
    except UnicodeDecodeError as err:
        raise ValueError(f"{path}: not UTF-8 text") from err
    except json.JSONDecodeError as err:
        raise ValueError(f"{path}: not valid JSON ({err.msg}, line {err.lineno})") from err
    if not isinstance(value, dict):
        raise ValueError(f"{path}: expected a JSON object, found {type(value).__name__}")
    return value


def _read_json(path: Path) -> dict | None:
    """A JSON object, or ``None`` when missing or unreadable (see :func:`_load_json` for the errors)."""
    try:
        return _load_json(path)
    except (FileNotFoundError, ValueError):
        return None
