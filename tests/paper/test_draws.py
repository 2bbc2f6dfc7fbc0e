"""Our runs as arrays for the paper's intervals: the store as it is, its leave-one-seed-out replicates, and stores
simulated with our seeds' mean and covariance."""

from __future__ import annotations

import numpy as np
import pytest

from diagnostics.paper._draws import StoreValues, leave_one_out, simulate_store

from _paper_stores import hand_scores

SCORES = hand_scores({("en", "a"): [0.1, 0.5, 0.2, 0.3], ("en", "b"): [0.4, 0.1, 0.3, 0.0],
                      ("ru", "a"): [0.3, 0.2, 0.6], ("ru", "b"): [0.1, 0.4, 0.2]})


def test_store_values_are_the_runs_by_seed_and_fine_category():
    store = StoreValues(SCORES)
    en = store.get("base", "en")
    assert en.categories == ["a", "b"] and (en.n_draws, en.n_seeds) == (1, 4)
    np.testing.assert_array_equal(en.values[0], [[0.1, 0.4], [0.5, 0.1], [0.2, 0.3], [0.3, 0.0]])
    np.testing.assert_array_equal(en.column("b")[0], [0.4, 0.1, 0.3, 0.0])
    assert en.column("c") is None and store.get("base", "en") is en  # read once
    with pytest.raises(LookupError, match="no fine-category scores of the extra runs in en"):
        store.get("extra", "en")


def test_leave_one_out_drops_each_seed_of_one_setting_and_repeats_the_others():
    store = StoreValues(SCORES)
    replicates = leave_one_out(store, [("base", "en"), ("base", "ru")], ("base", "ru"))
    ru, en = replicates.get("base", "ru"), replicates.get("base", "en")
    assert (ru.n_draws, ru.n_seeds) == (3, 2) and (en.n_draws, en.n_seeds) == (3, 4)
    for i in range(3):  # draw i: every ru seed but i
        np.testing.assert_array_equal(ru.column("a")[i], np.delete([0.3, 0.2, 0.6], i))
        np.testing.assert_array_equal(ru.seed_idx[i], np.delete([0, 1, 2], i))
        np.testing.assert_array_equal(en.values[i], store.get("base", "en").values[0])
    with pytest.raises(LookupError):
        replicates.get("extra", "ru")


def test_simulated_stores_have_our_mean_and_covariance_and_are_fixed_by_their_seed():
    store = StoreValues(SCORES)
    sim = simulate_store(store, [("base", "en")], 3, 40_000, seed=0, stream="paper").get("base", "en")
    assert sim.values.shape == (40_000, 3, 2) and sim.seed_idx.shape == (40_000, 3)
    runs = sim.values.reshape(-1, 2)
    ours = store.get("base", "en").values[0]
    np.testing.assert_allclose(runs.mean(axis=0), ours.mean(axis=0), atol=0.005)
    np.testing.assert_allclose(np.cov(runs.T), np.cov(ours.T), atol=0.003)
    again = simulate_store(store, [("base", "en")], 3, 40_000, seed=0, stream="paper").get("base", "en")
    other = simulate_store(store, [("base", "en")], 3, 40_000, seed=0, stream="ours").get("base", "en")
    np.testing.assert_array_equal(sim.values, again.values)
    assert not np.allclose(sim.values, other.values)
    # runs per setting: ours by default, or one number per setting
    default = simulate_store(store, [("base", "ru")], {}, 5, seed=1, stream="paper").get("base", "ru")
    assert default.n_seeds == 3
