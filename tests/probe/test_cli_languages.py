"""``diagnostics probe run`` in every language with annotator rules: the user's files where nothing is bundled,
one line naming ``--train`` / ``--test`` when they are missing, and ``--jobs`` for the fits."""

from __future__ import annotations

import pandas as pd
import pytest
from typer.testing import CliRunner

from diagnostics.cli import app
from diagnostics.data import datasets_root
from diagnostics.probe import DIAGNOSTIC_SETS, TRAIN_SETS


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from diagnostics.models import tiny_random_model

    return tiny_random_model(tmp_path_factory.mktemp("tiny") / "pre", seed=0, num_hidden_layers=1)


def _rows(source, target, n):
    lines = source.read_text(encoding="utf-8").splitlines()[:n]
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return target


@pytest.mark.parametrize("lang, missing", [("fr", "--train"), ("de", "--train"), ("sv", "--train")])
def test_a_language_without_bundled_data_names_the_option_that_supplies_it(tiny, tmp_path, lang, missing):
    assert lang not in TRAIN_SETS and (lang in DIAGNOSTIC_SETS) == (lang == "sv")
    result = CliRunner().invoke(app, ["probe", "run", "--model", str(tiny), "--lang", lang, "--out",
                                      str(tmp_path / "out")])
    assert result.exit_code == 2
    assert result.output.count("\n") == 1 and missing in result.output and f"--lang {lang}" in result.output
    train = _rows(datasets_root() / "rte" / "train.jsonl", tmp_path / "train.jsonl", 5)
    if lang != "sv":  # sv is scored on the bundled SweDiagnostics
        result = CliRunner().invoke(app, ["probe", "run", "--model", str(tiny), "--lang", lang, "--train",
                                          str(train), "--out", str(tmp_path / "out")])
        assert result.exit_code == 2 and "--test FILE" in result.output
    assert not (tmp_path / "out").exists()


def test_unknown_language_and_bad_jobs_are_refused(tiny, tmp_path):
    result = CliRunner().invoke(app, ["probe", "run", "--model", str(tiny), "--lang", "xx"])
    assert result.exit_code == 2 and "annotator rules (de, en, fr, ru, sv" in result.output
    result = CliRunner().invoke(app, ["probe", "run", "--model", str(tiny), "--jobs", "0"])
    assert result.exit_code == 2 and "--jobs" in result.output


@pytest.mark.slow  # a whole probing run in two processes: half a minute on two cores
def test_french_from_the_users_files_with_two_jobs(tiny, tmp_path):
    root = datasets_root()
    train = _rows(root / "rte" / "train.jsonl", tmp_path / "fr_train.jsonl", 40)
    test = _rows(root / "lidirus" / "LiDiRus.jsonl", tmp_path / "fr_diagnostic.jsonl", 40)
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["probe", "run", "--model", str(tiny), "--lang", "fr", "--train", str(train),
                                      "--test", str(test), "--tasks", "logic", "--selection", "holdout", "--out",
                                      str(out), "--threads", "1", "--jobs", "2", "--no-progress"])
    assert result.exit_code == 0, result.output
    table = pd.read_csv(out / "probe_fr.csv")
    assert set(table["language"]) == {"fr"} and (table["n_test"] == 40).all()
    assert len(table) == 2  # the embeddings and one layer
    assert list((out / "cache").glob("annotations-fr-*.json"))  # the French rules labelled the training pairs
