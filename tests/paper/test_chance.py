"""The chance figure: how many printed numbers would fall outside our intervals by chance, with its spread."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from diagnostics.paper import against_paper, paper_chance, paper_numbers
from diagnostics.paper._chance import simulate_outside
from diagnostics.paper._draws import StoreValues
from diagnostics.paper._intervals import PREDICTION
from diagnostics.paper._view import StoreView

from _paper_stores import hand_scores


def test_the_chance_figure_has_a_spread_and_follows_the_rows_correlation():
    rng = np.random.default_rng(5)
    scores = hand_scores({("en", "Conditionals"): rng.normal(0.3, 0.1, 6), ("en", "Negation"): rng.normal(0.2, 0.1, 6)})
    view, store = StoreView(scores), StoreValues(scores)
    rows = [r for r in paper_numbers().itertuples(index=False)
            if r.statistic == "mcc" and r.language == "en" and r.category == "Conditionals"]
    assert [r.seed for r in rows] == [0, 1, 4, 5]
    outside = simulate_outside(view, store, rows, 0.95, 3000, seed=2)
    assert outside.mean(axis=0) == pytest.approx([0.05] * 4, abs=0.015)  # each row: 1 - level for normal runs
    counts = outside.sum(axis=1)
    # the four numbers are placed in one interval of ours: their outside flags go together, the count spreads more
    # than a sum of four independent rows would
    assert counts.var() > 1.2 * (4 * 0.05 * 0.95)
    frame = against_paper(scores, n_sim=400, seed=3)
    chance = paper_chance(frame).set_index("interval")
    total = chance.loc["all"]
    assert total["range_90_low"] <= total["expected_outside"] <= total["range_90_high"]
    assert total["range_95_low"] <= total["range_90_low"] and total["range_95_high"] >= total["range_90_high"]
    assert total["n_sim"] == 400 and 0 <= total["share_at_least"] <= 1
    placed = frame[frame["verdict"].isin(["inside", "outside"])]
    assert total["numbers"] == len(placed) and total["outside"] == (placed["verdict"] == "outside").sum()
    assert total["chance_outside"] == pytest.approx(placed["chance_outside"].mean())
    # the same seed gives the same figure, and a subset of rows keeps its flags
    again = paper_chance(against_paper(scores, n_sim=400, seed=3))
    pd.testing.assert_frame_equal(paper_chance(frame), again)
    assert paper_chance(frame[frame["interval"] == PREDICTION]).iloc[-1]["numbers"] == chance.loc[PREDICTION,
                                                                                                   "numbers"]
