"""pyproject.toml and environment.yml pin the same set; .ci/run calls the README's test command."""

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
