"""Two systems side by side (``ComparisonModel``): the outcome of every example (fixed / broken by B, unstable in
either, stable in both) on a hand-built pair of tables with known flips, against plain loops on a run-store-like
table, against McNemar's discordant pairs for single runs."""

from __future__ import annotations

import json

import pytest

from diagnostics import explorer as ex
from diagnostics.core.schema import ENTAILMENT, NOT_ENTAILMENT
from diagnostics.core.taxonomy import FINE

from _explorer_data import (CAT_1, CAT_2, FLIPS, KNOWN, comparison_store, hand_pair, synthetic_dataset,
                            synthetic_predictions)


@pytest.fixture(scope="module")
def hand():
    return hand_pair()


def test_known_flips_of_a_hand_built_pair_of_tables(hand):
    pair, _ = hand
    out = pair.outcomes()
    assert list(out.index) == list(KNOWN)  # the dataset's order
    assert dict(zip(out.index, out["outcome"])) == {i: spec[4] for i, spec in KNOWN.items()}
    assert dict(zip(out.index, out["flips"])) == {i: FLIPS.get(i, "") for i in KNOWN}
    assert list(out["correct_a"]) == [KNOWN[i][2].count("1") for i in KNOWN]
    assert list(out["correct_b"]) == [KNOWN[i][3].count("1") for i in KNOWN]
    assert (out["n_a"] == 3).all() and (out["n_b"] == 3).all() and pair.only_one_side == 0
    # two imported tables with the same keys: their model becomes the sides' names
    assert pair.names == ("bert", "roberta")
    assert [s["model"] for s in (pair.setting_a, pair.setting_b)] == ["bert", "roberta"]
    assert pair.side_label("A") == "A: bert (en · imported · bert)"
    assert pair.counts() == {"fixed": 3, "broken": 1, "unstable": 3, "wrong_both": 1, "correct_both": 2}
    assert pair.counts(CAT_1) == {"fixed": 1, "broken": 1, "unstable": 2, "wrong_both": 0, "correct_both": 1}
    table = pair.category_table()
    assert list(table.index) == [CAT_1, CAT_2]
    assert table.loc[CAT_2, ["n", "fixed", "broken", "unstable", "wrong_both", "correct_both", "flips_a",
                             "flips_b"]].tolist() == [7, 2, 0, 3, 1, 1, 2, 2]


def test_filters_list_exactly_the_examples_of_each_outcome(hand):
    pair, dataset = hand
    with pytest.raises(ValueError, match="outcome must be one of"):
        pair.set_filter("better")
    assert pair.examples().empty
    pair.select(CAT_2)
    listing = pair.examples()
    # fixed, broken, unstable (largest change of the share of right seeds first), wrong in both, right in both
    assert list(listing["example_id"]) == ["h7", "h8", "h4", "h3", "h5", "h6", "h9"]
    for outcome, expected in (("fixed", ["h7", "h8"]), ("broken", []), ("unstable", ["h4", "h3", "h5"]),
                              ("flips_a", ["h3", "h5"]), ("flips_b", ["h4", "h5"]), ("wrong_both", ["h6"]),
                              ("correct_both", ["h9"])):
        pair.set_filter(outcome)
        assert list(pair.examples()["example_id"]) == expected, outcome
    pair.set_filter("fixed")
    row = pair.examples().iloc[0]
    assert row["premise"] == "Premise of h7." and row["label"] == ENTAILMENT and row["features"] == [CAT_2]
    assert [row[f"prediction_a_{s}"] for s in "012"] == [NOT_ENTAILMENT] * 3
    assert [row[f"prediction_b_{s}"] for s in "012"] == [ENTAILMENT] * 3
    assert row["probability_a_2"] == pytest.approx(0.1) and row["probability_b_0"] == pytest.approx(0.8)
    assert (row["correct_a"], row["n_a"], row["correct_b"], row["n_b"]) == (0, 3, 3, 3)
    pair.set_filter(None)
    with pytest.raises(ValueError, match="not a category both sides"):
        pair.select(FINE[5])


def test_single_runs_fixed_and_broken_are_mcnemars_discordant_pairs():
    """With one run per side nothing is unstable, and fixed / broken are b_only / a_only of ``compare_tables``."""
    from diagnostics.predictions import compare_tables

    en = synthetic_dataset("syn_en", 150, seed=3)
    one = synthetic_predictions({"en": ("syn_en", en)}, seeds=(0,), seed=4)
    other = synthetic_predictions({"en": ("syn_en", en)}, seeds=(0,), seed=5).assign(model="other")
    pair = ex.build_comparison(one, other, {"syn_en": en}, annotations=False)
    assert pair.names == ("m", "other") and pair.counts()["unstable"] == 0
    result = compare_tables(one, other, n_boot=10, datasets={"syn_en": en}).table.set_index("category")
    table = pair.category_table()
    for category in table.index:
        assert table.at[category, "fixed"] == result.at[category, "b_only"], category
        assert table.at[category, "broken"] == result.at[category, "a_only"], category
    overall = pair.counts()
    assert (overall["fixed"], overall["broken"]) == (result.at["All examples", "b_only"],
                                                     result.at["All examples", "a_only"])


@pytest.fixture(scope="module")
def store():
    return comparison_store()


def test_two_experiments_of_one_run_store_against_plain_loops(store):
    model, predictions, datasets = store
    pair = model.compare({"experiment": "base", "language": "en"}, {"experiment": "extra-100"})
    assert pair.names == ("base", "extra-100") and pair.labels_b == ["0", "1", "2", "3"]
    assert model.compare(pair.a, pair.b).counts() == pair.counts()  # indices or keys name the same settings

    def side(experiment):
        rows = predictions[(predictions["language"] == "en") & (predictions["experiment"] == experiment)]
        return {i: list((g.sort_values("seed")["prediction"] == g["label"].iat[0])) for i, g in
                rows.groupby("example_id")}

    a, b = side("base"), side("extra-100")
    for example_id, row in pair.outcomes().iterrows():
        ra, rb = a[example_id], b[example_id]
        if 0 < sum(ra) < len(ra) or 0 < sum(rb) < len(rb):
            expected = "unstable"
        else:
            expected = {(True, True): "correct_both", (False, True): "fixed", (True, False): "broken",
                        (False, False): "wrong_both"}[(all(ra), all(rb))]
        assert row["outcome"] == expected, example_id
    en = datasets["syn_en"]
    for category in pair.category_names:
        members = set(en.loc[en["features"].map(lambda f, c=category: c in f), "id"])
        assert set(pair.members(category)) == members
        pair.select(category)
        pair.set_filter("fixed")
        assert set(pair.examples()["example_id"]) == {i for i in members if not any(a[i]) and all(b[i])}
    pair.set_filter(None)
    with pytest.raises(ValueError, match="compare two settings of one diagnostic set"):
        model.compare({"experiment": "base", "language": "en"}, {"language": "ru"})
    with pytest.raises(ValueError, match="the same setting"):
        model.compare(0, 0)
    with pytest.raises(ValueError, match="settings match"):
        model.compare({"experiment": "base"}, {"experiment": "extra-100"})


def test_the_payload_carries_the_pair_and_nothing_per_example(store, tmp_path):
    model, _, _ = store
    pair = model.compare({"experiment": "base", "language": "en"}, {"experiment": "extra-100"})
    single, paired = model.payload(), pair.payload()
    assert paired["pair"] == {"a": pair.a, "b": pair.b, "names": ["base", "extra-100"]}
    assert {k: v for k, v in paired.items() if k != "pair"} == single  # the page computes the outcomes itself
    path = pair.save_payload(tmp_path)
    assert path.name == ex.PAYLOAD_NAME and ex.read_payload(path) == json.loads(json.dumps(paired))
