"""A setting declares its nature on its field: ``setting(in_run_hash=..., hashed_when_set=..., unset_value=...,
derived_from=..., per_run=..., recipe=...)``; :func:`fields_declaring` and :func:`unset_values` list the fields of
each nature, and a settings class derives again, on an override, what its fields say they derive from."""

from __future__ import annotations

import pytest

from diagnostics.settings import NATURES, Settings, describe_settings, fields_declaring, setting, unset_values


class Toy(Settings, frozen=True):
    """A settings class with one field of each nature."""

    name: str = setting("toy", in_run_hash=False, per_run=True, help="Where it goes.")
    size: int = setting(4, help="A plain setting.")
    mode: str = setting("a", hashed_when_set=True, help="Added later.")
    head: str | None = setting(None, hashed_when_set=True, unset_value="plain", derived_from=("mode",),
                               recipe="b", help="Derived from the mode.")
    items: list[int] = setting(factory=lambda: [1, 2], per_run=True, help="A list.")

    def _derive(self) -> list[tuple[str, str]]:
        if self.head is None:
            object.__setattr__(self, "head", "plain" if self.mode == "a" else "fancy")
        return []


def test_a_plain_setting_declares_nothing():
    assert all("size" not in fields_declaring(Toy, nature) for nature in NATURES)
    assert set(NATURES) == {"in_run_hash", "hashed_when_set", "derived_from", "per_run", "recipe"}


def test_fields_of_each_nature_in_declaration_order():
    assert fields_declaring(Toy, "in_run_hash") == {"name": False}
    assert fields_declaring(Toy, "hashed_when_set") == {"mode": True, "head": True}
    assert fields_declaring(Toy, "derived_from") == {"head": frozenset({"mode"})}
    assert list(fields_declaring(Toy, "per_run")) == ["name", "items"]
    assert fields_declaring(Toy, "recipe") == {"head": "b"}
    with pytest.raises(KeyError):
        fields_declaring(Toy, "colour")


def test_unset_values_are_the_defaults_unless_declared():
    assert unset_values(Toy) == {"name": "toy", "size": 4, "mode": "a", "head": "plain", "items": [1, 2]}
    assert list(unset_values(Toy, ["head", "mode"]).items()) == [("head", "plain"), ("mode", "a")]
    assert Toy().head == unset_values(Toy)["head"]  # what it holds when nobody sets it


def test_the_class_derives_again_what_its_fields_derive_from():
    assert Toy._derived == {"head": frozenset({"mode"})}
    toy = Toy()
    assert toy.with_overrides(["mode=z"]).head == "fancy"  # derived again from the new mode
    assert toy.with_overrides(["mode=z", "head=own"]).head == "own"


def test_contradicting_or_unknown_natures_are_refused_when_declared():
    with pytest.raises(ValueError, match="hashed_when_set=True needs in_run_hash=True"):
        setting(1, in_run_hash=False, hashed_when_set=True, help="x")
    with pytest.raises(TypeError, match=r"derived_from names no field of the class: \{'b': \['c'\]\}"):
        class Broken(Settings):
            """Derives from a field it lacks."""

            b: int | None = setting(None, derived_from=("c",), help="x")


def test_the_description_names_each_nature():
    rows = {row["key"]: row for row in describe_settings(Toy)}
    assert rows["size"]["nature"] == "" and rows["size"]["help"] == "A plain setting."
    assert rows["name"]["nature"] == "not in the run hash; each run of a fused group keeps its own"
    assert rows["head"]["nature"] == "in the run hash only when not `plain`; derived from `mode` when unset; " \
                                     "only with `recipe: b`"
    assert rows["head"]["help"] == "Derived from the mode. *In the run hash only when not `plain`; derived from " \
                                   "`mode` when unset; only with `recipe: b`.*"
