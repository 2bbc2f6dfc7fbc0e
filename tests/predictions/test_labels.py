"""Foreign label values read as the study's binary labels: names in any case, 3-way labels collapsed, codes through a
label map, class indices of score vectors, and scores turned into a prediction and P(entailment)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import softmax

from diagnostics.core.errors import UserInputError
from diagnostics.predictions._labels import index_map, label_key, parse_label_map, scores_to_predictions, to_labels

E, N = "entailment", "not_entailment"


def test_label_names_in_any_spelling_and_three_way_labels():
    assert [label_key(v) for v in ("Not Entailment", " NOT-entailment ", True, 1.0, 2.5)] == \
        ["not_entailment", "not_entailment", "true", "1", "2.5"]
    values = ["Entailment", "NOT_ENTAILMENT", "non-entailment", "neutral", "Contradiction", "entailed", None,
              float("nan"), "maybe"]
    assert to_labels(values).tolist() == [E, N, N, N, N, E, None, None, None]


def test_codes_need_a_label_map_which_wins_over_names():
    codes = parse_label_map("0=entailment, 1=not_entailment,2=contradiction")
    assert codes == {"0": E, "1": N, "2": N}
    assert to_labels([0, 1, 2, "1", 1.0, 7], codes).tolist() == [E, N, N, N, N, None]
    assert to_labels([0, 1]).tolist() == [None, None]  # codes alone mean nothing
    swapped = parse_label_map({"entailment": "not_entailment", "yes": "entailment"})
    assert to_labels(["entailment", "Yes", "neutral"], swapped).tolist() == [N, E, N]
    assert parse_label_map(None) is None and parse_label_map("a=b=entailment") == {"a=b": E}


@pytest.mark.parametrize("spec,needle", [
    ("0", "expected VALUE=LABEL items separated by commas"),
    ("=entailment", "expected VALUE=LABEL items"),
    ("0=yes", "expected a label in entailment, not_entailment, neutral, contradiction, found 'yes'"),
    ("0=entailment,0=neutral", "value '0' is mapped twice"),
])
def test_a_malformed_label_map_is_refused(spec, needle):
    with pytest.raises(UserInputError, match="label map") as err:
        parse_label_map(spec)
    assert needle in str(err.value)


def test_class_indices_from_the_map_or_the_formats_convention():
    assert index_map(2, None, (N, E), "logits of run.npy") == [N, E]
    assert index_map(3, parse_label_map("0=entailment,1=neutral,2=contradiction"), (N, E), "x") == [E, N, N]
    with pytest.raises(UserInputError, match="logits of run.npy: 3 scores per row and no label map"):
        index_map(3, None, None, "logits of run.npy")
    with pytest.raises(UserInputError, match="2"):
        index_map(3, parse_label_map("0=entailment,1=neutral"), None, "logits of run.npy")


def test_scores_give_the_arg_max_and_the_softmax_mass_of_entailment():
    scores = np.array([[2.0, -1.0, 0.5], [-3.0, 4.0, 1.0], [0.0, 0.0, 0.0]])
    labels = [E, N, N]  # entailment, neutral, contradiction
    prediction, probability = scores_to_predictions(scores, labels)
    assert prediction.tolist() == [E, N, E]  # a tie goes to the first class, as numpy.argmax
    np.testing.assert_allclose(probability, softmax(scores, axis=1)[:, 0])
    big = np.array([[1000.0, 0.0]])  # no overflow
    assert scores_to_predictions(big, [E, N])[1][0] == pytest.approx(1.0)
