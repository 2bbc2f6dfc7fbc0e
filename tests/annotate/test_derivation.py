"""Affix + a known word (``known_base``): the lexicon check on its own, and the errors of a rules file that asks
for it where the backend has no lexicon."""

import pytest

from diagnostics.annotate import RulesError, get_annotator, load_rules
from diagnostics.annotate._derivation import known_affixed
from diagnostics.annotate._rules import Derivation

LEXICON = {("happy", "ADJ"), ("care", "NOUN"), ("able", "ADJ"), ("cover", "VERB")}


def known(word, pos):
    return any(w == word and (pos is None or p == pos) for w, p in LEXICON)


NEGATION = Derivation(prefixes=("un", "dis"), suffixes=("less",), min_length=4, known_base=("ADJ", "ADV"))


@pytest.mark.parametrize("lower,lemma,pos,expected", [
    ("unhappy", "unhappy", "ADJ", True),       # un + a known adjective
    ("carelessly", "careless", "ADV", True),   # the lemma: care + less (a suffix: the base may be a noun)
    ("unhappy", "unhappy", "NOUN", False),     # not a part of speech the rule checks
    ("unable", "unable", "ADJ", True),
    ("unable", "unable", "ADV", False),        # after a prefix, the base needs the word's own part of speech
    ("discover", "discover", "ADJ", False),    # cover is known as a verb only
    ("unit", "unit", "ADJ", False),            # too short once "un" is removed
    ("unclear", "unclear", "ADJ", False),      # "clear" is not in this lexicon
])
def test_known_affixed_needs_a_known_base_of_the_right_part_of_speech(lower, lemma, pos, expected):
    assert known_affixed(NEGATION, lower, lemma, pos, known) is expected


def test_known_base_off_and_any_part_of_speech():
    assert not known_affixed(Derivation(prefixes=("un",), min_length=4), "unhappy", "unhappy", "ADJ", known)
    assert known_affixed(Derivation(prefixes=("dis",), min_length=4, known_base=()), "discover", "discover", "VERB",
                         known)


def test_rules_file_reads_known_base(tmp_path):
    path = tmp_path / "xx.yaml"
    body = ("language: en\nbackend: blank\nfeatures:\n  Morphological negation:\n    derivation:\n"
            "      prefixes: [un]\n      pos: [ADJ]\n      known_base: {}\n")
    path.write_text(body.format("true"), encoding="utf-8")
    assert load_rules(path).features["Morphological negation"].derivation.known_base == ("ADJ",)  # pos
    path.write_text(body.format("[ADJ, ADV]"), encoding="utf-8")
    assert load_rules(path).features["Morphological negation"].derivation.known_base == ("ADJ", "ADV")
    path.write_text(body.format("false"), encoding="utf-8")
    assert load_rules(path).features["Morphological negation"].derivation.known_base is None
    path.write_text(body.format("3"), encoding="utf-8")
    with pytest.raises(RulesError, match=r"xx.yaml:5: derivation known_base must be true, false or a list"):
        load_rules(path)
    # the blank backend has no lexicon to check the base against
    path.write_text(body.format("true"), encoding="utf-8")
    with pytest.raises(RulesError, match="known_base needs a lexicon"):
        get_annotator(path)
