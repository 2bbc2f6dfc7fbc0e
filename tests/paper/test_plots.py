"""The figure of notebook 11: the paper's MCCs against ours with our intervals, and what was found per section."""

import numpy as np
import pandas as pd
import pytest

from _stats_fixtures import synthetic_table
from diagnostics.plots import paper_comparison
from diagnostics.paper import against_paper


@pytest.fixture(scope="module")
def frame():
    predictions = pd.concat([synthetic_table("axb", (("base", 0.7),), range(4), "en", seed=1, model="m"),
                             synthetic_table("lidirus", (("base", 0.7),), range(4), "ru", seed=2, model="m")],
                            ignore_index=True)
    return against_paper(predictions, dataset={"axb": "axb", "lidirus": "lidirus"}, n_sim=100)


def test_points_carry_our_intervals_and_verdicts(frame):
    fig = paper_comparison(frame, title="synthetic")
    left, right = fig.axes
    points = frame[(frame["status"] == "compared") & frame["statistic"].isin(["mcc", "mean_mcc"])]
    labels = left.get_legend_handles_labels()[1]
    assert set(labels) == {f"{v} (not comparable)" for v in points["verdict"].unique()}  # no configs given
    marks = [line for line in left.get_lines() if line.get_marker() == "o"]
    assert sum(len(line.get_xdata()) for line in marks) == len(points)
    spans = [segment for collection in left.collections for segment in collection.get_segments()]
    assert len(spans) == points["interval_low"].notna().sum()
    for segment in spans:  # each line spans our interval of the paper's number at its x
        (x, low), (_, high) = segment
        row = points[(points["paper"] == x) & np.isclose(points["interval_low"], low)].iloc[0]
        assert high == pytest.approx(row["interval_high"])
        assert row["interval_low"] <= row["ours"] <= row["interval_high"] or row["interval"] != "prediction over seeds"
    counts = {t.get_text() for t in right.get_legend().get_texts()}
    assert {"inside", "outside", "as printed", "differs from printed", "not run", "not computed"} <= counts
    bars = sum(p.get_width() for p in right.patches)
    assert bars == len(frame)  # every number the paper prints, once
