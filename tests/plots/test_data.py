"""``category_counts_by_language`` (``diagnostics/plots/_data.py``): a heat map of rows per fine category (rows, in
taxonomy order, grouped by coarse category) for each diagnostic set (columns), the counts written in the cells."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from diagnostics.core.taxonomy import FINE, TAXONOMY  # noqa: E402
from diagnostics.plots import category_counts_by_language  # noqa: E402


def _frame(features: list[list[str]]) -> pd.DataFrame:
    return pd.DataFrame({"id": range(len(features)), "features": features})


def test_counts_per_category_and_set_with_lines_between_coarse_groups():
    frames = {"en (axb)": _frame([["Negation"], ["Negation", "Core args"], [], ["Factivity"]]),
              "ru (lidirus)": _frame([["Core args"], ["Core args"], ["Temporal", "Negation"]])}
    ax = category_counts_by_language(frames).axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["en (axb)", "ru (lidirus)"]
    assert [t.get_text() for t in ax.get_yticklabels()] == list(FINE)  # every fine category, zeros too
    cells = np.asarray(ax.collections[0].get_array()).reshape(len(FINE), 2)
    expected = np.zeros((len(FINE), 2))
    for column, counts in enumerate(({"Negation": 2, "Core args": 1, "Factivity": 1},
                                     {"Core args": 2, "Temporal": 1, "Negation": 1})):
        for category, n in counts.items():
            expected[FINE.index(category), column] = n
    np.testing.assert_array_equal(cells, expected)
    assert [t.get_text() for t in ax.texts] == [str(int(v)) for v in expected.ravel()]  # counts written in
    sizes = np.cumsum([len(fines) for fines in TAXONOMY.values()])[:-1]
    assert [line.get_ydata()[0] for line in ax.lines] == list(sizes)  # a rule after each coarse group but the last
    assert ax.get_ylabel() == "fine-grained category (grouped by coarse)"
    assert ax.get_title() == "Rows per diagnostic category" and ax.get_xlabel() == ""

