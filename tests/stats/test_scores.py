"""Per-category MCC of every run: against sklearn on the real AX-b categories, degenerate runs, partial coverage, sets
without categories."""

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import matthews_corrcoef

from _stats_fixtures import synthetic_table
from diagnostics import data
from diagnostics.core.taxonomy import COARSE, COARSE_OF
from diagnostics.stats import OVERALL, category_scores


def test_category_scores_match_sklearn_on_axb():
    table = synthetic_table("axb", seeds=range(3))
    scores = category_scores(table)
    ds = data.load("axb").set_index("id")
    features = ds.loc[table["example_id"], "features"].to_numpy()
    fine = scores[scores["level"] == "fine"]
    assert fine["category"].nunique() == 33
    assert len(fine) == 33 * 3
    for row in fine.sample(40, random_state=0).itertuples():
        mask = (table["seed"] == row.seed).to_numpy() & np.array([row.category in f for f in features])
        assert row.n == mask.sum()
        assert row.mcc == pytest.approx(matthews_corrcoef(table["label"][mask], table["prediction"][mask]), abs=1e-12)
        assert row.coarse == COARSE_OF[row.category]
    coarse = scores[scores["level"] == "coarse"]
    assert set(coarse["category"]) == set(COARSE)
    for row in coarse.itertuples():
        mask = (table["seed"] == row.seed).to_numpy() & np.array([any(COARSE_OF[x] == row.category for x in f)
                                                                   for f in features])
        assert row.mcc == pytest.approx(matthews_corrcoef(table["label"][mask], table["prediction"][mask]), abs=1e-12)
    overall = scores[scores["level"] == "overall"].set_index("seed")["mcc"]
    assert overall.to_numpy() == pytest.approx(fine.groupby("seed")["mcc"].mean().loc[overall.index].to_numpy())
    assert (scores[scores["level"] == "overall"]["category"] == OVERALL).all()
    pooled = scores[scores["level"] == "all"].set_index("seed")["mcc"]
    for seed, value in pooled.items():
        sub = table[table["seed"] == seed]
        assert value == pytest.approx(matthews_corrcoef(sub["label"], sub["prediction"]), abs=1e-12)


def test_single_class_predictions_are_degenerate_with_mcc_zero():
    table = synthetic_table("lidirus", seeds=[0, 1], language="ru")
    table.loc[table["seed"] == 1, "prediction"] = "entailment"
    scores = category_scores(table)
    constant = scores[(scores["seed"] == 1) & (scores["level"] != "overall")]
    assert (constant["mcc"] == 0).all() and constant["degenerate"].all()
    assert scores[(scores["seed"] == 1) & (scores["level"] == "overall")]["degenerate"].all()
    assert not scores[(scores["seed"] == 0) & (scores["level"] == "all")]["degenerate"].any()


def test_runs_with_partial_coverage_use_their_own_examples():
    table = synthetic_table("axb", seeds=[0, 1])
    drop = (table["seed"] == 1) & (table.index % 3 == 0)
    part = table[~drop]
    with pytest.warns(UserWarning, match=r"cover different examples \(1104 in all; seed=1: 736\)"):
        scores = category_scores(part)
    row = scores[(scores["seed"] == 1) & (scores["level"] == "all")].iloc[0]
    sub = part[part["seed"] == 1]
    assert row.n == len(sub)
    assert row.mcc == pytest.approx(matthews_corrcoef(sub["label"], sub["prediction"]), abs=1e-12)


def test_dataset_without_features_gives_pooled_score_only():
    frame = data.load("rte", "validation")
    table = pd.DataFrame({"experiment": "x", "language": "en", "model": "m", "seed": 0, "dataset": "rte",
                          "example_id": frame["id"].astype(str), "label": frame["label"], "prediction": "entailment"})
    scores = category_scores(table, dataset=frame)
    assert list(scores["level"]) == ["all"]
    assert scores["degenerate"].item()
