"""No silent phase in ``stats``: a progress bar over the Multi-Bootstrap's settings and over the planner's
simulations (on stderr, when asked, and never otherwise), and the seed plan's figure beside its tables."""

from __future__ import annotations

import pytest
from PIL import Image
from typer.testing import CliRunner

from _stats_fixtures import synthetic_table
from diagnostics.cli import app
from diagnostics.plots import seed_plan_figure
from diagnostics.stats import plan_seeds

PLAN = ["--half-width", "0.1", "--max-seeds", "6", "--sims", "50", "--boot", "20"]


@pytest.fixture(scope="module")
def pilot():
    return synthetic_table(seeds=range(3), experiments=(("rte", 0.7), ("mnli", 0.8)))


def test_planner_bar_on_stderr_only_when_asked(pilot, capsys):
    quiet = plan_seeds(pilot, half_width=0.1, by="overall", max_seeds=5, n_sims=20, n_boot=10)
    assert capsys.readouterr().err == ""
    shown = plan_seeds(pilot, half_width=0.1, by="overall", max_seeds=5, n_sims=20, n_boot=10, progress=True)
    err = capsys.readouterr().err
    assert "simulate studies (20 per number of seeds)" in err and "/4 " in err  # 2..5 seeds
    assert shown.curve.equals(quiet.curve)  # the bar changes nothing


def test_plan_figure_has_a_line_per_unit_and_a_panel_per_setting(pilot):
    plan = plan_seeds(pilot, half_width=0.1, by="coarse", max_seeds=5, n_sims=20, n_boot=10)
    fig = seed_plan_figure(plan.curve, 0.1)
    panels = [ax for ax in fig.axes if ax.axison]
    assert len(panels) == 2
    units = set(plan.curve["category"])
    for ax in panels:
        assert {line.get_label() for line in ax.lines} == units | {"_target"}
        assert ax.get_xlabel() == "seeds" and "half-width" in ax.get_ylabel() and ax.get_title()
    with pytest.raises(ValueError, match="empty"):
        seed_plan_figure(plan.curve.iloc[:0])


def test_cli_plan_writes_its_figure_and_stats_bars_follow_no_progress(pilot, tmp_path):
    path = tmp_path / "pilot.parquet"
    pilot[pilot["experiment"] == "rte"].to_parquet(path)
    out = tmp_path / "plan"
    result = CliRunner().invoke(app, ["stats", "plan", str(path), *PLAN, "--by", "overall", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "simulate studies" in result.stderr and str(out / "plan_curve.png") in result.stdout
    with Image.open(out / "plan_curve.png") as image:
        assert image.format == "PNG" and image.size[0] > 100
    quiet = CliRunner().invoke(app, ["stats", "plan", str(path), *PLAN, "--by", "overall", "--no-progress"])
    assert quiet.exit_code == 0 and quiet.stderr == "" and not list(tmp_path.glob("*.png"))
    report = CliRunner().invoke(app, ["stats", str(path), "--by", "coarse", "--bootstrap", "20",
                                      "--out", str(tmp_path / "stats")])
    assert report.exit_code == 0, report.output
    assert "Multi-Bootstrap (20 samples)" in report.stderr
    silent = CliRunner().invoke(app, ["stats", str(path), "--by", "coarse", "--bootstrap", "20", "--no-progress",
                                      "--out", str(tmp_path / "stats")])
    assert silent.exit_code == 0 and "Multi-Bootstrap (20 samples)" not in silent.stderr
