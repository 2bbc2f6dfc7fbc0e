"""``paper_comparison`` (``diagnostics/plots/_paper.py``): left, each MCC the paper prints against ours with our
interval, coloured by verdict (hollow when not comparable); right, per section, how many of the paper's numbers
fell into each outcome, as stacked bars."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.colors import to_hex  # noqa: E402

from diagnostics.plots import paper_comparison  # noqa: E402

OUTCOMES = ["inside", "outside", "as printed", "differs from printed", "no interval", "not run", "not computed"]
COLOURS = {"inside": "#4c72b0", "outside": "#dd8452", "no interval": "#8c8c8c"}


@pytest.fixture(scope="module")
def frame():
    rows = [  # section, statistic, status, verdict, as_printed, comparable, paper, ours, low, high
        ("§4", "mcc", "compared", "inside", None, True, 0.5, 0.45, 0.3, 0.6),
        ("§4", "mean_mcc", "compared", "outside", None, False, 0.2, 0.6, 0.5, 0.7),
        ("§4", "mcc", "compared", None, None, True, -0.1, 0.0, np.nan, np.nan),
        ("§5", "claim", "compared", None, True, True, 1.0, 1.0, np.nan, np.nan),
        ("§5", "count", "compared", None, False, True, 1104, 1100, np.nan, np.nan),
        ("§5", "mcc", "not run", None, None, pd.NA, 0.3, np.nan, np.nan, np.nan),
        ("§5", "sigma", "compared", "inside", None, True, 0.05, 0.04, 0.02, 0.06),  # not an MCC: no point
    ]
    return pd.DataFrame(rows, columns=["section", "statistic", "status", "verdict", "as_printed", "comparable",
                                       "paper", "ours", "interval_low", "interval_high"])


def test_a_point_per_compared_mcc_coloured_by_verdict(frame):
    fig = paper_comparison(frame, title="verdict: close")
    left = fig.axes[0]
    points = [line for line in left.lines if line.get_marker() == "o"]
    assert [line.get_label() for line in points] == ["inside", "outside (not comparable)", "no interval"]
    xy = {line.get_label(): (list(line.get_xdata()), list(line.get_ydata())) for line in points}
    assert xy == {"inside": ([0.5], [0.45]), "outside (not comparable)": ([0.2], [0.6]),
                  "no interval": ([-0.1], [0.0])}
    for line in points:
        assert to_hex(line.get_color()) == COLOURS[line.get_label().split(" (")[0]]
    assert points[1].get_markerfacecolor() == "none" and points[0].get_markerfacecolor() != "none"  # hollow
    spans = [segment for c in left.collections for segment in c.get_segments()]
    assert sorted(tuple(map(tuple, s)) for s in spans) == [((0.2, 0.5), (0.2, 0.7)), ((0.5, 0.3), (0.5, 0.6))]
    assert [t.get_text() for t in left.get_legend().get_texts()] == ["inside", "outside (not comparable)",
                                                                     "no interval"]
    assert left.get_xlabel() == "paper (MCC)" and left.get_ylabel() == "ours (MCC) with our interval"
    assert left.get_xlim() == (-1, 1) and left.get_ylim() == (-1, 1)
    assert fig.get_suptitle() == "verdict: close"


def test_bars_count_each_sections_outcomes(frame):
    right = paper_comparison(frame).axes[1]
    assert [t.get_text() for t in right.get_legend().get_texts()] == OUTCOMES
    assert [t.get_text() for t in right.get_yticklabels()] == ["§4", "§5"] and right.yaxis_inverted()
    # barh draws one bar per section for each outcome in turn
    widths = np.array([p.get_width() for p in right.patches]).reshape(len(OUTCOMES), 2)
    expected = {"§4": {"inside": 1, "outside": 1, "no interval": 1},
                "§5": {"as printed": 1, "differs from printed": 1, "not run": 1, "inside": 1}}
    for column, section in enumerate(("§4", "§5")):
        assert dict(zip(OUTCOMES, widths[:, column])) == {o: expected[section].get(o, 0) for o in OUTCOMES}
    lefts = np.array([p.get_x() for p in right.patches]).reshape(len(OUTCOMES), 2)
    np.testing.assert_allclose(lefts[1:], np.cumsum(widths, axis=0)[:-1])  # stacked end to end
    assert right.get_xlabel() == "numbers the paper prints"


def test_without_a_compared_mcc_the_left_panel_says_so(frame):
    fig = paper_comparison(frame[frame["statistic"] != "mcc"].query("statistic != 'mean_mcc'"))
    left = fig.axes[0]
    assert [t.get_text() for t in left.texts] == ["no MCC of the paper has a run here"]
    assert not [line for line in left.lines if line.get_marker() == "o"] and left.get_legend() is None
    assert fig.get_suptitle() == ""
