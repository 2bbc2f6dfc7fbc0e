"""Behavioural-test figures (``diagnostics/plots/_behave.py``): the failure-rate heat map (capability or test x
language, mean over runs) and the bars of failure rate per seed, one panel per language."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from diagnostics.plots import failure_by_seed, failure_heatmap  # noqa: E402

#: (seed, language, capability, test) -> outcomes of its cases (True: failed).
CASES = {
    (0, "en", "Negation", "not"): [True, False, False, False],
    (0, "en", "Vocabulary", "syn"): [True, True, False, False],
    (0, "ru", "Negation", "not"): [True, True, True, False],
    (0, "ru", "Vocabulary", "syn"): [False, False, False, False],
    (1, "en", "Negation", "not"): [True, True, False, False],
    (1, "en", "Vocabulary", "syn"): [False, False, False, False],
    (1, "ru", "Negation", "not"): [True, True, True, True],
    (1, "ru", "Vocabulary", "syn"): [True, False, False, False],
}


@pytest.fixture(scope="module")
def results():
    rows = [{"seed": seed, "run": f"m/{seed}", "language": language, "capability": capability, "type": "MFT",
             "test": test, "failed": failed}
            for (seed, language, capability, test), outcomes in CASES.items() for failed in outcomes]
    return pd.DataFrame(rows)


def _rate(seed, language, capability):
    outcomes = next(v for k, v in CASES.items() if k[:3] == (seed, language, capability))
    return sum(outcomes) / len(outcomes)


def test_the_heat_map_shows_the_mean_failure_rate_over_runs(results):
    ax = failure_heatmap(results).axes[0]
    cells = np.asarray(ax.collections[0].get_array()).reshape(2, 2)
    expected = [[np.mean([_rate(s, lang, cap) for s in (0, 1)]) for lang in ("en", "ru")]
                for cap in ("Negation", "Vocabulary")]
    np.testing.assert_allclose(cells, expected)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["Negation", "Vocabulary"]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["en", "ru"]
    assert ax.get_xlabel() == "language" and ax.get_ylabel() == "capability"
    assert ax.get_title() == "Behavioural failure rate (mean of 2 runs)"
    assert [t.get_text() for t in ax.texts] == [f"{v:.2f}" for row in expected for v in row]
    assert ax.collections[0].colorbar.ax.get_ylabel() == "failure rate"


def test_one_run_is_not_called_a_mean_and_rows_can_be_tests(results):
    one = results[results["seed"] == 0]
    ax = failure_heatmap(one, by="test", title="Failures").axes[0]
    assert ax.get_title() == "Failures"
    assert [t.get_text() for t in ax.get_yticklabels()] == ["not", "syn"] and ax.get_ylabel() == "test"
    np.testing.assert_allclose(np.asarray(ax.collections[0].get_array()).reshape(2, 2),
                               [[0.25, 0.75], [0.5, 0.0]])


def test_the_heat_map_refuses_other_rows(results):
    with pytest.raises(ValueError, match="by must be 'capability' or 'test', got 'language'"):
        failure_heatmap(results, by="language")


def test_bars_per_seed_one_panel_per_language(results):
    fig = failure_by_seed(results)
    assert len(fig.axes) == 2 and fig.get_suptitle() == "Failure rate per seed"
    for ax, language in zip(fig.axes, ("en", "ru")):
        assert ax.get_ylabel() == f"{language}: failure rate" and ax.get_ylim() == (0, 1)
        assert [t.get_text() for t in ax.get_legend().get_texts()] == ["0", "1"]
        assert ax.get_legend().get_title().get_text() == "seed"
        bars = [p for p in ax.patches if p.get_height() > 0 or p.get_width() > 0]
        assert len(bars) == 4  # 2 capabilities x 2 seeds
        # seaborn draws one hue level after the other: seed 0's bars, then seed 1's, in capability order
        heights = [bar.get_height() for bar in bars]
        assert heights == pytest.approx([_rate(s, language, c) for s in (0, 1) for c in ("Negation", "Vocabulary")])
    assert [t.get_text() for t in fig.axes[1].get_xticklabels()] == ["Negation", "Vocabulary"]


def test_bars_for_one_language_and_results_without_seeds(results):
    fig = failure_by_seed(results, language="ru")
    assert len(fig.axes) == 1 and fig.axes[0].get_ylabel() == "ru: failure rate"
    with pytest.raises(ValueError, match="results have no 'seed' column; use run_sweep"):
        failure_by_seed(results.drop(columns="seed"))
