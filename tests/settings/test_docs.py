"""Settings described for people (``diagnostics/settings/_docs.py``): every field of a settings class in declaration
order with its type, default spelt as ``--set`` would take it, allowed values, nature and help as Markdown."""

from __future__ import annotations

import dataclasses

import pytest

from diagnostics.settings import Settings, describe_settings, setting
from diagnostics.settings._docs import spelled


@dataclasses.dataclass(frozen=True)
class Data:
    """A nested value (a plain dataclass) used as a default."""

    name: str = "sick"
    size: int | None = None
    split: str = "train"


class Toy(Settings, frozen=True):
    """Fields of every kind the description spells."""

    path: str = setting(help="Where the data is; see :func:`~diagnostics.data.load` and ``--data``.")
    lr: float = setting(2e-05, check=(lambda v: v > 0, "a number > 0"), help="Peak learning rate.")
    device: str = setting("cuda", choices=("cpu", "cuda", "mps"), help="Where to train.")
    fp16: bool = setting(False, help="Half precision.")
    languages: list[str] = setting(factory=lambda: ["en", "ru"], per_run=True, help="Languages, one run each.")
    extra: Data = setting(Data(), in_run_hash=False, help="Extra data.")
    mapping: dict = setting(factory=lambda: {"a": 1, "b": [True, None]}, help="A mapping.")
    note: str | None = setting(None, hashed_when_set=True, help="Added later.")
    schedule: str | None = setting(None, hashed_when_set=True, unset_value="linear", derived_from=("lr", "device"),
                                   recipe="jiant", help="The schedule, see :class:`Toy`.")
    built: int = dataclasses.field(default=0, init=False)  # not a setting: left out

    def _derive(self) -> list[tuple[str, str]]:
        if self.schedule is None:
            object.__setattr__(self, "schedule", "linear")
        return []


@pytest.fixture(scope="module")
def rows():
    return {row["key"]: row for row in describe_settings(Toy)}


def test_one_row_per_setting_in_declaration_order_with_the_same_columns():
    rows = describe_settings(Toy)
    assert [row["key"] for row in rows] == ["path", "lr", "device", "fp16", "languages", "extra", "mapping", "note",
                                            "schedule"]  # ``built`` (init=False) is no setting
    assert all(list(row) == ["key", "type", "default", "allowed", "nature", "help"] for row in rows)


def test_defaults_are_spelt_as_a_set_value_would_be(rows):
    assert rows["path"]["default"] == ""  # required
    assert rows["lr"]["default"] == "2e-05"
    assert rows["fp16"]["default"] == "false"
    assert rows["languages"]["default"] == "[en, ru]"  # made by the factory
    assert rows["extra"]["default"] == "{name: sick, split: train}"  # a dataclass: its fields that are set
    assert rows["mapping"]["default"] == "{a: 1, b: [true, null]}"
    assert rows["note"]["default"] == "null"


def test_allowed_values_are_the_choices_or_the_checks_words(rows):
    assert rows["device"]["allowed"] == "cpu | cuda | mps"
    assert rows["lr"]["allowed"] == "a number > 0"
    assert rows["fp16"]["allowed"] == ""


def test_the_type_is_the_fields_annotation(rows):
    assert rows["lr"]["type"] == "float" and rows["note"]["type"] == "str | None"
    assert rows["languages"]["type"] == "list[str]"


def test_docstring_markup_becomes_markdown_code_spans(rows):
    assert rows["path"]["help"] == "Where the data is; see `diagnostics.data.load` and `--data`."
    assert rows["path"]["nature"] == ""  # a plain setting: nothing said after the help


def test_the_nature_is_said_in_words_and_in_italics_after_the_help(rows):
    assert rows["languages"]["nature"] == "each run of a fused group keeps its own"
    assert rows["languages"]["help"] == "Languages, one run each. *Each run of a fused group keeps its own.*"
    assert rows["extra"]["nature"] == "not in the run hash"
    assert rows["note"]["nature"] == "in the run hash only when not `null`"
    assert rows["schedule"]["nature"] == ("in the run hash only when not `linear`; derived from `device`, `lr` when "
                                          "unset; only with `recipe: jiant`")  # sources sorted, not as declared
    assert rows["schedule"]["help"] == ("The schedule, see `Toy`. *In the run hash only when not `linear`; derived "
                                        "from `device`, `lr` when unset; only with `recipe: jiant`.*")


@pytest.mark.parametrize(("value", "text"), [
    (None, "null"), (True, "true"), (0.1, "0.1"), (1e-05, "1e-05"), (3, "3"), ("en", "en"),
    ((1, "a"), "[1, a]"), ([], "[]"), ({}, "{}"), ({"k": [None]}, "{k: [null]}"),
    (Data(size=5), "{name: sick, size: 5, split: train}"),
])
def test_spelled(value, text):
    assert spelled(value) == text
