"""Two systems' tables made comparable: what build_comparison refuses, and examples one side misses."""

from __future__ import annotations

import warnings

import pytest

from diagnostics import explorer as ex
from diagnostics.core.errors import UserInputError
from diagnostics.core.schema import NOT_ENTAILMENT

from _explorer_data import comparison_store, hand_dataset, hand_table


@pytest.fixture(scope="module")
def store():
    return comparison_store()


def test_refusals(store):
    model, predictions, datasets = store
    base_en = {"experiment": "base", "language": "en"}
    with pytest.raises(UserInputError, match="A is on syn_en and B on syn_ru"):
        ex.build_comparison(predictions, None, datasets, select_a=base_en, select_b={"language": "ru"},
                            annotations=False)
    with pytest.raises(UserInputError, match="the same setting"):
        ex.build_comparison(predictions, None, datasets, select_a=base_en, select_b=base_en, annotations=False)
    with pytest.raises(UserInputError, match="settings"):  # B names two settings
        ex.build_comparison(predictions, None, datasets, select_a=base_en, select_b={"language": "en"},
                            annotations=False)
    nested = predictions[predictions["experiment"] == "extra-100"].assign(pretrain_seed=0)
    with pytest.raises(UserInputError, match="pretraining seeds"):
        ex.build_comparison(predictions, nested, datasets, select_a=base_en, annotations=False)
    with pytest.raises(UserInputError, match="two different names"):
        ex.build_comparison(hand_table(0), hand_table(1), {"hand": hand_dataset()}, names=("x", "x"), annotations=False)
    relabelled = hand_table(1)
    relabelled.loc[relabelled["example_id"] == "h0", "label"] = NOT_ENTAILMENT
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(UserInputError, match="different gold labels"):
            ex.build_comparison(hand_table(0), relabelled, {"hand": hand_dataset()}, annotations=False,
                                trust_labels=True)


def test_an_example_one_side_misses_is_left_out_and_counted():
    dataset = hand_dataset()
    partial = hand_table(1)
    partial = partial[partial["example_id"] != "h9"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pair = ex.build_comparison(hand_table(0), partial, {"hand": dataset}, annotations=False)
    assert "h9" not in pair.outcomes().index and pair.only_one_side == 1
    assert pair.names == ("A", "B") and "1 examples predicted by one side only" in pair.to_html()
