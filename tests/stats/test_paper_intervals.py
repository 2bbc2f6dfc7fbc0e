"""Each paper number placed in our distribution: prediction intervals over seeds, bootstrap intervals over seeds
and examples, and how often "outside" fires by chance, on hand-built stores whose answers are known."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as scipy_stats
from sklearn.metrics import matthews_corrcoef

from diagnostics import data
from diagnostics.stats import against_paper, category_scores, paper_chance, paper_numbers
from diagnostics.stats._paper_draws import StoreDraws
from diagnostics.stats._paper_intervals import (BOOTSTRAP_BOTH, BOOTSTRAP_SEEDS, PREDICTION, bootstrap_samples,
                                                chance_bootstrap, chance_single_run, normal_chance_bootstrap,
                                                prediction_interval)
from diagnostics.stats._paper_values import StoreView
from diagnostics.stats._scores import OVERALL

from _stats_fixtures import synthetic_table


def _scores(values: dict, experiment: str = "base", model: str = "m") -> pd.DataFrame:
    """A category_scores table by hand: ``{(language, category): [MCC of seed 0, 1, ...]}`` plus each run's overall
    row (the mean of its categories)."""
    rows = []
    for (language, category), mccs in values.items():
        dataset = {"en": "axb", "ru": "lidirus"}[language]
        for seed, value in enumerate(mccs):
            rows.append({"experiment": experiment, "language": language, "model": model, "dataset": dataset,
                         "seed": seed, "level": "fine", "category": category, "coarse": None, "n": 20, "mcc": value,
                         "accuracy": np.nan, "degenerate": False})
    frame = pd.DataFrame(rows)
    overall = frame.groupby(["experiment", "language", "model", "dataset", "seed"], as_index=False)["mcc"].mean()
    overall = overall.assign(level="overall", category=OVERALL, coarse=None, n=20, accuracy=np.nan, degenerate=False)
    return pd.concat([frame, overall[frame.columns]], ignore_index=True)


def _row(frame, statistic, language, category, seed=None):
    chosen = (frame["statistic"] == statistic) & (frame["language"] == language) & (frame["category"] == category)
    chosen &= frame["seed"].isna() if seed is None else (frame["seed"] == seed)
    return frame[chosen].iloc[0]


def _paper_row(statistic, language, category, seed=None):
    return next(r for r in paper_numbers().itertuples(index=False)
                if r.statistic == statistic and r.language == language and r.category == category
                and (pd.isna(r.seed) if seed is None else r.seed == seed))


# --- single-run numbers: the prediction interval of one new run ---------------------------------------------------

#: Five seeds of Conditionals (en): the paper's seed-1 value 0.13 lies between our 2nd and 3rd, its 0.6 far above.
CONDITIONALS = [0.1, 0.11, 0.15, 0.16, 0.2]


@pytest.fixture(scope="module")
def hand_built():
    scores = _scores({("en", "Conditionals"): CONDITIONALS, ("en", "Negation"): [0.3, 0.1, 0.2, 0.4, 0.0],
                      ("ru", "Conditionals"): [0.2, 0.25, 0.3, 0.2, 0.25],
                      ("ru", "Negation"): [0.1, 0.12, 0.1, 0.3, 0.1]})
    return scores, against_paper(scores, n_boot=400, seed=1)


def test_a_single_run_value_is_placed_among_all_our_seeds(hand_built):
    _, frame = hand_built
    between = _row(frame, "mcc", "en", "Conditionals", seed=1)  # paper 0.13
    assert between["share_below"] == pytest.approx(0.4) and between["share_above"] == pytest.approx(0.6)
    assert between["ours"] == pytest.approx(np.mean(CONDITIONALS))  # our seed mean, not our seed 1
    mean, sd, n = np.mean(CONDITIONALS), np.std(CONDITIONALS, ddof=1), len(CONDITIONALS)
    half = scipy_stats.t.ppf(0.975, n - 1) * sd * np.sqrt(1 + 1 / n)
    assert (between["interval_low"], between["interval_high"]) == pytest.approx((mean - half, mean + half))
    assert between["verdict"] == "inside" and between["interval"] == PREDICTION and between["n_seeds"] == 5
    far = _row(frame, "mcc", "en", "Conditionals", seed=0)  # paper 0.6, above every seed and the interval
    assert far["verdict"] == "outside" and far["share_above"] == 0 and far["share_below"] == 1
    # the paper's seed index pairs with nothing: seeds 4 and 5 of the paper sit in the same interval
    for seed in (4, 5):
        assert _row(frame, "mcc", "en", "Conditionals", seed=seed)["interval_low"] == between["interval_low"]
    assert _row(frame, "mcc", "en", "Conditionals", seed=5)["status"] == "compared"  # we have no seed 5


def test_prediction_interval_covers_a_new_normal_run_at_its_level():
    rng = np.random.default_rng(0)
    runs = rng.normal(0.3, 0.1, size=(3000, 7))  # six runs of ours and one new run, 3000 times
    inside = [low <= new <= high for (low, high), new in
              ((prediction_interval(r[:6], 0.9), r[6]) for r in runs)]
    assert np.mean(inside) == pytest.approx(0.9, abs=0.015)
    assert np.isnan(prediction_interval([0.2], 0.95)).all()


def test_leave_one_seed_out_chance_by_hand():
    values = np.array([0.0, 0.1, 0.1, 0.2, 0.9])  # 0.9 lies outside the interval of the other four, none else does
    misses = []
    for j in range(5):
        low, high = prediction_interval(np.delete(values, j), 0.95)
        misses.append(not low <= values[j] <= high)
    assert misses == [False, False, False, False, True]
    assert chance_single_run(values, 0.95) == pytest.approx(0.2)
    assert np.isnan(chance_single_run([0.1, 0.2], 0.95))  # leaving one out leaves one: no interval


# --- numbers about all seeds: the bootstrap interval of our statistic ---------------------------------------------

def test_bootstrap_interval_is_the_percentile_interval_of_the_draws(hand_built):
    scores, frame = hand_built
    view = StoreView(scores)
    draws = StoreDraws(scores, n_boot=400, seed=1)
    row = _paper_row("mean_mcc", "all", "overall")  # base, mean over languages of the seed-mean overall MCC
    samples, used = bootstrap_samples(draws, view, row)
    low, high = np.percentile(samples, [2.5, 97.5])
    found = _row(frame, "mean_mcc", "all", "overall")
    assert (found["interval_low"], found["interval_high"]) == pytest.approx((low, high))
    assert found["interval"] == BOOTSTRAP_SEEDS and not any(d.examples for d in used)  # scores: seeds only
    # each draw is the mean over languages of the mean of the drawn seeds' overall MCC
    overall = {lang: scores[(scores["category"] == OVERALL) & (scores["language"] == lang)].sort_values("seed")["mcc"]
               .to_numpy() for lang in ("en", "ru")}
    by_hand = np.mean([overall[lang][draws.get("base", lang).seed_idx].mean(axis=1) for lang in ("en", "ru")], axis=0)
    np.testing.assert_allclose(samples, by_hand)
    verdict = "inside" if low <= row.value <= high else "outside"
    assert found["verdict"] == verdict and found["chance_outside"] == pytest.approx(
        chance_bootstrap(samples, found["ours"], low, high))


def test_sigma_range_samples_are_the_spread_of_the_drawn_seeds(hand_built):
    scores, _ = hand_built
    draws = StoreDraws(scores, n_boot=300, seed=2)
    row = _paper_row("sigma_range_low", "all", "Datives")._replace(category="Negation")
    samples, _ = bootstrap_samples(draws, StoreView(scores), row)
    negation = {"en": np.array([0.3, 0.1, 0.2, 0.4, 0.0]), "ru": np.array([0.1, 0.12, 0.1, 0.3, 0.1])}
    sigma = {lang: negation[lang][draws.get("base", lang, True).seed_idx].std(axis=1, ddof=1) for lang in negation}
    np.testing.assert_allclose(samples, np.minimum(sigma["en"], sigma["ru"]))
    assert (sigma["en"] < sigma["ru"]).any() and (sigma["ru"] < sigma["en"]).any()  # either language can be lowest


def test_a_known_inside_and_a_known_outside():
    # the seeds' overall MCCs spread around the paper's base mean 0.177; with more data every seed has 0.5
    around = [0.1, 0.25, 0.15, 0.2]
    scores = pd.concat([_scores({("en", "Conditionals"): around, ("ru", "Conditionals"): around}),
                        _scores({("en", "Conditionals"): [0.5] * 4, ("ru", "Conditionals"): [0.5] * 4},
                                experiment="extra-374000")], ignore_index=True)
    frame = against_paper(scores, n_boot=200)
    base = _row(frame, "mean_mcc", "all", "overall")  # paper 0.177
    assert base["ours"] == pytest.approx(0.175) and base["verdict"] == "inside"
    assert 0.1 <= base["interval_low"] < 0.177 < base["interval_high"] <= 0.25
    extra = frame[(frame["statistic"] == "mean_mcc") & (frame["experiment"] == "extra-374000")].iloc[0]
    assert extra["paper"] == 0.263 and extra["verdict"] == "outside"  # every draw of ours is 0.5
    assert extra["interval_low"] == extra["interval_high"] == pytest.approx(0.5)
    change = _row(frame, "relative_change_mean_mcc", "all", "overall")  # paper 0.49
    assert change["ours"] == pytest.approx(0.5 / 0.175 - 1) and change["verdict"] == "outside"
    assert change["interval_low"] >= 0.5 / 0.25 - 1


def test_examples_and_seeds_are_resampled_jointly_from_the_predictions():
    predictions = synthetic_table("axb", (("base", 0.7), ("extra-374000", 0.8)), range(4), "en", seed=3, model="m")
    scores = category_scores(predictions, "axb")
    draws = StoreDraws(scores, predictions, "axb", n_boot=70, seed=5)
    base, extra = draws.get("base", "en"), draws.get("extra-374000", "en")
    assert base.examples and (base.example_idx == extra.example_idx).all()  # the same examples for both
    assert not (base.seed_idx == extra.seed_idx).all()  # but their own seeds
    frame = data.load("axb")
    ids = frame["id"].astype(str).to_numpy()
    members = frame["features"].map(lambda f: "Negation" in f).to_numpy()
    for b, slot in ((0, 0), (66, 3)):  # the second chunk of draws too
        rows = base.example_idx[b]
        run = predictions[(predictions["experiment"] == "base") & (predictions["seed"] == base.seed_idx[b, slot])]
        run = run.set_index("example_id").loc[ids]
        chosen = rows[members[rows]]
        expected = matthews_corrcoef(run["label"].to_numpy()[chosen], run["prediction"].to_numpy()[chosen])
        assert base.column("Negation")[b, slot] == pytest.approx(expected)


def test_a_seed_fully_determines_the_result():
    predictions = pd.concat([synthetic_table("axb", (("base", 0.7),), range(3), "en", seed=1, model="m"),
                             synthetic_table("lidirus", (("base", 0.7),), range(3), "ru", seed=2, model="m")],
                            ignore_index=True)
    options = {"dataset": {"axb": "axb", "lidirus": "lidirus"}, "n_boot": 100}
    first, again = (against_paper(predictions, seed=7, **options) for _ in range(2))
    other = against_paper(predictions, seed=8, **options)
    pd.testing.assert_frame_equal(first, again)
    bootstrap = first["interval"] == BOOTSTRAP_BOTH
    assert bootstrap.sum() > 5
    assert not np.allclose(first.loc[bootstrap, "interval_low"], other.loc[bootstrap, "interval_low"])
    with pytest.raises(ValueError, match="level"):
        against_paper(predictions, level=1.5, **options)


# --- how often "outside" fires by chance --------------------------------------------------------------------------

def test_bootstrap_chance_counts_every_pair_of_draws():
    rng = np.random.default_rng(4)
    samples = rng.normal(size=300)
    estimate = 0.05
    low, high = np.percentile(samples, [2.5, 97.5])
    moved_low, moved_high = low + samples[:, None] - estimate, high + samples[:, None] - estimate
    brute = ((samples[None, :] < moved_low) | (samples[None, :] > moved_high)).mean()
    assert chance_bootstrap(samples, estimate, low, high) == pytest.approx(brute)
    # for a normal statistic the paper's own noise makes "outside" fire about 17 % of the time at 95 %
    big = rng.normal(size=4000)
    low, high = np.percentile(big, [2.5, 97.5])
    assert chance_bootstrap(big, 0.0, low, high) == pytest.approx(normal_chance_bootstrap(0.95), abs=0.02)
    assert normal_chance_bootstrap(0.95) == pytest.approx(2 * scipy_stats.norm.sf(1.959964 / np.sqrt(2)))


def test_paper_chance_sums_the_rows(hand_built):
    _, frame = hand_built
    chance = paper_chance(frame).set_index("interval")
    placed = frame[frame["verdict"].isin(["inside", "outside"])]
    single = placed[placed["interval"] == PREDICTION]
    assert chance.loc[PREDICTION, "numbers"] == len(single)
    assert chance.loc[PREDICTION, "outside"] == (single["verdict"] == "outside").sum()
    assert chance.loc[PREDICTION, "chance_outside"] == pytest.approx(single["chance_outside"].mean())
    assert chance.loc[PREDICTION, "normal_chance"] == pytest.approx(0.05)
    assert chance.loc["all", "numbers"] == len(placed)
    assert chance.loc["all", "expected_outside"] == pytest.approx(
        chance.drop(index="all")["expected_outside"].sum())


def test_cross_language_samples_correlate_the_drawn_seed_means(hand_built):
    scores, _ = hand_built
    draws = StoreDraws(scores, n_boot=200, seed=3)
    row = _paper_row("cross_language_corr", "all", "overall", seed=0)._replace(seed=pd.NA)  # about all seeds
    samples, _ = bootstrap_samples(draws, StoreView(scores), row)
    means = {}
    for language in ("en", "ru"):
        d = draws.get("base", language)
        means[language] = d.values[:, :, [d.categories.index(c) for c in ("Conditionals", "Negation")]].mean(axis=1)
    by_hand = [np.corrcoef(means["en"][b], means["ru"][b])[0, 1] if means["ru"][b].std() > 0 else np.nan
               for b in range(200)]
    np.testing.assert_allclose(samples, by_hand)
