"""What JupyterLab needs from the toolkit: the project's kernel and notebooks that stay unchanged when only opened.

``bash scripts/lab.sh`` registers :data:`KERNEL_DISPLAY_NAME` (the Python of ``.venv``, kernel name ``python3``,
so papermill, nbmake and VS Code find it under its usual name) and starts ``jupyter lab`` with
:func:`pre_save_hook`. Every notebook's committed metadata is :func:`notebook_header`: what Lab writes for that
kernel, so that opening and saving an unedited notebook leaves both files of its jupytext pair byte for byte.
"""

from __future__ import annotations

from typing import Any

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

    Set as ``--ContentsManager.pre_save_hook=diagnostics.lab.pre_save_hook`` (``scripts/lab.sh`` does). Without
    it, a notebook saved on a machine with another Python patch level than the last one differs in that line.

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
