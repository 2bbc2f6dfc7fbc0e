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
