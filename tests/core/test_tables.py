"""The one table reader / writer (``diagnostics.core.tables``): every format round-trips, and text files read the same
whatever wrote them (a BOM, blank lines, CRLF, a spreadsheet's ``;``), with list columns as JSON and a bad line
named with its number."""

from __future__ import annotations

import pandas as pd
import pytest

from diagnostics.core.tables import iter_records, read_table, sniff_separator, write_table
from diagnostics.data import DataFormatError


def _frame() -> pd.DataFrame:
    return pd.DataFrame({"id": ["a", "b", "c"], "text": ["x, y", 'say "hi"', "ü\tß"],
                         "features": [["Negation"], [], ["Negation", "Quantifiers"]],
                         "sides": [{"Negation": "premise"}, {}, {"Quantifiers": "both"}]})


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".jsonl", ".parquet"])
def test_every_format_round_trips_text_lists_and_dicts(tmp_path, suffix):
    path = write_table(_frame(), tmp_path / f"t{suffix}")
    back = read_table(path)
    assert list(back.columns) == ["id", "text", "features", "sides"]
    assert back["id"].tolist() == ["a", "b", "c"] and back["text"].tolist() == ["x, y", 'say "hi"', "ü\tß"]
    assert [list(v) for v in back["features"]] == [["Negation"], [], ["Negation", "Quantifiers"]]
    assert back["sides"].tolist() == [{"Negation": "premise"}, {}, {"Quantifiers": "both"}]


def test_text_files_are_written_with_lf_and_lists_as_json(tmp_path):
    raw = write_table(_frame(), tmp_path / "t.csv").read_bytes()
    assert b"\r\n" not in raw
    assert '"[""Negation"", ""Quantifiers""]"'.encode() in raw


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".jsonl"])
def test_bom_crlf_and_blank_lines_read_alike(tmp_path, suffix):
    sep = "\t" if suffix == ".tsv" else ","
    if suffix == ".jsonl":
        lines = ['{"id": "1", "n": "a"}', "", "   ", '{"id": "2", "n": "b"}', ""]
    else:
        lines = [f"id{sep}n", "", f"1{sep}a", "  ", f"2{sep}b", ""]
    path = tmp_path / f"t{suffix}"
    path.write_bytes(b"\xef\xbb\xbf" + "\r\n".join(lines).encode())
    frame = read_table(path, line_column="_line")
    assert list(frame.columns) == ["_line", "id", "n"]
    assert frame["id"].tolist() == ["1", "2"] and frame["n"].tolist() == ["a", "b"]
    # line numbers count the header and the blank lines
    assert frame["_line"].tolist() == ([1, 4] if suffix == ".jsonl" else [3, 5])


def test_a_spreadsheet_semicolon_file_is_sniffed_whatever_its_suffix(tmp_path):
    path = tmp_path / "excel.csv"
    path.write_text("id;premise;score\r\n1;Ein Satz, mit Komma;0,5\r\n2;Noch einer;1,0\r\n", encoding="utf-8-sig")
    assert sniff_separator(path) == ";"
    frame = read_table(path)
    assert frame.to_dict("list") == {"id": ["1", "2"], "premise": ["Ein Satz, mit Komma", "Noch einer"],
                                     "score": ["0,5", "1,0"]}


def test_empty_cells_are_missing_and_a_quoted_newline_keeps_its_row(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text('id,text,label\n1,"two\nlines",\n2,x,y\n', encoding="utf-8")
    frame = read_table(path, line_column="_line")
    assert frame["text"].tolist() == ["two\nlines", "x"] and frame["label"].isna().tolist() == [True, False]
    assert frame["_line"].tolist() == [2, 4]


@pytest.mark.parametrize("suffix, text, line, expected", [
    (".csv", "id,n\n1,a\n\n2,b,c\n", 4, "2 fields"),
    (".tsv", "id\tn\n1\ta\n2\n", 3, "2 fields"),
    (".jsonl", '{"id": 1}\n\n{"id": 2\n', 3, "one JSON object per line"),
    (".jsonl", '{"id": 1}\n[1, 2]\n', 2, "a JSON object"),
])
def test_a_bad_line_is_named_with_its_number(tmp_path, suffix, text, line, expected):
    path = tmp_path / f"bad{suffix}"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(DataFormatError) as err:
        read_table(path)
    assert err.value.line == line and expected in err.value.expected
    assert str(err.value).startswith(f"{path}:{line}: expected")


def test_undecodable_bytes_name_their_line(tmp_path):
    path = tmp_path / "t.csv"
    path.write_bytes(b"id,n\n1,a\n2,\xff\n")
    with pytest.raises(DataFormatError, match=r"t\.csv:3: expected UTF-8 text"):
        read_table(path)


def test_whole_file_problems_name_the_file(tmp_path):
    for name, content, found in [("empty.csv", b"", "an empty file"), ("x.parquet", b"not parquet", "parquet"),
                                 ("blank.tsv", b"\n \n", "only blank lines")]:
        path = tmp_path / name
        path.write_bytes(content)
        with pytest.raises(DataFormatError) as err:
            read_table(path)
        assert err.value.line is None and found in err.value.found and err.value.path == str(path)
    with pytest.raises(DataFormatError, match="suffix '.xlsx'"):
        read_table(_touch(tmp_path / "t.xlsx"))


def _touch(path):
    path.write_text("x", encoding="utf-8")
    return path


def test_iter_records_skips_blank_lines_and_can_take_any_json_value(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text('\n[1]\n\n"s"\n', encoding="utf-8")
    assert list(iter_records(path, objects=False)) == [(2, [1]), (4, "s")]


def test_the_writer_refuses_an_unknown_suffix_and_replaces_atomically(tmp_path):
    from diagnostics.core.errors import UserInputError

    with pytest.raises(UserInputError, match="suffix '.xlsx'"):
        write_table(_frame(), tmp_path / "t.xlsx")
    path = tmp_path / "sub" / "t.csv"
    write_table(_frame(), path)
    write_table(_frame().head(1), path)
    assert len(read_table(path)) == 1 and sorted(p.name for p in path.parent.iterdir()) == ["t.csv"]
