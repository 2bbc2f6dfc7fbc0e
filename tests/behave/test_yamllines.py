"""Template YAML read with the line of every mapping, key and item; a syntax error is a TemplateError with its line."""

import pytest

from diagnostics.behave import TemplateError
from diagnostics.behave._yamllines import LineDict, LineList, line_of, load_yaml


def test_mappings_keys_and_items_carry_their_lines(tmp_path):
    path = tmp_path / "t.yaml"
    path.write_text("language: en\nlexicon:\n  name:\n    - Ann\n    - {text: Bob, gender: m}\n", encoding="utf-8")
    raw = load_yaml(path)
    assert isinstance(raw, LineDict) and isinstance(raw["lexicon"]["name"], LineList)
    assert line_of(raw, "lexicon") == 2 and line_of(raw["lexicon"], "name") == 3
    names = raw["lexicon"]["name"]
    assert [line_of(names, 0), line_of(names, 1)] == [4, 5] and names[1] == {"text": "Bob", "gender": "m"}


def test_a_syntax_error_names_file_and_line(tmp_path):
    path = tmp_path / "t.yaml"
    path.write_text("language: en\ntests:\n  t1: {a: [1, 2\n  t2: x\n", encoding="utf-8")
    with pytest.raises(TemplateError, match=rf"^{path}:\d+: expected valid YAML") as err:
        load_yaml(path)
    assert err.value.line in (3, 4)
