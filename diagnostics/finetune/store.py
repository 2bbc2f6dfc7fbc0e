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
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import socket
import sys
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


def _run_folders(root: Path) -> list[Path]:
    root = Path(root)
    if root.name.startswith("seed="):
        return [root]
    return sorted(p for p in root.rglob("seed=*") if p.is_dir() and ".cache" not in p.parts)


def sweep_status(root: str | Path) -> pd.DataFrame:
    """State of every run folder under ``root`` (a run store, one experiment, or one run).

    Returns
    -------
    pandas.DataFrame
        ``experiment, language, model, seed, state, best_validation, minutes, code_commit, path``; state as in
        :func:`run_state`; ``code_commit`` is the short git commit recorded in the run's ``versions.json``
        (``+dirty``: uncommitted changes; ``None``: not recorded or not made in a checkout).
    """
    from diagnostics.version import short_commit

    rows = []
    for folder in _run_folders(Path(root)):
        state = run_state(folder)
        config = _read_json(folder / "config.json") or {}
        metrics = _read_json(folder / "metrics.json") or {}
        versions = _read_json(folder / "versions.json") or {}
        run = config.get("run", {})
        rows.append({
            "experiment": run.get("experiment", folder.parents[2].name),
            "language": run.get("language", folder.parents[1].name),
            "model": run.get("model", folder.parent.name),
            "seed": int(folder.name.split("=", 1)[1]),
            "state": state,
            "best_validation": metrics.get("best", {}).get("validation_" + metrics.get("selection_metric", "")),
            "minutes": round(metrics["resources"]["total_s"] / 60, 2) if "resources" in metrics else None,
            "code_commit": short_commit(versions.get("code")),
            "path": str(folder),
        })
    return pd.DataFrame(rows, columns=["experiment", "language", "model", "seed", "state", "best_validation",
                                       "minutes", "code_commit", "path"])


def collect_predictions(root: str | Path) -> pd.DataFrame:
    """Concatenate the predictions tables of every finished run under ``root`` (unfinished runs are skipped)."""
    frames = [pd.read_parquet(folder / "predictions.parquet") for folder in _run_folders(Path(root))
              if is_done(folder)]
    if not frames:
        return pd.DataFrame(columns=PREDICTION_COLUMNS)
    return pd.concat(frames, ignore_index=True)


def _read_json(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError):
        return None
