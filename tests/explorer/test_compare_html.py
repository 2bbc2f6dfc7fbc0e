"""The comparison's pages: an example opened with every seed of both sides, per-seed MCC strips with the explorers'
numbers, every text from the data escaped."""

from __future__ import annotations

import numpy as np
import pytest

from diagnostics import explorer as ex

from _explorer_data import CAT_1, CAT_2, hand_dataset, hand_pair, hand_table


@pytest.fixture(scope="module")
def hand():
    return hand_pair()


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


def test_every_text_from_the_data_is_escaped():
    hostile = "<script>alert('x')</script> & \"quotes\""
    dataset = hand_dataset()
    dataset["premise"] = hostile
    dataset.loc[0, "id"] = "h0"
    pair = ex.build_comparison(hand_table(0), hand_table(1), {"hand": dataset},
                               names=("<b>bert</b>", "ro'berta\""), annotations={"hand": [[hostile]] * 10})
    pair.select(CAT_1)
    pages = [pair.to_html(), pair.examples_html(), pair.example_html("h1"), pair.categories_html()]
    for page in pages:
        assert "<script>" not in page and "<b>bert</b>" not in page and "ro'berta\"" not in page
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt; &amp; &quot;quotes&quot;" in pages[1]
    assert "&lt;b&gt;bert&lt;/b&gt;" in pages[0]
