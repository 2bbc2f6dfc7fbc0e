"""Option values several commands read alike: repeated KEY=VALUE items and comma-separated integers."""

import pytest

from diagnostics.cli._options import int_list, key_values
from diagnostics.core.errors import UserInputError


def test_key_values_keep_equals_signs_and_commas_in_the_value_and_the_last_item_wins():
    items = ["label = gold", "filter=a=b,c", "label=answer"]
    assert key_values(items, "--map") == {"label": "answer", "filter": "a=b,c"}
    assert key_values([], "--map") == {}


@pytest.mark.parametrize("item", ["label", "=gold", "label=", "label=  "])
def test_key_values_refuse_an_item_without_key_or_value(item):
    with pytest.raises(UserInputError, match=rf"^--map '{item}': expected COLUMN=NAME$"):
        key_values([item], "--map", expected="COLUMN=NAME")


def test_int_list_reads_comma_separated_integers():
    assert int_list("0, 1,2,,", "--seeds") == [0, 1, 2] and int_list("-3", "--seeds") == [-3]
    assert int_list(None, "--seeds") is None and int_list("", "--seeds") == []
    with pytest.raises(UserInputError, match=r"--seeds '0,x': expected integers separated by commas"):
        int_list("0,x", "--seeds")
