"""The paper's printed numbers as a table: one row per printed number, canonical categories, store experiments."""

from __future__ import annotations

import re
import tomllib

import pytest

from diagnostics.core.taxonomy import COARSE, canonical_coarse, canonical_fine
from diagnostics.paper import paper_numbers
from diagnostics.paper._numbers import NUMBER_KINDS, PAPER_COLUMNS
from diagnostics.paper._values import STATISTICS

from _paper_stores import SECTION_COUNTS
from _paths import ROOT


def test_paper_numbers_parse_with_one_row_per_printed_number():
    numbers = paper_numbers()
    assert list(numbers.columns[:len(PAPER_COLUMNS)]) == PAPER_COLUMNS
    assert numbers["section"].value_counts().to_dict() == SECTION_COUNTS
    assert numbers["value"].notna().all() and set(numbers["kind"]) <= set(NUMBER_KINDS)
    assert set(numbers["statistic"]) <= set(STATISTICS)
    assert set(numbers["language"]) <= {"en", "fr", "de", "ru", "sv", "all"}
    assert numbers["seed"].dropna().between(0, 5).all()
    assert set(numbers.loc[numbers["kind"] == "claim", "value"]) <= {0.0, 1.0}
    # a few numbers read exactly as printed
    row = numbers[(numbers["statistic"] == "mcc") & (numbers["category"] == "Restrictivity")
                  & (numbers["seed"] == 1)].squeeze()
    assert row["value"] == -0.65 and row["language"] == "ru" and row["tolerance"] == pytest.approx(0.005)
    assert numbers.loc[numbers["statistic"] == "setting_lr", "value"].item() == 1e-5
    assert (numbers["statistic"] == "all_seeds_positive").sum() == 13
    assert (numbers["statistic"] == "mostly_negative").sum() == 8


def test_paper_categories_are_canonical():
    for name in paper_numbers()["category"]:
        if name == "overall":
            continue
        canonical = canonical_coarse(name) if name in COARSE else canonical_fine(name)
        assert canonical == name


def test_paper_experiments_name_store_experiments():
    pattern = re.compile(r"base|extra-(\d+|\*)|presence-(\*|[a-z_]+)(-(\*|0\.\d+))?")
    numbers = paper_numbers()
    assert all(pattern.fullmatch(e) for e in numbers["experiment"])
    assert set(numbers["reference"].dropna()) == {"base"}


def test_paper_numbers_are_package_data():
    settings = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "*.csv" in settings["tool"]["setuptools"]["package-data"]["diagnostics.paper"]
    assert (ROOT / "diagnostics" / "paper" / "paper_numbers.csv").is_file()


def test_a_number_printed_twice_is_counted_once():
    numbers = paper_numbers()
    key = ["experiment", "reference", "language", "category", "seed", "statistic", "value"]
    values = numbers[numbers["kind"] == "value"]
    assert not values[key].astype(str).duplicated().any()
    for language, category in (("en", "Conditionals"), ("de", "Genitives/Partitives")):  # Fig. 1's seed 0 in §5.2
        once = numbers[(numbers["category"] == category) & (numbers["language"] == language) & (numbers["seed"] == 0)]
        assert len(once) == 1 and once["section"].item() == "§5.1"
        assert "printed again in §5.2" in once["note"].item()
