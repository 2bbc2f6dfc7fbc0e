"""Multi-Bootstrap reports against the MultiBERTs reference's documented semantics, written out here as oracles.

The reference (``multibootstrap`` + ``report_ci`` of the MultiBERTs release) is documented as: each bootstrap sample
draws seeds (if ``sample_seeds``; the same draw for both sides if ``paired_seeds``) and examples (if
``sample_examples``) with replacement, scores each drawn seed on the drawn examples and averages over seeds;
``report_ci`` then gives, for the baseline L, the intervention L' and the delta L' - L, the bootstrap mean and
the percentile interval; the p-value is the share of deltas <= 0 (>= 0 when a negative effect is expected),
never below 1 / n_boot; ``abs_threshold`` gives P(L' - L >= t) (P(L' - L <= -t) for a negative effect) and
``rel_threshold`` gives P((L' - L) / L >= r) (P((L' - L) / L <= -r)). The oracles below implement exactly that
with plain numpy loops and compare our frames field by field.
"""

import numpy as np
import pandas as pd
import pytest

from _stats_fixtures import synthetic_table
from diagnostics.stats import (bootstrap_ci, compare, compare_settings, multibootstrap, multibootstrap_pair,
                               point_estimate, setting_arrays, setting_ci)
from diagnostics.stats._bootstrap import resample_indices
from diagnostics.stats import mcc


def report_ci_oracle(base, expt, c=0.95, abs_threshold=None, rel_threshold=None, expect_negative_effect=False):
    """The documented report of two paired lists of bootstrap samples."""
    base, expt = np.asarray(base, float), np.asarray(expt, float)
    q = [(1 - c) / 2, 1 - (1 - c) / 2]
    delta = expt - base
    out = {name: {"mean": float(np.mean(x)), "low": float(np.quantile(x, q[0])), "high": float(np.quantile(x, q[1]))}
           for name, x in (("base", base), ("expt", expt), ("delta", delta))}
    p = np.mean(delta >= 0) if expect_negative_effect else np.mean(delta <= 0)
    out["delta"]["p"] = 1.0 / len(delta) if p == 0 else float(p)
    if rel_threshold:
        ratio = delta / base
        out["rel"] = float(np.mean(ratio <= -rel_threshold) if expect_negative_effect
                           else np.mean(ratio >= rel_threshold))
    if abs_threshold is not None:
        out["abs"] = float(np.mean(delta <= -abs_threshold) if expect_negative_effect
                           else np.mean(delta >= abs_threshold))
    return out


def accuracy(y, p):
    return float(np.mean(y == p))


def draws_of(n_boot, n_examples, sizes, seed, paired, resample):
    """Our draws, replayed: list of (examples, [seeds of each side]) per sample."""
    out = []
    for examples, seeds in resample_indices(np.random.default_rng(seed), n_boot, n_examples, sizes, paired,
                                            resample):
        for i in range(len(seeds[0])):
            out.append((None if examples is None else examples[i], [s[i] for s in seeds]))
    return out


def multibootstrap_oracle(pred_a, pred_b, labels, score, draws, sample_seeds, sample_examples):
    """Plain loop over samples and seeds: the documented algorithm, on given draws."""
    n = len(labels)
    base, expt = [], []
    for examples, (seeds_a, seeds_b) in draws:
        jj = examples if sample_examples else np.arange(n)
        sa = seeds_a if sample_seeds else np.arange(pred_a.shape[1])
        sb = seeds_b if sample_seeds else np.arange(pred_b.shape[1])
        base.append(np.mean([score(labels[jj], pred_a[jj, s]) for s in sa]))
        expt.append(np.mean([score(labels[jj], pred_b[jj, s]) for s in sb]))
    return np.array(base), np.array(expt)


DESIGNS = {"both": (True, True), "seeds": (True, False), "examples": (False, True)}


@pytest.fixture(scope="module")
def arrays():
    rng = np.random.default_rng(7)
    labels = rng.integers(0, 2, 240)
    a = ((rng.random((240, 5)) < rng.uniform(0.25, 0.4, 5)) ^ labels[:, None]).astype(np.int8)
    b = ((rng.random((240, 5)) < rng.uniform(0.2, 0.35, 5)) ^ labels[:, None]).astype(np.int8)
    return a, b, labels


@pytest.mark.parametrize("resample", ["both", "seeds", "examples"])
@pytest.mark.parametrize("paired", [True, False])
@pytest.mark.parametrize("metric", ["accuracy", "mcc"])
def test_sampling_designs_equal_the_plain_loop(arrays, resample, paired, metric):
    a, b, labels = arrays
    ours = multibootstrap_pair(a, b, labels, metric, 150, seed=4, paired=paired, resample=resample)
    draws = draws_of(150, len(labels), (5, 5), 4, paired, resample)
    sample_seeds, sample_examples = DESIGNS[resample]
    score = accuracy if metric == "accuracy" else mcc
    oracle = multibootstrap_oracle(a, b, labels, score, draws, sample_seeds, sample_examples)
    np.testing.assert_allclose(ours[0], oracle[0], atol=1e-12)
    np.testing.assert_allclose(ours[1], oracle[1], atol=1e-12)


def test_only_seeds_keeps_the_examples_and_only_examples_keeps_the_seeds(arrays):
    a, _, labels = arrays
    per_seed = np.array([accuracy(labels, a[:, s]) for s in range(5)])
    seeds_only = multibootstrap(a, labels, "accuracy", 300, seed=1, resample="seeds")
    # each sample is the mean of 5 per-seed accuracies on the full example set, drawn with replacement
    draws = draws_of(300, len(labels), (5,), 1, False, "seeds")
    np.testing.assert_allclose(seeds_only, [per_seed[s[0]].mean() for _, s in draws], atol=1e-12)
    one_seed = multibootstrap(a[:, :1], labels, "accuracy", 50, seed=1, resample="seeds")
    np.testing.assert_allclose(one_seed, per_seed[0])  # nothing left to resample
    examples_only = multibootstrap(a, labels, "accuracy", 300, seed=1, resample="examples")
    draws = draws_of(300, len(labels), (5,), 1, False, "examples")
    expected = [np.mean([accuracy(labels[e], a[e, s]) for s in range(5)]) for e, _ in draws]
    np.testing.assert_allclose(examples_only, expected, atol=1e-12)
    # examples only: seed variation gone, so the spread is below that of both sources together
    both = multibootstrap(a, labels, "accuracy", 300, seed=1)
    assert examples_only.std() < both.std() and seeds_only.std() < both.std()


@pytest.mark.parametrize("resample", ["both", "seeds", "examples"])
@pytest.mark.parametrize("expect_negative_effect", [False, True])
@pytest.mark.parametrize("paired", [True, False])
def test_compare_reports_what_report_ci_reports(arrays, resample, expect_negative_effect, paired):
    a, b, labels = arrays
    if expect_negative_effect:
        a, b = b, a
    out = compare(a, b, labels, "accuracy", 400, seed=9, paired=paired, threshold=0.02, rel_threshold=0.05,
                  expect_negative_effect=expect_negative_effect, resample=resample).iloc[0]
    sa, sb = multibootstrap_pair(a, b, labels, "accuracy", 400, seed=9, paired=paired, resample=resample)
    ref = report_ci_oracle(sa, sb, 0.95, abs_threshold=0.02, rel_threshold=0.05,
                           expect_negative_effect=expect_negative_effect)
    got = {"base": (out.boot_mean_a, out.ci_low_a, out.ci_high_a),
           "expt": (out.boot_mean_b, out.ci_low_b, out.ci_high_b),
           "delta": (out.delta_boot_mean, out.delta_ci_low, out.delta_ci_high)}
    for name, (mean, low, high) in got.items():
        assert (mean, low, high) == pytest.approx((ref[name]["mean"], ref[name]["low"], ref[name]["high"]),
                                                  abs=1e-12), name
    assert out.p_value == pytest.approx(ref["delta"]["p"], abs=1e-12)
    assert out.p_threshold == pytest.approx(ref["abs"], abs=1e-12)
    assert out.p_rel_threshold == pytest.approx(ref["rel"], abs=1e-12)  # accuracy: the baseline is positive
    # the point estimate on the original data sits beside the bootstrap mean (they differ in general)
    assert out.delta == pytest.approx(point_estimate(b, labels, "accuracy") - point_estimate(a, labels, "accuracy"))
    assert out["resample"] == resample and bool(out["expect_negative_effect"]) == expect_negative_effect


def test_p_value_is_floored_at_one_over_n_boot(arrays):
    a, _, labels = arrays
    perfect = np.repeat(labels[:, None], 5, axis=1)
    out = compare(a, perfect, labels, "accuracy", 250, seed=0).iloc[0]
    sa, sb = multibootstrap_pair(a, perfect, labels, "accuracy", 250, seed=0)
    assert (sb - sa > 0).all()  # no delta <= 0: the share is 0 ...
    assert out.p_value == 1 / 250 == report_ci_oracle(sa, sb)["delta"]["p"]  # ... reported as 1 / n_boot
    down = compare(perfect, a, labels, "accuracy", 250, seed=0, expect_negative_effect=True).iloc[0]
    assert down.p_value == 1 / 250
    two = compare(a, perfect, labels, "accuracy", 250, seed=0, two_sided=True).iloc[0]
    assert two.p_value == 2 / 250  # two-sided: twice the floored smaller tail


def test_threshold_probability_counts_ties():
    """A delta exactly at the threshold counts (>=), as in the reference; exact binary fractions make ties real."""
    rng = np.random.default_rng(3)
    labels = rng.integers(0, 2, 8)
    a = ((rng.random((8, 1)) < 0.5) ^ labels[:, None]).astype(int)
    b = ((rng.random((8, 1)) < 0.2) ^ labels[:, None]).astype(int)
    sa, sb = multibootstrap_pair(a, b, labels, "accuracy", 400, seed=2)
    delta = sb - sa
    values, counts = np.unique(delta, return_counts=True)
    tie = values[np.argmax(np.where(values > 0, counts, 0))]  # the most frequent positive delta
    out = compare(a, b, labels, "accuracy", 400, seed=2, threshold=tie, rel_threshold=0.0).iloc[0]
    assert out.p_threshold == pytest.approx(np.mean(delta >= tie)) and np.mean(delta >= tie) > np.mean(delta > tie)
    # rel_threshold=0 is reported (the reference skips a falsy value): P(delta >= 0)
    assert out.p_rel_threshold == pytest.approx(np.mean(delta >= 0))
    single = bootstrap_ci(b, labels, "accuracy", 400, seed=2, threshold=float(np.median(sb))).iloc[0]
    assert single.p_threshold == pytest.approx(np.mean(sb >= np.median(sb)))


def test_rel_threshold_uses_the_absolute_baseline():
    """The reference's ratio where the baseline is positive; the direction is kept where it is negative."""
    rng = np.random.default_rng(4)
    labels = rng.integers(0, 2, 300)
    worse = ((rng.random((300, 3)) < 0.62) ^ labels[:, None]).astype(int)  # MCC about -0.24
    less_bad = ((rng.random((300, 3)) < 0.55) ^ labels[:, None]).astype(int)  # MCC about -0.1
    out = compare(worse, less_bad, labels, "mcc", 300, seed=1, rel_threshold=0.1).iloc[0]
    sa, sb = multibootstrap_pair(worse, less_bad, labels, "mcc", 300, seed=1)
    delta = sb - sa
    assert (sa < 0).all() and out.p_rel_threshold == pytest.approx(np.mean(delta >= 0.1 * np.abs(sa)))
    assert out.p_rel_threshold > 0.8  # an improvement of more than 10 % of |baseline| ...
    assert np.mean(delta / sa >= 0.1) < 0.05  # ... that the plain ratio, negative here, would deny
    positive = compare(less_bad, worse, labels, "mcc", 300, seed=1, rel_threshold=0.1,
                       expect_negative_effect=True).iloc[0]
    # swapped sides: the delta is -delta, the baseline the other side; a decrease of 10 % of |baseline|
    assert positive.p_rel_threshold == pytest.approx(np.mean(-delta <= -0.1 * np.abs(sb)))


def test_setting_level_functions_pass_the_design_through():
    table = synthetic_table("axb", experiments=(("base", 0.65), ("more", 0.72)), seeds=range(3))
    one_seed = table[table["seed"] == 0]
    fixed = setting_ci(one_seed, {"experiment": "base"}, by=None, n_boot=50, resample="seeds").iloc[0]
    assert fixed.ci_low == fixed.ci_high == pytest.approx(fixed.estimate)  # one seed, fixed examples: no spread
    arr_a = setting_arrays(table, {"experiment": "base"})
    arr_b = setting_arrays(table, {"experiment": "more"})
    for resample in ("both", "seeds", "examples"):
        frame = compare_settings(table, {"experiment": "base"}, {"experiment": "more"}, by=None, n_boot=120,
                                 resample=resample, rel_threshold=0.05, alternative="greater").iloc[0]
        sa, sb = multibootstrap_pair(arr_a.predictions, arr_b.predictions, arr_a.labels, "mcc", 120, 0,
                                     resample=resample)
        ref = report_ci_oracle(sa, sb, rel_threshold=0.05, abs_threshold=0.0)
        assert (frame.delta_boot_mean, frame.delta_ci_low, frame.delta_ci_high, frame.p_value, frame.p_threshold,
                frame.p_rel_threshold) == pytest.approx((ref["delta"]["mean"], ref["delta"]["low"],
                                                         ref["delta"]["high"], ref["delta"]["p"], ref["abs"],
                                                         ref["rel"]), abs=1e-12)


def _size(y_true, y_pred):
    return float(len(y_true))


def test_stratified_categories_keep_their_size_and_unstratified_do_not():
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 2, 200)
    pred = ((rng.random((200, 3)) < 0.3) ^ labels[:, None]).astype(int)
    cats = np.zeros((200, 4), dtype=bool)
    cats[:14, 0] = True  # a 14-example category
    cats[10:60, 1] = True  # overlapping the first one
    cats[60:200, 2] = True
    cats[::7, 3] = True
    sizes = cats.sum(axis=0)
    strat = multibootstrap(pred, labels, _size, 40, seed=1, categories=cats)
    np.testing.assert_array_equal(strat, np.broadcast_to(sizes, strat.shape))
    whole = multibootstrap(pred, labels, _size, 40, seed=1, categories=cats, stratify=False)
    assert whole[:, 0].min() < 14 < whole[:, 0].max()


def test_stratified_mcc_equals_a_per_category_loop():
    rng = np.random.default_rng(2)
    labels = rng.integers(0, 2, 150)
    pred = ((rng.random((150, 4)) < 0.3) ^ labels[:, None]).astype(int)
    cats = rng.random((150, 5)) < 0.25
    ours = multibootstrap(pred, labels, "mcc", 70, seed=5, categories=cats)
    members = [np.flatnonzero(cats[:, g]) for g in range(5)]
    sizes = [len(m) for m in members]
    index = np.concatenate(members)
    expected = []
    for rows, (seeds,) in resample_indices(np.random.default_rng(5), 70, len(index), (4,), strata=sizes):
        for row, seed_draw in zip(rows, seeds):
            start, sample = 0, []
            for g in range(5):
                block = row[start:start + sizes[g]]
                assert ((block >= start) & (block < start + sizes[g])).all()  # drawn within the category
                drawn = index[block]
                sample.append(np.mean([mcc(labels[drawn], pred[drawn, s]) for s in seed_draw]))
                start += sizes[g]
            expected.append(sample)
    np.testing.assert_allclose(ours, expected, atol=1e-12)


def test_summary_rows_resample_the_whole_set():
    table = synthetic_table("axb", seeds=range(3))
    per_cat = setting_ci(table, {"experiment": "rte"}, n_boot=150, seed=3)
    all_only = setting_ci(table, {"experiment": "rte"}, by=None, n_boot=150, seed=3)
    row = per_cat[per_cat["category"] == all_only["category"].iat[0]].iloc[0]
    assert (row.ci_low, row.ci_high) == pytest.approx((all_only.ci_low.iat[0], all_only.ci_high.iat[0]), abs=1e-12)
    arr = setting_arrays(table, {"experiment": "rte"})
    whole = multibootstrap(arr.predictions, arr.labels, "mcc", 150, 3, arr.categories, stratify=False).mean(axis=1)
    overall = per_cat.iloc[-1]
    assert overall.category.startswith("Overall")
    assert (overall.ci_low, overall.ci_high) == pytest.approx(tuple(np.quantile(whole, [0.025, 0.975])), abs=1e-12)
    assert per_cat["stratified"].all() and per_cat["in_family"].sum() == 33
    strat = multibootstrap(arr.predictions, arr.labels, "mcc", 150, 3, arr.categories)
    np.testing.assert_allclose(per_cat["ci_low"][:33], np.quantile(strat, 0.025, axis=0), atol=1e-12)
    unstrat = setting_ci(table, {"experiment": "rte"}, n_boot=150, seed=3, stratify=False)
    pd.testing.assert_frame_equal(unstrat.iloc[33:].drop(columns="stratified"),
                                  per_cat.iloc[33:].drop(columns="stratified"))
