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
        DONE                written last: the run is complete

This module is the one reader of that layout: :func:`list_runs` lists the runs of a store (filtered by
coordinates and state) as :class:`Run` objects, whose methods read their files and find their model
(:meth:`Run.model_folder`); :func:`run_coordinates` reads the coordinates of a run folder or of a path inside it;
:func:`verify_run` lists the integrity problems of a finished run, and :func:`collect_predictions` /
:func:`sweep_status` skip / report (``corrupt``) the runs that fail it.
"""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import socket
import sys
import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from diagnostics.io_utils import write_json_atomic
from diagnostics.schema import TRAINER_COLUMNS

#: Columns of the predictions tables runs write (:data:`diagnostics.schema.TRAINER_COLUMNS`: the required
#: columns + ``probability``; ``pretrain_seed`` follows for models that name one).
PREDICTION_COLUMNS = list(TRAINER_COLUMNS)


class RunLockedError(RuntimeError):
    """Another live process is training this run."""


def run_dir(output_dir: str | Path, experiment: str, language: str, model_slug: str, seed: int) -> Path:
    """Folder of one run: ``<output_dir>/<experiment>/<language>/<model>/seed=<k>``."""
    return Path(output_dir) / experiment / language / model_slug / f"seed={seed}"


def is_done(path: Path) -> bool:
    """Whether the run in ``path`` finished (its ``DONE`` marker exists)."""
    return (Path(path) / "DONE").exists()


def mark_done(path: Path, summary: dict[str, Any]) -> None:
    """Write ``DONE`` atomically (last step of a run)."""
    write_json_atomic(Path(path) / "DONE", summary)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def lock_owner(path: Path) -> dict[str, Any] | None:
    """The ``LOCK`` content of a run (``pid``, ``host``), or ``None`` when unlocked or unreadable."""
    try:
        return json.loads((Path(path) / "LOCK").read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError):
        return None


def lock_is_live(owner: dict[str, Any] | None) -> bool:
    """Whether a lock's owner still runs (a lock from another host counts as live: we cannot check it)."""
    if not owner:
        return False
    if owner.get("host") != socket.gethostname():
        return True
    return _pid_alive(int(owner.get("pid", -1)))


class RunLock:
    """Exclusive lock of one run folder, held by a pid; stale locks (dead pid on this host) are taken over.

    Raises
    ------
    RunLockedError
        When a live process (or one on another host) holds the lock.
    """

    def __init__(self, path: Path):
        self.path = Path(path)
        self.file = self.path / "LOCK"

    def acquire(self) -> RunLock:
        self.path.mkdir(parents=True, exist_ok=True)
        record = json.dumps({"pid": os.getpid(), "host": socket.gethostname()})
        for _ in range(3):
            try:
                fd = os.open(self.file, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                owner = lock_owner(self.path)
                if owner is not None and int(owner.get("pid", -1)) == os.getpid() \
                        and owner.get("host") == socket.gethostname():
                    raise RunLockedError(f"{self.path} is already locked by this process (pid {os.getpid()})")
                if lock_is_live(owner):
                    raise RunLockedError(
                        f"run {self.path} is being trained by another process (pid {owner.get('pid')} on "
                        f"{owner.get('host')}); wait for it, or stop it. If that process is gone (another machine), "
                        f"delete {self.file} by hand.")
                # stale: the owner died (SIGKILL, power loss); take the lock over
                try:
                    self.file.unlink()
                except FileNotFoundError:
                    pass
                continue
            with os.fdopen(fd, "w") as handle:
                handle.write(record)
            return self
        raise RunLockedError(f"could not take the lock of {self.path} (contended)")

    def release(self) -> None:
        owner = lock_owner(self.path)
        if owner and int(owner.get("pid", -1)) == os.getpid():
            self.file.unlink(missing_ok=True)

    def __enter__(self) -> RunLock:
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()


def clear_partial(path: Path) -> None:
    """Remove everything a killed attempt may have left (except the lock we hold), to restart cleanly."""
    for child in Path(path).iterdir():
        if child.name == "LOCK":
            continue
        if child.is_dir():
            shutil.rmtree(child)
        else:
            child.unlink()


def library_versions() -> dict[str, Any]:
    """Versions of the libraries a run's numbers depend on (+ python, platform, torch threads, device).

    ``code`` is this package's version and git commit (:func:`diagnostics.version.code_version`).
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
    """``done``, ``running`` (live lock), ``failed`` (``FAILED`` marker), ``interrupted`` (stale lock or partial
    files without a live owner) or ``pending`` (empty / missing)."""
    path = Path(path)
    if is_done(path):
        return "done"
    owner = lock_owner(path)
    if lock_is_live(owner):
        return "running"
    if (path / "FAILED").exists():
        return "failed"
    if path.exists() and any(path.iterdir()):
        return "interrupted"
    return "pending"


#: Files every finished run holds besides ``DONE`` (``checkpoint/`` is optional).
RUN_FILES = ("config.json", "versions.json", "metrics.json", "predictions.parquet")
#: Weight files that make a folder a Hugging Face model folder (with its ``config.json``).
MODEL_WEIGHTS = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin")
_SEED_FOLDER = re.compile(r"seed=(\d+)")


def is_model_folder(path: str | Path) -> bool:
    """Whether ``path`` is a Hugging Face model folder (``config.json`` and a weights file)."""
    path = Path(path)
    return (path / "config.json").is_file() and any((path / name).is_file() for name in MODEL_WEIGHTS)


def seed_of_folder(name: str) -> int | None:
    """Seed of a run folder name ``seed=<k>``; ``None`` for any other name."""
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

    Attributes
    ----------
    experiment, language, model : str
        Coordinates from the folder layout (``model`` is the model's folder name).
    seed : int
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
        """The run whose folder is ``path`` or contains it (see :func:`run_coordinates`)."""
        folder = run_folder(path)
        if folder is None:
            raise ValueError(f"{path} is not in a run folder (.../<experiment>/<language>/<model>/seed=<k>)")
        return cls(**run_coordinates(folder), path=folder, state=run_state(folder))

    @property
    def has_checkpoint(self) -> bool:
        """Whether the run kept its model (``checkpoint/``)."""
        return is_model_folder(self.path / "checkpoint")

    def model_folder(self) -> Path:
        """The run's fine-tuned model: its ``checkpoint/`` folder.

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
        """``config.json``: ``run`` (coordinates, ``run_hash``) and ``sweep`` (the sweep's settings)."""
        return _load_json(self.path / "config.json")

    def metrics(self) -> dict[str, Any]:
        """``metrics.json``: validation curve, best epoch, resource figures, diagnostics per set."""
        return _load_json(self.path / "metrics.json")

    def versions(self) -> dict[str, Any]:
        """``versions.json``: python, platform, library versions, device and ``code``."""
        return _load_json(self.path / "versions.json")

    def predictions(self) -> pd.DataFrame:
        """``predictions.parquet``: the predictions table of this run."""
        return pd.read_parquet(self.path / "predictions.parquet")


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

    from .config import SweepConfig

    path = Path(path)
    if not is_done(path):
        return [f"not finished ({run_state(path)})"], None
    problems = [f"DONE but {name} is missing" for name in RUN_FILES if not (path / name).is_file()]
    table = None
    if (path / "predictions.parquet").is_file():
        try:
            table = pd.read_parquet(path / "predictions.parquet")
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
    if (path / "config.json").is_file():
        try:
            stored = _load_json(path / "config.json")
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
    return problems, (None if problems else table)


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
    required columns (:data:`diagnostics.schema.PREDICTION_REQUIRED`), that the JSON files read, and that
    ``config.json``'s recorded ``run.run_hash`` is the hash of its recorded ``sweep`` settings (else the file was
    edited after the run).

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
    """State of every run folder under ``root`` (a run store, one experiment, or one run).

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
