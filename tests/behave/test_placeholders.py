"""Placeholder syntax of template sentences: split into slot, form and choices; malformed sentences refused."""

import pytest

from diagnostics.behave import TemplateError
from diagnostics.behave._placeholders import check_text, split_placeholder


@pytest.mark.parametrize("inner,expected", [
    ("a", ("a", None, None)),
    (" a . gent ", ("a", "gent", None)),
    ("a.gen_@b", ("a", "gen_@b", None)),
    ("a|m:он|f:она|other:оно", ("a", None, [("m", "он"), ("f", "она"), ("other", "оно")])),
    ("n|one:book|books", ("n", None, [("one", "book"), (None, "books")])),
])
def test_split_placeholder(inner, expected):
    assert split_placeholder(inner) == expected


SLOTS = {"a": object(), "b": object()}


@pytest.mark.parametrize("text,needle", [
    ("", "premise as a non-empty string"),
    (3, "premise as a non-empty string"),
    ("{a} is {b", "balanced braces in premise"),
    ("{c} is here", "a slot of this test (a, b) in {c}"),
    ("{a.gen_@c} is here", "a slot of this test (a, b) in {a.gen_@c}"),
    ("{a.gen-x} is here", "a form name of letters, digits, _ + @"),
    ("{a|m:he|she} is here", "choices written key:text|key:text"),
])
def test_malformed_sentences_are_refused_with_file_and_line(text, needle):
    with pytest.raises(TemplateError) as err:
        check_text("t.yaml", 7, text, SLOTS, "premise")
    assert str(err.value).startswith("t.yaml:7: expected") and needle in str(err.value)


def test_well_formed_sentences_pass():
    check_text("t.yaml", 7, "{a} gave {b.datv} {a|m:his|f:her} book ({a.gen_@b}).", SLOTS, "premise")
