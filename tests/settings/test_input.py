"""The one parser of settings as written (``diagnostics/settings/_input.py``): ``key=value`` overrides parsed as
YAML, dotted keys into nested mappings, YAML / TOML config files read with the line of every key, and every problem
named with the file and line, or the override, that caused it."""

from __future__ import annotations

import pytest

from diagnostics.core.yaml_lines import YAMLLineError
from diagnostics.settings import (ConfigError, ConfigSource, apply_overrides, override_items, override_key,
                                  read_settings, split_override, split_pair)
from diagnostics.settings._input import read_document, toml_key_lines

YAML = """\
lr: 0.1
seeds: [0, 1]
models:
  - path: a
  - path: b
extra_data:
  size: 5
  name: sick
executor:
  kind: pool
"""


@pytest.fixture
def config(tmp_path):
    path = tmp_path / "sweep.yaml"
    path.write_text(YAML, encoding="utf-8")
    return path


# --- split_pair / override_key / split_override ------------------------------------------------------------------

def test_split_pair_cuts_at_the_first_equals_and_strips_only_the_key():
    assert split_pair(" name = a=b ") == ("name", "=", " a=b ")
    assert split_pair("flag") == ("flag", "", "")
    assert override_key(" extra_data.size = 3") == "extra_data.size"
    assert override_key("novalue") == "novalue"


@pytest.mark.parametrize(("text", "parsed"), [
    ("seeds=[0, 1]", ("seeds", [0, 1])),
    (" size = 3", ("size", 3)),
    ("fp16=true", ("fp16", True)),
    ("name=a=b", ("name", "a=b")),            # only the first '=' separates
    ("extra_data={name: sick, size: 5}", ("extra_data", {"name": "sick", "size": 5})),
    ("model=", ("model", None)),              # an empty value is null
    ("model=   ", ("model", None)),
    ("lr=0.5", ("lr", 0.5)),
])
def test_split_override_parses_the_value_as_yaml(text, parsed):
    assert split_override(text) == parsed


@pytest.mark.parametrize(("text", "message"), [
    ("seeds", "--set seeds: expected key=value, found no '='"),
    ("=3", "--set =3: expected key=value, found an empty key"),
    ("  =3", "--set   =3: expected key=value, found an empty key"),
])
def test_split_override_refuses_text_that_is_not_key_value(text, message):
    with pytest.raises(ConfigError) as caught:
        split_override(text)
    assert str(caught.value) == message


def test_a_value_that_is_not_yaml_is_named_with_its_override():
    with pytest.raises(ConfigError) as caught:
        split_override("seeds=[0,")
    err = caught.value
    assert err.problems[0][0] == "seeds"
    assert str(err).startswith("--set seeds=[0,: seeds: expected a YAML value, found '[0,' (")
    assert err.source.overrides == (("seeds", "--set seeds=[0,"),)


# --- apply_overrides -----------------------------------------------------------------------------------------------

def test_overrides_win_and_leave_the_given_mapping_unchanged():
    values = {"lr": 0.1, "extra_data": {"size": 5, "name": "sick"}}
    out = apply_overrides(values, ["lr=0.5", "extra_data.size=500", "seeds=[3]"])
    assert out == {"lr": 0.5, "extra_data": {"size": 500, "name": "sick"}, "seeds": [3]}
    assert values == {"lr": 0.1, "extra_data": {"size": 5, "name": "sick"}}  # nested mapping copied, not edited


def test_overrides_as_a_mapping_or_pairs_are_taken_as_they_are():
    assert apply_overrides({"lr": 0.1}, {"lr": "5e-5"}) == {"lr": "5e-5"}  # not parsed again
    assert apply_overrides({}, [("a.b", [1])]) == {"a": {"b": [1]}}
    assert apply_overrides({"a": 1}, []) == {"a": 1}


def test_a_later_override_of_the_same_key_wins():
    assert apply_overrides({}, ["lr=1", "lr=2"]) == {"lr": 2}


def test_a_dotted_key_makes_the_mappings_it_needs():
    assert apply_overrides({"extra_data": None}, ["extra_data.size=3"]) == {"extra_data": {"size": 3}}
    assert apply_overrides({}, ["a.b.c=x"]) == {"a": {"b": {"c": "x"}}}


def test_a_dotted_key_through_a_value_that_is_not_a_mapping_is_refused():
    with pytest.raises(ConfigError) as caught:
        apply_overrides({"lr": 0.1}, ["lr.x=1"])
    assert caught.value.problems == [("lr.x", "expected 'lr' to be a mapping to set lr.x, found 0.1")]
    with pytest.raises(ConfigError, match=r"expected 'seeds' to be a mapping to set seeds\.n, found \[0, 1\]"):
        apply_overrides({"seeds": [0, 1]}, [("seeds.n", 2)])


# --- override_items ------------------------------------------------------------------------------------------------

def test_override_items_say_how_each_value_was_given():
    assert override_items(["lr=0.5", "seeds=[1]"]) == [("lr", 0.5, "--set lr=0.5"), ("seeds", [1], "--set seeds=[1]")]
    assert override_items({"lr": 0.5}) == [("lr", 0.5, None)]  # set by code: no label


def test_a_bad_override_is_named_with_the_config_file():
    source = ConfigSource("sweep.yaml")
    with pytest.raises(ConfigError) as caught:
        override_items(["lr=0.5", "seeds=[0,"], source)
    assert str(caught.value).startswith("sweep.yaml (--set seeds=[0,): seeds: expected a YAML value, found '[0,'")
    with pytest.raises(ConfigError) as caught:
        override_items(["seeds"], source)  # no key to locate: the file names it
    assert str(caught.value) == "sweep.yaml: --set seeds: expected key=value, found no '='"


# --- read_settings: YAML -----------------------------------------------------------------------------------------

def test_read_settings_returns_plain_values_and_the_line_of_every_key(config):
    values, source = read_settings(config)
    assert values == {"lr": 0.1, "seeds": [0, 1], "models": [{"path": "a"}, {"path": "b"}],
                      "extra_data": {"size": 5, "name": "sick"}, "executor": {"kind": "pool"}}
    assert type(values) is dict and type(values["extra_data"]) is dict and type(values["models"]) is list
    assert source.path == str(config)
    assert source.where("lr") == f"{config}:1"
    assert source.where("seeds[1]") == f"{config}:2"
    assert source.where("models[1].path") == f"{config}:5"
    assert source.where("extra_data.name") == f"{config}:8"


def test_overrides_win_over_the_file_and_are_named_as_given(config):
    values, source = read_settings(config, ["lr=0.5", "extra_data.size=500", "new_key=1"])
    assert values["lr"] == 0.5 and values["extra_data"] == {"size": 500, "name": "sick"} and values["new_key"] == 1
    assert source.where("lr") == f"{config} (--set lr=0.5)"
    assert source.where("extra_data.size") == f"{config} (--set extra_data.size=500)"
    assert source.where("extra_data.name") == f"{config}:8"  # a sibling the override left alone keeps its line
    assert read_settings(config)[0]["lr"] == 0.1  # the file itself is untouched


def test_ignored_sections_are_left_out(config):
    values, _ = read_settings(config, ignore=("executor", "models"))
    assert set(values) == {"lr", "seeds", "extra_data"}


def test_a_bad_override_of_a_file_names_the_file_and_the_override(config):
    with pytest.raises(ConfigError) as caught:
        read_settings(config, ["lr.x=1"])
    assert str(caught.value) == f"{config} (--set lr.x=1): lr.x: expected 'lr' to be a mapping to set lr.x, found 0.1"
    with pytest.raises(ConfigError) as caught:
        read_settings(config, ["seeds=[0,"])
    assert str(caught.value).startswith(f"{config} (--set seeds=[0,): seeds: expected a YAML value")


def test_invalid_yaml_names_the_file_and_a_line_inside_it(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("lr: 0.1\nseeds: [0, 1\n", encoding="utf-8")  # unclosed at the end of the file
    with pytest.raises(YAMLLineError) as caught:
        read_settings(path)
    assert caught.value.line == 2  # the parser's "end of stream" line 3 does not exist: the last line is named
    assert str(caught.value).startswith(f"{path}:2: invalid YAML: ")
    path.write_text("a: 1\n  b: 2\nc: 3\n", encoding="utf-8")
    with pytest.raises(YAMLLineError) as caught:
        read_document(path)
    assert caught.value.line == 2


@pytest.mark.parametrize(("text", "found"), [("- 1\n- 2\n", "[1, 2]"), ("just text\n", "'just text'")])
def test_a_top_level_that_is_not_a_mapping_is_refused_at_line_1(tmp_path, text, found):
    path = tmp_path / "list.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        read_settings(path)
    assert str(caught.value) == f"{path}:1: expected a mapping of config keys at the top level, found {found}"


def test_an_empty_file_is_an_empty_config(tmp_path):
    path = tmp_path / "empty.yaml"
    path.write_text("# nothing set\n", encoding="utf-8")
    assert read_settings(path, ["lr=1"])[0] == {"lr": 1}


def test_a_missing_file_or_a_folder_is_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.yaml does not exist"):
        read_settings(tmp_path / "nope.yaml")
    with pytest.raises(IsADirectoryError, match="is a folder, not a file"):
        read_settings(tmp_path)


# --- read_settings: TOML -----------------------------------------------------------------------------------------

TOML = """\
lr = 0.1
seeds = [0, 1]

[extra_data]
size = 5
name = "sick"
"""


def test_toml_key_lines_name_every_key_and_table(tmp_path):
    path = tmp_path / "sweep.toml"
    path.write_text(TOML, encoding="utf-8")
    assert toml_key_lines(path) == {"lr": 1, "seeds": 2, "extra_data": 4, "extra_data.size": 5,
                                    "extra_data.name": 6}


def test_a_toml_file_is_read_with_its_lines_and_overrides_win(tmp_path):
    path = tmp_path / "sweep.toml"
    path.write_text(TOML, encoding="utf-8")
    values, source = read_settings(path, ["extra_data.size=50"])
    assert values == {"lr": 0.1, "seeds": [0, 1], "extra_data": {"size": 50, "name": "sick"}}
    assert source.where("lr") == f"{path}:1"
    assert source.where("extra_data.name") == f"{path}:6"
    assert source.where("seeds[1]") == f"{path}:2"  # an item: the line of its key
    assert source.where("extra_data.size") == f"{path} (--set extra_data.size=50)"


def test_invalid_toml_names_the_file_and_line(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text("lr = 0.1\nseeds = = 2\n", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        read_settings(path)
    assert str(caught.value).startswith(f"{path}:2: invalid TOML: ")
    assert "(at line" not in str(caught.value)  # the parser's own location is not repeated
