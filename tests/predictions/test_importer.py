"""Importing other tools' prediction files as the one predictions table, on the bundled diagnostics AX-b, LiDiRus
and SweDiagnostics: every format and matching path, the unmatched report, and exact round trips through every
exporter."""

from __future__ import annotations

import functools
import json

import numpy as np
import pandas as pd
import pytest
from _cli import assert_user_error, invoke_cli, run_cli
from _predictions_tables import CODES, N, import_options, predictions_table, refused_import
from pandas.testing import assert_frame_equal

from diagnostics import data
from diagnostics.core.errors import UserInputError
from diagnostics.predictions import (ImportRefusedError, import_predictions, import_with_report, to_columns, to_lm_eval,
                                     to_trainer)
from diagnostics.stats import validate_predictions

DATASETS = ("axb", "lidirus", "swediagnostics")


@functools.cache
def _made(dataset: str, seeds: tuple, probability: bool) -> pd.DataFrame:
    return predictions_table(dataset, seeds=seeds, probability=probability)


def table_of(dataset: str, seeds=range(2), probability: bool = True) -> pd.DataFrame:
    """:func:`predictions_table`, made once per arguments in this module (a fresh copy each call)."""
    return _made(dataset, tuple(seeds), probability).copy()


def typeset(text: str, i: int) -> str:
    """What a word processor or a web page does to a text: curly quotes and guillemets, odd spaces."""
    out, opening = [], True
    for char in text:
        if char == '"':
            curly = "\u201c" if opening else "\u201d"
            out.append(curly if i % 2 else ("\u00ab\u00a0" if opening else "\u00a0\u00bb"))
            opening = not opening
        elif char == "'":
            out.append("\u2019")
        elif char == "\u00ab":
            out.append('"')
        elif char == "\u00bb":
            out.append('"')
        else:
            out.append(char)
    text = "".join(out).replace(" ", "  " if i % 3 == 0 else "\u00a0" if i % 3 == 1 else " ")
    return ("\u200b" if i % 5 == 0 else "") + " " + text + "\n"


# --- round trips --------------------------------------------------------------------------------------------------


ROUND_TRIPS = {
    "csv-ids": (lambda t, d: [to_columns(t, d / "p.csv")], {}),
    "csv-text-codes": (lambda t, d: [to_columns(t, d / "p.csv", text=True, label_map=CODES, run_column="run")],
                       {"label_map": CODES}),
    "tsv": (lambda t, d: [to_columns(t, d / "p.tsv", probability=True)], {}),
    "csv-semicolon": (lambda t, d: [to_columns(t, d / "p.csv", sep=";")], {}),
    "jsonl": (lambda t, d: [to_columns(t, d / "p.jsonl")], {}),
    "parquet": (lambda t, d: [to_columns(t, d / "p.parquet", label_map="1=entailment,0=not_entailment")],
                {"label_map": "1=entailment,0=not_entailment"}),
    "lm-eval": (lambda t, d: to_lm_eval(t, d), {"seed_pattern": r"seed(?P<seed>\d+)"}),
    "lm-eval-text": (lambda t, d: to_lm_eval(t, d, with_ids=False), {"seed_pattern": r"seed(\d+)"}),
    "trainer-npy": (lambda t, d: to_trainer(t, d, fmt="npy"), {}),
    "trainer-npz": (lambda t, d: to_trainer(t, d, fmt="npz"), {}),
    "trainer-json": (lambda t, d: to_trainer(t, d, fmt="json"), {"seeds": [0, 1]}),
}


#: Every format on AX-b; on the other sets the formats whose matching depends on the data (texts, ids, positions).
CASES = [("axb", fmt) for fmt in ROUND_TRIPS] + [(dataset, fmt) for dataset in DATASETS[1:] for fmt in (
    "csv-ids", "csv-text-codes", "lm-eval", "lm-eval-text", "trainer-npz")]


@pytest.mark.parametrize(("dataset", "fmt"), CASES)
def test_a_table_exported_and_imported_back_is_identical(dataset, fmt, tmp_path):
    table = table_of(dataset)
    write, options = ROUND_TRIPS[fmt]
    files = write(table, tmp_path)
    result = import_with_report(files, dataset, **import_options(dataset), **options)
    assert_frame_equal(result.table, table)
    assert result.matched == result.rows == 2 * N and result.unmatched.empty and result.missing.empty
    assert list(result.runs["matched"]) == [N, N]


def test_round_trip_without_probabilities_and_nested_seeds(tmp_path):
    table = table_of("lidirus", seeds=range(3), probability=False)
    table["pretrain_seed"] = table["seed"] % 2  # pretraining seeds 0 and 1, fine-tuning seeds under them
    table = validate_predictions(table.sort_values(["pretrain_seed", "seed"], kind="stable"))
    assert_frame_equal(import_predictions(to_columns(table, tmp_path / "n.csv"), "lidirus",
                                          **import_options("lidirus")),
                       table)
    files = to_lm_eval(table, tmp_path / "lm")  # a generation task: the answers are label names
    got = import_predictions(files, "lidirus", seed_pattern=r"pretrain_seed(?P<pretrain_seed>\d+)_seed(?P<seed>\d+)",
                             **import_options("lidirus"))
    assert_frame_equal(got, table)


# --- matching by text -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dataset", DATASETS)
def test_text_matching_survives_quotes_and_white_space(dataset, tmp_path):
    table = table_of(dataset, probability=False)
    path = to_columns(table, tmp_path / "colleague.csv", text=True, label_map=CODES, run_column="run")
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    frame["premise"] = [typeset(t, i) for i, t in enumerate(frame["premise"])]
    frame["hypothesis"] = [typeset(t, i + 1) for i, t in enumerate(frame["hypothesis"])]
    changed = (frame["premise"] != pd.read_csv(path, dtype=str, keep_default_na=False)["premise"]).sum()
    assert changed == len(frame)
    frame.to_csv(path, index=False, sep="\t")
    result = import_with_report(path, dataset, label_map=CODES, **import_options(dataset))
    assert_frame_equal(result.table, table)
    assert result.matched == 2 * N and list(result.runs["matched"]) == [N, N]
    assert set(result.runs["matched_by"]) <= {"text", "text + text (in order)"}


def test_identical_text_pairs_are_matched_in_order(tmp_path):
    known = data.load("axb")
    twins = known[known.duplicated(["premise", "hypothesis"], keep=False)]
    assert len(twins) == 8
    table = table_of("axb", seeds=[0], probability=False)
    path = to_columns(table, tmp_path / "t.csv", text=True)
    result = import_with_report(path, "axb", **import_options("axb"))
    assert result.matched == N
    assert (result.table["example_id"].to_numpy() == known["id"].to_numpy()).all()
    rows = pd.read_csv(path)
    pd.concat([rows, rows.iloc[[534]]]).to_csv(path, index=False)  # a third copy of a pair the dataset has twice
    refused = refused_import(path, "axb")
    assert list(refused.unmatched["reason"]) == ["duplicate"]


# --- what does not match ------------------------------------------------------------------------------------------


def test_unmatched_rows_are_reported_and_the_import_refused(tmp_path):
    table = table_of("axb", probability=False)
    path = to_columns(table, tmp_path / "c.csv", text=True)
    frame = pd.read_csv(path)
    frame.loc[5, "hypothesis"] = "Something the diagnostic never says."
    frame.loc[7, "premise"] = "Nor this."
    frame.loc[9, "prediction"] = "maybe"
    frame = frame.drop(index=[20, 21])  # seed 0 lacks two examples
    frame.to_csv(path, index=False)
    with pytest.raises(ImportRefusedError) as caught:
        import_predictions(path, "axb", **import_options("axb"))
    message = str(caught.value)
    assert "3 of 2206 rows did not match" in message and "allow-partial" in message and "\n" not in message
    result = caught.value.result
    reasons = dict(zip(result.unmatched["line"], result.unmatched["reason"]))
    assert reasons == {7: "no example with these texts", 9: "no example with these texts",
                       11: "prediction is no label"}
    details = dict(zip(result.unmatched["line"], result.unmatched["detail"]))
    assert details[7] == "premise found, hypothesis differs" and details[9] == "hypothesis found, premise differs"
    assert "'maybe'" in details[11]
    assert result.unmatched["closest_id"].iloc[0] == "5"  # the premise is example 5's (4 and 6 have similar ones)
    assert sorted(result.missing["example_id"]) == ["20", "21", "5", "7", "9"]
    assert set(result.missing["seed"]) == {0}
    partial = import_with_report(path, "axb", allow_partial=True, **import_options("axb"))
    assert partial.matched == 2 * N - 5 and len(partial.table) == 2 * N - 5
    written = partial.write(tmp_path / "report")
    assert len(pd.read_csv(written["unmatched.csv"])) == 3 and len(pd.read_csv(written["missing.csv"])) == 5
    assert "unmatched rows: 3" in written["import_report.md"].read_text(encoding="utf-8")


def test_ids_that_are_unknown_or_belong_to_other_texts_are_refused(tmp_path):
    table = table_of("lidirus", seeds=[0], probability=False)
    path = to_columns(table, tmp_path / "c.csv", text=True)
    frame = pd.read_csv(path)
    frame.insert(0, "idx", table["example_id"].to_numpy())
    frame.loc[0, "idx"] = "99999"
    frame.loc[1, "idx"] = "2"  # off by one: the texts of example 1 under the id of example 2
    frame.to_csv(path, index=False)
    result = refused_import(path, "lidirus", columns={"id": "idx"})
    assert list(result.unmatched["reason"]) == ["unknown id", "text differs from the dataset's"]
    assert list(result.runs["matched_by"]) == ["id"]


def test_a_file_of_another_dataset_matches_nothing(tmp_path):
    path = to_columns(table_of("swediagnostics", seeds=[0]), tmp_path / "sv.csv", text=True)
    result = refused_import(path, "axb", allow_partial=True)
    assert result.matched == 0 and set(result.unmatched["reason"]) == {"no example with these texts"}
    ours = to_columns(table_of("axb", seeds=[0]), tmp_path / "ours.csv")
    frame = pd.read_csv(ours).assign(dataset="lidirus")
    frame.to_csv(ours, index=False)
    assert set(refused_import(ours, "axb").unmatched["reason"]) == {"row of another dataset"}


# --- labels -------------------------------------------------------------------------------------------------------


def test_labels_in_any_case_and_three_way_labels_collapse(tmp_path):
    known = data.load("swediagnostics")
    rng = np.random.default_rng(0)
    guess = rng.choice(["Entailment", "NEUTRAL", "contradiction"], N)
    frame = pd.DataFrame({"pair": known["id"], "gold3": known["label3"].str.upper(), "answer": guess})
    frame.to_parquet(tmp_path / "sv.parquet")
    got = import_predictions(tmp_path / "sv.parquet", "swediagnostics",
                             columns={"id": "pair", "label": "gold3", "prediction": "answer"})
    assert (got["prediction"] == np.where(guess == "Entailment", "entailment", "not_entailment")).all()
    assert (got["label"] == known["label"]).all() and set(got["seed"]) == {0}


def test_codes_need_a_label_map_and_a_swapped_map_is_caught_by_the_gold_labels(tmp_path):
    table = table_of("axb", probability=False)
    path = to_columns(table, tmp_path / "c.csv", label_map=CODES)
    result = refused_import(path, "axb")  # 0/1 read as label names: nothing matches
    assert result.matched == 0 and set(result.unmatched["reason"]) == {"prediction is no label"}
    with pytest.raises(ImportRefusedError, match=r"gold labels differ .* in 2208 of 2208 row\(s\) \(1104 example"):
        import_predictions(path, "axb", label_map="1=entailment,0=not_entailment", **import_options("axb"))
    kept = import_predictions(path, "axb", label_map="1=entailment,0=not_entailment", trust_labels=True,
                              **import_options("axb"))
    assert (kept["label"] != table["label"]).all()
    with pytest.raises(UserInputError, match="expected a label"):
        import_predictions(path, "axb", label_map="0=yes,1=no")


def test_probabilities_and_logit_columns_give_the_prediction(tmp_path):
    table = table_of("axb", seeds=[0])
    logits = np.log(np.column_stack([1 - table["probability"], table["probability"]]).clip(1e-300))
    frame = pd.DataFrame({"id": table["example_id"], "not_ent": logits[:, 0], "ent": logits[:, 1],
                          "p": table["probability"]})
    frame.to_csv(tmp_path / "l.csv", index=False)
    by_logits = import_predictions(tmp_path / "l.csv", "axb", columns={"logits": "not_ent,ent", "probability": "p"},
                                   **import_options("axb"))
    assert_frame_equal(by_logits, table)
    by_probability = import_predictions(tmp_path / "l.csv", "axb", columns={"probability": "p"},
                                        **import_options("axb"))
    assert_frame_equal(by_probability, table)  # entailment above 0.5, as the trainer's arg-max


# --- runs ---------------------------------------------------------------------------------------------------------


def test_run_names_and_a_pretraining_column_give_nested_seeds(tmp_path):
    table = table_of("axb", seeds=range(4), probability=False)
    path = to_columns(table, tmp_path / "r.csv", label_map=CODES)
    frame = pd.read_csv(path)
    frame["checkpoint"] = np.where(frame["seed"] < 2, "ckpt-a", "ckpt-b")
    frame["seed"] = "run-" + (frame["seed"] % 2).astype(str)
    frame.to_csv(path, index=False)
    result = import_with_report(path, "axb", label_map=CODES, columns={"pretrain_seed": "checkpoint", "seed": "seed"},
                                **import_options("axb"))
    got = result.table
    assert list(got.columns[-1:]) == ["pretrain_seed"]
    assert sorted(got.groupby(["pretrain_seed", "seed"]).size().index) == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert (got["prediction"].to_numpy() == table["prediction"].to_numpy()).all()
    assert any("ckpt-a -> 0" in note for note in result.notes) and any("run-0 -> 0" in note for note in result.notes)


def test_several_files_are_several_seeds(tmp_path):
    table = table_of("lidirus", seeds=[3, 7])
    paths = [to_columns(part, tmp_path / f"{s}.jsonl") for s, part in table.groupby("seed")]
    for path in paths:  # one colleague per run, without the seed column
        frame = pd.read_json(path, lines=True, dtype={"id": str}).drop(columns="seed")
        frame.to_json(path, orient="records", lines=True, force_ascii=False)
    assert_frame_equal(import_predictions(paths, "lidirus", seeds=[3, 7], **import_options("lidirus")), table)
    assert set(import_predictions(paths, "lidirus", **import_options("lidirus"))["seed"]) == {0, 1}
    with pytest.raises(UserInputError, match="3 value"):
        import_predictions(paths, "lidirus", seeds=[1, 2, 3])


# --- lm-evaluation-harness and Trainer specifics -------------------------------------------------------------------


# --- the command ----------------------------------------------------------------------------------------------------


def test_the_import_command_writes_the_table_and_the_report(tmp_path):
    table = table_of("axb", probability=False)
    table.to_parquet(tmp_path / "ours.parquet")
    path = tmp_path / "c.csv"
    exported = invoke_cli("predictions", "export", tmp_path / "ours.parquet", "--to", "table", "--text", "--label-map",
                       CODES, "--run-column", "run", "--out", path)
    assert exported.returncode == 0, exported.stderr
    assert list(pd.read_csv(path).columns) == ["premise", "hypothesis", "label", "prediction", "run"]
    out = tmp_path / "imported.parquet"
    result = run_cli("predictions", "import", path, "--dataset", "axb", "--label-map", CODES, "--model", "m",
                     "--experiment", "base", "--out", out)
    assert result.returncode == 0, result.stderr
    assert "imported 2208 of 2208 rows" in result.stdout
    assert_frame_equal(pd.read_parquet(out), table)
    assert (tmp_path / "imported_import_report" / "unmatched.csv").is_file()
    frame = pd.read_csv(path)
    frame.loc[0, "premise"] = "A premise nobody wrote."
    frame.to_csv(path, index=False)
    refused = invoke_cli("predictions", "import", path, "--dataset", "axb", "--label-map", CODES,
                      "--out", tmp_path / "bad.csv", "--report", tmp_path / "report")
    assert_user_error(refused, "1 of 2208 rows did not match", "--allow-partial", str(tmp_path / "report"))
    assert not (tmp_path / "bad.csv").exists()
    unmatched = pd.read_csv(tmp_path / "report" / "unmatched.csv")
    assert list(unmatched["reason"]) == ["no example with these texts"]


# --- files as real tools write them ---------------------------------------------------------------------------------


def _lm_eval_samples(path, frame: pd.DataFrame, predictions: pd.Series) -> None:
    """A ``--log_samples`` file as lm-evaluation-harness 0.4 writes it for a two-choice task whose choices are
    ``[" False", " True"]`` (built from the harness's documented record layout: doc_id, doc, target, arguments,
    resps, filtered_resps, filter, metrics, hashes; the harness itself does not install here)."""
    lines = []
    for i, (row, pred) in enumerate(zip(frame.itertuples(index=False), predictions)):
        ll = [-0.4, -1.3] if pred == "not_entailment" else [-1.1, -0.2]
        lines.append(json.dumps({
            "doc_id": i, "doc": {"sentence1": row.premise, "sentence2": row.hypothesis, "idx": int(row.id),
                                 "label": int(row.label == "not_entailment")},
            "target": int(row.label == "entailment"),
            "arguments": {f"gen_args_{k}": {"arg_0": f"{row.premise}\nQuestion: {row.hypothesis} True or False?"
                                                      "\nAnswer:", "arg_1": choice}
                          for k, choice in enumerate([" False", " True"])},
            "resps": [[[ll[0], False]], [[ll[1], False]]], "filtered_resps": [[ll[0], False], [ll[1], False]],
            "filter": "none", "metrics": ["acc"], "doc_hash": "0" * 64, "prompt_hash": "1" * 64,
            "target_hash": "2" * 64, "acc": 1.0}, ensure_ascii=False))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_lm_eval_output_folders_seed_pattern_and_choice_texts_through_the_cli(tmp_path):
    frame = data.load("axb")
    table = table_of("axb", seeds=[13, 21], probability=False)
    files = []
    for seed in (13, 21):
        folder = tmp_path / "out" / f"seed{seed}" / "org__model"
        files.append(folder / "samples_axb_2024-06-01T10-00-00.123456.jsonl")
        _lm_eval_samples(files[-1], frame, table.loc[table["seed"] == seed, "prediction"])
        (folder / "results_2024-06-01T10-00-00.123456.json").write_text(json.dumps(
            {"results": {"axb": {"acc,none": 0.6}}, "configs": {"axb": {"task": "axb"}}, "versions": {"axb": 1},
             "n-shot": {"axb": 0}, "config": {"model": "hf"}}))
    out = tmp_path / "t.parquet"
    done = invoke_cli("predictions", "import", *files, "--dataset", "axb", "--seed-pattern", r"seed(\d+)",
                   "--experiment", "base", "--model", "m", "--out", out, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "choices 0 (' False') -> not_entailment, 1 (' True') -> entailment" in done.stdout
    got = pd.read_parquet(out)
    assert sorted(got["seed"].unique()) == [13, 21]
    assert_frame_equal(got.drop(columns="probability"), table.drop(columns="probability", errors="ignore"))
    # the explicit label map still wins over the choice texts
    swapped = invoke_cli("predictions", "import", files[0], "--dataset", "axb", "--label-map",
                      "0=entailment,1=not_entailment", "--out", tmp_path / "s.parquet", cwd=tmp_path)
    assert_user_error(swapped, "gold labels differ")
    # the pattern is shown as typed; the results file beside the samples has its own refusal
    missing = invoke_cli("predictions", "import", files[0], "--dataset", "axb", "--seed-pattern", r"run(\d+)",
                      "--out", tmp_path / "x.parquet", cwd=tmp_path)
    assert_user_error(missing, r"'run(\d+)'", "does not occur in the file's path")
    results = files[0].parent / "results_2024-06-01T10-00-00.123456.json"
    refused = invoke_cli("predictions", "import", files[0], results, "--dataset", "axb", "--out",
                      tmp_path / "y.parquet", cwd=tmp_path)
    line = assert_user_error(refused, str(results), "lm-evaluation-harness results file", "--log_samples")
    assert "DataFormatError" not in line and "numpy" not in line
    assert not (tmp_path / "y.parquet").exists()


def test_texts_that_lost_their_quotation_marks_match_as_their_own_tier(tmp_path):
    frame = data.load("lidirus")
    table = table_of("lidirus", seeds=[0], probability=False)
    quotes = str.maketrans("", "", '"\u00ab\u00bb\u201c\u201d\u201e')
    exported = pd.DataFrame({"premise": frame["premise"], "hypothesis": frame["hypothesis"],
                             "prediction": table["prediction"].to_numpy()})
    lost = exported["premise"].str.contains('["\u00ab\u201e\u201c]') | exported["hypothesis"].str.contains(
        '["\u00ab\u201e\u201c]')
    exported.loc[lost, "premise"] = exported.loc[lost, "premise"].str.translate(quotes)
    exported.loc[lost, "hypothesis"] = exported.loc[lost, "hypothesis"].str.translate(quotes)
    assert lost.sum() >= 50
    path = tmp_path / "crowd.csv"
    exported.to_csv(path, index=False)
    out = tmp_path / "t.parquet"
    done = invoke_cli("predictions", "import", path, "--dataset", "lidirus", "--experiment", "base", "--model", "m",
                   "--out", out, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"rows matched only with punctuation ignored (quotation marks lost in export ...): {lost.sum()}" in (
        done.stdout)
    listed = pd.read_csv(tmp_path / "t_import_report" / "punctuation_matches.csv")
    assert len(listed) == lost.sum() and set(listed["matched_by"]) == {"text (punctuation ignored)"}
    assert sorted(listed["line"] - 2) == sorted(np.flatnonzero(lost.to_numpy()))
    assert_frame_equal(pd.read_parquet(out), table.drop(columns="probability", errors="ignore"))


def test_a_row_equal_to_two_examples_without_punctuation_is_ambiguous(tmp_path):
    from diagnostics.predictions._text import loose_key, match_key

    frame = data.load("lidirus")
    groups: dict[str, set] = {}
    for p, h in zip(frame["premise"], frame["hypothesis"]):
        groups.setdefault(loose_key(p, h), set()).add(match_key(p, h))
    key = next(k for k, exact in groups.items() if len(exact) > 1)
    premise, hypothesis = key.split("\t")
    rows = pd.DataFrame({"premise": [premise], "hypothesis": [hypothesis], "prediction": ["entailment"]})
    rows.to_csv(tmp_path / "one.csv", index=False)
    result = refused_import(tmp_path / "one.csv", "lidirus", allow_partial=True)
    assert list(result.unmatched["reason"]) == ["ambiguous with punctuation ignored"]
    assert "matches 2 examples when punctuation is ignored" in result.unmatched["detail"].iat[0]
