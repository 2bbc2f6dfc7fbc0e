"""Where the toolkit's resource folders are: ``datasets/``, ``annotators/``, ``configs/``, ``notebooks/``.

All of them sit in one project root: ``$DIAGNOSTICS_ROOT`` when set, else the checkout the package is imported
from (the folder holding ``pyproject.toml`` above the package, with the folders at the top of the repository),
else the package data of an installed wheel, ``diagnostics/_resources/<folder>``, read with
:func:`importlib.resources.files` wherever pip put the package (venv, ``--prefix``, ``--target``, ``--user``,
conda). ``$DIAGNOSTICS_DATASETS`` still overrides the datasets folder alone.

Callers get real filesystem paths (pandas, spaCy, papermill and jupytext read them): pip installs wheels unzipped,
so the installed package data is a folder on disk; a package imported from a zip archive has none and must be
pointed at a folder with ``$DIAGNOSTICS_ROOT``.
"""

from __future__ import annotations

import os
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

ROOT_VARIABLE = "DIAGNOSTICS_ROOT"
DATASETS_VARIABLE = "DIAGNOSTICS_DATASETS"
#: the ``diagnostics`` package folder (this module is in its ``core`` package)
PACKAGE_DIR = Path(__file__).resolve().parent.parent
# the folders a root holds; setup.py copies the same ones into the wheel
RESOURCE_FOLDERS = ("datasets", "annotators", "configs", "notebooks")
PACKAGE_RESOURCES = "_resources"


class ResourceRootError(FileNotFoundError):
    """The project root (and with it the resource folders) cannot be found."""


def project_root() -> Path:
    """The folder holding ``datasets/``, ``annotators/``, ``configs/`` and ``notebooks/``.

    Returns
    -------
    Path
        The first of ``$DIAGNOSTICS_ROOT``, the checkout holding the package, the installed package data.

    Raises
    ------
    ResourceRootError
        When ``$DIAGNOSTICS_ROOT`` names no folder, or it is unset and the package is neither in a checkout nor
        installed with its package data.
    """
    override = os.environ.get(ROOT_VARIABLE)
    if override:
        root = Path(override).expanduser().resolve()
        if not root.is_dir():
            raise ResourceRootError(f"{ROOT_VARIABLE}={override!r} is not a folder; point it at the project root "
                                    "(the folder holding datasets/, annotators/, configs/ and notebooks/)")
        return root
    checkout = PACKAGE_DIR.parent
    if (checkout / "pyproject.toml").is_file():
        return checkout
    installed = _package_resources()
    if installed is not None:
        return installed
    raise ResourceRootError(f"cannot find the project root: the package in {PACKAGE_DIR} is not inside a checkout "
                            f"(no pyproject.toml in {checkout}) and carries no package data "
                            f"({PACKAGE_RESOURCES}/ with {', '.join(RESOURCE_FOLDERS)} on disk); reinstall it from a "
                            f"wheel or set {ROOT_VARIABLE} to the folder holding "
                            "datasets/, annotators/, configs/ and notebooks/")


def work_root() -> Path:
    """Where run stores (``runs/<scale>``) and reports (``reports/<scale>``) go when no path is given.

    Returns
    -------
    Path
        The project root when it is ``$DIAGNOSTICS_ROOT`` or a checkout; the working directory for an installed
        copy, whose resource folder is not for writing.
    """
    if os.environ.get(ROOT_VARIABLE) or (PACKAGE_DIR.parent / "pyproject.toml").is_file():
        return project_root()
    return Path.cwd()


def default_runs_dir(scale: str) -> Path:
    """The run store of a scale when none is given: ``<work root>/runs/<scale>``.

    Parameters
    ----------
    scale : str
        ``tiny``, ``demo`` or ``paper``.

    Returns
    -------
    Path
    """
    return work_root() / "runs" / scale


def default_reports_dir(scale: str) -> Path:
    """The report folder of a scale when none is given: ``<work root>/reports/<scale>``.

    Parameters
    ----------
    scale : str

    Returns
    -------
    Path
    """
    return work_root() / "reports" / scale


def _package_resources() -> Path | None:
    """The installed package data, ``diagnostics/_resources``, as a folder on disk; None when absent (or zipped)."""
    found = _package_files().joinpath(PACKAGE_RESOURCES)
    if isinstance(found, Path) and all((found / folder).is_dir() for folder in RESOURCE_FOLDERS):
        return found.resolve()
    return None


def _package_files() -> Traversable:
    """The installed package's files, wherever the package was imported from."""
    return resources.files("diagnostics")


def datasets_dir() -> Path:
    """Locate the bundled data (``$DIAGNOSTICS_DATASETS`` overrides ``<root>/datasets``).

    Returns
    -------
    Path
    """
    override = os.environ.get(DATASETS_VARIABLE)
    return Path(override) if override else project_root() / "datasets"


def annotators_dir() -> Path:
    """Locate the annotator rules files and the behave templates (``<root>/annotators``).

    Returns
    -------
    Path
    """
    return project_root() / "annotators"


def configs_dir() -> Path:
    """Locate the sweep configs of the scales (``<root>/configs``).

    Returns
    -------
    Path
    """
    return project_root() / "configs"


def notebooks_dir() -> Path:
    """Locate the analysis notebooks (``<root>/notebooks``).

    Returns
    -------
    Path
    """
    return project_root() / "notebooks"
