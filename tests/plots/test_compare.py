"""The figure and files of a comparison of two systems (``diagnostics/plots/_compare.py``): a forest plot of the
per-category deltas (summary rows on top, significant deltas coloured by sign), and the set of three files."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.colors import to_hex  # noqa: E402
from PIL import Image  # noqa: E402

from diagnostics.plots import comparison_figure, delta_figure, write_comparison  # noqa: E402
from diagnostics.predictions import Comparison  # noqa: E402

BLUE, RED, GREY = "#1f5fa8", "#b2302b", "#9a9a9a"


def _table() -> pd.DataFrame:
    # the categories first, the summary row last, as compare_tables writes them; the figure puts the summary on top
    rows = [("Negation", "fine", 40, 0.20, 0.05, 0.35, True), ("Core args", "fine", 30, -0.25, -0.40, -0.10, True),
            ("Logic", "coarse", 90, 0.05, -0.10, 0.20, False), ("All examples", "all", 200, 0.02, -0.03, 0.07, False)]
    table = pd.DataFrame(rows, columns=["category", "level", "n", "delta", "delta_ci_low", "delta_ci_high",
                                        "significant"])
    for side in ("a", "b"):
        table[f"estimate_{side}"], table[f"ci_low_{side}"], table[f"ci_high_{side}"] = 0.3, 0.2, 0.4
    table["p_value"] = table["p_adjusted"] = np.where(table["significant"], 0.01, 0.5)
    return table


def _comparison(**kwargs) -> Comparison:
    values = dict(table=_table(), setting_a={"experiment": "base"}, setting_b={"experiment": "extra"},
                  seeds_a=[0, 1], seeds_b=[0, 1], paired=True, metric="mcc", n_boot=100, seed=0, level=0.9,
                  adjust="bh", alpha=0.1, names=("base", "extra"))
    return Comparison(**{**values, **kwargs})


def _intervals_and_points(ax):
    intervals = [line for line in ax.lines if line.get_marker() == "None" and line.get_linestyle() == "-"
                 and to_hex(line.get_color()) in (BLUE, RED, GREY)]
    points = [line for line in ax.lines if line.get_marker() == "o"]
    return intervals, points


def test_one_interval_and_point_per_row_summary_on_top():
    fig = delta_figure(_table(), names=("base", "extra"), metric="mcc", level=0.9, adjust="bh", alpha=0.1)
    ax = fig.axes[0]
    intervals, points = _intervals_and_points(ax)
    assert len(intervals) == len(points) == 4
    order = ["All examples", "Negation", "Core args", "Logic"]
    by_y = {int(point.get_ydata()[0]): point for point in points}
    table = _table().set_index("category")
    assert _labels(ax) == ["All examples (200)", "Negation (40)", "Core args (30)", "Logic (90)"]
    for y, category in zip((3, 2, 1, 0), order):  # the first row at the top
        assert by_y[y].get_xdata()[0] == pytest.approx(table.at[category, "delta"])
        (span,) = [line for line in intervals if line.get_ydata()[0] == y]
        assert list(span.get_xdata()) == pytest.approx([table.at[category, "delta_ci_low"],
                                                         table.at[category, "delta_ci_high"]])
    colours = {category: to_hex(by_y[y].get_color()) for y, category in zip((3, 2, 1, 0), order)}
    assert colours == {"All examples": GREY, "Negation": BLUE, "Core args": RED, "Logic": GREY}
    assert ax.get_xlabel() == "delta MCC (extra - base), 90% Multi-Bootstrap interval"
    assert ax.get_title() == "extra vs base per category"
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend == ["extra higher (BH p <= 0.1)", "extra lower (BH p <= 0.1)", "not significant"]
    rules = [line for line in ax.lines if line.get_linestyle() == "--"]
    assert len(rules) == 1 and list(rules[0].get_xdata()) == [0.0, 0.0]  # no effect
    separators = [line for line in ax.lines if list(line.get_ydata()) == [2.5, 2.5]]
    assert len(separators) == 1  # between the summary row and the categories


def _labels(ax):
    return [t.get_text() for t in ax.get_yticklabels()]


def test_comparison_figure_takes_the_comparisons_names_and_settings():
    ax = comparison_figure(_comparison(adjust="holm", alpha=0.05, names=("A", "B"), level=0.95)).axes[0]
    assert ax.get_xlabel() == "delta MCC (B - A), 95% Multi-Bootstrap interval"
    assert ax.figure.legends[0].get_texts()[0].get_text() == "B higher (Holm p <= 0.05)"


def test_write_comparison_writes_the_three_files_and_keeps_others(tmp_path):
    out = tmp_path / "cmp"
    out.mkdir()
    (out / "notes.txt").write_text("mine", encoding="utf-8")
    result = _comparison()
    files = write_comparison(result, out)
    assert files == {"table": out / "comparison.csv", "figure": out / "comparison.png", "summary": out / "summary.md"}
    assert sorted(p.name for p in out.iterdir()) == ["comparison.csv", "comparison.png", "notes.txt", "summary.md"]
    assert (out / "notes.txt").read_text(encoding="utf-8") == "mine"
    table = pd.read_csv(files["table"])
    assert list(table["category"]) == list(result.table["category"])
    assert table["delta"].tolist() == pytest.approx(result.table["delta"].tolist())
    assert files["summary"].read_text(encoding="utf-8") == result.summary()
    with Image.open(files["figure"]) as image:
        assert image.format == "PNG"
