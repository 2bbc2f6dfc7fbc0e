"""Reading and validating the predictions table: formats round-trip, errors name file, row and expectation."""

import json

import pandas as pd
import pytest

from _stats_fixtures import synthetic_table
from diagnostics.data import DataFormatError
from diagnostics.stats import read_predictions, validate_predictions


@pytest.fixture(scope="module")
def table():
    return synthetic_table("axb", seeds=[0, 1])


@pytest.mark.parametrize("suffix", [".parquet", ".csv", ".tsv", ".jsonl"])
def test_formats_round_trip(table, tmp_path, suffix):
    path = tmp_path / f"pred{suffix}"
    if suffix == ".parquet":
        table.to_parquet(path)
    elif suffix == ".csv":
        table.to_csv(path, index=False)
    elif suffix == ".tsv":
        table.to_csv(path, index=False, sep="\t")
    else:
        table.to_json(path, orient="records", lines=True)
    back = read_predictions(path)
    pd.testing.assert_frame_equal(back, validate_predictions(table), check_dtype=False)
    assert back["seed"].dtype == "int64"
    assert back["example_id"].map(type).eq(str).all()


def test_unknown_example_id_names_file_and_line(table, tmp_path):
    bad = table.copy()
    bad.loc[5, "example_id"] = "no-such-id"
    path = tmp_path / "pred.csv"
    bad.to_csv(path, index=False)
    with pytest.raises(DataFormatError, match=r"pred\.csv:7: expected an example_id of dataset 'axb', "
                                              r"found 'no-such-id' \(1 unknown"):
        read_predictions(path)


def test_a_spreadsheet_export_reads_like_the_table_and_names_the_right_line(table, tmp_path):
    """A BOM, CRLF line ends, ';' separators and blank lines (as spreadsheets write them) change nothing."""
    path = tmp_path / "pred.csv"
    lines = table.to_csv(index=False, sep=";", lineterminator="\r\n").split("\r\n")
    lines.insert(3, "")
    path.write_bytes(b"\xef\xbb\xbf" + "\r\n".join(lines).encode())
    pd.testing.assert_frame_equal(read_predictions(path), validate_predictions(table), check_dtype=False)
    lines[6] = lines[6].replace("not_entailment", "entailed").replace(";entailment", ";entailed")
    path.write_bytes("\r\n".join(lines).encode())
    with pytest.raises(DataFormatError, match=r"pred\.csv:7: expected (label|prediction) in"):
        read_predictions(path)


def test_label_outside_label_set_suggests_fix(table, tmp_path):
    bad = table.copy()
    bad.loc[2, "prediction"] = "entailed"
    path = tmp_path / "pred.jsonl"
    bad.to_json(path, orient="records", lines=True)
    with pytest.raises(DataFormatError, match=r"pred\.jsonl:3: expected prediction in \{entailment, "
                                              r"not_entailment\}, found 'entailed'; did you mean 'entailment'"):
        read_predictions(path)


def test_duplicated_run_example_rows(table):
    bad = pd.concat([table, table.iloc[[10]]], ignore_index=True)
    with pytest.raises(DataFormatError, match=rf"<predictions>:{len(table) + 1}: expected one row per \(run, "
                                              r"example\), found a duplicate of row 11"):
        validate_predictions(bad)


def test_missing_column_and_bad_seed_and_probability(table):
    with pytest.raises(DataFormatError, match="no column\\(s\\) seed"):
        validate_predictions(table.drop(columns="seed"))
    bad = table.assign(seed=table["seed"].astype(object))
    bad.loc[3, "seed"] = "one"
    with pytest.raises(DataFormatError, match=":4: expected an integer seed, found 'one'"):
        validate_predictions(bad)
    with pytest.raises(DataFormatError, match="probability in \\[0, 1\\], found 1.5"):
        validate_predictions(table.assign(probability=1.5))


def test_unknown_dataset_and_unknown_suffix(table, tmp_path):
    with pytest.raises(DataFormatError, match="registered dataset name"):
        validate_predictions(table.assign(dataset="nope"))
    path = tmp_path / "pred.xlsx"
    path.write_text("x")
    with pytest.raises(DataFormatError, match="suffix '.xlsx'"):
        read_predictions(path)
    path = tmp_path / "broken.jsonl"
    path.write_text(json.dumps(table.iloc[0].to_dict(), default=str) + "\n{not json\n")
    with pytest.raises(DataFormatError, match="broken.jsonl:2: expected one JSON object per line"):
        read_predictions(path)
