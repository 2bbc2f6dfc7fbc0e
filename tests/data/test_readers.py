"""Every kind of malformed input is rejected with one error type naming file and line."""

import json
import subprocess
import sys

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from diagnostics import data
from diagnostics.cli import app
from diagnostics.data import _readers as readers

GOOD_RTE = {"premise": "A man sleeps.", "hypothesis": "A person sleeps.", "label": "entailment", "idx": 0}
GOOD_DIAG = {"idx": "0", "label": "entailment", "sentence1": "A man sleeps.", "sentence2": "A person sleeps.",
             "lexical-semantics": "Lexical entailment"}


def write_lines(path, lines):
    path.write_bytes(b"\n".join(line if isinstance(line, bytes) else line.encode("utf-8") for line in lines) + b"\n")
    return path


def rte_lines(bad_record_or_line):
    first = json.dumps(GOOD_RTE)
    bad = bad_record_or_line if isinstance(bad_record_or_line, (str, bytes)) else json.dumps(bad_record_or_line, ensure_ascii=False)
    return [first, bad]


@pytest.mark.parametrize(
    "bad, expected, found",
    [
        ('{"premise": "x", "hypothesis": ', "one JSON object per line", "invalid JSON"),
        ({**GOOD_RTE, "idx": 1, "premise": ""}, "non-empty string in 'premise'", "''"),
        ({k: v for k, v in GOOD_RTE.items() if k != "hypothesis"} | {"idx": 1}, "field 'hypothesis'", "keys"),
        ({**GOOD_RTE, "idx": 1, "label": "entailed"}, "label in {entailment, not_entailment}", "did you mean 'entailment'"),
        ({**GOOD_RTE, "idx": 0}, "a unique id", "already used on line 1"),
        ({k: v for k, v in GOOD_RTE.items() if k != "label"} | {"idx": 1}, "'label' like the records before it", "no 'label'"),
        (b'{"premise": "caf\xe9", "hypothesis": "x", "label": "entailment", "idx": 1}', "UTF-8 text", "undecodable bytes"),
        ("[1, 2]", "a JSON object", "a JSON list"),
        ({**GOOD_RTE, "idx": None}, "an integer or non-empty string id", "None"),
    ],
)
def test_rte_reader_rejects_malformed_line(tmp_path, bad, expected, found):
    path = write_lines(tmp_path / "bad.jsonl", rte_lines(bad))
    with pytest.raises(data.DataFormatError) as info:
        data.load("rte_format", path=path)
    err = info.value
    assert err.path == str(path) and err.line == 2
    message = str(err)
    assert message.startswith(f"{path}:2: expected ")
    assert expected in message and found in message


@pytest.mark.parametrize(
    "bad, expected, found",
    [
        ({**GOOD_DIAG, "idx": "1", "logic": "Negaton"}, "a Logic category", "did you mean 'Negation'"),
        ({**GOOD_DIAG, "idx": "1", "logic": "Lexical entailment"}, "a Logic category", "belongs to Lexical Semantics"),
        ({**GOOD_DIAG, "idx": "1", "logics": "Negation"}, "keys among", "did you mean 'logic'"),
        ({**GOOD_DIAG, "idx": "1", "logic": "Negation;"}, "a Logic category between ';'", "Negation;"),
        ({**GOOD_DIAG, "idx": "1", "label": "neutral"}, "label in {entailment, not_entailment}", "'neutral'"),
        ({**GOOD_DIAG, "idx": "1", "sentence2": "   "}, "non-empty string in 'sentence2'", "'   '"),
    ],
)
def test_diagnostic_reader_rejects_malformed_line(tmp_path, bad, expected, found):
    path = write_lines(tmp_path / "diag.jsonl", [json.dumps(GOOD_DIAG), json.dumps(bad)])
    with pytest.raises(data.DataFormatError) as info:
        data.load("diagnostic_format", path=path)
    assert info.value.line == 2
    assert expected in str(info.value) and found in str(info.value)


def test_blank_lines_are_skipped_and_later_lines_keep_their_numbers(tmp_path):
    path = write_lines(tmp_path / "gaps.jsonl", ["", json.dumps(GOOD_RTE), "  ", json.dumps({**GOOD_RTE, "idx": 0})])
    with pytest.raises(data.DataFormatError) as info:
        data.load("rte_format", path=path)
    assert info.value.line == 4 and "already used on line 2" in str(info.value)
    path = write_lines(tmp_path / "ok.jsonl", [json.dumps(GOOD_RTE), "", json.dumps({**GOOD_RTE, "idx": 1}), ""])
    assert data.load("rte_format", path=path)["id"].tolist() == ["0", "1"]


def test_tsv_wrong_column_count_and_header(tmp_path):
    header = "\t".join(readers.GLUE_TSV_HEADER)
    good = "\t".join(["", "", "Negation", "", "Artificial", "The cat sat.", "The cat did not sit.", "contradiction"])
    bad = "\t".join(["", "", "Negation", "", "Artificial", "The cat sat.", "contradiction"])
    path = write_lines(tmp_path / "d.tsv", [header, good, bad])
    with pytest.raises(data.DataFormatError, match=r"d\.tsv:3: expected 8 tab-separated columns, found 7"):
        readers.read_glue_diagnostic_tsv(path)
    path = write_lines(tmp_path / "h.tsv", ["Premise\tHypothesis", good])
    with pytest.raises(data.DataFormatError, match=r"h\.tsv:1: expected header"):
        readers.read_glue_diagnostic_tsv(path)


def test_sick_unknown_label(tmp_path):
    header = "\t".join(readers.SICK_HEADER)
    row = ["1", "A dog runs.", "An animal runs.", "ENTAILS", "4.5", "A_entails_B", "B_neutral_A", "x", "y", "F", "F", "TRAIN"]
    path = write_lines(tmp_path / "SICK.txt", [header, "\t".join(row)])
    with pytest.raises(data.DataFormatError, match=r"SICK\.txt:2: expected label in .*did you mean 'entailment'"):
        readers.read_sick(path)


def test_empty_file(tmp_path):
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"")
    with pytest.raises(data.DataFormatError, match="at least one record"):
        data.load("rte_format", path=path)


runner = CliRunner()


def test_cli_validate_ok_and_error_without_traceback(tmp_path):
    good = write_lines(tmp_path / "good.jsonl", [json.dumps(GOOD_RTE)])
    result = runner.invoke(app, ["data", "validate", str(good), "--kind", "rte"])
    assert result.exit_code == 0, result.output
    assert "OK, 1 records" in result.output
    bad = write_lines(tmp_path / "bad.jsonl", rte_lines({**GOOD_RTE, "idx": 1, "label": "yes"}))
    proc = subprocess.run([sys.executable, "-m", "diagnostics", "data", "validate", str(bad), "--kind", "rte"],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert f"{bad}:2: expected label in" in proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""


def test_cli_show_and_list():
    result = runner.invoke(app, ["data", "show", "lidirus"])
    assert result.exit_code == 0
    assert "Redundancy" in result.output and "645" in result.output
    result = runner.invoke(app, ["data", "list"])
    assert "swediagnostics" in result.output


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(payload=st.binary(max_size=400))
def test_readers_on_garbage_bytes_raise_only_data_format_error(tmp_path, payload):
    path = tmp_path / "garbage.jsonl"
    path.write_bytes(payload)
    for name in ("rte_format", "diagnostic_format", "swediagnostics", "axb", "sick", "mnli"):
        try:
            frame = data.load(name, path=path)
        except data.DataFormatError as err:
            assert str(err).startswith(str(path))
        else:  # garbage that happens to be valid must still be a well-formed table
            assert frame["premise"].map(lambda s: isinstance(s, str) and s.strip() != "").all()


json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=20),
                           lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3),
                           max_leaves=8)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(record=st.dictionaries(st.sampled_from(["idx", "label", "sentence1", "sentence2", "logic", "knowledge", "premise",
                                                "hypothesis", "meta", "id"]), json_values, max_size=6))
@pytest.mark.slow
def test_readers_on_random_json_records(tmp_path, record):
    path = tmp_path / "rec.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    for name in ("rte_format", "diagnostic_format", "swediagnostics"):
        try:
            data.load(name, path=path)
        except data.DataFormatError as err:
            assert err.line == 1


MNLI_HEADER = "index\tpromptID\tpairID\tgenre\tsentence1\tsentence2\tlabel1\tgold_label"


def _mnli_line(i, gold, premise="A man sleeps.", hypothesis='He "rests" \u2014 ok.', genre="fiction"):
    return f"{i}\t{i}\t{i}e\t{genre}\t{premise}\t{hypothesis}\t{gold}\t{gold}"


def test_mnli_tsv_read_at_once_is_what_the_record_by_record_reading_gives(tmp_path):
    """BOM, CRLF, empty lines, quotes, pairs without consensus, with and without a genre column: one frame; a line
    of blanks is left to the record-by-record reading, which skips it too."""
    golds = ["entailment", "neutral", "-", "contradiction", "-", "entailment"]
    lines = [MNLI_HEADER] + [_mnli_line(i, gold) for i, gold in enumerate(golds)]
    crlf = tmp_path / "crlf.tsv"
    crlf.write_bytes(b"\xef\xbb\xbf" + "\r\n".join(lines[:3] + ["", ""] + lines[3:]).encode("utf-8") + b"\r\n")
    no_genre = write_lines(tmp_path / "no_genre.tsv",
                           ["\t".join(c for k, c in enumerate(line.split("\t")) if k != 3) for line in lines])
    for path in (crlf, no_genre):
        at_once, dropped = readers._mnli_tsv_at_once(path, "en")
        by_record, dropped_too = readers._mnli_record_by_record(path, "en")
        pd.testing.assert_frame_equal(at_once, by_record)
        assert dropped == dropped_too == 2 and len(at_once) == 4
    assert readers._mnli_tsv_at_once(crlf, "en")[0]["genre"].tolist() == ["fiction"] * 4
    assert readers._mnli_tsv_at_once(no_genre, "en")[0]["genre"].tolist() == [None] * 4
    blanks = write_lines(tmp_path / "blanks.tsv", lines[:3] + [" \t "] + lines[3:])
    assert readers._mnli_tsv_at_once(blanks, "en") is None
    with pytest.warns(UserWarning, match="dropped 2 pairs"):
        assert readers.read_mnli(blanks)["label"].tolist() == ["entailment", "not_entailment", "not_entailment",
                                                          "entailment"]


@pytest.mark.parametrize("bad, where, said", [
    (_mnli_line(1, "entailmnet"), 3, "did you mean 'entailment'"),
    (_mnli_line(0, "neutral"), 3, "already used on line 2"),
    (_mnli_line(1, "neutral", premise=" "), 3, "a non-empty string in 'sentence1'"),
    (_mnli_line(1, "neutral") + "\textra", 3, "8 tab-separated columns"),
], ids=["label", "duplicate-id", "empty-text", "columns"])
def test_a_bad_mnli_tsv_line_is_named_as_before(tmp_path, bad, where, said):
    path = write_lines(tmp_path / "train.tsv", [MNLI_HEADER, _mnli_line(0, "entailment"), bad])
    assert readers._mnli_tsv_at_once(path, "en") is None  # left to the reading that names the line
    with pytest.raises(data.DataFormatError, match=said) as caught:
        readers.read_mnli(path)
    assert f":{where}" in str(caught.value)
