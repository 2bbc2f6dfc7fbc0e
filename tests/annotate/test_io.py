"""Reading annotation input (a registered set or a file of any bundled format) and writing annotated tables."""

import json
from pathlib import Path

import pandas as pd
import pytest

from diagnostics.annotate import annotate


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet", ".csv"])
def test_write_output_replaces_the_file_whole(tmp_path, monkeypatch, suffix):
    from diagnostics.annotate._io import write_output

    frame = annotate(pd.DataFrame({"premise": ["Il ne pleut pas."], "hypothesis": ["Il pleut."]}), "fr")
    out = write_output(frame, tmp_path / f"out{suffix}")
    first = out.read_bytes()

    def killed_half_way(self, target, *args, **kwargs):  # a writer interrupted after its first bytes
        Path(target).write_bytes(b"partial")
        raise KeyboardInterrupt

    for method in ("to_json", "to_parquet", "to_csv"):
        monkeypatch.setattr(pd.DataFrame, method, killed_half_way)
    with pytest.raises(KeyboardInterrupt):
        write_output(frame, out)
    assert out.read_bytes() == first  # the earlier table is intact
    assert sorted(p.name for p in tmp_path.iterdir()) == [out.name]  # and no temporary file is left behind


def test_read_input_takes_a_registered_name_or_a_file_in_any_bundled_format(tmp_path):
    from diagnostics import data
    from diagnostics.annotate import read_input
    from diagnostics.core.errors import UserInputError

    axb = read_input("axb", "en")
    pd.testing.assert_frame_equal(axb, data.load("axb"))
    rows = [{"idx": 0, "sentence1": "Le chat dort.", "sentence2": "Le chat ne dort pas.", "label": "not_entailment",
             "logic": "Negation"}]
    source = tmp_path / "fr.jsonl"
    source.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8")
    read = read_input(source, "fr")  # by extension: the diagnostic format, whose fields the first record has
    assert read[["premise", "hypothesis", "language"]].values.tolist() == [["Le chat dort.", "Le chat ne dort pas.",
                                                                           "fr"]]
    assert read["features"].tolist() == [["Negation"]]
    table = tmp_path / "pairs.csv"
    pd.DataFrame({"premise": ["a"], "hypothesis": ["b"], "extra": [1]}).to_csv(table, index=False)
    assert read_input(table, "fr")[["premise", "hypothesis"]].values.tolist() == [["a", "b"]]
    pd.DataFrame({"premise": ["a"]}).to_csv(table, index=False)
    with pytest.raises(data.DataFormatError, match="columns premise and hypothesis"):
        read_input(table, "fr")
    with pytest.raises(FileNotFoundError, match="not a registered dataset"):
        read_input(tmp_path / "missing.jsonl", "fr")
    with pytest.raises(UserInputError, match="--kind: expected auto or one of"):
        read_input(source, "fr", kind="nope")


def test_read_input_reports_the_reader_that_read_furthest(tmp_path):
    from diagnostics import data
    from diagnostics.annotate import read_input

    source = tmp_path / "broken.jsonl"
    good = {"idx": 0, "sentence1": "a", "sentence2": "b", "label": "entailment", "logic": "Negation"}
    source.write_text(json.dumps(good) + "\n{not json\n", encoding="utf-8")
    with pytest.raises(data.DataFormatError) as err:
        read_input(source, "en")
    assert err.value.line == 2  # every reader meets the bad JSON on line 2, not the other readers' line-1 complaint


@pytest.mark.parametrize("name,needle", [("out.txt", "expected an output file ending in .jsonl, .parquet, .csv"),
                                         ("out", "no extension"), ("folder.csv", "found a folder")])
def test_check_output_refuses_unknown_extensions_and_folders(tmp_path, name, needle):
    from diagnostics.annotate import check_output
    from diagnostics.core.errors import UserInputError

    (tmp_path / "folder.csv").mkdir()
    with pytest.raises(UserInputError, match=needle):
        check_output(tmp_path / name)
    check_output(tmp_path / "fine.parquet")  # a writer's extension, not there yet: accepted
