"""Russian inflection of lexicon entries (pymorphy3): the requested case and number, capitalisation kept."""

from diagnostics.behave._inflect import _restore_case, inflect_ru


def test_names_cities_and_nouns_inflect_to_the_requested_grammemes():
    assert inflect_ru("Анна", ("gent",), "f") == "Анны"
    assert inflect_ru("Иван", ("datv",), "m") == "Ивану"
    assert inflect_ru("Санкт-Петербург", ("loct",)) == "Санкт-Петербурге"  # each hyphenated part keeps its capital
    assert inflect_ru("книга", ("plur", "ablt")) == "книгами"


def test_what_cannot_be_inflected_is_none():
    assert inflect_ru("Новая Зеландия", ("gent",)) is None  # phrases are listed as forms in the lexicon
    assert inflect_ru("быстро", ("gent",)) is None  # no noun reading


def test_restore_case_copies_the_capitals_of_each_part():
    assert _restore_case("Санкт-Петербург", "санкт-петербурге") == "Санкт-Петербурге"
    assert _restore_case("Анна", "анны") == "Анны" and _restore_case("книга", "книги") == "книги"
    assert _restore_case("Нью-Йорк", "нью йорке") == "Нью йорке"  # parts that no longer match: the first letter only
