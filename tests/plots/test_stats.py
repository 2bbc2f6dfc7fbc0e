"""Figures of the stability statistics (``diagnostics/plots/_stats.py``): heat maps (category x seed, category x
language, deltas) with categories in taxonomy order, CI forest plots and per-category trajectories."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from diagnostics.plots import (category_language_heatmap, category_seed_heatmap, category_trajectories,  # noqa: E402
                               ci_forest_plot, delta_heatmap)

#: Out of taxonomy order on purpose: the figures put them in it (Lexical Semantics, P-A Structure, Logic).
CATEGORIES = ["Negation", "Core args", "Lexical entailment"]
ORDERED = ["Lexical entailment", "Core args", "Negation"]


def _mcc(experiment, language, category, seed):
    return {"base": 0.1, "extra": 0.3}[experiment] + 0.1 * CATEGORIES.index(category) \
        + 0.01 * seed - (0.2 if language == "sv" and category == "Negation" else 0.0)


@pytest.fixture(scope="module")
def scores():
    rows = [{"experiment": experiment, "language": language, "dataset": dataset, "model": "mbert", "seed": seed,
             "level": "fine", "category": category, "mcc": _mcc(experiment, language, category, seed)}
            for experiment in ("base", "extra") for language, dataset in (("en", "axb"), ("sv", "swediagnostics"))
            for seed in (0, 1, 2) for category in CATEGORIES]
    rows.append({**rows[0], "level": "coarse", "category": "Logic", "mcc": 0.9})  # another level: left out
    return pd.DataFrame(rows)


def _cells(ax, shape):
    return np.asarray(ax.collections[0].get_array()).reshape(shape)


def _labels(ticks):
    return [t.get_text() for t in ticks]


def test_category_seed_heatmap_shows_each_runs_score(scores):
    ax = category_seed_heatmap(scores, {"experiment": "base", "language": "sv"}).axes[0]
    assert _labels(ax.get_yticklabels()) == ORDERED and _labels(ax.get_xticklabels()) == ["0", "1", "2"]
    np.testing.assert_allclose(_cells(ax, (3, 3)), [[_mcc("base", "sv", c, s) for s in range(3)] for c in ORDERED])
    assert ax.get_title() == "MCC per fine category and seed (base, sv (SweDiagnostics))"
    assert ax.collections[0].colorbar.ax.get_ylabel() == "mcc"


def test_a_selection_that_matches_nothing_is_refused(scores):
    with pytest.raises(ValueError, match="nothing to plot for .*: the selection is empty"):
        category_seed_heatmap(scores, {"experiment": "nope"})


def test_category_language_heatmap_labels_substitute_sets(scores):
    stability = scores.groupby(["experiment", "language", "dataset", "level", "category"], as_index=False)["mcc"] \
        .agg(mean="mean", std="std")
    ax = category_language_heatmap(stability, {"experiment": "extra"}).axes[0]
    assert _labels(ax.get_xticklabels()) == ["en", "sv (SweDiagnostics)"]
    expected = [[np.mean([_mcc("extra", lang, c, s) for s in range(3)]) for lang in ("en", "sv")] for c in ORDERED]
    np.testing.assert_allclose(_cells(ax, (3, 2)), expected)
    assert ax.get_title() == "Seed-mean MCC per category and language"
    ax = category_language_heatmap(stability, {"experiment": "extra"}, value="std", title="Spread").axes[0]
    np.testing.assert_allclose(_cells(ax, (3, 2)), 0.01)  # seeds 0.01 apart: σ 0.01
    assert ax.get_title() == "Spread"


def test_delta_heatmap_spreads_the_chosen_column(scores):
    deltas = pd.DataFrame({"level": "fine", "category": ["Negation", "Core args", "Negation"],
                           "model": ["mbert", "mbert", "xlmr"], "mcc_delta": [0.2, -0.1, 0.05]})
    ax = delta_heatmap(deltas, columns="model").axes[0]
    assert _labels(ax.get_yticklabels()) == ["Core args", "Negation"]
    assert _labels(ax.get_xticklabels()) == ["mbert", "xlmr"]
    cells = _cells(ax, (2, 2))
    np.testing.assert_allclose(cells[0, 0], -0.1)
    np.testing.assert_allclose(cells[1], [0.2, 0.05])
    assert np.isnan(cells[0, 1]) and len(ax.texts) == 3  # no delta: an empty cell, not zero, nothing written
    assert ax.get_title() == "mcc_delta per category"
    ax = delta_heatmap(deltas.drop(columns="model")[:2]).axes[0]  # no language column: one column "delta"
    assert _labels(ax.get_xticklabels()) == ["delta"]


def test_ci_forest_plot_draws_one_interval_per_row():
    ci = pd.DataFrame({"category": ["Negation", "Core args"], "estimate": [0.3, -0.1], "ci_low": [0.1, -0.3],
                       "ci_high": [0.4, 0.2]})
    ax = ci_forest_plot(ci).axes[0]
    (bars,) = ax.containers
    np.testing.assert_allclose(bars.lines[0].get_xdata(), [0.3, -0.1])
    segments = bars.lines[2][0].get_segments()
    np.testing.assert_allclose([s[:, 0] for s in segments], [[0.1, 0.4], [-0.3, 0.2]])
    assert _labels(ax.get_yticklabels()) == ["Negation", "Core args"] and ax.yaxis_inverted()  # first on top
    assert ax.get_xlabel() == "estimate" and ax.get_legend() is None
    references = [line for line in ax.lines if line is not bars.lines[0] and line not in bars.lines[1]]  # no caps
    assert len(references) == 1 and list(references[0].get_xdata()) == [0.0, 0.0]


def test_ci_forest_plot_offsets_and_names_each_hue():
    ci = pd.DataFrame({"category": ["a", "b", "a", "b"], "language": ["en", "en", "ru", "ru"],
                       "delta": [0.1, 0.2, 0.3, 0.4], "lo": [0.0] * 4, "hi": [0.5] * 4})
    ax = ci_forest_plot(ci, estimate="delta", low="lo", high="hi", hue="language", reference=None).axes[0]
    en, ru = ax.containers
    np.testing.assert_allclose(ru.lines[0].get_ydata() - en.lines[0].get_ydata(), 0.35)  # side by side per row
    legend = ax.get_legend()
    assert _labels(legend.get_texts()) == ["en", "ru"] and legend.get_title().get_text() == "language"
    assert len(ax.lines) == 2 * (1 + 2)  # per hue its points and two caps: reference=None draws no line
    with pytest.raises(ValueError, match=r"column 'estimate' not in the CI table \(columns: \['category', "):
        ci_forest_plot(ci)


def test_category_trajectories_join_each_categorys_two_means(scores):
    fig = category_trajectories(scores, {"experiment": "base"}, {"experiment": "extra"}, labels=("before", "after"))
    assert len(fig.axes) == 2
    en, sv = fig.axes
    assert en.get_title() == "en: mean rise +0.200"
    assert sv.get_title() == "sv (SweDiagnostics): mean rise +0.200"
    assert len(en.lines) == 3 + 1  # one line per category, and the zero line
    joined = {tuple(np.round(line.get_ydata(), 6)) for line in en.lines[:3]}
    assert joined == {(round(np.mean([_mcc("base", "en", c, s) for s in range(3)]), 6),
                       round(np.mean([_mcc("extra", "en", c, s) for s in range(3)]), 6)) for c in CATEGORIES}
    assert all(line.get_color() == "tab:green" for line in en.lines[:3])  # every category rose
    assert sorted(t.get_text() for t in en.texts) == sorted(CATEGORIES)  # the largest rises (at most five) named
    assert _labels(en.get_xticklabels()) == ["before", "after"]
    assert en.get_ylabel() == "seed-mean MCC per category"


def test_category_trajectories_refuse_selections_without_common_rows(scores):
    with pytest.raises(ValueError, match="the two selections share no"):
        category_trajectories(scores, {"experiment": "base"}, {"experiment": "nope"})
