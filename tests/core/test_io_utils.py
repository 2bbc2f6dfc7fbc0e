"""The shared low-level helpers: atomic writes (``diagnostics.core.io_utils``) and line-aware YAML
(``diagnostics.core.yaml_lines``)."""

from __future__ import annotations

import json

import pytest

from diagnostics.core.io_utils import atomic_path, temporary_path, write_json_atomic
from diagnostics.core.yaml_lines import LineDict, LineList, YAMLLineError, line_of, load_yaml_lines, plain


def test_atomic_path_replaces_the_target_on_success(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old")
    with atomic_path(target) as tmp:
        assert tmp.parent == tmp_path and tmp.name.startswith(".out.txt.tmp") and tmp.is_file()
        assert temporary_path(target) != temporary_path(target)  # a fresh name per call
        tmp.write_text("new")
        assert target.read_text() == "old"  # not visible before the block ends
    assert target.read_text() == "new"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]


@pytest.mark.parametrize("error", [RuntimeError, KeyboardInterrupt])
def test_atomic_path_keeps_the_target_and_removes_the_temporary_file_on_error(tmp_path, error):
    target = tmp_path / "out.txt"
    target.write_text("old")
    with pytest.raises(error):
        with atomic_path(target) as tmp:
            tmp.write_text("half")
            raise error
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]


def test_write_json_atomic_formats(tmp_path):
    payload = {"b": 1, "a": [1, 2], "path": tmp_path}
    write_json_atomic(tmp_path / "store.json", payload)  # the run store's format
    assert (tmp_path / "store.json").read_text(encoding="utf-8") == json.dumps(payload, indent=2, sort_keys=True,
                                                                               default=str)
    compact = {"b": 1, "a": ["é"]}
    write_json_atomic(tmp_path / "plain.json", compact, indent=None, sort_keys=False, default=None)
    assert (tmp_path / "plain.json").read_text(encoding="utf-8") == json.dumps(compact)
    with pytest.raises(TypeError):
        write_json_atomic(tmp_path / "bad.json", {"x": object()}, default=None)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plain.json", "store.json"]


def test_load_yaml_lines_records_lines(tmp_path):
    path = tmp_path / "doc.yaml"
    path.write_text("name: x\nitems:\n  - a\n  - b: 1\n")
    doc = load_yaml_lines(path)
    assert isinstance(doc, LineDict) and doc.line == 1 and doc.key_lines == {"name": 1, "items": 2}
    assert isinstance(doc["items"], LineList) and doc["items"].item_lines == [3, 4]
    assert line_of(doc, "items") == 2 and line_of(doc["items"], 1) == 4
    assert line_of(doc["items"], 9, 7) == 3  # an index out of range: the list's own line (its first item)
    assert plain(doc) == {"name": "x", "items": ["a", {"b": 1}]} and type(plain(doc)["items"][1]) is dict


def test_load_yaml_lines_names_file_and_line(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("a: 1\nb: [\n")
    with pytest.raises(YAMLLineError, match=rf"^{path}:3: invalid YAML: ") as info:
        load_yaml_lines(path)
    assert info.value.line == 3 and info.value.path == str(path) and info.value.problem


def test_yaml_aliases_are_read_within_the_bound_and_refused_beyond_it(tmp_path):
    from diagnostics.core.yaml_lines import MAX_NODES

    ok = tmp_path / "ok.yaml"
    ok.write_text("base: &b {lr: 1, bs: 4}\nrun: *b\nother: {<<: *b, lr: 2}\n")
    assert plain(load_yaml_lines(ok)) == {"base": {"lr": 1, "bs": 4}, "run": {"lr": 1, "bs": 4},
                                          "other": {"lr": 2, "bs": 4}}
    recursive = tmp_path / "recursive.yaml"
    recursive.write_text("a: &x\n  b: *x\n")
    with pytest.raises(YAMLLineError, match=r"recursive\.yaml:2: .*recursive alias"):
        load_yaml_lines(recursive)
    wide = tmp_path / "wide.yaml"
    wide.write_text("a: &a [" + ", ".join(["1"] * 1000) + "]\nb: [" + ", ".join(["*a"] * (MAX_NODES // 1000)) + "]\n")
    with pytest.raises(YAMLLineError, match=rf"wide\.yaml:2: .*beyond {MAX_NODES:,} nodes"):
        load_yaml_lines(wide)


def _old_model(folder):
    folder.mkdir(parents=True)
    (folder / "config.json").write_text('{"old": true}')
    (folder / "pytorch_model.bin").write_bytes(b"old weights")
    (folder / "NOTES.md").write_text("the user's notes")


def test_model_folder_writer_replaces_the_model_files_as_one_set(tmp_path):
    from diagnostics.models import model_folder_writer

    folder = tmp_path / "model"
    _old_model(folder)
    outside = tmp_path / "elsewhere.safetensors"
    outside.write_bytes(b"not yours")
    (folder / "model.safetensors").symlink_to(outside)  # planted: must be replaced, never written through
    with model_folder_writer(folder) as staging:
        assert staging.parent == tmp_path and staging.name.startswith(".model.tmp") and not any(staging.iterdir())
        (staging / "config.json").write_text('{"new": true}')
        (staging / "model.safetensors").write_bytes(b"new weights")
        assert (folder / "config.json").read_text() == '{"old": true}'  # nothing visible before the end
    assert sorted(p.name for p in folder.iterdir()) == ["NOTES.md", "config.json", "model.safetensors"]
    assert (folder / "config.json").read_text() == '{"new": true}'
    assert not (folder / "model.safetensors").is_symlink() and outside.read_bytes() == b"not yours"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["elsewhere.safetensors", "model"]


def test_model_folder_writer_keeps_the_earlier_model_on_an_error_and_a_kill(tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    from diagnostics.models import model_folder_writer

    folder = tmp_path / "model"
    _old_model(folder)
    with pytest.raises(RuntimeError):
        with model_folder_writer(folder) as staging:
            (staging / "config.json").write_text('{"half": true}')
            raise RuntimeError("save failed")
    assert (folder / "config.json").read_text() == '{"old": true}'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"]

    gate = tmp_path / "written"
    script = ("import sys, time, pathlib\n"
              "from diagnostics.models._folders import model_folder_writer\n"
              "with model_folder_writer(sys.argv[1]) as staging:\n"
              "    (staging / 'config.json').write_text('{\"half\": true}')\n"
              "    pathlib.Path(sys.argv[2]).touch()\n"
              "    time.sleep(60)\n")
    child = subprocess.Popen([sys.executable, "-c", script, str(folder), str(gate)])
    try:
        deadline = time.monotonic() + 60
        while not gate.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert gate.exists(), "the writer never started"
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait()
    assert (folder / "config.json").read_text() == '{"old": true}'
    assert sorted(p.name for p in folder.iterdir()) == ["NOTES.md", "config.json", "pytorch_model.bin"]


def test_run_store_failure_marker_and_predictions_go_through_the_atomic_writer(tmp_path):
    import pandas as pd

    from diagnostics.finetune import _store as store

    run = tmp_path / "seed=0"
    run.mkdir()
    outside = tmp_path / "outside.txt"
    outside.write_text("keep")
    (run / "FAILED").symlink_to(outside)
    (run / store.PREDICTIONS_FILE).symlink_to(outside)
    store.mark_failed(run, "Traceback: boom")
    assert (run / "FAILED").read_text() == "Traceback: boom" and not (run / "FAILED").is_symlink()
    table = pd.DataFrame({"example_id": [1, 2], "prediction": ["entailment", "not_entailment"]})
    store.write_predictions(run, table)
    assert not (run / store.PREDICTIONS_FILE).is_symlink()
    pd.testing.assert_frame_equal(pd.read_parquet(run / store.PREDICTIONS_FILE), table)
    assert outside.read_text() == "keep"
    store.mark_failed(tmp_path / "gone", "Traceback: boom")  # a disk error never hides the training error
    assert not (tmp_path / "gone").exists()


def test_a_read_only_folder_is_reported_at_the_target_not_at_a_temporary_name(tmp_path, monkeypatch):
    """Creating the temporary file fails first on a read-only mount: the error names the file the user asked for."""
    import errno as errno_codes
    import os as os_module

    from diagnostics.core.io_utils import write_json_atomic

    real_open = os_module.open

    def read_only(path, *args, **kwargs):
        if ".tmp" in str(path):
            raise OSError(errno_codes.EROFS, "Read-only file system", str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os_module, "open", read_only)
    with pytest.raises(OSError) as caught:
        write_json_atomic(tmp_path / "sweep.json", {})
    assert caught.value.errno == errno_codes.EROFS and caught.value.filename == str(tmp_path / "sweep.json")
