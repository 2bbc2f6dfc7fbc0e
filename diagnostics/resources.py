"""Where the toolkit's resource folders are: ``datasets/``, ``annotators/``, ``configs/``, ``notebooks/``.

All of them sit in one project root: ``$DIAGNOSTICS_ROOT`` when set, else the checkout the package is imported
from (the folder holding ``pyproject.toml`` above the package). ``$DIAGNOSTICS_DATASETS`` still overrides the
datasets folder alone. An installed copy used away from a checkout needs ``DIAGNOSTICS_ROOT``.
"""

from __future__ import annotations

import os
from pathlib import Path

ROOT_VARIABLE = "DIAGNOSTICS_ROOT"
DATASETS_VARIABLE = "DIAGNOSTICS_DATASETS"
PACKAGE_DIR = Path(__file__).resolve().parent


class ResourceRootError(FileNotFoundError):
    """The project root (and with it the resource folders) cannot be found."""


def project_root() -> Path:
    """The folder holding ``datasets/``, ``annotators/``, ``configs/`` and ``notebooks/``.

    Raises
    ------
    ResourceRootError
        When ``$DIAGNOSTICS_ROOT`` names no folder, or it is unset and the package is not in a checkout.
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
    raise ResourceRootError(f"cannot find the project root: the package in {PACKAGE_DIR} is not inside a checkout "
                            f"(no pyproject.toml in {checkout}); set {ROOT_VARIABLE} to the folder holding "
                            "datasets/, annotators/, configs/ and notebooks/")


def datasets_dir() -> Path:
    """The bundled data (``$DIAGNOSTICS_DATASETS`` overrides ``<root>/datasets``)."""
    override = os.environ.get(DATASETS_VARIABLE)
    return Path(override) if override else project_root() / "datasets"


def annotators_dir() -> Path:
    """The annotator rules files and the behave templates (``<root>/annotators``)."""
    return project_root() / "annotators"


def configs_dir() -> Path:
    """The sweep configs of the scales (``<root>/configs``)."""
    return project_root() / "configs"


def notebooks_dir() -> Path:
    """The analysis notebooks (``<root>/notebooks``)."""
    return project_root() / "notebooks"
