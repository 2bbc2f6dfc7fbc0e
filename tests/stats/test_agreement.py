"""Agreement between seeds: Fleiss' kappa on the textbook example, pairwise agreement per category against brute
force, the table on LiDiRus."""

import itertools

import numpy as np
import pytest

from _stats_fixtures import synthetic_table
from diagnostics.stats import agreement, binary_agreement, fleiss_kappa, fleiss_kappa_from_counts, pairwise_agreement


def test_fleiss_kappa_textbook_example():
    # Fleiss (1971) style worked example (10 subjects, 14 raters, 5 classes), as on Wikipedia "Fleiss' kappa":
    # P_bar = 0.378, P_e = 0.213, kappa = 0.210.
    counts = np.array([[0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
                       [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7]])
    assert fleiss_kappa_from_counts(counts) == pytest.approx(0.210, abs=5e-4)
    ratings = np.array([np.repeat(np.arange(5), row) for row in counts])
    assert fleiss_kappa(ratings) == pytest.approx(fleiss_kappa_from_counts(counts))


def test_agreement_matches_brute_force_per_category():
    rng = np.random.default_rng(3)
    pred = rng.integers(0, 2, (300, 4))
    cats = rng.random((300, 3)) < 0.4
    res = binary_agreement(pred, cats)
    for g in range(3):
        sub = pred[cats[:, g]]
        brute = np.mean([np.mean(sub[:, i] == sub[:, j]) for i, j in itertools.combinations(range(4), 2)])
        assert res["agreement"][g] == pytest.approx(brute)
        assert res["agreement"][g] == pytest.approx(pairwise_agreement(sub))
        assert res["kappa"][g] == pytest.approx(fleiss_kappa(sub))
    assert np.isnan(binary_agreement(np.ones((10, 3)), np.ones((10, 1), bool))["kappa"][0])


def test_agreement_table_on_lidirus():
    table = synthetic_table("lidirus", seeds=range(3), language="ru")
    out = agreement(table)
    assert len(out) == 33 + 1
    wide = table.pivot(index="example_id", columns="seed", values="prediction").to_numpy()
    last = out.iloc[-1]
    assert last["n"] == 1104 and last["kappa"] == pytest.approx(fleiss_kappa(wide))
