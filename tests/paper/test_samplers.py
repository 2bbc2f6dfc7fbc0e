"""The statistics of run arrays: a cross-language correlation pairs every run of one language with every run of
the other."""

from __future__ import annotations

import numpy as np
import pytest

from diagnostics.paper._draws import StoreValues
from diagnostics.paper._samplers import RUN_VALUES
from diagnostics.paper._view import StoreView

from _paper_stores import Row, hand_scores


def test_cross_language_runs_are_not_paired_by_seed_index():
    scores = hand_scores({("en", "a"): [0.1, 0.5, 0.2], ("en", "b"): [0.4, 0.1, 0.3], ("en", "c"): [0.0, 0.2, 0.6],
                          ("ru", "a"): [0.3, 0.2], ("ru", "b"): [0.1, 0.4], ("ru", "c"): [0.5, 0.0]})
    view = StoreView(scores)
    row = Row("cross_language_corr", "base", None, "all", "overall", 0, "value", 0.3)
    runs = RUN_VALUES["cross_language_corr"](StoreValues(scores), view, row)
    en = np.array([[0.1, 0.4, 0.0], [0.5, 0.1, 0.2], [0.2, 0.3, 0.6]])
    ru = np.array([[0.3, 0.1, 0.5], [0.2, 0.4, 0.0]])
    by_hand = [np.corrcoef(en[s], ru[t])[0, 1] for s in range(3) for t in range(2)]  # every en run with every ru
    np.testing.assert_allclose(runs.values[0], by_hand)
    assert runs.n_seeds == 2 and runs.run(1) == pytest.approx(np.corrcoef(en[1], ru[1])[0, 1])
