"""Dataset references as values: parsed from config strings and mappings, loaded, and named by NAME=PATH options."""

import pytest

from diagnostics import data
from diagnostics.core.errors import UserInputError
from diagnostics.data import DataRef, user_file_refs


def test_parse_strings_mappings_and_references():
    assert DataRef.parse("rte:train") == DataRef("rte", "train")
    assert DataRef.parse("lidirus") == DataRef("lidirus", None)
    ref = DataRef.parse({"name": "rte_format", "split": "test", "path": "x.jsonl", "language": "fr"})
    assert ref == DataRef("rte_format", "test", "x.jsonl", "fr") and ref.key == "rte_format"
    assert DataRef.parse(ref) is ref
    with pytest.raises(ValueError, match=r"unknown keys in dataset reference .*\['file'\]"):
        DataRef.parse({"name": "rte", "file": "x"})
    with pytest.raises(ValueError, match="cannot read a dataset reference from 3"):
        DataRef.parse(3)


def test_load_reads_the_referenced_file_in_its_language(tmp_path):
    source = tmp_path / "fr.jsonl"
    source.write_text('{"idx": 0, "premise": "Il pleut.", "hypothesis": "Il fait beau.", "label": "not_entailment"}\n',
                      encoding="utf-8")
    ref = DataRef.parse({"name": "rte_format", "split": "test", "path": str(source), "language": "fr"})
    loaded = ref.load()
    assert loaded.equals(data.load("rte_format", "test", source, language="fr"))
    assert loaded[["premise", "language"]].values.tolist() == [["Il pleut.", "fr"]]


def test_user_file_refs_reads_name_equals_path(tmp_path):
    source = tmp_path / "lidirus.jsonl"
    source.write_text("{}\n", encoding="utf-8")
    refs = user_file_refs([f"lidirus={source}"])
    assert refs == {"lidirus": DataRef("lidirus", "test", str(source.resolve()))}
    assert user_file_refs(["axb", f"lidirus={source}"], names=True) == refs  # a bare name is checked, gives none


@pytest.mark.parametrize("item,needle", [
    ("lidirus", "--dataset 'lidirus': expected NAME=PATH"),
    ("=x.jsonl", "expected NAME=PATH"),
    ("lidirus=", "expected NAME=PATH"),
    ("nope=x.jsonl", "--dataset 'nope=x.jsonl': "),
    ("lidirus=missing.jsonl", "lidirus (test): missing.jsonl does not exist"),
])
def test_user_file_refs_refuses_bad_items(item, needle):
    with pytest.raises(UserInputError, match=None) as err:
        user_file_refs([item])
    assert needle in str(err.value)
