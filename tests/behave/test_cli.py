"""``diagnostics behave generate|run|list`` end to end."""

import json

from typer.testing import CliRunner

from diagnostics.cli import app

runner = CliRunner()


def test_generate_then_run_with_model_folders(tmp_path):
    out = tmp_path / "suite.jsonl"
    result = runner.invoke(app, ["behave", "generate", "--lang", "en", "--lang", "ru", "--seed", "5",
                                 "--max-per-test", "3", str(out)])
    assert result.exit_code == 0, result.output
    lines = out.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2 * 16 * 3  # 16 tests per language, 3 cases each
    assert {json.loads(line)["language"] for line in lines} == {"en", "ru"}
    again = tmp_path / "again.jsonl"
    runner.invoke(app, ["behave", "generate", "--lang", "en", "--lang", "ru", "--seed", "5", "--max-per-test", "3",
                        str(again)])
    assert again.read_bytes() == out.read_bytes()


def test_run_reports_missing_model_and_bad_suite(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{}\n")
    result = runner.invoke(app, ["behave", "run", str(bad), "--model", str(tmp_path)])
    assert result.exit_code == 2 and f"{bad}:1: expected" in result.output
    suite = tmp_path / "s.jsonl"
    runner.invoke(app, ["behave", "generate", "--lang", "sv", "--max-per-test", "1", str(suite)])
    result = runner.invoke(app, ["behave", "run", str(suite), "--model", str(tmp_path / "nope")])
    assert result.exit_code == 2 and "no such run directory" in result.output


def test_list_and_bad_language(tmp_path):
    result = runner.invoke(app, ["behave", "list", "--lang", "de"])
    assert result.exit_code == 0 and "de\tsymmetry_mft\tMFT\tSymmetry/Collectivity" in result.output
    result = runner.invoke(app, ["behave", "generate", "--lang", "xx", str(tmp_path / "x.jsonl")])
    assert result.exit_code == 2 and "no behavioural templates for language 'xx'" in result.output


def test_run_writes_the_failure_figure_beside_the_results(tmp_path, tiny_model_dir):
    from _nli_heads import classifier

    suite = tmp_path / "suite.jsonl"
    assert runner.invoke(app, ["behave", "generate", "--lang", "en", "--seed", "0", "--max-per-test", "2",
                               str(suite)]).exit_code == 0
    names = ["entailment", "not_entailment"]
    store = tmp_path / "runs" / "exp" / "en" / "tiny"
    for seed in (0, 1):
        classifier(tiny_model_dir, store / f"seed={seed}" / "checkpoint", names, seed)
        (store / f"seed={seed}" / "DONE").write_text("{}")
    seeds = [str(store / f"seed={seed}" / "checkpoint") for seed in (0, 1)]
    for models, name in ((seeds[:1], "one"), (seeds, "seeds")):
        out = tmp_path / f"{name}.csv"
        options = [option for model in models for option in ("--model", model)]
        result = runner.invoke(app, ["behave", "run", str(suite), *options, "--out", str(out)])
        assert result.exit_code == 0, result.output
        assert out.is_file() and (tmp_path / f"{name}.png").stat().st_size > 5_000
