"""The run store: one idempotent folder per run, a lock while it trains, ``DONE`` written last and atomically.

Layout::

    <output_dir>/<experiment>/<language>/<model>/seed=<k>/
        config.json         the sweep config + this run's coordinates
        versions.json       python, torch, transformers, numpy ..., the thread count and the code (version, commit)
        metrics.json        validation curve, best epoch, resource figures
        predictions.parquet the predictions table (diagnostic + extra evaluation sets)
        checkpoint/         optional: the best model as a Hugging Face folder (safetensors)
        resume/             while it trains with executor_options.requeue: its state at its last check (._resume)
        LOCK                the record of the process training it (removed when it ends)
        .lease/             the run's leases: who may write into it, with a token that only grows (see ._run_lock)
        .staging/<token>/   files being written by the holder of lease <token>, renamed into place one by one
        FAILED              traceback of the last failure (removed when a retry starts)
        INTERRUPTED         why the last attempt was stopped from outside: a signal, a cancelled, timed-out or
                            preempted SLURM job (removed when a retry starts)
        DONE                written last: the run is complete, with the sha256 of every file above (checkpoint/'s
                            too)

Only the holder of a run's lease writes into it, through :class:`~._run_writer.RunWriter`. This module is the one
reader of that layout: :func:`list_runs` lists the runs of a store (filtered by
coordinates and state) as :class:`Run` objects, whose methods read their files and find their model
(:meth:`Run.model_folder`); :func:`run_coordinates` reads the coordinates of a run folder or of a path inside it.
The lock is in :mod:`._run_lock`; the integrity checks of finished runs (the checksums :func:`mark_done` records in
``DONE``), the store's status and the collection of its predictions are in :mod:`._store_checks`.
"""

from __future__ import annotations

import hashlib
import json
import platform
import re
import sys
from collections.abc import Iterable
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from diagnostics.core.io_utils import write_json_atomic, write_text_atomic
from diagnostics.core.schema import TRAINER_COLUMNS
from diagnostics.core.tables import write_table
from diagnostics.models import is_model_folder

from ._run_lock import lock_held

#: Columns of the predictions tables runs write (:data:`diagnostics.core.schema.TRAINER_COLUMNS`: the required
#: columns + ``probability``; ``pretrain_seed`` follows for models that name one).
PREDICTION_COLUMNS = list(TRAINER_COLUMNS)


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


#: The version of the ``DONE`` record this code writes; a record of a higher version is refused, never deleted.
#: 1 (no ``format`` key): checksums of :data:`RUN_FILES`; 2: also every file of ``checkpoint/``.
DONE_FORMAT = 2


def done_record(path: Path, summary: dict[str, Any]) -> dict[str, Any]:
    """The content of a run's ``DONE``: ``summary`` (best epoch, finish time ...), ``format`` (:data:`DONE_FORMAT`)
    and ``sha256``, the digest of every file of the run (:func:`file_checksums`), which :func:`verify_run` checks
    before the run is reused.

    Parameters
    ----------
    path : Path
        The run folder, its files written.
    summary : dict
        What the record says besides the checksums.

    Returns
    -------
    dict
        The record.
    """
    return {**summary, "format": DONE_FORMAT, "sha256": file_checksums(path)}


def mark_done(path: Path, summary: dict[str, Any]) -> None:
    """Write ``DONE`` (:func:`done_record`) atomically, outside any lease: for tools that build a store by hand; a
    sweep's runs are finished by their owner's :class:`~._run_writer.RunWriter`."""
    path = Path(path)
    write_json_atomic(path / "DONE", done_record(path, summary))


def mark_failed(path: Path, report: str) -> None:
    """Write ``FAILED`` (the traceback ``report`` of a failed attempt) atomically, outside any lease (a sweep's runs
    are marked by their owner's :class:`~._run_writer.RunWriter`); a disk error here is ignored."""
    # Called while the training error propagates: that error is the one to report, not a full disk's.
    with suppress(OSError):
        write_text_atomic(Path(path) / "FAILED", report)


def mark_interrupted(path: Path, reason: str) -> None:
    """Write ``INTERRUPTED`` (``reason``: the signal or the job's fate) atomically in an unfinished run folder, outside
    any lease (a sweep's runs are marked by their owner's :class:`~._run_writer.RunWriter`); a disk error here is
    ignored."""
    path = Path(path)
    if path.is_dir() and not is_done(path):
        with suppress(OSError):
            write_text_atomic(path / "INTERRUPTED", reason.rstrip() + "\n")


def write_predictions(path: Path, predictions: pd.DataFrame) -> None:
    """Write a run's ``predictions.parquet`` (columns :data:`PREDICTION_COLUMNS`) atomically."""
    write_table(predictions, Path(path) / PREDICTIONS_FILE)


def file_checksums(path: str | Path) -> dict[str, str]:
    """File name -> sha256 of each file of :data:`RUN_FILES` in a run folder and of every file of its ``checkpoint/``
    (as ``checkpoint/<name>``); missing files are left out."""
    path = Path(path)
    sums = {name: _sha256(path / name) for name in RUN_FILES if (path / name).is_file()}
    return sums | {name: _sha256(path / name) for name in checkpoint_files(path)}


def checkpoint_files(path: str | Path) -> list[str]:
    """The files of a run's ``checkpoint/`` as names relative to the run folder (``checkpoint/config.json`` ...)."""
    folder = Path(path) / CHECKPOINT_FOLDER
    if not folder.is_dir():
        return []
    return sorted(p.relative_to(path).as_posix() for p in folder.rglob("*") if p.is_file())


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def library_versions() -> dict[str, Any]:
    """Record the versions of the libraries a run's numbers depend on (+ python, platform, torch threads, device).

    Returns
    -------
    dict
        ``python``, ``platform``, ``code`` (this package's version and git commit,
        :func:`diagnostics.core.version.code_version`), one key per library (``None`` when not installed) and, with
        torch, ``torch_threads``, ``cuda`` and ``device_name``.
    """
    import importlib.metadata as md

    from diagnostics.core.version import code_version

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
    """The state of a run folder: ``done``, ``running`` (live lock), ``interrupted`` (stopped from outside: an
    ``INTERRUPTED`` marker, or a stale lock or partial files without a live owner and without ``FAILED``), ``failed``
    (``FAILED`` marker: the training raised) or ``pending`` (empty / missing).
    """
    path = Path(path)
    if is_done(path):
        return "done"
    if lock_held(path):
        return "running"
    if (path / "INTERRUPTED").exists():
        return "interrupted"
    if (path / "FAILED").exists():
        return "failed"
    if path.exists() and any(not child.name.startswith(".") for child in path.iterdir()):
        return "interrupted"
    return "pending"


#: Files every finished run holds besides ``DONE`` (``checkpoint/`` is optional).
#: The run's record of its settings and coordinates (not a model's configuration).
RUN_CONFIG = "config.json"
PREDICTIONS_FILE = "predictions.parquet"
RUN_FILES = (RUN_CONFIG, "versions.json", "metrics.json", PREDICTIONS_FILE)
#: The optional folder of a run's fine-tuned model.
CHECKPOINT_FOLDER = "checkpoint"
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
        return is_model_folder(self.path / CHECKPOINT_FOLDER)

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
