"""A wheel installed in every pip layout (venv, ``--prefix``, ``--target``, ``--user``), used away from the checkout,
finds the bundled data, rules, configs and notebooks in its package data (``diagnostics/_resources``)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from diagnostics.core.resources import RESOURCE_FOLDERS, project_root

pytestmark = pytest.mark.slow

ROOT = project_root()
# the interpreter without the venv: a site-packages named on PYTHONPATH gets no .pth processing, so the checkout's
# editable finder stays out and only the installed copy can answer `import diagnostics`
BASE_PYTHON = getattr(sys, "_base_executable", sys.executable)
DEPENDENCIES = list(dict.fromkeys([sysconfig.get_path("purelib"), sysconfig.get_path("platlib")]))
PIP = [sys.executable, "-m", "pip"]
PIP_INSTALL = ["install", "-q", "--no-deps", "--no-index", "--no-compile", "--no-warn-script-location"]

SCRIPT = """
import json, sys
import yaml
import diagnostics, diagnostics.core.resources as r
from diagnostics.annotate import annotate, load_rules
from diagnostics.data import load
from diagnostics.notebooks import copy_notebooks

axb = load("axb")
print(json.dumps({
    "module": diagnostics.__file__,
    "root": str(r.project_root()),
    "work": str(r.work_root()),
    "axb": len(axb),
    "lidirus": len(load("lidirus")),
    "rules": load_rules("en").path,
    "annotated": annotate(axb.head(2), "en")["auto_features"].map(list).tolist(),
    "experiment": yaml.safe_load((r.configs_dir() / "demo.yaml").read_text())["experiment"],
    "notebooks": sorted(p.name for p in r.notebooks_dir().glob("[0-9][0-9]_*.py")),
    "copies": sorted(p.name for p in copy_notebooks(sys.argv[1])),
}))
"""


def _listed(root: Path) -> list[str]:
    """The files git would hand over: tracked, plus untracked ones not ignored."""
    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=root,
                         capture_output=True, text=True, check=True).stdout
    return sorted(p for p in out.split("\0") if p and (root / p).is_file())


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """A wheel built from a clean copy of the checkout (no build/ or editor leftovers in the shared tree)."""
    if not (ROOT / ".git").exists():
        pytest.skip("needs a git checkout to list the source files")
    base = tmp_path_factory.mktemp("build")
    source, wheels = base / "source", base / "wheels"
    for name in _listed(ROOT):
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, source / name)
    subprocess.run([*PIP, "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q", "-w", str(wheels),
                    str(source)], check=True, cwd=base, capture_output=True)
    (built,) = wheels.glob("*.whl")
    return built


def _install(layout: str, wheel: Path, where: Path) -> tuple[list[str], dict[str, str]]:
    """Install ``wheel`` in ``layout`` under ``where``; the interpreter and environment that import it."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("DIAGNOSTICS_ROOT", "DIAGNOSTICS_DATASETS", "DIAGNOSTICS_ANNOTATORS", "PYTHONPATH",
                        "PYTHONNOUSERSITE", "PYTHONUSERBASE")}
    if layout == "venv":
        subprocess.run([BASE_PYTHON, "-m", "venv", "--without-pip", str(where)], check=True)
        python = str(where / "bin" / "python")
        site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                              check=True, capture_output=True, text=True).stdout.strip()
        Path(site, "dependencies.pth").write_text("\n".join(DEPENDENCIES) + "\n")
        subprocess.run([*PIP, "--python", python, *PIP_INSTALL, str(wheel)], check=True)
        return [python], env
    if layout == "user":
        env["PYTHONUSERBASE"] = str(where)
        subprocess.run([*PIP, "--python", BASE_PYTHON, *PIP_INSTALL, "--user", str(wheel)], check=True, env=env)
        env["PYTHONPATH"] = os.pathsep.join(DEPENDENCIES)
        return [BASE_PYTHON], env
    # --ignore-installed: without it pip would uninstall the environment's own (editable) copy first
    subprocess.run([*PIP, *PIP_INSTALL, "--ignore-installed", f"--{layout}", str(where), str(wheel)], check=True)
    site = where if layout == "target" else next(where.glob("lib/python3*/site-packages"))
    env["PYTHONPATH"] = os.pathsep.join([str(site), *DEPENDENCIES])
    return [BASE_PYTHON], env


@pytest.mark.parametrize("layout", ["venv", "prefix", "target", "user"])
def test_installed_wheel_reads_its_package_data_from_any_directory(layout, wheel, tmp_path):
    elsewhere, copies = tmp_path / "elsewhere", tmp_path / "copies"
    elsewhere.mkdir()
    python, env = _install(layout, wheel, tmp_path / "installed")
    out = subprocess.run([*python, "-c", SCRIPT, str(copies)], cwd=elsewhere, env=env, capture_output=True,
                         text=True)
    assert out.returncode == 0, out.stderr
    found = json.loads(out.stdout.strip().splitlines()[-1])

    package = Path(found["module"]).parent
    assert package.is_relative_to((tmp_path / "installed").resolve()), found["module"]
    root = Path(found["root"])
    assert root == package / "_resources"
    carried = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
    assert carried == [p for p in _listed(ROOT) if p.split("/")[0] in RESOURCE_FOLDERS]
    assert Path(found["work"]) == elsewhere.resolve()  # runs and reports go to the working directory
    assert found["axb"] == found["lidirus"] == 1104
    assert Path(found["rules"]) == root / "annotators" / "en.yaml"
    assert len(found["annotated"]) == 2 and all(isinstance(f, list) for f in found["annotated"])
    assert found["experiment"] == "demo"
    scripts = sorted(p.name for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.py"))
    assert found["notebooks"] == scripts and scripts
    assert found["copies"] == sorted([*scripts, *(s.replace(".py", ".ipynb") for s in scripts)])


def test_wheel_built_from_the_sdist_carries_the_resource_folders(tmp_path):
    """``python -m build`` builds the wheel from the sdist: the sdist carries the folders (MANIFEST.in) and the
    build step, and the wheel built from it has them as package data."""
    if not (ROOT / ".git").exists():
        pytest.skip("needs a git checkout to list the source files")
    import tarfile
    import zipfile

    source = tmp_path / "source"
    for name in _listed(ROOT):
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, source / name)
    subprocess.run([sys.executable, "-c", "from setuptools.build_meta import build_sdist; "
                    f"build_sdist({str(tmp_path / 'dist')!r})"], cwd=source, check=True, capture_output=True)
    (sdist,) = (tmp_path / "dist").glob("*.tar.gz")
    with tarfile.open(sdist) as archive:
        names = {n.split("/", 1)[1] for n in archive.getnames() if "/" in n}
    expected = {p for p in _listed(ROOT) if p.split("/")[0] in RESOURCE_FOLDERS}
    assert expected <= names, sorted(expected - names)[:5]
    assert {"setup.py", "MANIFEST.in"} <= names  # the build step that copies them into the wheel
    subprocess.run([*PIP, "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q", "-w",
                    str(tmp_path / "wheels"), str(sdist)], check=True, cwd=tmp_path, capture_output=True)
    (built,) = (tmp_path / "wheels").glob("*.whl")
    with zipfile.ZipFile(built) as wheel_file:
        carried = {n.removeprefix("diagnostics/_resources/") for n in wheel_file.namelist()
                   if n.startswith("diagnostics/_resources/")}
    assert carried == expected
