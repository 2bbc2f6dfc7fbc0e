"""Study figures name a language scored on a substitute diagnostic set (sv on SweDiagnostics) in their labels."""

import pandas as pd
import pytest

from _stats_fixtures import synthetic_table
from diagnostics.data import display_language
from diagnostics.plots import _stats as plots
from diagnostics.stats import category_scores, deltas, stability

SETS = [("axb", "en"), ("swediagnostics", "sv")]


@pytest.fixture(scope="module")
def scores():
    return category_scores(pd.concat([synthetic_table(name, experiments=(("base", 0.6), ("extra-374000", 0.8)),
                                                      seeds=range(3), language=language, seed=i)
                                      for i, (name, language) in enumerate(SETS)], ignore_index=True))


def test_display_language_names_the_substitute_set():
    assert display_language("sv", "swediagnostics") == "sv (SweDiagnostics)"
    assert display_language("en", "axb") == "en"
    assert display_language("fr", "diagnostic_fr") == "fr"
    assert display_language("ru") == "ru"


def _tick_labels(fig, axis="x"):
    ax = fig.axes[0]
    return [t.get_text() for t in (ax.get_xticklabels() if axis == "x" else ax.get_yticklabels())]


def test_category_language_heatmap_of_the_extra_data_experiment_labels_swedish(scores):
    # the study's Fig. 10: seed-mean MCC per category and language with the most extra data
    fig = plots.category_language_heatmap(stability(scores), {"experiment": "extra-374000"})
    assert _tick_labels(fig) == ["en", "sv (SweDiagnostics)"]
    one_run = plots.category_language_heatmap(scores, {"seed": 0}, value="mcc")
    assert "sv (SweDiagnostics)" in _tick_labels(one_run)


def test_seed_delta_and_trajectory_figures_label_swedish(scores):
    fig = plots.category_seed_heatmap(scores, {"language": "sv", "experiment": "base"})
    assert "sv (SweDiagnostics)" in fig.axes[0].get_title()
    delta = deltas(scores, {"experiment": "base"}, {"experiment": "extra-374000"})
    assert _tick_labels(plots.delta_heatmap(delta)) == ["en", "sv (SweDiagnostics)"]
    fig = plots.category_trajectories(scores, {"experiment": "base"}, {"experiment": "extra-374000"})
    assert [ax.get_title().split(":")[0] for ax in fig.axes] == ["en", "sv (SweDiagnostics)"]
