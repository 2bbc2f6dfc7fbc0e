"""Template sentences filled from the fillers bound to their slots: text, numbers, forms, agreement and choices."""

import pytest

from diagnostics.behave import TemplateError
from diagnostics.behave._rendering import render
from diagnostics.behave._specs import Filler

ANNA = Filler("Анна", gender="f", tags=("person",))
IVAN = Filler("Иван", gender="m")


def test_text_numbers_forms_and_agreement():
    assignment = {"a": ANNA, "b": IVAN, "n": Filler(None, value=3), "c": Filler("город", forms={"f": "городская"})}
    assert render("{a} дала {b.datv} {n} {n|one:книгу|few:книги|many:книг}.", assignment, "ru") == \
        "Анна дала Ивану 3 книги."
    assert render("{a|m:он|f:она} и {b|m:он|f:она}", assignment, "ru") == "она и он"
    assert render("{c.@a}", assignment, "ru") == "городская"  # the form named by a's gender
    assert render("{a|robot:it|person:they}", assignment, "en") == "they"  # a tag of the filler
    assert render("{b|f:she|other:someone}", assignment, "en") == "someone"


def test_a_missing_form_or_choice_names_file_and_line():
    assignment = {"a": Filler("table"), "b": Filler(None, forms={"plural": "tables"})}
    with pytest.raises(TemplateError, match=r"t\.yaml:4: expected form 'gent' of 'table' in \{a\.gent\}"):
        render("{a.gent}", assignment, "en", path="t.yaml", line=4)
    with pytest.raises(TemplateError, match=r"t\.yaml:5: expected a choice for \[None\] \(or 'other'\)"):
        render("{a|m:he|f:she}", assignment, "en", path="t.yaml", line=5)
    with pytest.raises(TemplateError, match=r"expected text for \{b\}"):
        render("{b}", assignment, "en")
