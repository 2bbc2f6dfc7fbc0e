"""The two settings of the report's comparison section, found from --compare-a / --compare-b selections; every
selection that names no setting, several, the same one twice or two diagnostic sets is refused in one line."""

from __future__ import annotations

import pytest

from diagnostics.core.errors import UserInputError
from diagnostics.report._explorer_compare import resolve_pair

PAYLOAD = {"keys": ["experiment", "language", "model"],
           "datasets": [{"name": "axb"}, {"name": "lidirus"}],
           "settings": [{"experiment": "base", "language": "en", "model": "m", "dataset": 0},
                        {"experiment": "extra-1000", "language": "en", "model": "m", "dataset": 0},
                        {"experiment": "base", "language": "ru", "model": "m", "dataset": 1},
                        {"experiment": "extra-1000", "language": "ru", "model": "m", "dataset": 1}]}


def test_the_selections_name_two_settings_of_one_set():
    pair = resolve_pair(PAYLOAD, {"experiment": "base", "language": "en"}, {"experiment": "extra-1000",
                                                                              "dataset": "axb"})
    assert pair == {"a": 0, "b": 1, "names": ["base", "extra-1000"]}  # named by what tells them apart
    named = resolve_pair(PAYLOAD, {"language": "ru", "experiment": "extra-1000"}, {"language": "ru",
                                                                                 "experiment": "base"}, ("B", "A"))
    assert named == {"a": 3, "b": 2, "names": ["B", "A"]}


@pytest.mark.parametrize("select_a,select_b,needle", [
    ({"seed": 1}, {"language": "en"}, "--compare-a seed=...: the explorer's settings have no key 'seed'"),
    ({"experiment": "extra-5"}, {"language": "en"}, "--compare-a experiment=extra-5: no setting matches"),
    ({"experiment": "base", "language": "en"}, {"experiment": "base"}, "--compare-b experiment=base: 2 settings match"),
    ({"experiment": "base", "language": "en"}, {"language": "en", "experiment": "base"}, "name the same setting"),
    ({"experiment": "base", "language": "en"}, {"experiment": "base", "language": "ru"},
     "--compare-a is on axb and --compare-b on lidirus"),
])
def test_a_selection_that_does_not_name_one_comparable_setting_is_refused(select_a, select_b, needle):
    with pytest.raises(UserInputError) as err:
        resolve_pair(PAYLOAD, select_a, select_b)
    assert needle in str(err.value) and "\n" not in str(err.value)
