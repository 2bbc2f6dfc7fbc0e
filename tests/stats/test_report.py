"""The statistics report: its tables written as one set, the summary's markdown tables, the Multi-Bootstrap's
progress bar on stderr only when asked."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from diagnostics.stats import category_scores, stability
from diagnostics.stats._report import OUTPUTS, markdown_table, write_report

from _stats_fixtures import synthetic_table


@pytest.fixture(scope="module")
def pilot():
    return synthetic_table(seeds=range(3), experiments=(("rte", 0.7), ("mnli", 0.8)))


def test_bootstrap_bar_on_stderr_only_when_asked(pilot, tmp_path, capsys):
    write_report(pilot, tmp_path / "quiet", by="coarse", n_boot=20)
    assert capsys.readouterr().err == ""
    write_report(pilot, tmp_path / "shown", by="coarse", n_boot=20, progress=True)
    err = capsys.readouterr().err
    assert "Multi-Bootstrap (20 samples)" in err and "2/2" in err  # one step per setting


def test_markdown_table_rounds_floats_leaves_nan_empty_and_escapes_bars():
    frame = pd.DataFrame({"name": ["a|b", "c"], "mcc": [0.12345, np.nan], "n": [3, 4]}, index=[7, 8])
    assert markdown_table(frame, digits=2) == ("| name | mcc | n |\n|---|---|---|\n| a\\|b | 0.12 | 3 |\n"
                                               "| c |  | 4 |")


def test_the_report_writes_its_tables_as_one_set(pilot, tmp_path):
    out = tmp_path / "report"
    pilot = pilot[(pilot["experiment"] == "rte") & (pilot["seed"] < 2)]
    first = write_report(pilot, out, by="coarse", n_boot=2)
    assert sorted(p.name for p in first.values()) == sorted(OUTPUTS) and (out / "bootstrap_ci.csv").is_file()
    scores = pd.read_csv(out / "scores.csv")
    expected = category_scores(pilot)
    assert len(scores) == len(expected)
    np.testing.assert_allclose(scores["mcc"], expected["mcc"])
    std = pd.read_csv(out / "stability.csv")["std"]
    np.testing.assert_allclose(std, stability(expected)["std"])
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert "## MCC over seeds per coarse" in summary and "| experiment |" in summary
    (out / "notes.txt").write_text("mine")
    second = write_report(pilot, out, by="coarse", n_boot=0)  # no CIs this time: the old CI table goes
    assert "bootstrap_ci" not in second and not (out / "bootstrap_ci.csv").exists()
    assert (out / "notes.txt").read_text() == "mine"  # other files are kept
    with pytest.raises(ValueError, match="by must be 'category' or 'coarse'"):
        write_report(pilot, out, by="fine")
