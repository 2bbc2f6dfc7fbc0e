"""``compare_tables(..., aso=True)`` / ``diagnostics compare --aso``: the ASO columns beside the Multi-Bootstrap delta
are those of ``diagnostics.stats.aso_compare``, the summary says what they mean, and a single run is refused."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from _cli import assert_user_error, invoke_cli
from _stats_fixtures import synthetic_table

from diagnostics.core.errors import UserInputError
from diagnostics.predictions import compare_tables
from diagnostics.stats import aso_compare, validate_predictions

ASO_COLUMNS = ["aso_violation_ratio", "aso_eps_min", "aso_p_adjusted", "aso_a_dominant", "aso_eps_min_ba",
               "aso_p_adjusted_ba", "aso_b_dominant", "aso_tau"]


def _sides(seeds=range(4)):
    a = validate_predictions(synthetic_table("axb", (("base", 0.68),), seeds=seeds, seed=1, model="a"))
    b = validate_predictions(synthetic_table("axb", (("base", 0.8),), seeds=seeds, seed=2, model="b"))
    return a, b


def test_aso_columns_are_those_of_aso_compare():
    a, b = _sides()
    result = compare_tables(a, b, n_boot=200, seed=3, aso=True, aso_tau=0.3, adjust="bh")
    table = result.table
    assert set(ASO_COLUMNS) <= set(table.columns) and result.aso_tau == 0.3
    expected = aso_compare(a, None, None, n_boot=200, seed=3, tau=0.3, adjust="bh", predictions_b=b)
    assert list(expected["category"]) == list(table["category"])
    for ours, theirs in (("aso_eps_min", "eps_min"), ("aso_eps_min_ba", "eps_min_ba"),
                         ("aso_p_adjusted_ba", "p_adjusted_ba"), ("aso_violation_ratio", "violation_ratio")):
        np.testing.assert_allclose(table[ours], expected[theirs], atol=1e-12)
    np.testing.assert_array_equal(table["aso_b_dominant"], expected["dominant_ba"])
    assert table["aso_b_dominant"].dtype == bool and table["aso_b_dominant"].any()
    summary = result.summary()
    assert "## Almost Stochastic Order of the runs' scores" in summary and "tau = 0.3" in summary
    assert "b almost stochastically dominant over a in" in summary


def test_without_aso_the_table_is_unchanged():
    a, b = _sides()
    result = compare_tables(a, b, n_boot=50)
    assert not set(ASO_COLUMNS) & set(result.table.columns) and result.aso_tau is None
    assert "Almost Stochastic Order" not in result.summary()


def test_aso_refuses_single_runs():
    a, b = _sides(seeds=[0])
    with pytest.raises(UserInputError, match="at least 2 runs"):
        compare_tables(a, b, n_boot=50, aso=True)


def test_the_compare_command_reports_aso(tmp_path):
    a, b = _sides(seeds=range(3))
    both = pd.concat([a, b], ignore_index=True)
    both.to_parquet(tmp_path / "both.parquet")
    out = tmp_path / "cmp"
    result = invoke_cli("compare", tmp_path / "both.parquet", tmp_path / "both.parquet", "--select-a", "model=a",
                     "--select-b", "model=b", "--bootstrap", "100", "--aso", "--aso-tau", "0.2", "--out", out)
    assert result.returncode == 0, result.stderr
    table = pd.read_csv(out / "comparison.csv")
    assert set(ASO_COLUMNS) <= set(table.columns) and (table["aso_tau"] == 0.2).all()
    assert "aso_eps_min" in (out / "summary.md").read_text(encoding="utf-8")
    refused = invoke_cli("compare", tmp_path / "both.parquet", tmp_path / "both.parquet", "--select-a", "model=a",
                      "--select-b", "model=b", "--bootstrap", "50", "--aso", "--aso-tau", "1.5", "--out", out)
    assert_user_error(refused, "tau")
