"""The seed planner against a known generating process.

Synthetic runs: examples in 4 categories, each with a difficulty drawn once (the example effect), each seed with a
skill per category (the seed effect); a run predicts an example correctly with probability
``sigmoid(alpha + skill + difficulty)`` (the seed x example luck). The true half-width of a study and the true
power of a test are measured by Monte-Carlo on fresh seeds (and fresh examples) of that process; the planner only
sees a pilot of seeds on one set of examples.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps
from typer.testing import CliRunner

from diagnostics.core.taxonomy import FINE
from diagnostics.stats import mcc_from_counts, plan_seeds, simulate_plan, variance_components

CATEGORIES = list(FINE[:4])
PER_CATEGORY = 150
SKILL_SD = 0.35
DIFFICULTY_SD = 1.0


def _examples(rng, scale: int = 1):
    n = PER_CATEGORY * scale
    category = np.repeat(np.arange(len(CATEGORIES)), n)
    gold = np.tile(np.arange(n) % 2, len(CATEGORIES)).astype(float)
    difficulty = rng.normal(0, DIFFICULTY_SD, len(category))
    return category, gold, difficulty


def _runs(rng, examples, n_seeds: int, alpha: float = 1.0) -> np.ndarray:
    """0/1 predictions, seeds x examples."""
    category, gold, difficulty = examples
    skill = rng.normal(0, SKILL_SD, size=(n_seeds, len(CATEGORIES)))
    logit = alpha + skill[:, category] + difficulty[None, :]
    correct = rng.random(logit.shape) < 1 / (1 + np.exp(-logit))
    return np.where(correct, gold[None, :], 1 - gold[None, :])


def _mcc(pred: np.ndarray, examples) -> np.ndarray:
    """Per-category MCC of every run: (runs, categories)."""
    category, gold, _ = examples
    out = np.empty((len(pred), len(CATEGORIES)))
    for c in range(len(CATEGORIES)):
        p, y = pred[:, category == c], gold[category == c][None, :]
        tp, fp = (p * y).sum(1), (p * (1 - y)).sum(1)
        fn, tn = ((1 - p) * y).sum(1), ((1 - p) * (1 - y)).sum(1)
        out[:, c] = mcc_from_counts(tp, fp, fn, tn)[0]
    return out


def _table(pred: np.ndarray, examples, experiment: str = "a") -> tuple[pd.DataFrame, pd.DataFrame]:
    category, gold, _ = examples
    ids = [f"x{i}" for i in range(len(gold))]
    label = np.where(gold == 1, "entailment", "not_entailment")
    dataset = pd.DataFrame({"id": ids, "label": label, "features": [[CATEGORIES[c]] for c in category]})
    parts = [pd.DataFrame({"experiment": experiment, "language": "en", "model": "m", "seed": s, "dataset": "synth",
                           "example_id": ids, "label": label,
                           "prediction": np.where(row == 1, "entailment", "not_entailment")})
             for s, row in enumerate(pred)]
    return pd.concat(parts, ignore_index=True), dataset


@pytest.fixture(scope="module")
def world():
    rng = np.random.default_rng(11)
    examples = _examples(rng)
    pilot = _runs(rng, examples, 40)
    table, dataset = _table(pilot, examples)
    components = variance_components(table, dataset=dataset, n_boot=300, seed=0)
    pool = _mcc(_runs(rng, examples, 12000), examples)  # fresh seeds on the pilot's examples
    return {"rng": rng, "examples": examples, "table": table, "dataset": dataset, "components": components,
            "pool": pool}


def test_pilot_scores_are_the_category_scores(world):
    from diagnostics.stats import category_scores

    scores = category_scores(world["table"], dataset=world["dataset"], levels=("fine",))
    expected = scores.pivot(index="seed", columns="category", values="mcc")
    for _, row in world["components"].iterrows():
        assert np.allclose(row["scores"], expected[row["category"]].to_numpy())
    assert (world["components"]["n_examples"] == PER_CATEGORY).all()
    overall = variance_components(world["table"], by="overall", dataset=world["dataset"], n_boot=20)
    expected = category_scores(world["table"], dataset=world["dataset"], levels=("overall",))
    assert np.allclose(overall["scores"].iat[0], expected.sort_values("seed")["mcc"].to_numpy())
    assert overall["n_examples"].iat[0] == PER_CATEGORY * len(CATEGORIES)


@pytest.mark.parametrize("quantity", ["mean", "sigma"])
def test_half_width_matches_monte_carlo_of_the_true_process(world, quantity):
    plan = simulate_plan(world["components"], half_width=0.05, quantity=quantity, max_seeds=12, n_sims=4000,
                         pilot_level=0.99)
    pool, level = world["pool"], 0.95
    ratios = []
    for n in (3, 6, 12):
        studies = pool[: (len(pool) // n) * n].reshape(-1, n, len(CATEGORIES))
        s = studies.std(axis=1, ddof=1)
        if quantity == "mean":
            truth = (sps.t.ppf((1 + level) / 2, n - 1) * s / np.sqrt(n)).mean(axis=0)
        else:
            spread = (np.sqrt((n - 1) / sps.chi2.ppf((1 - level) / 2, n - 1))
                      - np.sqrt((n - 1) / sps.chi2.ppf((1 + level) / 2, n - 1))) / 2
            truth = (s * spread).mean(axis=0)
        predicted = plan.curve[plan.curve["n_seeds"] == n].set_index("category").loc[CATEGORIES]
        ratios.append(predicted["value"].to_numpy() / truth)
        # the pilot's own uncertainty (99% limits of its seed variance) covers the truth
        assert np.all(predicted["value_sigma_low"].to_numpy() <= truth * 1.01), (n, predicted, truth)
        assert np.all(predicted["value_sigma_high"].to_numpy() >= truth * 0.99), (n, predicted, truth)
    # a 40-seed pilot estimates sigma within ~11% (1 SE): the point prediction is that close
    assert np.all(np.abs(np.array(ratios) - 1) < 0.3), ratios


def test_resampled_examples_match_the_sampling_sd_of_fresh_studies(world):
    rng, comp = world["rng"], world["components"]
    plan = simulate_plan(comp, half_width=0.05, examples="resampled", example_scales=(1, 2), max_seeds=10,
                         n_sims=500)
    for scale in (1, 2):
        for n in (3, 10):
            means = []
            for _ in range(300):  # fresh examples and fresh seeds per study
                examples = _examples(rng, scale)
                means.append(_mcc(_runs(rng, examples, n), examples).mean(axis=0))
            truth = np.std(means, axis=0, ddof=1)
            row = plan.curve[(plan.curve["n_seeds"] == n) & (plan.curve["example_scale"] == scale)]
            predicted = row.set_index("category").loc[CATEGORIES, "model_se"].to_numpy()
            assert np.all(np.abs(predicted / truth - 1) < 0.35), (scale, n, predicted / truth)
            assert abs(np.mean(predicted / truth) - 1) < 0.15, (scale, n, predicted / truth)
    # the half-width levels off at the example floor: seeds alone cannot go below it
    needed = plan.needed.set_index(["category", "example_scale"])
    assert (needed["limit"] > 0).all()
    assert (needed.xs(2, level="example_scale")["limit"] < needed.xs(1, level="example_scale")["limit"]).all()


def test_power_matches_monte_carlo_of_the_true_process(world):
    rng, examples, comp, pool_a = world["rng"], world["examples"], world["components"], world["pool"]
    pool_b = _mcc(_runs(rng, examples, 10000, alpha=1.25), examples)
    delta = pool_b.mean(axis=0) - pool_a.mean(axis=0)
    for c, name in enumerate(CATEGORIES):
        plan = simulate_plan(comp[comp["category"] == name], delta=float(delta[c]), max_seeds=10, n_sims=4000,
                             pilot_level=0.99)
        for n in (3, 6, 10):
            a = pool_a[: 1000 * n, c].reshape(-1, n)
            b = pool_b[: 1000 * n, c].reshape(-1, n)
            truth = (sps.ttest_ind(b, a, axis=1, equal_var=False).pvalue < 0.05).mean()
            predicted = plan.curve[plan.curve["n_seeds"] == n].iloc[0]
            assert abs(predicted["value"] - truth) < 0.15, (name, n, predicted["value"], truth)
            # Monte-Carlo slack (1000 true studies, 4000 simulated): 0.04
            assert predicted["value_sigma_high"] - 0.04 <= truth <= predicted["value_sigma_low"] + 0.04, \
                (name, n, predicted, truth)


def test_recommended_seeds_are_monotone_in_the_target(world):
    comp = world["components"]
    widths = [0.2, 0.1, 0.06, 0.04, 0.03]
    needed = [simulate_plan(comp, half_width=w, max_seeds=40, n_sims=1000).needed.set_index("category")["n_seeds"]
              .astype("float64").fillna(np.inf) for w in widths]
    for looser, tighter in zip(needed, needed[1:]):
        assert (tighter >= looser).all()
    assert (needed[-1] > needed[0]).all()
    powers = [0.5, 0.7, 0.8, 0.9]
    needed = [simulate_plan(comp, delta=0.08, power=p, max_seeds=40, n_sims=1000).needed.set_index("category")
              ["n_seeds"].astype("float64").fillna(np.inf) for p in powers]
    for weaker, stronger in zip(needed, needed[1:]):
        assert (stronger >= weaker).all()
    plan = simulate_plan(comp, half_width=0.05, max_seeds=40, n_sims=1000)
    assert (plan.needed["n_seeds_optimistic"] <= plan.needed["n_seeds"]).all()
    assert (plan.needed["n_seeds"] <= plan.needed["n_seeds_conservative"].fillna(10**6)).all()


def test_pilot_shape_agrees_with_the_normal_model_on_normal_like_seeds(world):
    normal = simulate_plan(world["components"], half_width=0.05, max_seeds=8, n_sims=3000)
    pilot = simulate_plan(world["components"], half_width=0.05, max_seeds=8, n_sims=3000, seed_shape="pilot")
    assert np.allclose(normal.curve["value"], pilot.curve["value"], rtol=0.1)


def test_plan_needs_two_seeds_and_one_target(world):
    table = world["table"]
    with pytest.raises(ValueError, match="at least 2 pilot seeds"):
        plan_seeds(table[table["seed"] == 0], half_width=0.05, dataset=world["dataset"])
    with pytest.raises(ValueError, match="either half_width"):
        simulate_plan(world["components"], half_width=0.05, delta=0.1)
    with pytest.raises(ValueError, match="examples='fixed'"):
        simulate_plan(world["components"], half_width=0.05, quantity="sigma", examples="resampled")


def test_cli_plan_writes_tables_and_reports_errors_in_one_line(tmp_path):
    from _stats_fixtures import synthetic_table

    from diagnostics.cli import app

    path = tmp_path / "pilot.parquet"
    synthetic_table(seeds=range(4)).to_parquet(path)
    out = tmp_path / "plan"
    result = CliRunner().invoke(app, ["stats", "plan", str(path), "--half-width", "0.1", "--by", "overall",
                                      "--max-seeds", "12", "--sims", "300", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "Seeds needed" in result.output and "n_median" in result.output
    curve = pd.read_csv(out / "plan_curve.csv")
    assert set(curve["n_seeds"]) == set(range(2, 13)) and (curve["metric"] == "half_width").all()
    assert (out / "plan_needed.csv").is_file() and (out / "plan_components.csv").is_file()
    bad = CliRunner().invoke(app, ["stats", "plan", str(path), "--half-width", "0.1", "--delta", "0.05"])
    assert bad.exit_code == 2 and bad.output.count("\n") == 1 and "--half-width" in bad.output
