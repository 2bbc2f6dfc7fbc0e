"""`diagnostics annotate agree`: rules judged without gold tags, by their agreement with the English rules on a set
and its translation (AX-b / LiDiRus), beside real precision where gold tags exist."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from diagnostics import data
from diagnostics.annotate import AGREEMENT_COLUMNS, agreement
from diagnostics.annotate._agreement import _kappa, align, tracking
from diagnostics.cli import app


def test_kappa_and_alignment():
    from sklearn.metrics import cohen_kappa_score

    rng = np.random.default_rng(0)
    a, b = rng.random(200) < 0.3, rng.random(200) < 0.4
    assert _kappa(a, b) == pytest.approx(cohen_kappa_score(a, b))
    target = pd.DataFrame({"id": ["2", "1", "9"], "premise": list("abc")})
    reference = pd.DataFrame({"id": [1, 2], "premise": list("xy")})
    t, r = align(target, reference)
    assert t["id"].tolist() == r["id"].tolist() == ["2", "1"] and r["premise"].tolist() == ["y", "x"]
    with pytest.raises(ValueError, match="share no pair id"):
        align(target, reference.assign(id=["7", "8"]))


def test_ru_rules_against_en_rules_on_lidirus_and_axb(tmp_path):
    ru, en = data.load("lidirus").head(120), data.load("axb").head(120)
    table = agreement(ru, en, "ru", "en")
    assert tuple(table.columns) == AGREEMENT_COLUMNS and table["feature"].iloc[-1] == "macro"
    negation = table.set_index("feature").loc["Negation"]
    assert negation["n_both"] <= min(negation["n_target"], negation["n_reference"])
    assert negation["agreement_precision"] > 0.5  # negation words translate one to one
    assert table["gold_precision"].notna().any()  # LiDiRus has gold tags
    rho, n = tracking(table)
    assert n >= 3 and -1 <= rho <= 1
    # a translation without gold tags: agreement only
    assert table.pipe(lambda _: agreement(ru.assign(features=[[]] * len(ru)), en, "ru"))["gold_precision"].isna().all()


def test_cli_agree_writes_table_and_figure_and_names_missing_files(tmp_path):
    ru = tmp_path / "ru.jsonl"
    ru.write_text("\n".join((data.datasets_root() / "lidirus" / "LiDiRus.jsonl").read_text(encoding="utf-8")
                            .splitlines()[:60]) + "\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["annotate", "agree", "--lang", "ru", "--path", str(ru), "--out",
                                      str(tmp_path / "out"), "--no-progress"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "out" / "agree_ru_en.png").stat().st_size > 10_000
    assert len(pd.read_csv(tmp_path / "out" / "agree_ru_en.csv")) > 10
    missing = CliRunner().invoke(app, ["annotate", "agree", "--lang", "fr", "--out", str(tmp_path / "o2")])
    assert missing.exit_code == 2 and "--path FILE" in missing.output
