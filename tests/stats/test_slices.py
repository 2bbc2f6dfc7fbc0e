"""Feature slices: per feature, every seed's MCC / accuracy with and without it, against a loop over sklearn."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import matthews_corrcoef

from diagnostics.core.schema import ENTAILMENT, NOT_ENTAILMENT
from diagnostics.core.taxonomy import FINE
from diagnostics.stats import feature_matrix, feature_slices

FEATURES = ["Negation", "Quantifiers", "Named entities"]


def _table(seed: int = 0, n: int = 40, seeds=(0, 1, 2)):
    rng = np.random.default_rng(seed)
    gold = rng.integers(0, 2, n)
    labels = np.array([NOT_ENTAILMENT, ENTAILMENT], dtype=object)
    rows = []
    for s in seeds:
        flip = rng.random(n) < 0.3
        pred = np.where(flip, 1 - gold, gold)
        rows.append(pd.DataFrame({"experiment": "e", "language": "en", "model": "m", "seed": s, "dataset": "set",
                                  "example_id": [f"x{i}" for i in range(n)], "label": labels[gold],
                                  "prediction": labels[pred]}))
    annotations = pd.DataFrame({"id": [f"x{i}" for i in range(n)],
                                "auto_features": [[f for f in FEATURES if rng.random() < 0.4] for _ in range(n)]})
    return pd.concat(rows, ignore_index=True), annotations


def test_slices_equal_a_loop_over_sklearn():
    table, annotations = _table()
    slices = feature_slices(table, annotations)
    has = {row.id: set(row.auto_features) for row in annotations.itertuples()}
    for feature in FEATURES:
        row = slices.table.set_index("feature").loc[feature]
        for side in ("with", "without"):
            mccs, accs = [], []
            for _, run in table.groupby("seed"):
                keep = run["example_id"].map(lambda i: (feature in has[i]) == (side == "with"))
                y, p = run.loc[keep, "label"] == ENTAILMENT, run.loc[keep, "prediction"] == ENTAILMENT
                mccs.append(matthews_corrcoef(y, p))
                accs.append(float(np.mean(y == p)))
            assert row[f"mcc_{side}"] == pytest.approx(np.mean(mccs), abs=1e-12)
            assert row[f"mcc_{side}_sd"] == pytest.approx(np.std(mccs, ddof=1), abs=1e-12)
            assert row[f"accuracy_{side}"] == pytest.approx(np.mean(accs), abs=1e-12)
            assert row[f"n_{side}"] == int(keep.sum())
        assert row["mcc_delta"] == pytest.approx(row["mcc_with"] - row["mcc_without"])
    per_seed = slices.per_seed
    assert len(per_seed) == len(FEATURES) * 3 * 2 and set(per_seed["side"]) == {"with", "without"}


def test_flipping_pairs_are_those_whose_seeds_disagree():
    table, annotations = _table(seed=3)
    slices = feature_slices(table, annotations)
    votes = table.assign(e=table["prediction"] == ENTAILMENT).groupby("example_id")["e"].agg(["sum", "count"])
    flipping = set(votes.index[(votes["sum"] > 0) & (votes["sum"] < votes["count"])])
    for feature in FEATURES:
        carriers = {row.id for row in annotations.itertuples() if feature in row.auto_features}
        listed = set(slices.flips.loc[slices.flips["feature"] == feature, "example_id"])
        assert listed == flipping & carriers
        row = slices.table.set_index("feature").loc[feature]
        assert row["flipping_with"] == len(flipping & carriers)
    assert set(slices.flips["flip_rate"].round(6)) <= {round(2 / 3, 6)}  # three seeds, one dissents


def test_one_seed_has_no_sigma_and_missing_annotations_are_named():
    table, annotations = _table(seeds=(0,))
    slices = feature_slices(table, annotations)
    assert slices.table["mcc_with_sd"].isna().all() and slices.flips.empty
    with pytest.raises(KeyError, match="x0"):
        feature_slices(table, annotations.iloc[1:])
    names, matrix = feature_matrix(annotations, ["x1", "x0"])
    assert names == [f for f in FINE if f in names]  # taxonomy order
    assert matrix.shape == (2, len(names))


def test_the_figure_has_one_panel_per_setting_and_a_bar_per_feature_and_side():
    from diagnostics.plots import feature_slices_figure

    table, annotations = _table()
    other = table.assign(model="m2")
    slices = feature_slices(pd.concat([table, other], ignore_index=True), annotations)
    fig = feature_slices_figure(slices.table)
    assert len(fig.axes) == 2
    assert all(len(ax.patches) == 2 * len(FEATURES) for ax in fig.axes)
    empty = feature_slices_figure(slices.table.iloc[:0])
    assert len(empty.axes) == 1
