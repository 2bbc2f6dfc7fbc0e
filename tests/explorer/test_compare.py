"""Two systems side by side (``ComparisonModel``): the outcome of every example (fixed / broken by B, unstable in
either, stable in both) on a hand-built pair of tables with known flips, against plain loops on a run-store-like
table, against McNemar's discordant pairs for single runs; the widget driven without a front end; every text from
the data escaped."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from diagnostics import explorer as ex
from diagnostics.core.errors import UserInputError
from diagnostics.core.schema import ENTAILMENT, NOT_ENTAILMENT
from diagnostics.core.taxonomy import FINE

from _explorer_data import fake_annotations, synthetic_dataset, synthetic_predictions

CAT_1, CAT_2 = FINE[0], FINE[1]
# example -> (gold, categories, which of A's three seeds are right, which of B's three seeds are right, outcome)
KNOWN = {
    "h0": ("e", [CAT_1], "111", "111", "correct_both"),
    "h1": ("n", [CAT_1], "000", "111", "fixed"),
    "h2": ("e", [CAT_1], "111", "000", "broken"),
    "h3": ("n", [CAT_1, CAT_2], "110", "111", "unstable"),  # A flips
    "h4": ("e", [CAT_1, CAT_2], "111", "100", "unstable"),  # B flips
    "h5": ("n", [CAT_2], "100", "011", "unstable"),  # both flip
    "h6": ("e", [CAT_2], "000", "000", "wrong_both"),
    "h7": ("e", [CAT_2], "000", "111", "fixed"),
    "h8": ("n", [CAT_2], "000", "111", "fixed"),
    "h9": ("e", [CAT_2], "111", "111", "correct_both"),
}
FLIPS = {"h3": "A", "h4": "B", "h5": "A and B"}
GOLD = {"e": ENTAILMENT, "n": NOT_ENTAILMENT}


def _dataset() -> pd.DataFrame:
    ids = list(KNOWN)
    return pd.DataFrame({"id": ids, "premise": [f"Premise of {i}." for i in ids],
                         "hypothesis": [f"Hypothesis of {i}." for i in ids],
                         "label": [GOLD[KNOWN[i][0]] for i in ids], "features": [KNOWN[i][1] for i in ids],
                         "dataset": "hand"})


def _table(side: int, probability: bool = True) -> pd.DataFrame:
    """One imported system's table: three seeds, right where KNOWN says (both systems: experiment=imported)."""
    rows = []
    for example_id, spec in KNOWN.items():
        gold = GOLD[spec[0]]
        wrong = NOT_ENTAILMENT if gold == ENTAILMENT else ENTAILMENT
        for seed, right in enumerate(spec[2 + side]):
            prediction = gold if right == "1" else wrong
            row = {"experiment": "imported", "language": "en", "model": "imported", "seed": seed,
                   "dataset": "hand", "example_id": example_id, "label": gold, "prediction": prediction}
            if probability:
                row["probability"] = 0.8 if prediction == ENTAILMENT else 0.3 - 0.1 * seed
            rows.append(row)
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def hand():
    dataset = _dataset()
    pair = ex.build_comparison(_table(0), _table(1), {"hand": dataset}, names=("bert", "roberta"),
                               annotations=False)
    return pair, dataset


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


def test_opening_an_example_shows_every_seed_of_both_sides(hand):
    pair, _ = hand
    opened = pair.example("h5")
    assert opened["outcome"] == "unstable" and opened["flips"] == "A and B"
    assert opened["categories"] == [CAT_2] and opened["hypothesis"] == "Hypothesis of h5."
    seeds = opened["seeds"]
    assert list(zip(seeds["side"], seeds["seed"])) == [("A", "0"), ("A", "1"), ("A", "2"), ("B", "0"), ("B", "1"),
                                                       ("B", "2")]
    assert list(seeds["correct"]) == [True, False, False, False, True, True]
    page = pair.example_html("h5")
    assert "data-id='h5'" in page and page.count("class='pred ok") == 3 and page.count("class='pred bad") == 3
    with pytest.raises(KeyError):
        pair.example("nowhere")


def test_per_seed_mcc_strips_are_the_explorers_numbers(hand):
    pair, _ = hand
    strips = pair.seed_mcc()
    assert len(strips) == 2 * 2 * 3
    for row in strips.itertuples(index=False):
        setting = pair.a if row.side == "A" else pair.b
        assert row.mcc == pytest.approx(pair.explorer.seed_mcc(setting).at[row.category, row.seed], nan_ok=True)
    table = pair.category_table()
    explorer_a = pair.explorer.category_table(pair.a)
    for category in table.index:
        assert table.at[category, "mean_a"] == ex.display_round(explorer_a.at[category, "mean"], 3)
        shown = (table.at[category, "mean_b"], table.at[category, "mean_a"])
        assert table.at[category, "delta"] == pytest.approx(shown[0] - shown[1], abs=1e-12)
    page = pair.categories_html()
    row = page[page.index(f"data-category='{CAT_1}'"):page.index(f"data-category='{CAT_2}'")]
    for side in ("A", "B"):
        mine = strips[(strips["category"] == CAT_1) & (strips["side"] == side)]
        drawn = [(seed, ex.two_decimals(value)) for seed, value in zip(mine["seed"], mine["mcc"]) if np.isfinite(value)]
        assert row.count(f"class='pt {side.lower()}'") == len(drawn) > 0
        for seed, shown in drawn:
            assert f"data-seed='{seed}' data-mcc='{shown}'" in row


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
    en, ru = synthetic_dataset("syn_en", 120, seed=0), synthetic_dataset("syn_ru", 100, seed=1)
    predictions = pd.concat([synthetic_predictions({"en": ("syn_en", en), "ru": ("syn_ru", ru)}),
                             synthetic_predictions({"en": ("syn_en", en)}, experiments=("extra-100",), seed=2,
                                                   seeds=(0, 1, 2, 3))], ignore_index=True)
    datasets = {"syn_en": en, "syn_ru": ru}
    model = ex.build_explorer(predictions, datasets,
                              annotations={"syn_en": fake_annotations(en), "syn_ru": fake_annotations(ru)})
    return model, predictions, datasets


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
        ex.build_comparison(_table(0), _table(1), {"hand": _dataset()}, names=("x", "x"), annotations=False)
    relabelled = _table(1)
    relabelled.loc[relabelled["example_id"] == "h0", "label"] = NOT_ENTAILMENT
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(UserInputError, match="different gold labels"):
            ex.build_comparison(_table(0), relabelled, {"hand": _dataset()}, annotations=False, trust_labels=True)


def test_an_example_one_side_misses_is_left_out_and_counted():
    dataset = _dataset()
    partial = _table(1)
    partial = partial[partial["example_id"] != "h9"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pair = ex.build_comparison(_table(0), partial, {"hand": dataset}, annotations=False)
    assert "h9" not in pair.outcomes().index and pair.only_one_side == 1
    assert pair.names == ("A", "B") and "1 examples predicted by one side only" in pair.to_html()


def test_the_widget_drives_the_comparison(store):
    pytest.importorskip("ipywidgets")
    model, _, _ = store
    pair = model.compare({"experiment": "base", "language": "en"}, {"experiment": "extra-100"})
    widget = ex.ComparisonWidget(pair, row_limit=5)
    assert list(widget.buttons) == pair.category_names and widget.example.layout.display == "none"
    category = pair.category_names[3]
    button = widget.buttons[category]
    button.click()  # what a click in the front end does
    assert pair.selection == category and "dx-chosen" in button._dom_classes
    listing = pair.examples()
    assert widget.listing.value.count("<tr data-id=") == min(5, len(listing))
    assert f"data-category='{category}'" in widget.listing.value
    widget.outcome.value = "unstable"  # the filter
    assert pair.outcome == "unstable"
    unstable = pair.examples()
    assert (unstable["outcome"] == "unstable").all() and len(unstable) > 5
    assert widget.more.layout.display != "none"
    while widget.more.layout.display != "none":
        widget.more.click()
    for example_id in unstable["example_id"]:
        assert f"data-id='{example_id}' data-outcome='unstable'" in widget.listing.value
    first = str(unstable["example_id"].iat[0])
    widget.open_example(first)  # what choosing it in the "example" menu does
    assert f"data-id='{first}'" in widget.example_view.value
    with pytest.raises(ValueError, match="not among the listed"):
        widget.open_example("nowhere")
    other = widget.buttons[pair.category_names[0]]
    other.click()  # the outline moves; the listing starts again at row_limit
    assert "dx-chosen" in other._dom_classes and "dx-chosen" not in button._dom_classes
    strips = [c for c in widget.grid.children if "dx-cmp-strip" in getattr(c, "value", "")]
    assert len(strips) == len(pair.category_names) and all("class='pt b'" in s.value for s in strips)
    bundle = ex.explore(pair)._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle and "two systems side by side" in \
        bundle["text/plain"]
    static = ex.explore(pair, static=True)._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" not in static
    assert "Two systems side by side" in static["text/html"] and "dx-cmp-row" in static["text/html"]


def test_every_text_from_the_data_is_escaped():
    hostile = "<script>alert('x')</script> & \"quotes\""
    dataset = _dataset()
    dataset["premise"] = hostile
    dataset.loc[0, "id"] = "h0"
    pair = ex.build_comparison(_table(0), _table(1), {"hand": dataset},
                               names=("<b>bert</b>", "ro'berta\""), annotations={"hand": [[hostile]] * 10})
    pair.select(CAT_1)
    pages = [pair.to_html(), pair.examples_html(), pair.example_html("h1"), pair.categories_html()]
    for page in pages:
        assert "<script>" not in page and "<b>bert</b>" not in page and "ro'berta\"" not in page
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt; &amp; &quot;quotes&quot;" in pages[1]
    assert "&lt;b&gt;bert&lt;/b&gt;" in pages[0]
