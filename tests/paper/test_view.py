"""The store as the paper's statistics read it: experiments a paper pattern names, σ and means over languages."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from diagnostics.paper._view import NotComputed, NotRun, StoreView

from _paper_stores import hand_scores

VALUES = {("en", "a"): [0.1, 0.5, 0.3], ("en", "b"): [0.4, 0.1, 0.3], ("ru", "a"): [0.3, 0.2], ("ru", "b"): [0.1, 0.4]}


def _view():
    frames = [hand_scores(VALUES, experiment) for experiment in
              ("base", "extra-10000", "presence-negation-0.5", "presence-negation-0.25", "presence-universal-0.5")]
    return StoreView(pd.concat(frames, ignore_index=True))


def test_experiments_named_by_a_paper_pattern():
    view = _view()
    assert view.experiments("extra-*") == ["base", "extra-10000"]
    assert view.experiments("presence-*-0.5") == ["presence-negation-0.5", "presence-universal-0.5"]
    assert view.experiments("presence-negation-*") == ["presence-negation-0.25", "presence-negation-0.5"]
    assert view.experiments("presence-*") == ["presence-negation-0.25", "presence-negation-0.5",
                                              "presence-universal-0.5"]
    assert view.experiments("extra-374000") == [] and view.experiments(None) == []
    assert view.one("base") == "base"
    with pytest.raises(NotRun, match="no extra-374000 runs"):
        view.one("extra-374000")


def test_sigma_and_mean_per_language_and_over_languages():
    view = _view()
    sd = {key: np.std(values, ddof=1) for key, values in VALUES.items()}
    assert view.sigma("base", "en", "a") == pytest.approx(sd[("en", "a")])
    assert view.sigma("base", "all", "b") == pytest.approx((sd[("en", "b")] + sd[("ru", "b")]) / 2)
    assert view.mean("base", "all", "a") == pytest.approx((np.mean(VALUES[("en", "a")]) + 0.25) / 2)
    overall_en = np.mean([np.mean(pair) for pair in zip(VALUES[("en", "a")], VALUES[("en", "b")])])
    assert view.mean("base", "en", "overall") == pytest.approx(overall_en)  # the mean of the category MCCs
    assert np.isnan(view.sigma("base", "all", "c"))
    with pytest.raises(NotRun, match="no c examples in the en diagnostic set"):
        view.mean("base", "en", "c")
    with pytest.raises(NotRun, match="no base runs in sv"):
        view.rows(view.stab, "base", "sv", "a")
    with pytest.raises(NotComputed, match="needs the runs' configs"):
        view.setting("base", "recipe")
