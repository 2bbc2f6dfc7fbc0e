"""``scripts/lab.sh`` as root (containers, CI machines) passes ``--allow-root`` and says so in one line; as any other
user it starts ``jupyter lab`` as before. The script runs in a stand-in checkout whose ``setup.sh``, ``.venv`` Python
and ``jupyter`` only record how they were called, with ``id`` answering the user id of the case."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from _paths import ROOT

ROOT_LINE = "lab: running as root: starting jupyter lab with --allow-root"


def _executable(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)


def _lab(tmp_path: Path, uid: int, *args: str) -> tuple[list[str], list[str]]:
    """Run lab.sh with ``id -u`` answering ``uid``; returns (its output lines, the arguments jupyter got)."""
    checkout = tmp_path / "checkout"
    (checkout / "scripts").mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "lab.sh", checkout / "scripts" / "lab.sh")
    _executable(checkout / "scripts" / "setup.sh", "exit 0\n")
    _executable(checkout / ".venv" / "bin" / "python", "#!/bin/sh\nexit 0\n")
    _executable(checkout / ".venv" / "bin" / "jupyter", '#!/bin/sh\nprintf "%s\\n" "$@" > "$0.args"\n')
    (checkout / "runs" / "demo").mkdir(parents=True)
    _executable(tmp_path / "fake-bin" / "id", f"#!/bin/sh\necho {uid}\n")
    env = {**os.environ, "PATH": f"{tmp_path / 'fake-bin'}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(["bash", "scripts/lab.sh", *args], cwd=checkout, env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines(), (checkout / ".venv" / "bin" / "jupyter.args").read_text().splitlines()


@pytest.mark.skipif(shutil.which("bash") is None, reason="lab.sh is a bash script")
@pytest.mark.parametrize("args", [(), ("--no-browser", "--allow-root")], ids=["plain", "allow-root-given"])
def test_as_root_lab_passes_allow_root_once_and_says_so(tmp_path, args):
    lines, jupyter = _lab(tmp_path, 0, *args)
    assert lines.count(ROOT_LINE) == 1
    assert jupyter[0] == "lab" and jupyter.count("--allow-root") == 1
    assert jupyter[len(jupyter) - len(args):] == list(args)  # the user's arguments last, as given
    assert "--ContentsManager.post_save_hook=diagnostics.notebooks.lab.post_save_hook" in jupyter


@pytest.mark.skipif(shutil.which("bash") is None, reason="lab.sh is a bash script")
def test_as_another_user_lab_starts_as_before(tmp_path):
    lines, jupyter = _lab(tmp_path, 1000, "--no-browser")
    assert ROOT_LINE not in lines and "--allow-root" not in jupyter
    assert jupyter == ["lab", "--notebook-dir=notebooks",
                       "--ServerApp.contents_manager_class=diagnostics.notebooks.lab.ContentsManager",
                       "--ContentsManager.pre_save_hook=diagnostics.notebooks.lab.pre_save_hook",
                       "--ContentsManager.post_save_hook=diagnostics.notebooks.lab.post_save_hook", "--no-browser"]
