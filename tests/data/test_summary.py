"""Category counts and dataset statistics, checked against PROVENANCE.md and direct counts."""

import re

import pandas as pd
import pytest

from diagnostics import data
from diagnostics.core.taxonomy import FINE
from diagnostics.data import category_counts, dataset_statistics, words


def _provenance_counts(folder: str) -> dict[str, int]:
    """Parse 'Name 123' pairs from the fine-grained section of a PROVENANCE.md."""
    text = (data.datasets_root() / folder / "PROVENANCE.md").read_text(encoding="utf-8")
    section = text.split("## Fine-grained categories")[1].split("\n## ")[0]
    counts = {}
    for line in section.splitlines():
        if ":" not in line:
            continue
        for item in line.split(":", 1)[1].split(","):
            match = re.match(r"\s*(.+?)\s+(\d+)\s*$", item)
            if match:
                counts[match.group(1)] = int(match.group(2))
    return counts


@pytest.mark.parametrize("name, folder", [("axb", "glue_diagnostic"), ("lidirus", "lidirus")])
def test_category_counts_match_provenance(name, folder):
    expected = _provenance_counts(folder)
    assert set(expected) == set(FINE)
    got = category_counts(data.load(name)).set_index("category")["n"].to_dict()
    assert got == expected


def test_words_are_lower_cased_runs_of_unicode_word_characters():
    assert words("Don't stop-gap, Кошка СИДЕЛА; på 3_rd") == ["don", "t", "stop", "gap", "кошка", "сидела", "på",
                                                               "3_rd"]


def test_dataset_statistics_equal_direct_counts():
    frames = {"rte validation": data.load("rte", "validation"), "lidirus": data.load("lidirus"),
              "swediagnostics": data.load("swediagnostics")}
    table = dataset_statistics(frames)
    assert list(table.index) == list(frames)
    for name, frame in frames.items():
        premise, hypothesis = frame["premise"].str.lower(), frame["hypothesis"].str.lower()
        vocabulary = pd.concat([premise, hypothesis]).str.findall(r"\w+").explode().dropna().nunique()
        mean_words = (premise.str.count(r"\w+") + hypothesis.str.count(r"\w+")).mean()
        row = table.loc[name]
        assert row["size"] == len(frame)
        assert row["vocabulary"] == vocabulary
        assert row["mean_words"] == pytest.approx(mean_words)
        assert row["language"] == frame["language"].iloc[0]
