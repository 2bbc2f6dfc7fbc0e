"""The lexicon and the typed slots of a template file, parsed with file:line errors."""

import pytest

from diagnostics.behave import TemplateError
from diagnostics.behave._lexicons import parse_lexicons, parse_slots
from diagnostics.behave._specs import Filler, SlotSpec
from diagnostics.behave._yamllines import load_yaml


def _yaml(tmp_path, text):
    path = tmp_path / "t.yaml"
    path.write_text(text, encoding="utf-8")
    return path, load_yaml(path)


LEXICON = """lexicon:
  name:
    - Ann
    - {text: Bob, gender: m, tags: [short], gent: "Bob's"}
    - {plural: cities}
"""


def test_entries_are_strings_or_mappings_of_text_gender_tags_and_forms(tmp_path):
    path, raw = _yaml(tmp_path, LEXICON)
    (name,) = parse_lexicons(path, raw["lexicon"]).values()
    assert name == [Filler("Ann"), Filler("Bob", gender="m", tags=("short",)), Filler(None)]
    assert name[1].forms == {"gent": "Bob's"} and name[2].surface == "cities"


@pytest.mark.parametrize("old,new,line,needle", [
    ("- Ann", "- ''", 3, "a non-empty lexicon entry"),
    ("gender: m", "gender: x", 4, "gender in {m, f, n}"),
    ("tags: [short]", "tags: short", 4, "tags as a list of strings"),
    ('gent: "Bob\'s"', "gen-t: x", 4, "a form name (letters, digits, _ +)"),
    ("{plural: cities}", "{gender: f}", 5, "an entry with text or at least one named form"),
    ("  name:\n", "  9name:\n", 2, "a lexicon name"),
])
def test_a_malformed_entry_names_its_line(tmp_path, old, new, line, needle):
    path, raw = _yaml(tmp_path, LEXICON.replace(old, new))
    with pytest.raises(TemplateError) as err:
        parse_lexicons(path, raw["lexicon"])
    assert str(err.value).startswith(f"{path}:{line}: expected") and needle in str(err.value)


def test_slots_from_lexicons_with_filters_and_integer_ranges(tmp_path):
    path, raw = _yaml(tmp_path, LEXICON + "slots:\n  a: name\n  b: {from: name, where: {gender: m}}\n"
                                          "  n: {int: [2, 9]}\n  m: {int: [1, n-1]}\n")
    lexicons = parse_lexicons(path, raw["lexicon"])
    slots = parse_slots(path, raw["slots"], 6, lexicons)
    assert slots == {"a": SlotSpec("a", lexicon="name"), "b": SlotSpec("b", lexicon="name", where=(("gender", "m"),)),
                     "n": SlotSpec("n", bounds=(2, 9)), "m": SlotSpec("m", bounds=(1, ("n", -1)))}


@pytest.mark.parametrize("slots,needle", [
    ("a: nope", "a lexicon defined in this file (name)"),
    ("a: {from: name, where: {gender: f}}", "at least one entry of 'name' matching {'gender': 'f'}"),
    ("a: {from: name, size: 2}", "slot keys from / where / int"),
    ("m: {int: [1, n+1]}", "an integer or '<earlier int slot> +/- k' (int slots so far: [])"),
    ("m: {int: [1]}", "{int: [lo, hi]}"),
    ("m: {int: [true, 3]}", "an integer bound"),
])
def test_a_malformed_slot_names_its_line(tmp_path, slots, needle):
    path, raw = _yaml(tmp_path, LEXICON + "slots:\n  " + slots + "\n")
    with pytest.raises(TemplateError) as err:
        parse_slots(path, raw["slots"], 6, parse_lexicons(path, raw["lexicon"]))
    assert str(err.value).startswith(f"{path}:7: expected") and needle in str(err.value)
