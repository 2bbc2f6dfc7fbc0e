"""What JupyterLab needs from the toolkit: the project's kernel and notebooks that stay unchanged when only opened.

``bash scripts/lab.sh`` registers :data:`KERNEL_DISPLAY_NAME` (the Python of ``.venv``, kernel name ``python3``,
so papermill, nbmake and VS Code find it under its usual name) and starts ``jupyter lab`` with
:class:`ContentsManager`, :func:`pre_save_hook` and :func:`post_save_hook`. Every notebook's committed metadata is
:func:`notebook_header`: what Lab writes for that kernel, so that opening and saving an unedited notebook leaves both
files of its jupytext pair byte for byte.

Lab writes one more key when the kernel connects: ``language_info.version``, the kernel's Python version. That key
differs between machines (3.11.7 here, 3.11.9 there), so it is never committed: the git filter and
:func:`pre_save_hook` drop it. Lab compares what the kernel reports with the notebook it loaded, and a notebook
without the key would be marked changed ("Save changes?" on close) a few seconds after it opens, although nobody
edited it. :class:`ContentsManager` therefore serves every Python notebook with the version of the Python that runs
the server (in ``scripts/lab.sh`` the same interpreter as the kernel, ``.venv``'s) filled in
(:func:`with_kernel_version`): the kernel's report then equals the loaded notebook, nothing is marked, and the file
on disk keeps no version.

Outputs of a notebook run in Lab stay in the file on disk and never reach git: ``.gitattributes`` sends ``*.ipynb``
through the nbstripout filter that ``scripts/setup_git.sh`` configures, so ``git diff`` and commits see the notebook
without outputs, execution counts or the metadata Lab adds. git's ``status`` alone compares the file's size with the
one it recorded before it asks the filter, so :func:`post_save_hook` records the saved file with git
(:func:`record_output_only_save`) when the filter finds nothing changed: ``git status`` stays clean too.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from jupytext.async_contentsmanager import AsyncTextFileContentsManager

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


def kernel_python_version() -> str:
    """The Python version an ipykernel running this interpreter reports as ``language_info.version``.

    Returns
    -------
    str
        ``sys.version`` up to its first space, as ipykernel writes it (e.g. ``"3.11.7"``).
    """
    return sys.version.split()[0]


def with_kernel_version(model: dict, version: str | None = None) -> dict:
    """Fill in the ``language_info.version`` that the notebook's Python kernel will report when Lab connects to it.

    Only a notebook model whose ``language_info`` names Python and has no version is changed (in place); any other
    model (a file, a folder, a listing, another language's notebook, one with its version) is returned as it came.

    Parameters
    ----------
    model : dict
        A contents model as the server's contents manager returns it.
    version : str, optional
        The version to fill in; :func:`kernel_python_version` when not given.

    Returns
    -------
    dict
        ``model`` itself.
    """
    content = model.get("content") if model.get("type") == "notebook" else None
    metadata = content.get("metadata") if isinstance(content, dict) else None
    info = metadata.get("language_info") if isinstance(metadata, dict) else None
    if isinstance(info, dict) and info.get("name") == "python" and "version" not in info:
        info["version"] = version or kernel_python_version()
    return model


class ContentsManager(AsyncTextFileContentsManager):
    """Jupytext's contents manager (paired notebooks) serving notebooks as the project's kernel will describe them.

    Set as ``--ServerApp.contents_manager_class=diagnostics.notebooks.lab.ContentsManager`` (``scripts/lab.sh``
    does). Every notebook it returns passes through :func:`with_kernel_version`, so that an unedited notebook is not
    marked changed when its kernel connects; what it writes is unchanged (:func:`pre_save_hook` drops the version
    again).

    Parameters
    ----------
    *args, **kwargs
        What the server passes to a contents manager (its configuration: ``root_dir``, ``parent``, ``log`` ...).
    """

    async def get(self, path, content=True, type=None, format=None, **kwargs):  # noqa: A002 - the server's names
        """The contents model of ``path``, a Python notebook's with its kernel's ``language_info.version``.

        Parameters
        ----------
        path : str
            The file or folder, relative to the server's root.
        content : bool
            Whether to return the contents (a listing's or a file's); without them nothing is filled in.
        type : str, optional
            ``"notebook"``, ``"file"`` or ``"directory"``, as the server asks.
        format : str, optional
            ``"text"``, ``"base64"`` or ``"json"``, as the server asks.
        **kwargs
            Whatever else the server passes (``require_hash`` ...), passed on.

        Returns
        -------
        dict
            The model jupytext's contents manager returns, through :func:`with_kernel_version`.
        """
        model = await super().get(path, content=content, type=type, format=format, **kwargs)
        return with_kernel_version(model) if content else model


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
