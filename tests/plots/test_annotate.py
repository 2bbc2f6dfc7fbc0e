"""Figures of rule-based annotation (``diagnostics/plots/_annotate.py``): the share of pairs per feature and dataset,
the rules' F1 / precision / recall against gold tags, and their agreement with another language's rules."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from diagnostics.plots import agreement_figure, evaluation_detail, evaluation_scores, feature_distribution  # noqa: E402


def _cells(ax, shape):
    return np.asarray(ax.collections[0].get_array()).reshape(shape)


def _labels(ticks):
    return [t.get_text() for t in ticks]


def _evaluation(f1s, support=(4, 2)):
    f1 = list(f1s) + [float(np.mean(f1s))]
    return pd.DataFrame({"feature": ["negation", "quantifier", "macro"], "precision": [1.0, 0.5, 0.75],
                         "recall": [0.5, 0.25, 0.375], "f1": f1, "support": [*support, sum(support)]})


def test_feature_distribution_in_percent_with_the_pairs_of_each_set():
    table = pd.DataFrame({"axb": [0.25, 0.1], "lidirus": [0.5, 0.0]}, index=["negation", "quantifier"])
    table.attrs["pairs"] = {"axb": 1104}
    ax = feature_distribution(table, title="Shares").axes[0]
    np.testing.assert_allclose(_cells(ax, (2, 2)), [[25.0, 50.0], [10.0, 0.0]])
    assert _labels(ax.texts) == ["25.0", "50.0", "10.0", "0.0"]
    assert _labels(ax.get_xticklabels()) == ["axb\n(n=1104)", "lidirus"]  # pairs where known
    assert _labels(ax.get_yticklabels()) == ["negation", "quantifier"]
    assert ax.get_title() == "Shares (%)"
    with pytest.raises(ValueError, match="feature_distribution: empty table"):
        feature_distribution(pd.DataFrame())


def test_evaluation_scores_a_column_per_language_macro_row_last():
    ax = evaluation_scores({"en": _evaluation([0.8, 0.4]), "ru": _evaluation([0.6, 0.2])}).axes[0]
    np.testing.assert_allclose(_cells(ax, (3, 2)), [[0.8, 0.6], [0.4, 0.2], [0.6, 0.4]])
    assert _labels(ax.get_xticklabels()) == ["en", "ru"]
    assert _labels(ax.get_yticklabels()) == ["negation", "quantifier", "macro"]
    assert [line.get_ydata()[0] for line in ax.lines] == [2]  # a rule above the macro row
    assert ax.get_title() == "Rule annotator F1 against gold diagnostic tags"


def test_evaluation_detail_shows_the_three_scores_and_each_features_support():
    ax = evaluation_detail(_evaluation([0.8, 0.4]), lang="ru").axes[0]
    assert _labels(ax.get_xticklabels()) == ["precision", "recall", "f1"]
    assert _labels(ax.get_yticklabels()) == ["negation (n=4)", "quantifier (n=2)", "macro"]
    np.testing.assert_allclose(_cells(ax, (3, 3)), [[1.0, 0.5, 0.8], [0.5, 0.25, 0.4], [0.75, 0.375, 0.6]])
    assert [line.get_ydata()[0] for line in ax.lines] == [2]
    assert ax.get_title() == "Rule annotator (ru) against gold diagnostic tags"


def _agreement(gold):
    return pd.DataFrame({"feature": ["negation", "quantifier", "macro"], "agreement_precision": [0.9, 0.5, 0.7],
                         "agreement_recall": [0.8, 0.3, 0.55], "gold_precision": gold})


def test_agreement_with_gold_precision_has_a_scatter_beside_the_bars():
    fig = agreement_figure(_agreement([0.85, np.nan, 0.85]), lang="ru", reference="en")
    bars, scatter = fig.axes
    assert bars.get_title() == "ru rules against en rules on the aligned pairs"
    assert _labels(bars.get_legend().get_texts()) == ["agreement precision", "agreement recall", "gold precision"]
    assert _labels(bars.get_yticklabels()) == ["negation", "quantifier"]  # the macro row left out
    widths = [p.get_width() for p in bars.patches if p.get_height() > 0]
    np.testing.assert_allclose(widths[:4], [0.9, 0.5, 0.8, 0.3])  # per score, its features in order
    assert widths[4] == pytest.approx(0.85)
    offsets = scatter.collections[0].get_offsets()
    np.testing.assert_allclose(offsets, [[0.9, 0.85]])  # only the feature with gold precision
    assert _labels(scatter.texts) == ["negation"]
    assert scatter.get_xlabel() == "agreement precision" and scatter.get_ylabel() == "gold precision (ru)"


def test_agreement_without_gold_is_one_panel_without_the_gold_bars():
    fig = agreement_figure(_agreement([np.nan] * 3), lang="ru")
    (bars,) = fig.axes
    assert bars.get_title() == "ru rules against en rules on the aligned pairs"
    assert _labels(bars.get_legend().get_texts()) == ["agreement precision", "agreement recall"]
    assert bars.get_xlim() == (0, 1) and bars.get_xlabel() == "share"
    with pytest.raises(ValueError, match="agreement_figure: no feature rows"):
        agreement_figure(_agreement([np.nan] * 3).iloc[2:], lang="ru")
