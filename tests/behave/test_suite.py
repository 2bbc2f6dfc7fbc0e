"""Suite files: cases written and read back, a user's minimal case, every malformed record named with file and line."""

import json

import pytest

from diagnostics.behave import Case, SuiteFormatError, load_suite


GOOD = {"id": "x1", "language": "en", "test": "t", "capability": "Negation", "type": "MFT", "premise": "A.",
        "hypothesis": "B.", "label": "entailment"}


def test_user_written_minimal_case(tmp_path):
    path = tmp_path / "mine.jsonl"
    path.write_text(json.dumps({"id": "x1", "language": "en", "test": "mine", "capability": "Negation",
                                "type": "MFT", "premise": "A.", "hypothesis": "B.", "label": "entailment"}) + "\n\n")
    (case,) = load_suite(path)
    assert case == Case(id="x1", language="en", test="mine", capability="Negation", type="MFT", premise="A.",
                        hypothesis="B.", label="entailment")


@pytest.mark.parametrize("record,needle", [
    ({**GOOD, "label": "entailed"}, "label in"),
    ({**GOOD, "type": "CHK"}, "type in"),
    ({k: v for k, v in GOOD.items() if k != "premise"}, "field 'premise'"),
    ({**GOOD, "type": "INV", "label": None}, "original_premise"),
    ({**GOOD, "colour": 1}, "fields among"),
    ({**GOOD, "seed": "0"}, "seed as an integer"),
    ({**GOOD, "hypothesis": 3}, "hypothesis as a non-empty string"),
])
def test_suite_errors_name_file_and_line(tmp_path, record, needle):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(GOOD) + "\n" + json.dumps(record) + "\n")
    if record.get("id") == GOOD["id"] and needle != "fields among":
        record["id"] = "x2"
        path.write_text(json.dumps(GOOD) + "\n" + json.dumps(record) + "\n")
    with pytest.raises(SuiteFormatError) as err:
        load_suite(path)
    assert str(err.value).startswith(f"{path}:2: expected") and needle in str(err.value)


def test_suite_duplicate_ids_and_bad_json(tmp_path):
    path = tmp_path / "dup.jsonl"
    path.write_text(json.dumps(GOOD) + "\n" + json.dumps(GOOD) + "\n")
    with pytest.raises(SuiteFormatError, match=r"dup.jsonl:2: expected a unique case id, found 'x1' \(also on line 1\)"):
        load_suite(path)
    path.write_text(json.dumps(GOOD) + "\n{not json\n")
    with pytest.raises(SuiteFormatError, match=r"dup.jsonl:2: expected one JSON object per line"):
        load_suite(path)
