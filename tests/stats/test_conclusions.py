"""``seed_conclusions``: what the seeds conclude together per category or feature, and how many of them alone agree."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from diagnostics.core.schema import ENTAILMENT, NOT_ENTAILMENT
from diagnostics.stats import category_scores, feature_slices, seed_conclusions

SETTING = {"experiment": "evaluated", "language": "en", "model": "m", "dataset": "axb"}


def _scores(per_seed: dict[str, list[float]], whole: list[float], n: dict[str, int] | None = None) -> pd.DataFrame:
    """Category scores of three seeds: ``whole`` is the MCC over all examples, ``per_seed`` each category's."""
    rows = []
    for seed, value in enumerate(whole):
        rows.append({**SETTING, "seed": seed, "level": "all", "category": "All examples", "coarse": None, "n": 100,
                     "mcc": value, "accuracy": 0.5, "degenerate": False})
        for category, values in per_seed.items():
            rows.append({**SETTING, "seed": seed, "level": "fine", "category": category, "coarse": "Logic",
                         "n": (n or {}).get(category, 40), "mcc": values[seed], "accuracy": 0.5,
                         "degenerate": False})
    return pd.DataFrame(rows)


def test_each_seed_is_read_alone_against_the_sets_mcc():
    whole = [0.30, 0.20, 0.40]
    scores = _scores({"Negation": [0.10, 0.05, 0.20],      # -0.20 -0.15 -0.20: lower in every seed
                      "Conditionals": [0.40, 0.10, 0.41],  # +0.10 -0.10 +0.01: mean 0.0033, seeds read + - 0
                      "Universal": [0.45, 0.35, 0.55],     # +0.15 +0.15 +0.15: higher in every seed
                      "Datives": [0.32, 0.22, 0.30]},      # +0.02 +0.02 -0.10: mean -0.02 -> no clear difference
                     whole)
    out = seed_conclusions(scores).set_index("category")
    assert out.loc["Negation", "conclusion"] == "lower" and out.loc["Negation", "holds"]
    assert out.loc["Negation", "effect"] == pytest.approx(np.mean([-0.20, -0.15, -0.20]))
    assert (out.loc["Negation", "effect_min"], out.loc["Negation", "effect_max"]) == pytest.approx((-0.20, -0.15))
    assert out.loc["Universal", "conclusion"] == "higher" and out.loc["Universal", "pair_agreement"] == 1.0
    # three different readings: no seed pair agrees, and only the seed within the margin reads the conclusion
    assert out.loc["Conditionals", "conclusion"] == "no clear difference"
    assert out.loc["Conditionals", "seeds_agreeing"] == 1 and not out.loc["Conditionals", "holds"]
    assert out.loc["Conditionals", "pair_agreement"] == 0.0
    # two seeds of three read alike: one pair of three agrees
    assert out.loc["Datives", "seeds_agreeing"] == 2 and out.loc["Datives", "pair_agreement"] == pytest.approx(1 / 3)
    assert set(out["reference"]) == {"all examples of the set"} and (out["n_seeds"] == 3).all()
    # conclusions that hold come first, the larger difference before the smaller
    assert list(out.index[:2]) == ["Negation", "Universal"]
    # a wider margin turns the small differences into no clear difference in every seed
    wide = seed_conclusions(scores, margin=0.5).set_index("category")
    assert (wide["conclusion"] == "no clear difference").all() and wide["holds"].all()


def test_small_categories_and_one_seed():
    scores = _scores({"Negation": [0.1, 0.1, 0.1], "Quantifiers": [0.0, 0.0, 0.0]}, [0.3, 0.3, 0.3],
                     n={"Quantifiers": 4})
    assert list(seed_conclusions(scores, min_n=10)["category"]) == ["Negation"]
    assert set(seed_conclusions(scores, min_n=4)["category"]) == {"Negation", "Quantifiers"}
    one = seed_conclusions(scores[scores["seed"] == 0]).iloc[0]
    assert one["n_seeds"] == 1 and not one["holds"] and np.isnan(one["pair_agreement"])
    with pytest.raises(ValueError, match="level 'all'"):
        seed_conclusions(scores[scores["level"] == "fine"])
    with pytest.raises(ValueError, match="margin"):
        seed_conclusions(scores, margin=-0.1)
    assert seed_conclusions(scores.iloc[:0]).empty


def test_from_real_predictions_the_category_and_the_feature_readings_match_their_scores():
    rng = np.random.default_rng(7)
    n, labels = 120, np.array([NOT_ENTAILMENT, ENTAILMENT], dtype=object)
    gold = rng.integers(0, 2, n)
    hard = np.arange(n) < 40  # the pairs with the feature: the model errs on half of them, elsewhere on 10 %
    rows = []
    for seed in (0, 1, 2):
        flip = rng.random(n) < np.where(hard, 0.5, 0.1)
        rows.append(pd.DataFrame({**SETTING, "dataset": "set", "seed": seed,
                                  "example_id": [f"x{i}" for i in range(n)], "label": labels[gold],
                                  "prediction": labels[np.where(flip, 1 - gold, gold)]}))
    table = pd.concat(rows, ignore_index=True)
    frame = pd.DataFrame({"id": [f"x{i}" for i in range(n)],
                          "features": [["Negation"] if h else [] for h in hard]})
    scores = category_scores(table, frame, levels=("fine", "all"), validate=False)
    by_category = seed_conclusions(scores).set_index("category").loc["Negation"]
    mcc = scores.pivot_table(index="seed", columns="category", values="mcc")
    effect = mcc["Negation"] - mcc["All examples"]
    assert by_category["effect"] == pytest.approx(effect.mean())
    assert by_category["conclusion"] == "lower" and by_category["holds"] == bool((effect < -0.05).all())

    slices = feature_slices(table, frame, column="features", validate=False)
    by_feature = seed_conclusions(slices).set_index("feature").loc["Negation"]
    seeds = slices.per_seed.pivot_table(index="seed", columns="side", values="mcc")
    assert by_feature["effect"] == pytest.approx((seeds["with"] - seeds["without"]).mean())
    assert by_feature["reference"] == "the pairs without the feature" and by_feature["n"] == 40
    assert by_feature["conclusion"] == "lower" and by_feature["holds"]
