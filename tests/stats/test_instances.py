"""Instance-level seed stability (``diagnostics.stats._instances``) checked against plain loops over the table."""

from __future__ import annotations

import itertools
import statistics

import numpy as np
import pandas as pd
import pytest

from diagnostics import stats
from diagnostics.core.schema import ENTAILMENT, NOT_ENTAILMENT
from diagnostics.core.taxonomy import FINE
from diagnostics.stats import category_instability, flip_rate, instance_stability, mcc, sigma_drivers

CATEGORIES = list(FINE[:4])
# the fixture leaves some (run, example) rows out on purpose
pytestmark = pytest.mark.filterwarnings("ignore::diagnostics.stats._table.ExampleSetWarning")


def _dataset(n: int = 40, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    features = [[c for c in CATEGORIES if rng.random() < 0.35] or [CATEGORIES[i % 4]] for i in range(n)]
    return pd.DataFrame({"id": [f"x{i}" for i in range(n)], "premise": [f"premise {i}" for i in range(n)],
                         "hypothesis": [f"hypothesis {i}" for i in range(n)],
                         "label": rng.choice([ENTAILMENT, NOT_ENTAILMENT], n), "features": features})


def _predictions(dataset: pd.DataFrame, seeds=(0, 1, 2, 3), languages=("en", "ru"), seed: int = 1,
                 drop: float = 0.05) -> pd.DataFrame:
    """Seeds that mostly agree (a per-example base guess, flipped with some probability), a few rows missing."""
    rng = np.random.default_rng(seed)
    rows = []
    for language in languages:
        base = rng.random(len(dataset)) < 0.5
        for s in seeds:
            flip = rng.random(len(dataset)) < 0.2
            for i, example in dataset.iterrows():
                if rng.random() < drop:
                    continue
                entail = bool(base[i] ^ flip[i])
                rows.append({"experiment": "base", "language": language, "model": "m", "seed": s, "dataset": "syn",
                             "example_id": example["id"], "label": example["label"],
                             "prediction": ENTAILMENT if entail else NOT_ENTAILMENT,
                             "probability": float(np.clip(0.5 + (0.3 if entail else -0.3) + rng.normal(0, 0.1),
                                                          0, 1))})
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def table():
    dataset = _dataset()
    return dataset, _predictions(dataset)


def _by_example(predictions: pd.DataFrame):
    """setting -> example id -> {seed: (prediction, probability)}, by a loop over the rows."""
    out: dict = {}
    for row in predictions.itertuples(index=False):
        out.setdefault(row.language, {}).setdefault(row.example_id, {})[row.seed] = (row.prediction, row.probability)
    return out


def test_flip_rate_is_the_share_of_disagreeing_seed_pairs(table):
    _, predictions = table
    found = instance_stability(predictions)
    by = _by_example(predictions)
    assert len(found) == sum(len(v) for v in by.values())
    for row in found.itertuples(index=False):
        seeds = by[row.language][row.example_id]
        labels = [seeds[s][0] for s in sorted(seeds)]
        pairs = list(itertools.combinations(labels, 2))
        expected = sum(a != b for a, b in pairs) / len(pairs)
        assert row.flip_rate == pytest.approx(expected)
        assert row.flips == (len(set(labels)) > 1)
        assert row.n_seeds == len(labels) and row.n_entailment == labels.count(ENTAILMENT)
        minority = min(labels.count(ENTAILMENT), labels.count(NOT_ENTAILMENT))
        assert row.minority_share == pytest.approx(minority / len(labels))
        assert row.accuracy == pytest.approx(sum(label == row.label for label in labels) / len(labels))
        # every seed's prediction and probability, in seed order, None / NaN where the seed has none
        for s, prediction, probability in zip(row.seeds, row.predictions, row.probabilities):
            if s in seeds:
                assert prediction == seeds[s][0] and probability == pytest.approx(seeds[s][1])
            else:
                assert prediction is None and np.isnan(probability)
        probabilities = [seeds[s][1] for s in sorted(seeds)]
        assert row.mean_probability == pytest.approx(statistics.fmean(probabilities))
        assert row.probability_std == pytest.approx(statistics.stdev(probabilities))


def test_flip_rate_formula_edge_cases():
    assert flip_rate([0, 3, 1, 2, 1], [3, 3, 3, 4, 2]).tolist()[:5] == pytest.approx([0, 0, 2 / 3, 2 / 3, 1])
    assert np.isnan(flip_rate([1], [1])[0]) and np.isnan(flip_rate([0], [0])[0])


def test_mean_flip_rate_is_one_minus_pairwise_agreement(table):
    dataset, predictions = table
    complete = _predictions(dataset, drop=0.0)
    per = instance_stability(complete)
    for language, group in complete.groupby("language"):
        wide = group.pivot(index="example_id", columns="seed", values="prediction")
        assert 1 - stats.pairwise_agreement(wide.to_numpy()) == pytest.approx(
            per[per["language"] == language]["flip_rate"].mean())


def _loop_sigma(rows: list[tuple[str, dict]], seeds, without: str | None = None) -> float:
    """σ (ddof=1) over seeds of MCC over the category's examples, one left out, by plain loops."""
    values = []
    for s in seeds:
        gold, pred = [], []
        for example_id, (label, by_seed) in rows:
            if example_id == without or s not in by_seed:
                continue
            gold.append(int(label == ENTAILMENT))
            pred.append(int(by_seed[s] == ENTAILMENT))
        if gold:
            values.append(mcc(gold, pred))
    return statistics.stdev(values) if len(values) >= 2 else float("nan")


def _category_rows(dataset, predictions, language, category):
    members = dataset[dataset["features"].map(lambda f: category in f)]
    sub = predictions[predictions["language"] == language]
    rows = []
    for example in members.itertuples(index=False):
        mine = sub[sub["example_id"] == example.id]
        if len(mine):
            rows.append((example.id, (example.label, dict(zip(mine["seed"], mine["prediction"])))))
    return rows


def test_sigma_drivers_match_leave_one_out_loops(table):
    dataset, predictions = table
    drivers = sigma_drivers(predictions, dataset)
    seeds = sorted(predictions["seed"].unique())
    checked = 0
    for language in ("en", "ru"):
        for category in CATEGORIES:
            rows = _category_rows(dataset, predictions, language, category)
            sigma = _loop_sigma(rows, seeds)
            found = drivers[(drivers["language"] == language) & (drivers["category"] == category)]
            assert sorted(found["example_id"]) == sorted(r[0] for r in rows)
            assert found["delta_sigma"].is_monotonic_decreasing
            for row in found.itertuples(index=False):
                without = _loop_sigma(rows, seeds, row.example_id)
                assert row.sigma == pytest.approx(sigma) and row.sigma_without == pytest.approx(without)
                assert row.delta_sigma == pytest.approx(sigma - without)
                checked += 1
    assert checked > 50


def test_category_instability_against_loops_and_stability(table):
    dataset, predictions = table
    found = category_instability(predictions, dataset)
    per = instance_stability(predictions).set_index(["language", "example_id"])
    drivers = sigma_drivers(predictions, dataset)
    for row in found.itertuples(index=False):
        rows = _category_rows(dataset, predictions, row.language, row.category)
        flipping = [e for e, (_, by_seed) in rows if len(set(by_seed.values())) > 1]
        assert row.n == len(rows) and row.n_flipping == len(flipping)
        assert row.flip_share == pytest.approx(len(flipping) / len(rows))
        assert row.mean_flip_rate == pytest.approx(per.loc[[(row.language, e) for e, _ in rows], "flip_rate"].mean())
        mine = drivers[(drivers["language"] == row.language) & (drivers["category"] == row.category)]
        assert row.top_driver == mine["example_id"].iloc[0]
        assert row.top_delta_sigma == pytest.approx(mine["delta_sigma"].iloc[0])
    # σ and mean are those of stats.stability over category_scores
    scored = stats.stability(stats.category_scores(predictions, dataset, levels=("fine",), validate=False))
    merged = found.merge(scored, on=["experiment", "language", "model", "dataset", "category"])
    assert len(merged) == len(found)
    np.testing.assert_allclose(merged["sigma"], merged["std"])
    np.testing.assert_allclose(merged["mean_x"], merged["mean_y"])
    for _, group in found.groupby("language", sort=False):
        assert group["sigma"].is_monotonic_decreasing


def test_nested_design_counts_every_run_as_a_seed(table):
    dataset, _ = table
    predictions = _predictions(dataset, seeds=(0, 1), languages=("en",), drop=0.0)
    second = _predictions(dataset, seeds=(0, 1), languages=("en",), seed=7, drop=0.0)
    nested = pd.concat([predictions.assign(pretrain_seed=0), second.assign(pretrain_seed=1)], ignore_index=True)
    found = instance_stability(nested)
    assert found["seeds"].iloc[0] == ((0, 0), (0, 1), (1, 0), (1, 1)) and (found["n_seeds"] == 4).all()


def test_conflicting_gold_labels_are_refused(table):
    _, predictions = table
    bad = predictions.copy()
    first = bad.index[(bad["example_id"] == "x0") & (bad["language"] == "en")][0]
    bad.loc[first, "label"] = NOT_ENTAILMENT if bad.loc[first, "label"] == ENTAILMENT else ENTAILMENT
    with pytest.raises(ValueError, match="different gold labels"):
        instance_stability(bad)


def test_a_table_without_probabilities():
    dataset = _dataset(12)
    predictions = _predictions(dataset, seeds=(0, 1, 2), languages=("en",)).drop(columns="probability")
    found = instance_stability(predictions)
    assert "probabilities" not in found and "mean_probability" not in found
    assert found["flip_rate"].notna().all()
