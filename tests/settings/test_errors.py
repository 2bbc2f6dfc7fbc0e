"""Where settings came from and what is wrong with them (``diagnostics/settings/_errors.py``): a
:class:`ConfigError` holds every problem, one line each, named with the file and line of its key
(:class:`ConfigSource`), or with the ``--set`` override that set it, on one line."""

from __future__ import annotations

import pytest

from diagnostics.core.errors import UserInputError
from diagnostics.core.yaml_lines import load_yaml_lines
from diagnostics.settings import ConfigError, ConfigSource

YAML = """\
lr: 0.1
models:
  - path: a
  - path: b
    name: second
extra_data:
  size: 5
"""


@pytest.fixture
def source(tmp_path):
    path = tmp_path / "sweep.yaml"
    path.write_text(YAML, encoding="utf-8")
    return ConfigSource(str(path), load_yaml_lines(path))


def test_without_a_source_each_problem_is_key_and_message():
    err = ConfigError([("lr", "expected a number, found 'x'"), ("", "no models")])
    assert err.lines() == ["lr: expected a number, found 'x'", "no models"]
    assert str(err) == "lr: expected a number, found 'x'; no models"  # all problems on one line
    assert isinstance(err, UserInputError) and err.source is None


def test_each_problem_is_named_with_the_line_of_its_key(source):
    err = ConfigError([("lr", "expected a number"), ("models[1].name", "unknown"), ("extra_data.size", "too big")],
                      source)
    path = source.path
    assert err.lines() == [f"{path}:1: lr: expected a number", f"{path}:5: models[1].name: unknown",
                           f"{path}:7: extra_data.size: too big"]
    assert str(err) == "; ".join(err.lines())


def test_a_key_missing_from_the_file_takes_the_line_of_its_deepest_known_parent(source):
    assert source.where("extra_data.colour") == f"{source.path}:6"
    assert source.where("models[7].path") == f"{source.path}:2"  # no item 7: the list's key
    assert source.where("nowhere") == source.path  # nothing known: the file alone
    assert source.where("") == source.path  # the whole file


def test_a_problem_with_the_whole_file_names_the_file_only(source):
    assert ConfigError([("", "expected a mapping")], source).lines() == [f"{source.path}: expected a mapping"]


def test_an_override_is_named_instead_of_the_file_line(source):
    located = source.with_overrides([("lr", "--set lr=x"), ("extra_data", "--set extra_data={size: 1}")])
    assert located.where("lr") == f"{source.path} (--set lr=x)"
    assert located.where("extra_data.size") == f"{source.path} (--set extra_data={{size: 1}})"  # under it
    assert located.where("models[0].path") == f"{source.path}:3"  # not overridden: still the file's line
    err = ConfigError([("lr", "expected a number, found 'x'")], located)
    assert str(err) == f"{source.path} (--set lr=x): lr: expected a number, found 'x'"


def test_an_override_below_a_key_names_the_key_too(source):
    located = source.with_overrides([("extra_data.size", "--set extra_data.size=9")])
    assert located.where("extra_data") == f"{source.path} (--set extra_data.size=9)"
    assert located.where("extra_data_other") == source.path  # a longer name is not below it


def test_an_item_of_an_overridden_list_names_the_override():
    source = ConfigSource(overrides=(("models", "--set models=[{path: a}]"),))
    assert source.where("models[0].path") == "--set models=[{path: a}]"  # no file: the override alone


def test_the_latest_override_of_a_key_is_named(source):
    located = source.with_overrides([("lr", "--set lr=1")]).with_overrides([("lr", "--set lr=2")])
    assert located.overrides == (("lr", "--set lr=1"), ("lr", "--set lr=2"))
    assert located.where("lr") == f"{source.path} (--set lr=2)"
    assert source.overrides == ()  # with_overrides returns a new source


def test_a_value_set_by_code_is_named_nowhere(source):
    located = source.with_overrides([("lr", None)])
    assert located.where("lr") is None  # not the file's line: the file's value is not the one that failed
    assert ConfigError([("lr", "bad")], located).lines() == ["lr: bad"]


def test_toml_key_lines_stand_in_for_line_aware_containers():
    source = ConfigSource("sweep.toml", {"extra_data": {"size": 5}}, key_lines={"extra_data": 4, "extra_data.size": 5})
    assert source.where("extra_data.size") == "sweep.toml:5"
    assert source.where("extra_data.name") == "sweep.toml:4"  # unknown key: its table's line
    assert source.where("lr") == "sweep.toml"


def test_located_names_the_problems_with_a_source_once():
    bare = ConfigError([("lr", "bad")])
    first, second = ConfigSource("a.yaml"), ConfigSource("b.yaml")
    located = bare.located(first)
    assert located is not bare and located.problems == bare.problems and str(located) == "a.yaml: lr: bad"
    assert located.located(second) is located  # already located: kept
    assert bare.located(None) is bare
