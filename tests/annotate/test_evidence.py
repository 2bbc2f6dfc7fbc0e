"""Matches of a sentence resolved into evidence: the longest span wins, except patterns veto their tokens, keys."""

from diagnostics.annotate import load_rules
from diagnostics.annotate._evidence import PatternInfo, evidence_key, resolve_hits, with_token_data


def _words(*lemmas):
    """Words as the annotator keeps them: (token, lower, lemma, affixed, known); the lower form is the lemma + 's'."""
    return [((lemma + "s", lemma, "NOUN"), lemma + "s", lemma, None, ()) for lemma in lemmas]


def _rules(tmp_path, key):
    path = tmp_path / "xx.yaml"
    path.write_text(f"language: xx\nbackend: blank\nfeatures:\n  Negation:\n    key: {key}\n    words: [not]\n"
                    "  Conjunction:\n    words: [and]\n", encoding="utf-8")
    return load_rules(path).features


def test_longest_span_wins_and_except_tokens_are_no_evidence(tmp_path):
    rules = _rules(tmp_path, "lemma")
    info = {1: PatternInfo(rules["Negation"], "#words", 0, False),
            2: PatternInfo(rules["Negation"], "long", 1, False),
            3: PatternInfo(rules["Negation"], "#except:only", 2, True),
            4: PatternInfo(rules["Conjunction"], "#words", 0, False)}
    words = _words("a", "b", "c", "d", "e", "f")
    # span 0-2 (long) covers the one-word hit at 1; the except pattern at 4-6 vetoes the one-word hit at 5
    matches = [(1, 1, 2), (2, 0, 2), (3, 4, 6), (1, 5, 6), (1, 3, 4), (4, 2, 3)]
    hits = resolve_hits(matches, info, words, doc=None)
    assert hits == {"Negation": {"a b": 1, "d": 1}, "Conjunction": {"c": 1}}
    # an except match alone leaves the feature without evidence
    assert resolve_hits([(3, 0, 2)], info, words, doc=None) == {}
    # of two equal spans the pattern listed first wins, counted once
    assert resolve_hits([(2, 0, 2), (1, 0, 2)], info, words, doc=None) == {"Negation": {"a b": 1}}


def test_evidence_key_reads_the_rule_key(tmp_path):
    words = _words("cat", "dog")
    lemma = PatternInfo(_rules(tmp_path, "lemma")["Negation"], "neg", 0, False)
    pattern = PatternInfo(_rules(tmp_path, "pattern")["Negation"], "neg", 0, False)
    words_list = PatternInfo(_rules(tmp_path, "pattern")["Negation"], "#words", 0, False)
    lower = PatternInfo(_rules(tmp_path, "lower")["Negation"], "neg", 0, False)
    assert evidence_key(lemma, words, None, 0, 2) == "cat dog"
    assert evidence_key(pattern, words, None, 0, 2) == "neg"
    assert evidence_key(words_list, words, None, 1, 2) == "dogs"  # a word list has no name to key by: its form
    assert evidence_key(lower, words, None, 0, 1) == "cats"


def test_with_token_data_keeps_the_alphabetic_tokens_and_the_affixed_per_feature():
    words = _words("cat", "dog") + [(None, ",", ",", None, ())]
    words.append((("unhappy", "unhappy", "ADJ"), "unhappy", "unhappy", (("Morphological negation", "happy"),), ()))
    analysis = with_token_data({"Negation": {"not": 1}}, words, {})
    assert analysis.tokens == (("cats", "cat", "NOUN"), ("dogs", "dog", "NOUN"), ("unhappy", "unhappy", "ADJ"))
    assert analysis.lemmas == {"cat", "dog", "unhappy"}
    assert analysis.forms == {"cat", "dog", "cats", "dogs", "unhappy"}
    assert analysis.affixed == {"Morphological negation": ["happy"]} and analysis.hits == {"Negation": {"not": 1}}
