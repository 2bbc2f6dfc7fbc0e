"""Template files: hand-checked grammar per language, and strict errors with file:line."""

from pathlib import Path

import pytest

from diagnostics.behave import TemplateError, available_languages, load_templates
from diagnostics.behave._generate import generate_suite, render_with
from diagnostics.core.taxonomy import FINE

LANGUAGES = ["en", "ru", "fr", "de", "sv"]

# (language, test, fillers, expected premise, expected hypothesis), each checked by hand.
GRAMMAR = [
    ("en", "negation_mft", dict(a="Anna", p="engineer"), "Anna is not an engineer.", "Anna is an engineer."),
    ("en", "negation_contrast_mft", dict(a="John", p="doctor", q="architect"),
     "John is a doctor, not an architect.", "John is not an architect."),
    ("en", "active_passive_mft", dict(a="Mary", b="John", v="saw"), "Mary saw John.", "John was seen by Mary."),
    ("en", "numbers_more_mft", dict(a="Peter", x="book", n=3, m=2), "Peter bought 3 books.",
     "Peter bought more than 2 books."),
    ("en", "negation_universal_dir", dict(a="Emma", g="guests", c="Rome", x="bought a ticket"),
     "All the guests in Rome bought a ticket. Emma is one of the guests.", "Emma did not buy a ticket."),
    # Russian: case endings (accusative, instrumental, genitive, locative) and gender agreement of verbs.
    ("ru", "active_passive_mft", dict(a="Анна", b="Пётр", v="пригласил"), "Анна пригласила Петра.",
     "Пётр был приглашён Анной."),
    ("ru", "active_passive_mft", dict(a="Сергей", b="Наталья", v="спас"), "Сергей спас Наталью.",
     "Наталья была спасена Сергеем."),
    ("ru", "negation_mft", dict(a="Ирина", p="врач"), "Ирина не работает врачом.", "Ирина работает врачом."),
    ("ru", "asymmetry_mft", dict(a="Михаил", b="Ольга", c="старше"), "Михаил старше Ольги.", "Ольга старше Михаила."),
    ("ru", "universal_mft", dict(a="Мария", g="студенты", c="Санкт-Петербург", x="купили билет"),
     "Все студенты в Санкт-Петербурге купили билет. Мария — одна из студентов.", "Мария купила билет."),
    ("ru", "quantifier_none_mft", dict(a="Дмитрий", g="гости", c="Казань", x="ушли рано"),
     "Никто из гостей в Казани не ушёл рано. Дмитрий — один из гостей.", "Дмитрий ушёл рано."),
    ("ru", "numbers_more_mft", dict(a="Иван", x="книгу", n=22, m=21), "Иван купил 22 книги.",
     "Иван купил больше 21 книги."),
    ("ru", "numbers_not_more_mft", dict(a="Елена", x="стул", n=5, m=7), "Елена купила 5 стульев.",
     "Елена купила больше 7 стульев."),
    ("ru", "negation_passive_dir", dict(a="Алексей", b="Анна", v="наградил"), "Алексей наградил Анну.",
     "Анна не была награждена Алексеем."),
    # French: gender agreement of professions, participles, adjectives; elision of "que".
    ("fr", "negation_mft", dict(a="Marie", p="avocat"), "Marie n'est pas avocate.", "Marie est avocate."),
    ("fr", "negation_contrast_mft", dict(a="Paul", p="acteur", q="infirmier"), "Paul est acteur, pas infirmier.",
     "Paul n'est pas infirmier."),
    ("fr", "active_passive_mft", dict(a="Jean", b="Claire", v="a invité"), "Jean a invité Claire.",
     "Claire a été invitée par Jean."),
    ("fr", "asymmetry_mft", dict(a="Sophie", b="Antoine", c="grand"), "Sophie est plus grande qu'Antoine.",
     "Antoine est plus grand que Sophie."),
    ("fr", "quantifier_none_mft", dict(a="Julie", g="invités", c="Lyon", x="ont acheté un billet"),
     "Aucun des invités à Lyon n'a acheté de billet. Julie fait partie des invités.", "Julie a acheté un billet."),
    # German: kein / keine, feminine professions, dative plural, word order of the passive.
    ("de", "negation_mft", dict(a="Anna", p="Arzt"), "Anna ist keine Ärztin.", "Anna ist Ärztin."),
    ("de", "negation_mft", dict(a="Peter", p="Koch"), "Peter ist kein Koch.", "Peter ist Koch."),
    ("de", "universal_mft", dict(a="Lena", g="Gäste", c="Wien", x="haben ein Ticket gekauft"),
     "Alle Gäste in Wien haben ein Ticket gekauft. Lena gehört zu den Gästen.", "Lena hat ein Ticket gekauft."),
    ("de", "active_passive_mft", dict(a="Thomas", b="Julia", v="eingeladen"), "Thomas hat Julia eingeladen.",
     "Julia wurde von Thomas eingeladen."),
    ("de", "numbers_more_mft", dict(a="Jan", x="Apfel", n=4, m=3), "Jan hat 4 Äpfel gekauft.",
     "Jan hat mehr als 3 Äpfel gekauft."),
    # Swedish: no article with professions, definite plural, periphrastic passive, negation placement.
    ("sv", "negation_mft", dict(a="Karin", p="läkare"), "Karin är inte läkare.", "Karin är läkare."),
    ("sv", "universal_mft", dict(a="Erik", g="gäster", c="Lund", x="klarade provet"),
     "Alla gäster i Lund klarade provet. Erik är en av gästerna.", "Erik klarade provet."),
    ("sv", "negation_passive_dir", dict(a="Sara", b="Lars", v="bjöd in"), "Sara bjöd in Lars.",
     "Lars blev inte inbjuden av Sara."),
    ("sv", "numbers_more_mft", dict(a="Elin", x="bok", n=5, m=2), "Elin köpte 5 böcker.", "Elin köpte fler än 2 böcker."),
]


@pytest.mark.parametrize("language,test,fillers,premise,hypothesis", GRAMMAR,
                         ids=[f"{g[0]}-{g[1]}-{i}" for i, g in enumerate(GRAMMAR)])
def test_hand_checked_sentences(language, test, fillers, premise, hypothesis):
    assert render_with(language, test, **fillers) == (premise, hypothesis)


def test_every_language_ships_required_tests():
    assert set(available_languages()) >= set(LANGUAGES)
    required = {("Negation", "MFT"), ("Universal", "MFT"), ("Quantifiers", "MFT"), ("Active/Passive", "MFT"),
                ("Symmetry/Collectivity", "MFT"), ("Intervals/Numbers", "MFT"), ("Named entities", "INV"),
                ("Typos", "INV"), ("Punctuation", "INV"), ("Negation", "DIR")}
    for language in LANGUAGES:
        spec = load_templates(language)
        assert spec.language == language
        assert len(spec) >= 8
        assert required <= {(t.capability, t.type) for t in spec.tests.values()}, language
        assert all(t.capability in FINE or t.capability in ("Typos", "Punctuation") for t in spec.tests.values())


def test_same_tests_in_every_language():
    ids = {language: list(load_templates(language).tests) for language in LANGUAGES}
    assert all(v == ids["en"] for v in ids.values())


def test_ru_inflection_keeps_capitalisation_of_compound_city():
    premise, _ = render_with("ru", "universal_mft", a="Иван", g="гости", c="Санкт-Петербург", x="купили билет")
    assert "в Санкт-Петербурге" in premise


GOOD = """language: en
lexicon:
  name: [{text: Ann, gender: f}, {text: Bob, gender: m}]
tests:
  t1:
    name: x
    capability: Negation
    type: MFT
    label: not_entailment
    slots: {a: name}
    premise: "{a} is not here."
    hypothesis: "{a} is here."
"""


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "t.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_minimal_user_file_loads_and_generates(tmp_path):
    cases = generate_suite(_write(tmp_path, GOOD), seed=0, max_per_test=10)
    assert sorted(c.premise for c in cases) == ["Ann is not here.", "Bob is not here."]


@pytest.mark.parametrize("old,new,line,needle", [
    ("label: not_entailment", "label: contradiction", 9, "label in"),
    ("capability: Negation", "capability: Negaton", 7, "did you mean 'Negation'"),
    ("slots: {a: name}", "slots: {a: names}", 10, "a lexicon defined in this file"),
    ('premise: "{a} is not here."', 'premise: "{b} is not here."', 11, "a slot of this test"),
    ("type: MFT", "type: XYZ", 8, "type in"),
    ("gender: f}", "gender: female}", 3, "gender in"),
    ("    name: x\n", "    name: x\n    colour: red\n", 7, "test keys"),
])
def test_template_errors_name_file_and_line(tmp_path, old, new, line, needle):
    path = _write(tmp_path, GOOD.replace(old, new))
    with pytest.raises(TemplateError) as err:
        load_templates(path)
    assert f"{path}:{line}:" in str(err.value)
    assert needle in str(err.value)


def test_yaml_syntax_error_has_line(tmp_path):
    path = _write(tmp_path, GOOD.replace("slots: {a: name}", "slots: {a: name"))
    with pytest.raises(TemplateError, match=rf"{path}:\d+: expected valid YAML"):
        load_templates(path)


def test_missing_form_is_reported_at_render_time_with_line(tmp_path):
    path = _write(tmp_path, GOOD.replace('hypothesis: "{a} is here."', 'hypothesis: "{a.gent} is here."'))
    with pytest.raises(TemplateError, match=rf"{path}:12: expected form 'gent'"):
        generate_suite(path, seed=0, max_per_test=2)


def test_derived_test_must_name_an_mft_above(tmp_path):
    text = GOOD + "  t2:\n    name: y\n    capability: Typos\n    type: INV\n    of: nope\n    perturb: {typo: both}\n"
    path = _write(tmp_path, text)
    with pytest.raises(TemplateError, match=rf"{path}:17: expected 'of' naming an MFT test"):
        load_templates(path)
