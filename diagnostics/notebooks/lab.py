"""What JupyterLab needs from the toolkit: the project's kernel and notebooks that stay unchanged when only opened.

``bash scripts/lab.sh`` registers :data:`KERNEL_DISPLAY_NAME` (the Python of ``.venv``, kernel name ``python3``,
so papermill, nbmake and VS Code find it under its usual name) and starts ``jupyter lab`` with
:func:`pre_save_hook` and :func:`post_save_hook`. Every notebook's committed metadata is :func:`notebook_header`:
what Lab writes for that kernel, so that opening and saving an unedited notebook leaves both files of its jupytext
pair byte for byte.

Outputs of a notebook run in Lab stay in the file on disk and never reach git: ``.gitattributes`` sends ``*.ipynb``
through the nbstripout filter that ``scripts/setup_git.sh`` configures, so ``git diff`` and commits see the notebook
without outputs, execution counts or the metadata Lab adds. git's ``status`` alone compares the file's size with the
one it recorded before it asks the filter, so :func:`post_save_hook` records the saved file with git
(:func:`record_output_only_save`) when the filter finds nothing changed: ``git status`` stays clean too.
"""

from __future__ import annotations

import subprocess
import threading
from pathlib import Path
from typing import Any

#: the git filter (``.gitattributes``: ``*.ipynb filter=nbstripout``) that keeps outputs out of git
GIT_FILTER = "nbstripout"
_GIT_LOCK = threading.Lock()  # one git command on the index at a time (autosave and Ctrl+S may overlap)

KERNEL_NAME = "python3"
KERNEL_DISPLAY_NAME = "nli-diagnostics (.venv)"
# what ipykernel reports for any Python 3, less ``version``: the patch level differs between machines
LANGUAGE_INFO = {"codemirror_mode": {"name": "ipython", "version": 3}, "file_extension": ".py",
                 "mimetype": "text/x-python", "name": "python", "nbconvert_exporter": "python",
                 "pygments_lexer": "ipython3"}


def notebook_header() -> dict[str, Any]:
    """The kernel metadata every committed notebook carries.

    Returns
    -------
    dict
        ``kernelspec`` and ``language_info`` (fresh copies), as Lab writes them for the project's kernel.
    """
    return {"kernelspec": {"display_name": KERNEL_DISPLAY_NAME, "language": "python", "name": KERNEL_NAME},
            "language_info": {key: (dict(value) if isinstance(value, dict) else value)
                              for key, value in LANGUAGE_INFO.items()}}


def pre_save_hook(model: dict, path: str = "", contents_manager: Any = None, **kwargs: Any) -> None:
    """Drop the Python version Lab records in a notebook's ``language_info`` before the notebook is written.

    Set as ``--ContentsManager.pre_save_hook=diagnostics.notebooks.lab.pre_save_hook`` (``scripts/lab.sh`` does).
    Without it, a notebook saved on a machine with another Python patch level than the last one differs in that line.

    Parameters
    ----------
    model : dict
        The contents model being saved; only notebooks (``type == "notebook"``) are changed, in place.
    path : str
        The file's path on the server (unused).
    contents_manager : object, optional
        The server's contents manager (unused).
    **kwargs
        Whatever else the server passes (unused).
    """
    if model.get("type") != "notebook" or not isinstance(model.get("content"), dict):
        return
    info = model["content"].get("metadata", {}).get("language_info")
    if isinstance(info, dict):
        info.pop("version", None)


def _git(folder: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=folder, capture_output=True, text=True, stdin=subprocess.DEVNULL)


def record_output_only_save(path: str | Path) -> bool:
    """Record a saved notebook with git when, through the git filter, it equals what git has staged.

    The file's outputs stay on disk; the staged content does not change (the filter gives the same blob). This only
    refreshes what git knows of the file, so that ``git status`` no longer lists a notebook whose only changes are
    outputs, execution counts or metadata the filter strips. A notebook with a source edit is left alone (it shows
    as modified), and nothing happens outside a git checkout, for an untracked file, or when the file does not go
    through a configured nbstripout filter (``bash scripts/setup.sh`` configures it).

    Parameters
    ----------
    path : str or Path
        The saved ``.ipynb`` file.

    Returns
    -------
    bool
        True when git recorded the file (its filtered content equals the staged one), False otherwise.
    """
    path = Path(path).resolve()
    folder, name = path.parent, path.name
    try:
        with _GIT_LOCK:
            if (path.suffix != ".ipynb" or not path.is_file()
                    or _git(folder, "ls-files", "--error-unmatch", "--", name).returncode != 0
                    or not _git(folder, "check-attr", "filter", "--", name).stdout.strip().endswith(
                        f": {GIT_FILTER}")
                    or not _git(folder, "config", f"filter.{GIT_FILTER}.clean").stdout.strip()):
                return False
            # exit 0: no difference between the filtered file and the index (a failing filter exits 128)
            if _git(folder, "diff", "--quiet", "--", name).returncode != 0:
                return False
            return _git(folder, "add", "--", name).returncode == 0
    except OSError:  # no git on PATH
        return False


def post_save_hook(model: dict | None = None, os_path: str = "", contents_manager: Any = None,
                   **kwargs: Any) -> threading.Thread | None:
    """After Lab saved a notebook, let git see that outputs alone changed (:func:`record_output_only_save`).

    Set as ``--ContentsManager.post_save_hook=diagnostics.notebooks.lab.post_save_hook`` (``scripts/lab.sh`` does).
    The git commands run the filter (a Python process each), so they run in a background thread and a save or autosave
    never waits for them.

    Parameters
    ----------
    model : dict, optional
        The saved contents model; only notebooks (``type == "notebook"``) are considered.
    os_path : str
        The saved file's path on disk.
    contents_manager : object, optional
        The server's contents manager (unused).
    **kwargs
        Whatever else the server passes (unused).

    Returns
    -------
    threading.Thread or None
        The started thread (the server ignores it; tests join it), or None for anything but a notebook.
    """
    if not os_path.endswith(".ipynb") or (model is not None and model.get("type") not in (None, "notebook")):
        return None
    thread = threading.Thread(target=record_output_only_save, args=(os_path,), name="git-record-notebook",
                              daemon=True)
    thread.start()
    return thread
