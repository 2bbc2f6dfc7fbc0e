"""The shared low-level helpers: atomic writes (``diagnostics.io_utils``) and line-aware YAML
(``diagnostics.yaml_lines``)."""

from __future__ import annotations

import json

import pytest

from diagnostics.io_utils import atomic_path, temporary_path, write_json_atomic
from diagnostics.yaml_lines import LineDict, LineList, YAMLLineError, line_of, load_yaml_lines, plain


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
    from diagnostics.yaml_lines import MAX_NODES

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
