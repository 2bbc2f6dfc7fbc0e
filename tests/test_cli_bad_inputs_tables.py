"""Bad inputs to ``stats``, ``behave``, ``report`` and ``probe`` through the real command line.

Each is refused with exit code 2, one ``error:`` line naming the file or option, no traceback, and nothing
written (or nothing stale left). The refusals run the app in this process, one after another; the stale-output test
runs the real ``python -m diagnostics``.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import pandas as pd
import pytest

from _cli import assert_user_error, invoke_cli, run_cli
from _stats_fixtures import FLIP, synthetic_table
from diagnostics.stats._report import OUTPUTS


@dataclass
class Case:
    """One refused command: its arguments, what the error line names, and what must not exist afterwards."""

    args: list
    names: tuple[str, ...]
    absent: list[Path] = field(default_factory=list)
    slow: bool = False


def _notebook(path: Path) -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# Title")]
    nbformat.write(nb, path)


def _workspace(root: Path, tiny: Path) -> dict[str, Case]:
    """Build every bad input under ``root`` and the command that must refuse it."""
    from diagnostics.behave import generate_suite
    from diagnostics.behave import save_suite

    table = synthetic_table("axb", seeds=[0, 1])
    out = root / "out"  # no refused stats call may create it

    def table_file(name: str, frame: pd.DataFrame) -> Path:
        path = root / name
        frame.to_parquet(path) if name.endswith(".parquet") else frame.to_csv(path, index=False)
        return path

    good = table_file("good.parquet", table)
    truncated = root / "truncated.parquet"
    truncated.write_bytes(good.read_bytes()[:2000])
    (root / "empty.parquet").write_bytes(b"")
    (root / "empty.csv").write_text("")
    (root / "a_file").write_text("x")

    suite = save_suite(generate_suite("en", seed=0, max_per_test=1), root / "suite.jsonl")
    (root / "latin1.jsonl").write_bytes("{\"premise\": \"caf\xe9\"}\n".encode("latin-1"))
    pickled = root / "pickled"
    pickled.mkdir()
    for name in ("config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        if (tiny / name).is_file():
            shutil.copy(tiny / name, pickled / name)
    (pickled / "pytorch_model.bin").write_bytes(b"not loaded: refused before any unpickling")

    report_empty = root / "report_empty"
    report_empty.mkdir()
    report_bad_nb = root / "report_bad_nb"
    (report_bad_nb / "notebooks").mkdir(parents=True)
    (report_bad_nb / "notebooks" / "01_x.ipynb").write_text("{not a notebook")
    report_bad_manifest = root / "report_bad_manifest"
    (report_bad_manifest / "notebooks").mkdir(parents=True)
    _notebook(report_bad_manifest / "notebooks" / "01_x.ipynb")
    (report_bad_manifest / "manifest.json").write_text('{"seeds": [0,')

    probe_out = root / "probe_out"
    stats = ["stats", "--out", out]
    behave_out = root / "behave_results.csv"
    return {
        "stats: inverted gold labels": Case(
            [*stats, table_file("inverted.parquet", table.assign(label=table["label"].map(FLIP)))],
            ("inverted.parquet", "gold labels of dataset 'axb'", "2208 of 2208", "--trust-labels"), [out]),
        "stats: AX-b's rows named lidirus": Case(
            [*stats, table_file("mislabelled.parquet", table.assign(dataset="lidirus"))],
            ("mislabelled.parquet", "dataset 'lidirus'"), [out]),
        "stats: unknown example id": Case(
            [*stats, table_file("unknown_id.csv", table.assign(example_id="x" + table["example_id"]))],
            ("unknown_id.csv:2", "example_id of dataset 'axb'"), [out], slow=True),
        "stats: unregistered dataset": Case([*stats, table_file("nodata.csv", table.assign(dataset="axbb"))],
                                            ("nodata.csv:2", "'axbb'"), [out], slow=True),
        "stats: empty parquet": Case([*stats, root / "empty.parquet"], ("empty.parquet", "empty file"), [out]),
        "stats: truncated parquet": Case([*stats, truncated], ("truncated.parquet", "parquet"), [out]),
        "stats: empty csv": Case([*stats, root / "empty.csv"], ("empty.csv", "empty file"), [out]),
        "stats: missing column": Case([*stats, table_file("nopred.csv", table.drop(columns="prediction"))],
                                      ("nopred.csv", "prediction"), [out]),
        "stats: a folder as the table": Case([*stats, root / "report_empty"], ("report_empty", "a folder"), [out],
                                             slow=True),
        "stats: --out under a file": Case(["stats", good, "--out", root / "a_file" / "sub"],
                                          ("--out", str(root / "a_file"))),
        "stats: --dataset without =": Case([*stats, good, "--dataset", "diagnostic_fr"], ("--dataset",), [out],
                                           slow=True),
        "stats: --by": Case([*stats, good, "--by", "phenomenon"], ("--by", "'phenomenon'"), [out], slow=True),
        "stats: --bootstrap on runs of different examples": Case(
            [*stats, table_file("partial.parquet", table[~((table["seed"] == 1) & (table.index % 5 == 0))]),
             "--bootstrap", "10"], ("partial.parquet", "--bootstrap", "883 of 1104"), [out]),
        "behave: pickled weights": Case(["behave", "run", suite, "--model", pickled, "--out", behave_out],
                                        (str(pickled), "safetensors", "pytorch_model.bin"), [behave_out]),
        "behave: untrained classification head": Case(
            ["behave", "run", suite, "--model", tiny, "--out", behave_out],
            (str(tiny), "no trained classification head", "--allow-untrained-head"), [behave_out]),
        "behave: --out of another type": Case(["behave", "run", suite, "--model", tiny, "--out", root / "r.txt"],
                                              ("--out", "r.txt", ".csv"), [root / "r.txt"]),
        "behave: suite not UTF-8": Case(["behave", "run", root / "latin1.jsonl", "--model", tiny],
                                        ("latin1.jsonl", "UTF-8"), slow=True),
        "behave: --precision": Case(["behave", "run", suite, "--model", tiny, "--precision", "fp8"],
                                    ("--precision", "'fp8'"), slow=True),
        "behave: --max-per-test": Case(["behave", "generate", root / "s.jsonl", "--lang", "en", "--max-per-test",
                                        "0"], ("--max-per-test",), [root / "s.jsonl"], slow=True),
        "behave: unknown template language": Case(["behave", "generate", root / "s.jsonl", "--lang", "xx"],
                                                  ("'xx'",), [root / "s.jsonl"], slow=True),
        "report: no notebooks": Case(["report", report_empty], ("report_empty", "no executed notebooks"),
                                     [report_empty / "index.html"]),
        "report: unreadable notebook": Case(["report", report_bad_nb], ("01_x.ipynb", "notebook"),
                                            [report_bad_nb / "index.html"]),
        "report: unreadable manifest": Case(["report", report_bad_manifest], ("manifest.json", "JSON"),
                                            [report_bad_manifest / "index.html"], slow=True),
        "report: missing folder": Case(["report", root / "nowhere"], ("nowhere",), slow=True),
        "probe: --lang": Case(["probe", "run", "--model", tiny, "--lang", "xx", "--out", probe_out],
                              ("--lang", "'xx'"), [probe_out]),
        "probe: --tasks": Case(["probe", "run", "--model", tiny, "--tasks", "logic,nonsense", "--out", probe_out],
                               ("--tasks", "nonsense"), [probe_out]),
        "probe: --dtype": Case(["probe", "run", "--model", tiny, "--dtype", "float8", "--out", probe_out],
                               ("--dtype", "'float8'"), [probe_out], slow=True),
        "probe: --out under a file": Case(["probe", "run", "--model", tiny, "--out", root / "a_file" / "p"],
                                          ("--out", str(root / "a_file")), slow=True),
        "probe: missing model folder": Case(["probe", "run", "--model", root / "nowhere", "--out", probe_out],
                                            ("nowhere",), [probe_out]),
    }


@pytest.fixture(scope="module")
def workspace(tmp_path_factory, tiny_model_dir) -> tuple[Path, dict[str, Case]]:
    root = tmp_path_factory.mktemp("bad_inputs")
    return root, _workspace(root, tiny_model_dir)


def _refuse_all(root: Path, cases: dict[str, Case]) -> None:
    """Run each case in this process; assert each is refused as a user error and wrote nothing."""
    results = {name: invoke_cli(*case.args, cwd=root) for name, case in cases.items()}
    failures = []
    for name, case in cases.items():
        try:
            assert_user_error(results[name], *case.names)
            for path in case.absent:
                assert not path.exists(), f"{path} was written"
        except AssertionError as err:
            failures.append(f"{name}: {err}")
    assert not failures, "\n".join(failures)


def test_bad_inputs_are_refused_with_one_line(workspace):
    root, cases = workspace
    chosen = {name: case for name, case in cases.items() if not case.slow}
    assert len(chosen) >= 15 and {case.args[0] for case in chosen.values()} == {"stats", "behave", "report", "probe"}
    _refuse_all(root, chosen)


def test_more_bad_inputs_are_refused_with_one_line(workspace):
    root, cases = workspace
    _refuse_all(root, {name: case for name, case in cases.items() if case.slow})


def test_stats_leaves_no_stale_output_and_keeps_foreign_files(tmp_path):
    table = synthetic_table("axb", seeds=[0, 1])
    path = tmp_path / "pred.parquet"
    table.to_parquet(path)
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    first = run_cli("stats", path, "--out", out, "--bootstrap", "20", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert (out / "bootstrap_ci.csv").is_file()
    partial = tmp_path / "partial.parquet"
    table[~((table["seed"] == 1) & (table.index % 5 == 0))].to_parquet(partial)
    second = run_cli("stats", partial, "--out", out, cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    warnings = [line for line in second.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and "partial.parquet" in warnings[0] and "seed=1: 883" in warnings[0]
    written = {p.name for p in out.iterdir()}
    assert written == set(OUTPUTS) - {"bootstrap_ci.csv"} | {"notes.txt"}  # the earlier CIs are gone
    assert "partial.parquet" in (out / "summary.md").read_text() and "different examples" in (
        out / "summary.md").read_text()
    assert not [p for p in out.iterdir() if p.name.startswith(".")]  # no temporary file left


def test_untrained_head_is_scored_only_when_allowed(tiny_model_dir, tmp_path):
    from diagnostics.behave._predictors import TransformersPredictor
    from diagnostics.core.errors import UserInputError

    with pytest.raises(UserInputError, match="no trained classification head .*classifier.weight"):
        TransformersPredictor(tiny_model_dir)
    predictor = TransformersPredictor(tiny_model_dir, allow_untrained_head=True, batch_size=4)
    assert set(predictor(["The cat sat.", "A dog ran."], ["A cat sat.", "Nobody ran."])) <= {"entailment",
                                                                                          "not_entailment"}
    pickled = tmp_path / "pickled"
    pickled.mkdir()
    shutil.copy(tiny_model_dir / "config.json", pickled / "config.json")
    (pickled / "pytorch_model.bin").write_bytes(b"never unpickled")
    with pytest.raises(UserInputError, match="found only pytorch_model.bin"):
        TransformersPredictor(pickled, allow_untrained_head=True)
