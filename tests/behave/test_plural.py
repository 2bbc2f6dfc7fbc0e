"""CLDR plural categories of the numbers a template agrees with."""

import pytest

from diagnostics.behave._plural import plural_category


@pytest.mark.parametrize("n,expected", [(1, "one"), (2, "few"), (5, "many"), (11, "many"), (21, "one"),
                                        (22, "few"), (112, "many")])
def test_russian_plural_categories(n, expected):
    assert plural_category("ru", n) == expected


def test_plural_categories_other_languages():
    assert [plural_category("en", n) for n in (0, 1, 2)] == ["other", "one", "other"]
    assert [plural_category("fr", n) for n in (0, 1, 2)] == ["one", "one", "other"]
    with pytest.raises(ValueError, match="no plural rules"):
        plural_category("xx", 1)
