"""``compare_tables`` / ``diagnostics compare`` against independent computations: McNemar's exact test against
statsmodels (or a binomial test written out), the Multi-Bootstrap delta against a plain numpy loop, the adjusted
p-values against Holm and Benjamini-Hochberg written out."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from _cli import invoke_cli, run_cli
from _stats_fixtures import synthetic_table

from diagnostics.core.errors import UserInputError
from diagnostics.plots import write_comparison
from diagnostics.predictions import compare_tables, mcnemar_exact
from diagnostics.stats import category_matrix, validate_predictions


def _sides(seeds_a=range(3), seeds_b=range(3), acc_a=0.7, acc_b=0.78, dataset="axb"):
    a = validate_predictions(synthetic_table(dataset, (("base", acc_a),), seeds=seeds_a, seed=1, model="a"))
    b = validate_predictions(synthetic_table(dataset, (("base", acc_b),), seeds=seeds_b, seed=2, model="b"))
    return a, b


def _wide(table: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """(n_examples, n_seeds) 0/1 predictions in example-id order, and the gold labels."""
    wide = table.pivot(index="example_id", columns="seed", values="prediction")
    wide = wide.loc[sorted(wide.index, key=int)]
    labels = table.drop_duplicates("example_id").set_index("example_id").loc[wide.index, "label"]
    return (wide.to_numpy() == "entailment").astype(int), (labels.to_numpy() == "entailment").astype(int)


def _exact_mcnemar(a_only: int, b_only: int) -> float:
    """The exact McNemar p-value: statsmodels when installed, else the binomial tail written out."""
    try:
        from statsmodels.stats.contingency_tables import mcnemar
    except ImportError:
        from scipy.stats import binom

        n = a_only + b_only
        return 1.0 if n == 0 else min(1.0, 2 * binom.cdf(min(a_only, b_only), n, 0.5))
    return float(mcnemar([[0, a_only], [b_only, 0]], exact=True).pvalue)


def _holm(p: np.ndarray) -> np.ndarray:
    m, out, running = len(p), np.empty(len(p)), 0.0
    for rank, i in enumerate(np.argsort(p, kind="stable")):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = running
    return out


def _bh(p: np.ndarray) -> np.ndarray:
    m, out, running = len(p), np.empty(len(p)), 1.0
    order = np.argsort(p, kind="stable")
    for rank in range(m - 1, -1, -1):
        i = order[rank]
        running = min(running, m * p[i] / (rank + 1))
        out[i] = min(1.0, running)
    return out


def test_mcnemar_matches_the_exact_test_on_every_category():
    a, b = _sides(seeds_a=[0], seeds_b=[0])
    result = compare_tables(a, b, n_boot=50)
    assert result.single_runs
    pred_a, labels = _wide(a)
    pred_b, _ = _wide(b)
    names, cats = category_matrix("axb", ids=np.asarray(sorted(a["example_id"].unique(), key=int)))
    members = {**{n: cats[:, j] for j, n in enumerate(names)}, "All examples": np.ones(len(labels), dtype=bool)}
    rows = result.table.set_index("category")
    for name, member in members.items():
        right_a, right_b = pred_a[member, 0] == labels[member], pred_b[member, 0] == labels[member]
        a_only, b_only = int(np.sum(right_a & ~right_b)), int(np.sum(~right_a & right_b))
        assert (rows.at[name, "a_only"], rows.at[name, "b_only"]) == (a_only, b_only)
        assert rows.at[name, "mcnemar_p"] == pytest.approx(_exact_mcnemar(a_only, b_only), rel=1e-9, abs=1e-12)
    family = result.table["level"] == "fine"
    assert np.allclose(result.table.loc[family, "mcnemar_p_adjusted"], _holm(result.table.loc[family, "mcnemar_p"]))
    assert result.table.loc[~family, "mcnemar_p_adjusted"].equals(result.table.loc[~family, "mcnemar_p"])


def test_mcnemar_of_identical_and_of_opposite_runs():
    right = np.array([True] * 30 + [False] * 10)
    assert mcnemar_exact(right, right) == (0, 0, 1.0)
    a_only, b_only, p = mcnemar_exact(right, ~right)
    assert (a_only, b_only) == (30, 10) and p == pytest.approx(_exact_mcnemar(30, 10))


def matthews_corrcoef(y: np.ndarray, p: np.ndarray) -> float:
    """MCC from the confusion counts (0 when a margin is empty, as scikit-learn)."""
    tp, tn = np.sum((y == 1) & (p == 1)), np.sum((y == 0) & (p == 0))
    fp, fn = np.sum((y == 0) & (p == 1)), np.sum((y == 1) & (p == 0))
    denominator = np.sqrt(float((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)))
    return 0.0 if denominator == 0 else float(tp * tn - fp * fn) / denominator


def _loop_deltas(pa, pb, labels, members, n_boot, rng, paired=True):
    """The Multi-Bootstrap delta, one sample at a time: examples of the category, seeds, MCC per drawn seed."""
    rows = np.flatnonzero(members)
    k_a, k_b = pa.shape[1], pb.shape[1]
    out = np.empty(n_boot)
    for s in range(n_boot):
        drawn = rng.choice(rows, size=len(rows), replace=True)
        seeds_a = rng.integers(0, k_a, k_a)
        seeds_b = seeds_a if paired else rng.integers(0, k_b, k_b)
        y = labels[drawn]
        mcc_a = np.mean([matthews_corrcoef(y, pa[drawn, j]) for j in seeds_a])
        mcc_b = np.mean([matthews_corrcoef(y, pb[drawn, j]) for j in seeds_b])
        out[s] = mcc_b - mcc_a
    return out


@pytest.mark.parametrize("category", ["All examples", "Negation"])
def test_the_bootstrap_delta_agrees_with_a_plain_loop(category):
    a, b = _sides()
    n_boot = 600
    result = compare_tables(a, b, n_boot=n_boot, seed=3).table.set_index("category").loc[category]
    pa, labels = _wide(a)
    pb, _ = _wide(b)
    names, cats = category_matrix("axb", ids=np.asarray(sorted(a["example_id"].unique(), key=int)))
    members = np.ones(len(labels), bool) if category == "All examples" else cats[:, names.index(category)]
    deltas = _loop_deltas(pa, pb, labels, members, n_boot, np.random.default_rng(11))
    point = np.mean([matthews_corrcoef(labels[members], pb[members, j]) for j in range(3)]) - \
        np.mean([matthews_corrcoef(labels[members], pa[members, j]) for j in range(3)])
    assert result["delta"] == pytest.approx(point, abs=1e-12)
    assert result["n"] == members.sum()
    low, high = np.quantile(deltas, [0.025, 0.975])
    width = high - low
    assert result["delta_ci_low"] == pytest.approx(low, abs=0.12 * width)
    assert result["delta_ci_high"] == pytest.approx(high, abs=0.12 * width)
    p_loop = min(1.0, 2 * min(np.mean(deltas <= 0), np.mean(deltas >= 0)))
    assert result["p_value"] == pytest.approx(max(p_loop, 1 / n_boot), abs=0.06)


def test_adjusted_p_values_are_holm_or_bh_over_the_categories():
    a, b = _sides()
    holm = compare_tables(a, b, n_boot=200).table
    bh = compare_tables(a, b, n_boot=200, adjust="bh").table
    family = holm["level"] == "fine"
    assert family.sum() == 33 and list(holm.loc[~family, "category"]) == ["All examples", "Overall (mean of fine)"]
    assert np.allclose(holm.loc[family, "p_adjusted"], _holm(holm.loc[family, "p_value"].to_numpy()))
    assert np.allclose(bh.loc[family, "p_adjusted"], _bh(bh.loc[family, "p_value"].to_numpy()))
    assert (holm["significant"] == (holm["p_adjusted"] <= 0.05)).all()
    none = compare_tables(a, b, n_boot=200, adjust="none").table
    assert none["p_adjusted"].equals(none["p_value"])


def test_the_report_is_the_one_compare_function_with_its_alternative():
    from diagnostics.stats import compare_settings

    a, b = _sides()
    for alternative in ("two-sided", "less"):
        result = compare_tables(a, b, n_boot=100, alternative=alternative)
        plain = compare_settings(a, None, None, n_boot=100, alternative=alternative, predictions_b=b, threshold=None)
        assert np.array_equal(result.table["p_value"], plain["p_value"])
        assert np.array_equal(result.table["p_adjusted"], plain["p_adjusted"])
        assert f"{alternative} p-values" in result.summary()


def test_identical_sides_differ_nowhere():
    a, _ = _sides()
    result = compare_tables(a, a.assign(model="copy"), n_boot=100).table
    assert (result["delta"] == 0).all() and (result["delta_ci_low"] == 0).all() and (result["p_value"] == 1).all()
    assert not result["significant"].any()


def test_pairing_follows_the_seeds_and_refusals_are_one_line():
    a, b = _sides()
    assert compare_tables(a, b, n_boot=20).paired
    a2, b2 = _sides(seeds_a=range(3), seeds_b=range(4))
    result = compare_tables(a2, b2, n_boot=20)
    assert not result.paired and not result.single_runs
    with pytest.raises(UserInputError, match="different seeds"):
        compare_tables(a2, b2, n_boot=20, pairing="paired")
    with pytest.raises(UserInputError, match="cover different examples"):
        compare_tables(a, b[b["example_id"] != "5"], n_boot=20)
    with pytest.raises(UserInputError, match=r"A: 2 settings .*--select-a"):
        compare_tables(pd.concat([a, b]), b, n_boot=20)
    with pytest.raises(UserInputError, match="by: expected one of category, coarse"):
        compare_tables(a, b, by="fine")
    both = pd.concat([a, b], ignore_index=True)
    picked = compare_tables(both, both, select_a={"model": "a"}, select_b={"model": "b"}, n_boot=20)
    assert picked.names == ("a", "b")


def test_nested_sides_and_coarse_categories():
    a, b = _sides(seeds_a=range(4), seeds_b=range(4))
    a = validate_predictions(a.assign(pretrain_seed=a["seed"] // 2, seed=a["seed"] % 2))
    b = validate_predictions(b.assign(pretrain_seed=b["seed"] // 2, seed=b["seed"] % 2))
    result = compare_tables(a, b, n_boot=50, by="coarse")
    assert result.paired and result.seeds_a == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert list(result.table["level"]) == ["coarse"] * 4 + ["all"]


def test_the_compare_command_writes_csv_png_and_summary(tmp_path):
    a, b = _sides(seeds_a=[0], seeds_b=[0])
    both = pd.concat([a, b], ignore_index=True)
    both.to_parquet(tmp_path / "both.parquet")
    out = tmp_path / "cmp"
    result = run_cli("compare", tmp_path / "both.parquet", tmp_path / "both.parquet", "--select-a", "model=a",
                     "--select-b", "model=b", "--bootstrap", "100", "--out", out)
    assert result.returncode == 0, result.stderr
    assert "# b vs a" in result.stdout and "McNemar" in result.stdout
    table = pd.read_csv(out / "comparison.csv")
    assert len(table) == 35 and {"delta", "delta_ci_low", "p_adjusted", "mcnemar_p"} <= set(table.columns)
    assert (out / "comparison.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "## Categories that differ" in (out / "summary.md").read_text(encoding="utf-8")


def test_write_comparison_in_python(tmp_path):
    a, b = _sides()
    paths = write_comparison(compare_tables(a, b, n_boot=50, names=("mine", "theirs")), tmp_path)
    assert sorted(p.name for p in paths.values()) == ["comparison.csv", "comparison.png", "summary.md"]
    assert "theirs vs mine" in paths["summary"].read_text(encoding="utf-8")


def test_the_overall_row_counts_the_same_examples_in_stats_and_compare(tmp_path):
    from diagnostics.stats import OVERALL

    a, b = _sides(seeds_a=[0, 1], seeds_b=[0, 1])
    table = pd.concat([a, b], ignore_index=True)
    path = tmp_path / "both.parquet"
    table.to_parquet(path)
    stats = invoke_cli("stats", path, "--out", tmp_path / "stats", cwd=tmp_path)
    assert stats.returncode == 0, stats.stderr
    compared = invoke_cli("compare", path, path, "--select-a", "model=a", "--select-b", "model=b", "--bootstrap", "50",
                       "--out", tmp_path / "cmp", cwd=tmp_path)
    assert compared.returncode == 0, compared.stderr
    scores = pd.read_csv(tmp_path / "stats" / "scores.csv")
    in_stats = set(scores.loc[scores["category"] == OVERALL, "n"])
    comparison = pd.read_csv(tmp_path / "cmp" / "comparison.csv")
    in_compare = set(comparison.loc[comparison["category"] == OVERALL, "n"])
    members = category_matrix("axb", "fine")[1]
    assert in_stats == in_compare == {int(np.asarray(members).any(axis=1).sum())}
    assert in_compare != {len(a[a["seed"] == 0])}  # examples without a fine category do not count
