"""Named entities, relative clauses and morphological negation read off one sentence (en, ru), and their pair
readings: hand-written sentences, each a positive or a negative of one detector.

A sentence is annotated as a pair with itself under the presence reading, so a feature is found exactly when the
sentence shows it.
"""

import pandas as pd
import pytest

from diagnostics.annotate import annotate

pytest.importorskip("spacy")

POSITIVE = {
    "en": [
        ("Named entities", "John lives in Paris."),
        ("Named entities", "Microsoft opened an office in Berlin."),
        ("Relative clauses", "The man who lives next door is a doctor."),
        ("Relative clauses", "The book which she bought was expensive."),
        ("Morphological negation", "The new gaming console is unaffordable."),
        ("Morphological negation", "It is illegal to park here."),
        ("Morphological negation", "Many people in the city are homeless."),
        ("Morphological negation", "The task was impossible."),
    ],
    "ru": [
        ("Named entities", "Москва — столица России."),
        ("Named entities", "Иван Петров работает в Газпроме."),
        ("Relative clauses", "Человек, который поёт, мой брат."),
        ("Relative clauses", "Это город, где он родился."),
        ("Morphological negation", "Новая игровая консоль недоступна по цене."),
        ("Morphological negation", "Эта сделка незаконна."),
        ("Morphological negation", "Вход на выставку бесплатный."),
    ],
}
NEGATIVE = {
    "en": [
        ("Named entities", "The dog sleeps on the sofa."),
        ("Relative clauses", "He said that she left early."),
        ("Relative clauses", "I wonder who called."),
        # the prefix is not a negation (under, interest), the word is not "not <base>" (immediate), or in- / dis-
        # make a verb or a noun (discover, income)
        ("Morphological negation", "The cat hid under the table."),
        ("Morphological negation", "She has an interest in art."),
        ("Morphological negation", "The effect was immediate."),
        ("Morphological negation", "They discovered a new island."),
        ("Morphological negation", "Their income doubled."),
    ],
    "ru": [
        ("Named entities", "Кошка спит на ковре."),
        ("Named entities", "Вчера весь день шёл дождь."),
        ("Relative clauses", "Он знает, что Земля круглая."),
        ("Relative clauses", "Где ты живёшь?"),
        ("Morphological negation", "Нет времени."),
        ("Morphological negation", "Некоторые студенты пришли."),
        ("Morphological negation", "Прошла неделя."),
        ("Morphological negation", "Он немедленно ушёл."),
    ],
}
PAIRS = {
    # (feature, premise, hypothesis, found in the pair reading)
    "en": [
        ("Morphological negation", "The console is unaffordable.", "The console is affordable.", True),
        # a negated word alone is no minimal pair: the pair reading asks for its base on the other side
        ("Morphological negation", "The console is unaffordable.", "The console is cheap.", False),
        ("Named entities", "The meeting took place in Paris.", "The meeting took place in Berlin.", True),
        ("Relative clauses", "The man who sings is my brother.", "The man is my brother.", True),
    ],
    "ru": [
        ("Morphological negation", "Консоль недоступна по цене.", "Консоль доступна по цене.", True),
        ("Morphological negation", "Консоль недоступна по цене.", "Консоль дорогая.", False),
        ("Named entities", "Встреча прошла в Москве.", "Встреча прошла в Берлине.", True),
        # one entity in two cases (Москве / Москву) is the same entity: no swap
        ("Named entities", "Анна была в Москве.", "Анна любит Москву.", False),
        ("Relative clauses", "Город, где он родился, большой.", "Город большой.", True),
    ],
}


def _needs_backend(lang: str) -> None:
    if lang == "ru":  # the Russian entity recogniser
        pytest.importorskip("slovnet")
        pytest.importorskip("navec")


@pytest.fixture(scope="module")
def present():
    """Features found in each hand-written sentence (presence reading), per language: sentence -> features."""
    out = {}
    for lang in ("en", "ru"):
        _needs_backend(lang)
        sentences = [s for _, s in POSITIVE[lang] + NEGATIVE[lang]]
        frame = annotate(pd.DataFrame({"premise": sentences, "hypothesis": sentences}), lang, presence=True)
        out[lang] = dict(zip(sentences, frame["auto_features"]))
    return out


@pytest.mark.parametrize("lang,feature,sentence",
                         [pytest.param(lang, *case, id=f"{lang}-{case[0]}-{i}")
                          for lang, cases in POSITIVE.items() for i, case in enumerate(cases)])
def test_detector_finds_the_feature_in_one_sentence(present, lang, feature, sentence):
    assert feature in present[lang][sentence], (sentence, present[lang][sentence])


@pytest.mark.parametrize("lang,feature,sentence",
                         [pytest.param(lang, *case, id=f"{lang}-{case[0]}-{i}")
                          for lang, cases in NEGATIVE.items() for i, case in enumerate(cases)])
def test_detector_does_not_fire_without_the_feature(present, lang, feature, sentence):
    assert feature not in present[lang][sentence], (sentence, present[lang][sentence])


@pytest.mark.parametrize("lang", ["en", "ru"])
def test_pair_readings_of_the_new_detectors(lang):
    _needs_backend(lang)
    cases = PAIRS[lang]
    frame = annotate(pd.DataFrame([(p, h) for _, p, h, _ in cases], columns=["premise", "hypothesis"]), lang)
    for (feature, premise, hypothesis, expected), found in zip(cases, frame["auto_features"]):
        assert (feature in found) == expected, (premise, hypothesis, list(found))
