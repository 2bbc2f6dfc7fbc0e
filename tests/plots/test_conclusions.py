"""``seed_conclusions_figure`` (``diagnostics/plots/_conclusions.py``): per setting one panel, per category its seeds'
range and mean, blue where every seed concludes the same and orange where it depends on the seed."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.colors import to_hex  # noqa: E402

from diagnostics.plots import seed_conclusions_figure  # noqa: E402
from diagnostics.plots._conclusions import DEPENDS, HOLDS  # noqa: E402


def _conclusions() -> pd.DataFrame:
    rows = []
    for language in ("en", "ru"):
        for category, effect, low, high, holds in (("Negation", -0.2, -0.25, -0.15, True),
                                                   ("Universal", 0.05, -0.3, 0.4, False),
                                                   ("Datives", 0.12, 0.08, 0.2, True)):
            rows.append({"experiment": "evaluated", "language": language, "model": "m", "dataset": "set",
                         "category": category, "reference": "all examples of the set", "n": 30, "n_seeds": 3,
                         "effect": effect, "effect_min": low, "effect_max": high, "seeds_agreeing": 3 if holds else 1,
                         "holds": holds, "margin": 0.05})
    return pd.DataFrame(rows)


def test_a_panel_per_setting_a_range_per_category_coloured_by_whether_it_holds():
    fig = seed_conclusions_figure(_conclusions())
    assert [ax.get_title() for ax in fig.axes] == ["evaluated / en / m / set", "evaluated / ru / m / set"]
    ax = fig.axes[0]
    # the largest difference on top, the most negative at the bottom
    height = {t.get_text(): t.get_position()[1] for t in ax.get_yticklabels()}
    assert height["Datives (30) 3/3"] > height["Universal (30) 1/3"] > height["Negation (30) 3/3"]
    lines = ax.collections[0]  # the seeds' ranges, drawn top (Datives) to bottom (Negation)
    segments = [np.asarray(s) for s in lines.get_segments()]
    assert [tuple(s[:, 0]) for s in segments] == [(0.08, 0.2), (-0.3, 0.4), (-0.25, -0.15)]
    assert [to_hex(c) for c in lines.get_colors()] == [HOLDS, DEPENDS, HOLDS]
    assert ax.get_xlabel().startswith("MCC minus the MCC of all examples of the set")


def test_only_the_largest_differences_and_an_empty_table():
    fig = seed_conclusions_figure(_conclusions(), max_rows=2)
    assert sorted(t.get_text().split(" (")[0] for t in fig.axes[0].get_yticklabels()) == ["Datives", "Negation"]
    empty = seed_conclusions_figure(_conclusions().iloc[:0])
    assert len(empty.axes) == 1 and empty.axes[0].texts[0].get_text() == "no conclusion to draw"
