"""Outputs on a hostile or failing disk, through the real command line: a full disk, a read-only mount, a link
planted in the output folder, a writer killed at every file of an output set, two writers at once, damaged files the
toolkit reads back, and a YAML file whose aliases explode.

The commands run the app in this process; a killed writer, two writers at once and the YAML bomb (under a time
limit) run the real ``python -m diagnostics``. Mounts need root (a small tmpfs, remounted read-only); where mounting is impossible those tests are skipped with the
reason.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import nbformat
import pytest

from _cli import ENV, assert_user_error, invoke_cli, run_cli
from _stats_fixtures import synthetic_table
from diagnostics.core.io_utils import PAUSE_GATE_VARIABLE, PAUSE_VARIABLE, atomic_path, output_folder
from diagnostics.stats._report import OUTPUTS

SET = sorted(set(OUTPUTS) - {"bootstrap_ci.csv"})  # what `stats` writes without --bootstrap


@contextmanager
def tmpfs(path: Path, size: str):
    """A tmpfs of ``size`` mounted at ``path`` (skips the test where mounting is impossible)."""
    path.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], capture_output=True,
                          text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {done.stderr.strip() or done.returncode}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True)


def remount(path: Path, mode: str) -> None:
    subprocess.run(["mount", "-o", f"remount,{mode}", str(path)], check=True, capture_output=True)


def contents(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    """Two predictions tables and the stats set each gives (the reference outputs)."""
    root = tmp_path_factory.mktemp("tables")
    paths = {}
    for name, seeds, seed in (("a", [0, 1], 0), ("b", [0, 1, 2], 1)):
        paths[name] = root / f"{name}.parquet"
        synthetic_table("axb", seeds=seeds, seed=seed).to_parquet(paths[name])
    refs = {}
    for name in paths:
        done = invoke_cli("stats", paths[name], "--out", root / f"ref_{name}", cwd=root)
        assert done.returncode == 0, done.stderr
        refs[name] = contents(root / f"ref_{name}")
        assert sorted(refs[name]) == SET
    return paths, refs


# --- disk errors ------------------------------------------------------------------------------------------------


def test_full_disk_is_one_line_and_keeps_the_previous_set(tables, tmp_path):
    paths, refs = tables
    with tmpfs(tmp_path / "disk", "64k") as disk:
        out = disk / "out"
        out.mkdir()
        for name, data in refs["a"].items():
            (out / name).write_bytes(data)
        fd = os.open(disk / "filler", os.O_WRONLY | os.O_CREAT)
        try:  # fill what is left
            while True:
                os.write(fd, b"\0" * 4096)
        except OSError as err:
            assert err.errno == errno.ENOSPC
        finally:
            os.close(fd)
        result = invoke_cli("stats", paths["b"], "--out", out, cwd=tmp_path)
        line = assert_user_error(result, str(out), "No space left on device")
        assert ".tmp" not in line  # the path the user named, never a temporary file
        assert contents(out) == refs["a"]
        assert sorted(p.name for p in disk.iterdir()) == ["filler", "out"]  # no staging folder left


def test_read_only_mount_is_refused_before_any_work(tables, tmp_path):
    paths, refs = tables
    with tmpfs(tmp_path / "ro", "1m") as mount:
        (mount / "out").mkdir()
        (mount / "out" / "summary.md").write_text("old")
        remount(mount, "ro")
        for args in (["stats", paths["a"], "--out", mount / "out"],
                     ["stats", paths["a"], "--out", mount / "new" / "deeper"],
                     ["predictions", "import", paths["a"], "--dataset", "axb", "--out", mount / "t.parquet"],
                     ["compare", paths["a"], paths["a"], "--select-b", "seed=0", "--out", mount / "cmp"]):
            assert_user_error(invoke_cli(*args, cwd=tmp_path), "Read-only file system", str(args[-1]))
        assert (mount / "out" / "summary.md").read_text() == "old"


def test_clean_up_on_a_read_only_mount_never_hides_the_first_error(tmp_path):
    with tmpfs(tmp_path / "ro", "1m") as mount:
        target = mount / "table.csv"
        target.write_text("old")
        with pytest.raises(OSError) as info:
            with atomic_path(target) as tmp:
                tmp.write_text("new")
                remount(mount, "ro")  # the replace and the clean-up both fail now
        remount(mount, "rw")
        assert info.value.errno == errno.EROFS and info.value.filename == str(target)
        assert target.read_text() == "old"


def test_a_folder_in_the_way_is_one_line(tables, tmp_path):
    paths, _ = tables
    (tmp_path / "t.parquet").mkdir()
    result = invoke_cli("predictions", "import", paths["a"], "--dataset", "axb", "--out", tmp_path / "t.parquet",
                     cwd=tmp_path)
    assert_user_error(result, "--out", str(tmp_path / "t.parquet"), "folder")


# --- links planted in the output folder ---------------------------------------------------------------------------


def test_planted_links_are_replaced_never_followed(tables, tmp_path):
    paths, refs = tables
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    out = tmp_path / "out"
    out.mkdir()
    (out / "summary.md").symlink_to(victim)  # an output's own name
    (out / "notes.txt").symlink_to(victim)  # a file the set does not own: kept as a link
    table = tmp_path / "table.parquet"
    table.symlink_to(victim)
    done = invoke_cli("stats", paths["a"], "--out", out, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    imported = invoke_cli("predictions", "import", paths["a"], "--dataset", "axb", "--out", table, "--report",
                       tmp_path / "report", cwd=tmp_path)
    assert imported.returncode == 0, imported.stderr
    assert victim.read_text() == "precious"
    assert (out / "summary.md").is_file() and not (out / "summary.md").is_symlink()
    assert (out / "summary.md").read_bytes() == refs["a"]["summary.md"]
    assert (out / "notes.txt").is_symlink() and os.readlink(out / "notes.txt") == str(victim)
    assert table.is_file() and not table.is_symlink()


def _report_folder(root: Path) -> Path:
    (root / "notebooks").mkdir(parents=True)
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# Title")]
    nbformat.write(nb, root / "notebooks" / "01_x.ipynb")
    return root


def test_report_pages_replace_planted_links(tmp_path):
    run_dir = _report_folder(tmp_path / "run")
    victim = tmp_path / "victim.html"
    victim.write_text("precious")
    (run_dir / "index.html").symlink_to(victim)
    done = invoke_cli("report", run_dir, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert victim.read_text() == "precious" and not (run_dir / "index.html").is_symlink()
    assert "Title" in (run_dir / "index.html").read_text()


# --- one commit point per output set ---------------------------------------------------------------------------


def _paused(args, cwd: Path, point: str, gate: Path | None = None) -> subprocess.Popen:
    """Start the command with the pause hook at ``point`` and wait until it has paused there."""
    env = {**ENV, PAUSE_VARIABLE: point}
    if gate is not None:
        env[PAUSE_GATE_VARIABLE] = str(gate)
    proc = subprocess.Popen([sys.executable, "-m", "diagnostics", *map(str, args)], cwd=cwd, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    line = ""
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if line.startswith("paused at") or (not line and proc.poll() is not None):
            break
    assert line.strip() == f"paused at {point}", (line, proc.poll())
    return proc


KILL_POINTS = [f"file:{k}" for k in range(1, len(SET) + 1)] + ["commit"]


# the first file and the commit in the default suite; every file between them in the slow target
@pytest.mark.parametrize("point", [pytest.param(p, marks=[] if p in ("file:1", "commit") else [pytest.mark.slow])
                                   for p in KILL_POINTS])
def test_a_writer_killed_at_any_file_leaves_the_old_set_or_the_new_one(tables, tmp_path, point):
    paths, refs = tables
    out = tmp_path / point.replace(":", "_")
    out.mkdir()
    for name, data in refs["a"].items():
        (out / name).write_bytes(data)
    (out / "notes.txt").write_text("mine")
    proc = _paused(["stats", paths["b"], "--out", out], tmp_path, point)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    proc.stderr.close()
    expected = refs["b"] if point == "commit" else refs["a"]
    assert contents(out) == {**expected, "notes.txt": b"mine"}, point
    assert set(SET) <= {"agreement.csv", "rs_corr.csv", "scores.csv", "stability.csv", "summary.md"}


def test_two_writers_at_once_leave_one_whole_set(tables, tmp_path):
    paths, refs = tables
    out = tmp_path / "out"
    gate = tmp_path / "gate"
    writers = [_paused(["stats", paths[name], "--out", out], tmp_path, "file:2", gate) for name in ("a", "b")]
    gate.write_text("go")  # both have written two files into their own staging folders: now both finish at once
    for proc in writers:
        assert proc.wait(timeout=240) == 0, proc.stderr.read()
        proc.stderr.close()
    assert contents(out) in (refs["a"], refs["b"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gate", "out"]  # no staging or old folder left


def test_the_report_pages_are_one_set(tmp_path):
    for point in ("file:1", "commit"):
        run_dir = _report_folder(tmp_path / point.replace(":", "_"))
        (run_dir / "index.html").write_text("old index")
        (run_dir / "explorer.html").write_text("old explorer, links back to the old index")
        proc = _paused(["report", run_dir], tmp_path, point)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc.stderr.close()
        pages = sorted(p.name for p in run_dir.iterdir() if p.suffix == ".html")
        if point == "commit":  # the new report has no explorer data: the old explorer page goes with the old index
            assert pages == ["index.html"] and "Title" in (run_dir / "index.html").read_text()
        else:
            assert pages == ["explorer.html", "index.html"]
            assert (run_dir / "index.html").read_text() == "old index"
        assert (run_dir / "notebooks" / "01_x.ipynb").is_file()


def test_an_output_folder_that_is_a_mount_point_is_written_in_place(tables, tmp_path):
    paths, refs = tables
    with tmpfs(tmp_path / "mnt", "4m") as mount:
        (mount / "notes.txt").write_text("mine")
        (mount / "summary.md").write_text("old")
        done = invoke_cli("stats", paths["a"], "--out", mount, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert contents(mount) == {**refs["a"], "notes.txt": b"mine"}  # no staging folder left inside


def test_output_set_removes_outputs_it_did_not_write_and_keeps_foreign_entries(tmp_path):
    out = tmp_path / "out"
    with output_folder(out, ("a.csv", "b.csv")) as files:
        for name in ("a.csv", "b.csv"):
            with files.file(name) as tmp:
                tmp.write_text(name)
    (out / "mine").mkdir()
    (out / "mine" / "x.txt").write_text("x")
    with output_folder(out, ("a.csv", "b.csv")) as files:
        with files.file("a.csv") as tmp:
            tmp.write_text("new")
    assert sorted(p.name for p in out.iterdir()) == ["a.csv", "mine"]
    assert (out / "a.csv").read_text() == "new" and (out / "mine" / "x.txt").read_text() == "x"
    with pytest.raises(RuntimeError):
        with output_folder(out, ("a.csv", "b.csv")) as files:
            with files.file("b.csv") as tmp:
                tmp.write_text("half")
            raise RuntimeError
    assert sorted(p.name for p in out.iterdir()) == ["a.csv", "mine"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_import_checks_its_report_path_before_writing_the_table(tables, tmp_path):
    paths, _ = tables
    (tmp_path / "report").write_text("a file, not a folder")
    result = invoke_cli("predictions", "import", paths["a"], "--dataset", "axb", "--out", tmp_path / "t.parquet",
                     "--report", tmp_path / "report", cwd=tmp_path)
    assert_user_error(result, "--report", str(tmp_path / "report"))
    assert not (tmp_path / "t.parquet").exists()


# --- damaged files the toolkit reads back ------------------------------------------------------------------------


def test_a_truncated_explorer_payload_is_one_line(tmp_path):
    run_dir = _report_folder(tmp_path / "run")
    (run_dir / "figures").mkdir()
    (run_dir / "figures" / "explorer.json").write_text('{"lead": [["en", "x"]], "cells": [1, 2')
    result = invoke_cli("report", run_dir, cwd=tmp_path)
    assert_user_error(result, str(run_dir / "figures" / "explorer.json"), "cut short")


@pytest.mark.parametrize("damage", ["truncated weights", "weights header", "config"])
def test_damaged_model_files_are_one_line(tiny_model_dir, tmp_path, damage):
    from diagnostics.behave import generate_suite
    from diagnostics.behave import save_suite

    model = tmp_path / "model"
    shutil.copytree(tiny_model_dir, model)
    weights = model / "model.safetensors"
    if damage == "truncated weights":
        weights.write_bytes(weights.read_bytes()[: weights.stat().st_size // 2])
        named, reason = weights, "cut short"
    elif damage == "weights header":
        raw = bytearray(weights.read_bytes())
        raw[8:16] = b"\xff" * 8
        weights.write_bytes(bytes(raw))
        named, reason = weights, "not JSON"
    else:
        (model / "config.json").write_text(json.dumps({"model_type": "bert"})[:-3])
        named, reason = model / "config.json", "cut short"
    suite = save_suite(generate_suite("en", seed=0, max_per_test=1), tmp_path / "suite.jsonl")
    result = invoke_cli("behave", "run", suite, "--model", model, "--out", tmp_path / "r.csv", cwd=tmp_path)
    assert_user_error(result, str(named), reason)


# --- YAML aliases ----------------------------------------------------------------------------------------------


def test_a_yaml_alias_bomb_is_refused_in_one_line(tmp_path):
    lines = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for prev, name in zip("abcdefgh", "bcdefghi"):
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 9) + "]")
    config = tmp_path / "bomb.yaml"
    config.write_text("\n".join(lines) + "\n")
    assert config.stat().st_size < 1024
    result = run_cli("sweep", "run", config, "--dry-run", cwd=tmp_path, timeout=120)
    line = assert_user_error(result, str(config), "aliases expand")
    assert ":6:" in line  # the alias that crosses the bound
