"""Notebook outputs never reach git. ``.gitattributes`` sends every ``*.ipynb`` through the filter ``nbstripout``, which
``scripts/setup_git.sh`` (run by ``scripts/setup.sh``) configures in the checkout's git config.

In a temporary repository set up like a fresh clone (this checkout's ``.gitattributes`` and ``setup_git.sh``, the
Python running the tests as ``.venv``): a notebook run in a kernel and saved as Lab saves it under ``scripts/lab.sh``
(with ``diagnostics.notebooks.lab``'s hooks), outputs, execution counts and the metadata Lab adds over the tracked
file, leaves ``git status`` clean and ``git diff`` empty; a source edit shows, and its commit holds no outputs. Saved
by another tool, the outputs do not reach git either. Every committed notebook of this checkout passes through the
filter unchanged (otherwise it would show as modified wherever the filter is installed). Lab loads a notebook through
the contents manager of ``scripts/lab.sh`` as its kernel describes it, so that connecting the kernel marks nothing.
"""

from __future__ import annotations

import copy
import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from _paths import ROOT

pytestmark = pytest.mark.skipif(shutil.which("git") is None,
                                reason="git is not installed: the notebook output filter is a git filter")

NOTEBOOK = "notebooks/demo.ipynb"
PRINTED = "printed by the kernel"


def _env(tmp_path: Path) -> dict[str, str]:
    # no user or system git config (a global core.hooksPath or filter must not change what the test sees)
    return {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(tmp_path),
            "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@example.org"}


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, env=_env(repo.parent), capture_output=True, text=True)
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
    return done.stdout


def _setup_git(folder: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "scripts/setup_git.sh"], cwd=folder, env=_env(folder.parent), capture_output=True,
                          text=True)


def _small_notebook():
    import nbformat

    from diagnostics.notebooks.lab import notebook_header

    nb = nbformat.v4.new_notebook(metadata=notebook_header())
    nb.cells = [nbformat.v4.new_markdown_cell("# A small notebook"),
                nbformat.v4.new_code_cell("x = 6 * 7\nx"),
                nbformat.v4.new_code_cell(f"print({PRINTED!r})")]
    return nb


@pytest.fixture
def repo(tmp_path):
    """A git repository holding one committed, unrun notebook, then set up as ``scripts/setup.sh`` sets up a clone."""
    import nbformat

    repo = tmp_path / "repo"
    (repo / "notebooks").mkdir(parents=True)
    (repo / "scripts").mkdir()
    shutil.copy(ROOT / ".gitattributes", repo / ".gitattributes")
    shutil.copy(ROOT / "scripts" / "setup_git.sh", repo / "scripts" / "setup_git.sh")
    (repo / ".venv").symlink_to(Path(sys.prefix), target_is_directory=True)  # the filter runs .venv/bin/python
    shutil.copy(ROOT / ".gitignore", repo / ".gitignore")  # .venv/, .ipynb_checkpoints/
    nbformat.write(_small_notebook(), repo / NOTEBOOK)
    _git(repo, "init", "-q")
    (repo / ".git" / "info" / "exclude").write_text(".venv\n")  # a link: the .gitignore's `.venv/` names a folder
    _git(repo, "add", ".gitattributes", ".gitignore", "scripts", "notebooks")
    _git(repo, "commit", "-q", "-m", "an unrun notebook")
    for _ in range(2):  # idempotent
        done = _setup_git(repo)
        assert done.returncode == 0 and not done.stderr, done.stderr
    return repo


def test_setup_git_configures_the_filter_once(repo, tmp_path):
    assert len(_git(repo, "config", "--get-all", "filter.nbstripout.clean").splitlines()) == 1
    clean = shlex.split(_git(repo, "config", "filter.nbstripout.clean"))
    assert clean[0] == str(repo / ".venv" / "bin" / "python") and "nbstripout.main()" in clean[2]
    assert "--keep-id" in clean and _git(repo, "config", "filter.nbstripout.required").strip() == "true"
    assert _git(repo, "check-attr", "filter", "--", NOTEBOOK).strip().endswith("filter: nbstripout")
    # a folder that is not the top of a git checkout (an unpacked sdist, a copy inside another repository): untouched
    config = (repo / ".git" / "config").read_text()
    for folder in (tmp_path / "plain", repo / "vendored"):
        (folder / "scripts").mkdir(parents=True)
        shutil.copy(ROOT / "scripts" / "setup_git.sh", folder / "scripts" / "setup_git.sh")
        done = _setup_git(folder)
        assert done.returncode == 0 and not done.stderr, done.stderr
    assert (repo / ".git" / "config").read_text() == config
    assert not (tmp_path / "plain" / ".git").exists()


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    """The small notebook run once in a kernel, with what Lab adds to it; tests save copies of it."""
    from nbclient import NotebookClient

    from diagnostics.pipeline._kernel import notebook_kernel_manager

    folder = tmp_path_factory.mktemp("kernel")
    nb = _small_notebook()
    NotebookClient(nb, timeout=120, kernel_name="python3", kernel_manager_class=notebook_kernel_manager(),
                   resources={"metadata": {"path": str(folder)}}).execute()
    # what Lab stores besides outputs: widget state, view state of cells (the kernel's language_info.version and the
    # cells' execution timings come from the run itself)
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}, "version_major": 2,
                                                                            "version_minor": 0}}
    nb.cells[1].metadata.update(scrolled=True, collapsed=False, jupyter={"outputs_hidden": False})
    return nb


def _lab_save(repo: Path, nb) -> None:
    """Save as JupyterLab does under ``scripts/lab.sh``: the server's contents manager with the project's hooks."""
    from jupyter_server.services.contents.filemanager import FileContentsManager

    from diagnostics.notebooks import lab

    threads = []
    manager = FileContentsManager(root_dir=str(repo))
    manager.register_pre_save_hook(lab.pre_save_hook)
    manager.register_post_save_hook(lambda **kw: threads.append(lab.post_save_hook(**kw)))
    manager.save({"type": "notebook", "format": "json", "content": nb}, NOTEBOOK)
    for thread in filter(None, threads):
        thread.join(60)


def _with_ids_of(path: Path, executed):
    """The executed notebook as a run of the committed file at ``path``: the same cells and cell ids."""
    nb = copy.deepcopy(executed)
    for cell, stored in zip(nb.cells, json.loads(path.read_text(encoding="utf-8"))["cells"], strict=True):
        assert cell.source == "".join(stored["source"])
        cell.id = stored["id"]
    return nb


def test_outputs_saved_in_lab_stay_out_of_git_and_source_edits_show(repo, executed):
    path = repo / NOTEBOOK
    committed = path.read_bytes()
    ids = [cell["id"] for cell in json.loads(committed)["cells"]]
    nb = _with_ids_of(path, executed)
    _lab_save(repo, nb)
    saved = path.read_text(encoding="utf-8")
    assert PRINTED + "\\n" in saved and '"execution_count": 1' in saved, "the kernel's outputs are not in the file"
    assert _git(repo, "status", "--porcelain") == ""
    assert _git(repo, "diff") == "" and _git(repo, "diff", "--cached") == ""

    nb.cells[2].source += "\nprint('an edit of the source')"
    _lab_save(repo, nb)
    diff = _git(repo, "diff")
    assert "+    \"print('an edit of the source')\"" in diff, diff
    assert PRINTED + "\\n" not in diff and "execution_count\": 1" not in diff, diff
    assert _git(repo, "status", "--porcelain") == f" M {NOTEBOOK}\n"  # unstaged: the hook left the edit alone

    _git(repo, "commit", "-q", "-am", "a source edit")
    stored = json.loads(_git(repo, "show", f"HEAD:{NOTEBOOK}"))
    assert ["".join(cell["source"]) for cell in stored["cells"]] == [cell.source for cell in nb.cells]
    assert [cell["id"] for cell in stored["cells"]] == ids
    code = [cell for cell in stored["cells"] if cell["cell_type"] == "code"]
    assert all(cell["outputs"] == [] and cell["execution_count"] is None and cell["metadata"] == {} for cell in code)
    assert stored["metadata"] == json.loads(committed)["metadata"]
    assert _git(repo, "status", "--porcelain") == ""
    assert PRINTED + "\\n" in path.read_text(encoding="utf-8")  # the file on disk keeps its outputs


def test_lab_loads_a_notebook_as_its_kernel_describes_it_and_saves_it_unchanged(repo, executed):
    """Lab marks a notebook changed ("Save changes?" on close) as soon as the connected kernel's ``language_info``
    differs from the notebook it loaded. Through the contents manager of ``scripts/lab.sh``, the committed notebook
    arrives with exactly what the kernel reports (its Python version included, which the file does not hold), and
    saved unedited it stays byte for byte, git clean."""
    import asyncio

    from diagnostics.notebooks import lab

    path = repo / NOTEBOOK
    committed = path.read_bytes()
    assert "version\": \"3." not in committed.decode()  # no machine's Python version in the committed file
    threads = []
    manager = lab.ContentsManager(root_dir=str(repo))
    manager.register_pre_save_hook(lab.pre_save_hook)
    manager.register_post_save_hook(lambda **kw: threads.append(lab.post_save_hook(**kw)))
    model = asyncio.run(manager.get(NOTEBOOK))
    assert model["content"]["metadata"]["language_info"] == executed.metadata["language_info"]
    assert asyncio.run(manager.get(NOTEBOOK, content=False))["content"] is None  # listings pass through
    asyncio.run(manager.save({"type": "notebook", "format": "json", "content": model["content"]}, NOTEBOOK))
    for thread in filter(None, threads):
        thread.join(60)
    assert path.read_bytes() == committed
    assert _git(repo, "status", "--porcelain") == ""
    # another language's notebook, or one that already names its version, is served as it is on disk
    other = {"type": "notebook", "content": {"metadata": {"language_info": {"name": "R"}}}}
    assert lab.with_kernel_version(copy.deepcopy(other)) == other
    pinned = {"type": "notebook", "content": {"metadata": {"language_info": {"name": "python", "version": "3.9.1"}}}}
    assert lab.with_kernel_version(copy.deepcopy(pinned)) == pinned


def test_outputs_saved_by_any_other_tool_never_reach_git(repo, executed):
    """nbformat writes as VS Code, nbconvert --inplace or a script do. git's status compares the file's size first and
    lists the notebook until ``git add`` records it; ``git diff`` is empty and the add stages nothing."""
    import nbformat

    path = repo / NOTEBOOK
    nbformat.write(_with_ids_of(path, executed), path)
    assert '"version": "3.' in path.read_text(encoding="utf-8")  # language_info.version, as the kernel reports it
    assert _git(repo, "diff") == ""
    _git(repo, "add", NOTEBOOK)
    assert _git(repo, "diff", "--cached") == "" and _git(repo, "status", "--porcelain") == ""


def test_committed_notebooks_pass_the_filter_unchanged(repo):
    notebooks = sorted((ROOT / "notebooks").glob("*.ipynb"))
    assert notebooks
    clean = shlex.split(_git(repo, "config", "filter.nbstripout.clean"))
    # --textconv: each stripped notebook to stdout, one process for all of them (cwd: the filter's own git config)
    done = subprocess.run([*clean, "--textconv", *map(str, notebooks)], cwd=repo, env=_env(repo.parent),
                          capture_output=True, check=True)
    if done.stdout != b"".join(path.read_bytes() for path in notebooks):
        changed = [path.name for path in notebooks
                   if subprocess.run([*clean, "--textconv", str(path)], cwd=repo, env=_env(repo.parent),
                                     capture_output=True, check=True).stdout != path.read_bytes()]
        pytest.fail(f"committed with outputs or metadata that the filter strips: {changed}; commit them stripped: "
                    "`bash scripts/setup.sh && git add --renormalize notebooks/`")
