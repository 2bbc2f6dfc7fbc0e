"""``metric_curve`` (``diagnostics/plots/_curves.py``): the mean of ``y`` over the rows (seeds) of each ``x``, one
line per ``hue`` value, a reference line when asked, the axes named."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from diagnostics.plots import metric_curve  # noqa: E402

SIZES = [100, 200, 400]


@pytest.fixture(scope="module")
def frame():
    rows = []
    for language, base in (("en", 0.2), ("ru", 0.1)):
        for i, size in enumerate(SIZES):
            for seed, noise in enumerate((-0.02, 0.0, 0.05)):
                rows.append({"language": language, "size": size, "seed": seed, "mcc": base + 0.1 * i + noise})
    return pd.DataFrame(rows)


def _data_lines(ax):
    return [line for line in ax.lines if len(line.get_xdata()) == len(SIZES)]


def test_one_line_per_hue_through_the_seed_means(frame):
    fig = metric_curve(frame, "size", "mcc", hue="language", title="MCC by data size")
    ax = fig.axes[0]
    lines = _data_lines(ax)
    assert len(lines) == 2
    means = frame.groupby(["language", "size"])["mcc"].mean()
    for line, language in zip(lines, ("en", "ru")):
        np.testing.assert_allclose(line.get_xdata(), SIZES)
        np.testing.assert_allclose(line.get_ydata(), means[language].to_numpy())
        assert line.get_marker() == "o"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["en", "ru"]
    assert len(ax.collections) == 2  # one 95 % interval band per line
    assert ax.get_title() == "MCC by data size"
    assert ax.get_xlabel() == "size" and ax.get_ylabel() == "mcc"


def test_the_interval_band_spans_the_seeds(frame):
    ax = metric_curve(frame[frame["language"] == "en"], "size", "mcc").axes[0]
    band = ax.collections[0].get_paths()[0].vertices
    ys = frame[(frame["language"] == "en") & (frame["size"] == 100)]["mcc"]
    at_first = band[np.isclose(band[:, 0], 100), 1]
    assert at_first.min() >= ys.min() - 1e-9 and at_first.max() <= ys.max() + 1e-9  # a bootstrap CI of the mean
    assert at_first.max() - at_first.min() > 0


def test_without_hue_one_line_and_no_legend_a_reference_line_and_own_ylabel(frame):
    one = frame[frame["language"] == "ru"]
    ax = metric_curve(one, "size", "mcc", ylabel="MCC", reference=0.0).axes[0]
    lines = _data_lines(ax)
    assert len(lines) == 1 and ax.get_legend() is None
    np.testing.assert_allclose(lines[0].get_ydata(), one.groupby("size")["mcc"].mean().to_numpy())
    references = [line for line in ax.lines if line not in lines]
    assert len(references) == 1 and set(references[0].get_ydata()) == {0.0}  # horizontal at 0
    assert ax.get_ylabel() == "MCC" and ax.get_title() == ""
