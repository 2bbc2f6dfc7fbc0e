"""Build hook: the wheel carries the top-level resource folders inside the package.

``datasets/``, ``annotators/``, ``configs/`` and ``notebooks/`` stay at the top of the repository, where users and
linguists find and edit them; a wheel copies them to ``diagnostics/_resources/<folder>``, where
``diagnostics.core.resources`` reads them with ``importlib.resources`` in every install layout (venv, ``--prefix``,
``--target``, ``--user``, conda). An editable install needs no copy: it reads the checkout's own folders.
Everything else about the build is declared in ``pyproject.toml``.
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

# keep in step with diagnostics.core.resources.RESOURCE_FOLDERS and MANIFEST.in
RESOURCE_FOLDERS = ("datasets", "annotators", "configs", "notebooks")
PACKAGE_RESOURCES = Path("diagnostics", "_resources")


class BuildWithResources(build_py):
    """``build_py`` that also copies the resource folders into ``<build_lib>/diagnostics/_resources``."""

    def run(self):
        super().run()
        if self.editable_mode:
            return
        # build/ outlives a build: start empty, or a file deleted from the checkout would ship in the next wheel
        shutil.rmtree(Path(self.build_lib, PACKAGE_RESOURCES), ignore_errors=True)
        for path in self._resource_files():
            target = Path(self.build_lib, PACKAGE_RESOURCES, path)
            target.parent.mkdir(parents=True, exist_ok=True)  # not self.mkpath: it caches folders rmtree removed
            self.copy_file(str(path), str(target), preserve_mode=False)

    def get_outputs(self, include_bytecode=True):
        outputs = super().get_outputs(include_bytecode)
        if self.editable_mode:
            return outputs
        return outputs + [str(Path(self.build_lib, PACKAGE_RESOURCES, p)) for p in self._resource_files()]

    @staticmethod
    def _resource_files():
        # caches and editor leftovers are not resources
        return sorted(p for folder in RESOURCE_FOLDERS for p in Path(folder).rglob("*")
                      if p.is_file() and "__pycache__" not in p.parts and ".ipynb_checkpoints" not in p.parts
                      and not p.name.startswith("."))


if __name__ == "__main__":  # the build backend runs this file as __main__; tests import the hook without building
    setup(cmdclass={"build_py": BuildWithResources})
