"""One value as written read into its type, or a :class:`Bad` naming its key (``diagnostics/settings/_values.py``);
and the words every problem uses: values spelt as a user wrote them, the closest choice suggested."""

from __future__ import annotations

import numpy as np
import pytest

from diagnostics.settings import Bad, as_list, check_keys, choice, hint, read_mapping, read_string, show
from diagnostics.settings._values import read_boolean, read_integer, read_number


def _bad(reader, value, key="k", **kwargs) -> Bad:
    with pytest.raises(Bad) as caught:
        reader(value, key, **kwargs)
    return caught.value


# --- show / hint / choice ------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("value", "text"), [
    (None, "null"), (True, "true"), (False, "false"), (1e-05, "1e-05"), (0.5, "0.5"), (3, "3"),
    ("x", "'x'"), ([1, "a"], "[1, 'a']"), (float("nan"), "nan"),
])
def test_show_spells_a_value_as_yaml_would(value, text):
    assert show(value) == text


def test_show_cuts_a_long_value_to_60_characters():
    text = show("a" * 100)
    assert len(text) == 60 and text.endswith("...") and text.startswith("'aaa")
    assert show("a" * 58) == "'" + "a" * 58 + "'"  # exactly 60 with its quotes: kept whole


def test_hint_suggests_the_closest_choice_in_its_own_spelling():
    assert hint("adamx", ("adamw", "sgd")) == " (did you mean 'adamw'?)"
    assert hint("ADAMW", ("AdamW", "sgd")) == " (did you mean 'AdamW'?)"  # case does not count, spelling kept
    assert hint("zzzz", ("adamw", "sgd")) == ""


def test_hint_knows_other_tools_spellings():
    assert hint("gpu", ("cpu", "cuda")) == " (did you mean 'cuda'?)"  # not the closer-looking 'cpu'
    assert hint("float16", ("fp16", "bf16", "fp32")) == " (did you mean 'fp16'?)"
    assert hint("FP16", ("float16", "bfloat16")) == " (did you mean 'float16'?)"
    assert hint("slurm", ("inprocess", "pool", "submitit")) == " (did you mean 'submitit'?)"


def test_choice_lists_the_choices_found_value_and_hint():
    assert choice("pol", ("inprocess", "pool")) == "expected one of inprocess, pool, found 'pol' (did you mean 'pool'?)"
    assert choice(3, (1, 2)) == "expected one of 1, 2, found 3"


# --- check_keys ----------------------------------------------------------------------------------------------------

def test_check_keys_names_the_first_unknown_key_with_a_hint():
    check_keys({"size": 1, "name": "x"}, ("size", "name", "seed"), "extra_data")  # all known: nothing raised
    err = _bad(lambda value, key: check_keys(value, ("size", "name"), key), {"size": 1, "szie": 2, "other": 3},
               key="extra_data")
    assert err.key == "extra_data.szie"
    assert err.message == "unknown key (did you mean 'size'?); expected size, name"


# --- scalar readers ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("value", "read"), [(3, 3), ("3", 3), (" -4 ", -4), (np.int64(5), 5)])
def test_read_integer(value, read):
    assert read_integer(value, "k") == read and type(read_integer(value, "k")) is int


@pytest.mark.parametrize(("value", "found"), [(3.0, "3.0"), (True, "true"), ("3.5", "'3.5'"), (None, "null")])
def test_read_integer_refuses_what_is_not_an_integer(value, found):
    err = _bad(read_integer, value, key="batch_size")
    assert (err.key, err.message) == ("batch_size", f"expected an integer, found {found}")
    assert err.args == ("batch_size", err.message)


@pytest.mark.parametrize(("value", "read"), [(2, 2.0), (0.5, 0.5), ("5e-5", 5e-5), (" 1E3 ", 1000.0), (".5", 0.5),
                                             ("-2.", -2.0)])
def test_read_number_takes_numbers_and_the_strings_yaml_leaves_unread(value, read):
    assert read_number(value, "lr") == read and type(read_number(value, "lr")) is float


@pytest.mark.parametrize(("value", "found"), [(True, "true"), ("fast", "'fast'"), ([1], "[1]"), (None, "null")])
def test_read_number_refuses_others(value, found):
    assert _bad(read_number, value, key="lr").message == f"expected a number, found {found}"


@pytest.mark.parametrize(("value", "read"), [(True, True), (False, False), ("yes", True), (" No ", False),
                                             ("TRUE", True), ("1", True), ("0", False)])
def test_read_boolean(value, read):
    assert read_boolean(value, "fp16") is read


@pytest.mark.parametrize(("value", "found"), [("maybe", "'maybe'"), (2, "2"), (None, "null")])
def test_read_boolean_refuses_others(value, found):
    assert _bad(read_boolean, value).message == f"expected true or false, found {found}"


@pytest.mark.parametrize("reader", [read_integer, read_number, read_boolean, read_string])
def test_an_optional_value_may_be_null(reader):
    assert reader(None, "k", optional=True) is None


def test_read_string_spells_numbers_as_written_and_refuses_empty_text():
    assert read_string("mbert", "model") == "mbert"
    assert read_string(5, "name") == "5" and read_string(1e-05, "name") == "1e-05"
    assert _bad(read_string, "", key="model").message == "expected a non-empty string, found ''"
    assert _bad(read_string, "   ").message == "expected a non-empty string, found ''"
    assert _bad(read_string, True).message == "expected a string, found true"
    assert _bad(read_string, None).message == "expected a string, found null"  # not optional
    assert _bad(read_string, ["a"]).message == "expected a string, found ['a']"


def test_read_mapping_takes_a_mapping_or_null_and_says_what_it_holds():
    assert read_mapping({"a": 1}, "executor", "of executor options") == {"a": 1}
    assert read_mapping(None, "executor", "of executor options") == {}
    err = _bad(lambda value, key: read_mapping(value, key, "of executor options"), [1, 2], key="executor")
    assert (err.key, err.message) == ("executor", "expected a mapping of executor options, found [1, 2]")


def test_as_list():
    assert as_list(None) == []
    assert as_list((1, 2)) == [1, 2] and as_list([3]) == [3]
    assert as_list("en") == ["en"]  # one item, not its characters
    assert as_list({"a": 1}) == [{"a": 1}]

