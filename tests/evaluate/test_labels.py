"""``diagnostics.evaluate._labels``: the rule that maps a classifier head's class names to the task's two labels
(any order and spelling of 3-way and 2-way NLI heads), the user's map that overrides it, the refusals of heads it
cannot place, and the rule as recorded for a run."""

from __future__ import annotations

import pytest

from diagnostics.core.errors import UserInputError
from diagnostics.core.schema import ENTAILMENT, NOT_ENTAILMENT
from diagnostics.evaluate import describe_rule, head_labels


@pytest.mark.parametrize("names, expected", [
    (["contradiction", "neutral", "entailment"], [NOT_ENTAILMENT, NOT_ENTAILMENT, ENTAILMENT]),
    (["ENTAILMENT", "NEUTRAL", "CONTRADICTION"], [ENTAILMENT, NOT_ENTAILMENT, NOT_ENTAILMENT]),
    (["Neutral", "Entailment", "Contradiction"], [NOT_ENTAILMENT, ENTAILMENT, NOT_ENTAILMENT]),
    (["not_entailment", "entailment"], [NOT_ENTAILMENT, ENTAILMENT]),
    (["entailment", "Not Entailment"], [ENTAILMENT, NOT_ENTAILMENT]),
    (["non-entailment", "entailment"], [NOT_ENTAILMENT, ENTAILMENT]),
])
def test_the_rule_reads_the_heads_labels_in_any_order_and_spelling(names, expected):
    id2label = {str(i): n for i, n in enumerate(names)}
    assert head_labels(id2label) == expected
    assert list(describe_rule(id2label, expected).values()) == expected


def test_an_unmappable_head_stops_in_one_line_naming_its_labels():
    with pytest.raises(UserInputError) as caught:
        head_labels({0: "LABEL_0", 1: "LABEL_1"}, what="my-model")
    message = str(caught.value)
    assert "\n" not in message and "my-model" in message and "0=LABEL_0, 1=LABEL_1" in message
    assert "--label-map" in message
    with pytest.raises(UserInputError, match="needs a class for entailment"):
        head_labels({0: "neutral", 1: "contradiction"})


def test_a_user_map_wins_by_index_or_by_the_heads_name():
    assert head_labels({0: "LABEL_0", 1: "LABEL_1"}, "0=entailment,1=not_entailment") == [ENTAILMENT, NOT_ENTAILMENT]
    assert head_labels({0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"}, "LABEL_0=contradiction,LABEL_1=neutral,"
                       "LABEL_2=entailment") == [NOT_ENTAILMENT, NOT_ENTAILMENT, ENTAILMENT]
    # the map overrides the names the rule would read
    assert head_labels({0: "entailment", 1: "not_entailment"}, {0: "not_entailment", 1: "entailment"}) == \
        [NOT_ENTAILMENT, ENTAILMENT]


def test_classes_are_read_in_index_order_whatever_the_order_of_the_keys():
    # id2label as a JSON config gives it: string keys, here not in index order
    assert head_labels({"2": "entailment", "0": "contradiction", "1": "neutral"}) == \
        [NOT_ENTAILMENT, NOT_ENTAILMENT, ENTAILMENT]


@pytest.mark.parametrize("id2label, shown", [
    ({0: "entailment", 2: "not_entailment"}, r"0\.\.n-1"),  # a gap in the indices
    ({1: "entailment", 2: "not_entailment"}, r"0\.\.n-1"),  # not starting at 0
    ({0: "entailment"}, r"n >= 2"),  # one class only
    ({}, "found none"),
    ({"first": "entailment", "second": "not_entailment"}, "keys that are not class indices"),
])
def test_a_head_whose_indices_are_not_0_to_n_minus_1_is_refused(id2label, shown):
    with pytest.raises(UserInputError, match=shown):
        head_labels(id2label)


def test_the_recorded_rule_names_each_class_by_index_and_head_name():
    id2label = {0: "LABEL_0", 1: "LABEL_1"}
    labels = head_labels(id2label, "1=entailment,0=not_entailment")
    assert describe_rule(id2label, labels) == {"0=LABEL_0": NOT_ENTAILMENT, "1=LABEL_1": ENTAILMENT}
