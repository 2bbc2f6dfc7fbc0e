"""Stats figures and the `diagnostics stats` command on real dataset ids with synthetic predictions."""

import matplotlib
import pandas as pd
import pytest
from typer.testing import CliRunner

from _stats_fixtures import synthetic_table
from diagnostics.cli import app
from diagnostics.plots import _stats as plots
from diagnostics.stats import category_scores, deltas, setting_ci, stability


@pytest.fixture(scope="module")
def table():
    en = synthetic_table("axb", experiments=(("rte", 0.65), ("rte+sick", 0.72)), seeds=range(3), language="en")
    ru = synthetic_table("lidirus", experiments=(("rte", 0.6), ("rte+sick", 0.7)), seeds=range(3), language="ru")
    return pd.concat([en, ru], ignore_index=True)


def test_figures(table):
    scores = category_scores(table)
    fig = plots.category_seed_heatmap(scores, {"experiment": "rte", "language": "en"})
    assert isinstance(fig, matplotlib.figure.Figure)
    heat = fig.axes[0]
    assert len(heat.get_yticklabels()) == 33 and len(heat.get_xticklabels()) == 3
    fig = plots.category_language_heatmap(stability(scores), {"experiment": "rte"})
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["en", "ru"]
    d = deltas(scores, {"experiment": "rte"}, {"experiment": "rte+sick"})
    assert len(plots.delta_heatmap(d, "sigma_delta").axes[0].get_xticklabels()) == 2
    ci = setting_ci(table, {"experiment": "rte", "language": "en"}, n_boot=50)
    fig = plots.ci_forest_plot(ci)
    assert len(fig.axes[0].get_yticklabels()) == len(ci)
    with pytest.raises(ValueError, match="nothing to plot"):
        plots.category_seed_heatmap(scores, {"experiment": "missing"})
    matplotlib.pyplot.close("all")


def test_cli_writes_tables_and_summary(table, tmp_path):
    path = tmp_path / "pred.parquet"
    table.to_parquet(path)
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["stats", str(path), "--by", "coarse", "--bootstrap", "50", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "RS corr" in result.output
    ci = pd.read_csv(out / "bootstrap_ci.csv")
    assert len(ci) == 4 * (4 + 1)  # 4 settings x (4 coarse + all examples)
    scores = pd.read_csv(out / "scores.csv")
    assert set(scores["level"]) == {"fine", "coarse", "overall", "all"}
    assert (out / "summary.md").read_text().startswith("# Stability statistics")


def test_cli_reports_bad_file(table, tmp_path):
    path = tmp_path / "pred.csv"
    table.assign(label="yes").to_csv(path, index=False)
    result = CliRunner().invoke(app, ["stats", str(path)])
    assert result.exit_code == 2
    assert "pred.csv:2: expected label in {entailment, not_entailment}, found 'yes'" in result.output
    result = CliRunner().invoke(app, ["stats", str(path), "--by", "feature"])
    assert result.exit_code == 2
