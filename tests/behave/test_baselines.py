"""The lexical-overlap reference predictor: entailment when enough hypothesis word types occur in the premise."""

import pytest

from diagnostics.behave import LexicalOverlapPredictor

E, N = "entailment", "not_entailment"


def test_entailment_iff_the_share_of_hypothesis_words_reaches_the_threshold():
    premises = ["Anna did not buy a ticket.", "Anna bought a ticket.", "Anna left.", "Anna left."]
    hypotheses = ["Anna bought a TICKET", "Anna bought a ticket yesterday.", "", "Bob and Anna left."]
    assert LexicalOverlapPredictor()(premises, hypotheses) == [N, N, E, N]  # case and punctuation ignored
    # shares: 3/4, 4/5, 1 (no words), 2/4
    assert LexicalOverlapPredictor(0.75)(premises, hypotheses) == [E, E, E, N]
    assert LexicalOverlapPredictor(0.5)(premises, hypotheses) == [E, E, E, E]
    assert LexicalOverlapPredictor()(["Анна купила билет."], ["Анна купила билет"]) == [E]  # any script


@pytest.mark.parametrize("threshold", [0.0, 1.5, -1])
def test_threshold_outside_0_1_is_refused(threshold):
    with pytest.raises(ValueError, match="threshold must be in"):
        LexicalOverlapPredictor(threshold)


def test_premises_and_hypotheses_must_pair_up():
    with pytest.raises(ValueError):
        LexicalOverlapPredictor()(["a"], ["a", "b"])
