"""pyproject.toml and environment.yml pin the same set; .ci/run calls the README's test command; the code version
(package version + git commit) recorded with results."""

import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def test_pins_agree():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pins = set(project["dependencies"]) | set(project["optional-dependencies"]["dev"])
    assert all("==" in p for p in pins), "every dependency is pinned"
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip_section = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    assert {p for p in pip_section if "==" in p} == pins


def test_ci_runs_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    command = re.search(r"Run the tests.*?```bash\n(.+?)\n```", readme, re.S).group(1).strip()
    ci_lines = [ln for ln in (ROOT / ".ci" / "run").read_text().splitlines() if ln.strip() and not ln.startswith("#")]
    assert ci_lines == [command]


def test_code_version_names_the_package_version_and_the_commit():
    from diagnostics import __version__
    from diagnostics.version import code_version

    code = code_version()
    assert code["version"] == __version__ == tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    if (ROOT / ".git").exists():
        assert re.fullmatch(r"[0-9a-f]{40}", code["commit"]) and isinstance(code["dirty"], bool)


def test_code_version_never_fails_without_git(monkeypatch, tmp_path):
    from diagnostics import version

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
    from diagnostics.pipeline.runner import versions
    from diagnostics.version import code_version

    assert versions()["code"] == code_version()


def test_mixed_commits_notice():
    from diagnostics.version import mixed_commits_notice, short_commit

    assert short_commit({"commit": "a" * 40, "dirty": True}) == "aaaaaaa+dirty"
    assert short_commit({"commit": None}) is None and short_commit(None) is None
    assert mixed_commits_notice(["aaaaaaa", "aaaaaaa+dirty", None]) is None
    assert "2 different commits" in mixed_commits_notice(["aaaaaaa", "bbbbbbb", None])


# --- one resource root ------------------------------------------------------------------------------------------

RESOURCE_DIRS = {"datasets_dir": "datasets", "annotators_dir": "annotators", "configs_dir": "configs",
                 "notebooks_dir": "notebooks"}


def test_resource_dirs_point_at_the_checkout(monkeypatch):
    from diagnostics import resources

    monkeypatch.delenv("DIAGNOSTICS_ROOT", raising=False)
    monkeypatch.delenv("DIAGNOSTICS_DATASETS", raising=False)
    assert resources.project_root() == ROOT
    for function, folder in RESOURCE_DIRS.items():
        found = getattr(resources, function)()
        assert found == ROOT / folder and found.is_dir(), function


def test_resource_dirs_follow_the_root_override(monkeypatch, tmp_path):
    import shutil

    import pytest

    from diagnostics import resources
    from diagnostics.annotate.rules import annotators_root
    from diagnostics.behave.templates import templates_root
    from diagnostics.data import datasets_root
    from diagnostics.pipeline.scales import scale_inputs

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

    from diagnostics import resources

    monkeypatch.setenv("DIAGNOSTICS_ROOT", str(tmp_path / "missing"))
    with pytest.raises(resources.ResourceRootError, match="DIAGNOSTICS_ROOT"):
        resources.configs_dir()
    monkeypatch.delenv("DIAGNOSTICS_ROOT")
    monkeypatch.setattr(resources, "PACKAGE_DIR", tmp_path / "site-packages" / "diagnostics")  # an installed copy
    with pytest.raises(resources.ResourceRootError, match="DIAGNOSTICS_ROOT"):
        resources.notebooks_dir()


def test_no_module_finds_resources_relative_to_its_own_file():
    """Resource folders come from diagnostics.resources only: no ``Path(__file__)...parents[k]`` elsewhere."""
    import ast

    offenders = []
    for path in sorted((ROOT / "diagnostics").rglob("*.py")):
        if path == ROOT / "diagnostics" / "resources.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) \
                    and node.value.attr == "parents" \
                    and any(isinstance(n, ast.Name) and n.id == "__file__" for n in ast.walk(node.value)):
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not offenders, f"use diagnostics.resources instead of parents[...] of __file__: {offenders}"
