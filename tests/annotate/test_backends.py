"""Backends: the entity recognisers of the pipelines (spaCy's for English, natasha's added to the Russian one) and
the lexicons that ``known_base`` checks words against."""

import pytest

from diagnostics.annotate import RulesError, get_annotator, get_pipeline, load_rules
from diagnostics.annotate._backends import get_lexicon

pytest.importorskip("spacy")


def test_english_annotator_keeps_its_entity_recogniser():
    annotator = get_annotator("en")
    assert "ner" in annotator.nlp.pipe_names
    doc = annotator.nlp("John Smith flew from Paris to Berlin.")
    assert {(e.text, e.label_) for e in doc.ents} >= {("John Smith", "PERSON"), ("Paris", "GPE"), ("Berlin", "GPE")}


def test_natasha_sets_the_entities_of_the_russian_pipeline():
    pytest.importorskip("slovnet")
    pytest.importorskip("navec")
    nlp = get_pipeline("pymorphy3", "ru", ner="natasha")
    assert nlp.pipe_names[-1] == "ner" and get_annotator("ru").nlp.pipe_names[-1] == "ner"
    docs = list(nlp.pipe(["Иван Петров работает в Газпроме.", "Кошка спит.", "Москва — столица России."]))
    assert [[(e.text, e.label_) for e in doc.ents] for doc in docs] == [
        [("Иван Петров", "PER"), ("Газпроме", "ORG")], [], [("Москва", "LOC"), ("России", "LOC")]]
    # the words keep pymorphy3's analysis
    assert docs[0][4].lemma_ == "газпром" and docs[0][4].pos_ == "PROPN"


@pytest.mark.parametrize("lang,word,pos,expected", [
    ("en", "happy", "ADJ", True), ("en", "happy", "VERB", False), ("en", "cover", "VERB", True),
    ("en", "der", None, False), ("en", "terest", None, False),
    ("ru", "доступный", "ADJ", True), ("ru", "доступна", "ADJ", True),  # any form of a dictionary word
    ("ru", "деля", "NOUN", False), ("ru", "деля", "VERB", True),        # a gerund of делить, not a noun
    ("ru", "лляпк", None, False),
])
def test_lexicons_know_dictionary_words_with_their_part_of_speech(lang, word, pos, expected):
    annotator = get_annotator(lang)
    known = get_lexicon(annotator.rules.backend, annotator.nlp)
    assert known(word, pos) is expected


def test_an_entity_recogniser_needs_a_pipeline_without_one(tmp_path):
    path = tmp_path / "xx.yaml"
    path.write_text("language: xx\nbackend: spacy\nmodel: m\nner: natasha\nfeatures:\n  Negation:\n    words: [x]\n",
                    encoding="utf-8")
    with pytest.raises(RulesError, match=r"xx.yaml:4: ner: 'natasha' is not an entity recogniser a 'spacy'"):
        load_rules(path)
    path.write_text("language: xx\nbackend: blank\nner: stanza\nfeatures:\n  Negation:\n    words: [x]\n",
                    encoding="utf-8")
    with pytest.raises(RulesError, match=r"xx.yaml:3: .*known: natasha"):
        load_rules(path)
