"""What a filler contributes to a sentence: its agreement key (gender or plural category) and its named forms."""

from diagnostics.behave._forms import agreement_key, form_of
from diagnostics.behave._specs import Filler


def test_agreement_key_is_the_gender_or_the_plural_category_of_a_number():
    assert agreement_key(Filler("Anna", gender="f"), "en") == "f"
    assert agreement_key(Filler("table"), "en") is None
    assert [agreement_key(Filler(None, value=n), "ru") for n in (1, 3, 5)] == ["one", "few", "many"]
    assert [agreement_key(Filler(None, value=n), "en") for n in (1, 3)] == ["one", "other"]


def test_form_of_prefers_listed_forms_then_inflects_russian():
    listed = Filler("Москва", gender="f", forms={"loct": "Москве (listed)", "adj": "московский"})
    assert form_of(listed, "loct", "ru") == "Москве (listed)" and form_of(listed, "adj", "ru") == "московский"
    assert form_of(listed, "text", "ru") == "Москва"
    assert form_of(listed, "gent", "ru") == "Москвы"  # not listed: pymorphy3
    assert form_of(Filler("книга"), "plur+datv", "ru") == "книгам"
    assert form_of(Filler("Moscow"), "gent", "en") is None  # only Russian inflects
    assert form_of(listed, "adjective", "ru") is None  # neither listed nor a grammeme
