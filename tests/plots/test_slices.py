"""``feature_slices_figure`` (``diagnostics/plots/_slices.py``): per setting one panel, per feature two bars (MCC of
the pairs with the feature and without it, σ over seeds as error bars), the features with most pairs on top."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from diagnostics.plots import feature_slices_figure  # noqa: E402


@pytest.fixture(scope="module")
def table():
    rows = []
    for language, shift in (("en", 0.0), ("ru", -0.1)):
        for feature, n, with_, without in (("negation", 30, 0.2, 0.5), ("quantifier", 10, 0.6, 0.4),
                                           ("coordination", 20, 0.45, 0.42), ("rare", 1, -0.3, 0.45)):
            rows.append({"experiment": "rte", "language": language, "model": "mbert", "feature": feature,
                         "n_with": n, "mcc_with": with_ + shift, "mcc_with_sd": 0.05,
                         "mcc_without": without + shift, "mcc_without_sd": np.nan})
    return pd.DataFrame(rows)


def _bars(ax, colour_of_label: str):
    handles, labels = ax.get_legend_handles_labels()
    container = handles[labels.index(colour_of_label)]
    return list(container.patches)


def test_a_panel_per_setting_and_two_bars_per_feature(table):
    fig = feature_slices_figure(table)
    assert [ax.get_title() for ax in fig.axes] == ["rte / en / mbert", "rte / ru / mbert"]
    ax = fig.axes[0]
    # fewest pairs at the bottom (y = 0), most on top
    assert [t.get_text() for t in ax.get_yticklabels()] == ["rare (1)", "quantifier (10)", "coordination (20)",
                                                            "negation (30)"]
    en = table[table["language"] == "en"].sort_values("n_with")
    with_bars, without_bars = _bars(ax, "with the feature"), _bars(ax, "without the feature")
    assert [b.get_width() for b in with_bars] == pytest.approx(en["mcc_with"].tolist())
    assert [b.get_width() for b in without_bars] == pytest.approx(en["mcc_without"].tolist())
    assert all(b.get_y() + b.get_height() / 2 > w.get_y() + w.get_height() / 2  # "with" just above "without"
               for b, w in zip(with_bars, without_bars))
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["with the feature", "without the feature"]
    assert ax.get_xlabel() == "MCC (mean ± σ over seeds)"
    ru_with = _bars(fig.axes[1], "with the feature")
    assert [b.get_width() for b in ru_with] == pytest.approx((en["mcc_with"] - 0.1).tolist())


def test_error_bars_are_the_seed_sd_and_a_missing_sd_is_none(table):
    ax = feature_slices_figure(table[table["language"] == "en"]).axes[0]
    handles, labels = ax.get_legend_handles_labels()
    for label, sd in (("with the feature", 0.05), ("without the feature", 0.0)):
        segments = handles[labels.index(label)].errorbar.lines[2][0].get_segments()
        assert [s[1, 0] - s[0, 0] for s in segments] == pytest.approx([2 * sd] * 4)


def test_most_features_and_fewest_pairs_are_limits(table):
    en = table[table["language"] == "en"]
    ax = feature_slices_figure(en, max_features=2).axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["coordination (20)", "negation (30)"]
    ax = feature_slices_figure(en, min_examples=10).axes[0]
    assert "rare (1)" not in [t.get_text() for t in ax.get_yticklabels()] and len(ax.get_yticklabels()) == 3


def test_nothing_left_is_an_empty_panel_with_a_note(table):
    for fig in (feature_slices_figure(table, min_examples=100), feature_slices_figure(table.iloc[:0])):
        assert len(fig.axes) == 1 and not fig.axes[0].axison
        assert [t.get_text() for t in fig.axes[0].texts] == ["no feature slice"]
