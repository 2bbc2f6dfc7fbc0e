"""Tables of the paper comparison for people: significant digits, one dash for every missing value, text wrapped."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from diagnostics.paper import format_number, number_label, paper_numbers, paper_table


@pytest.mark.parametrize(("value", "text"), [
    (1e-05, "1e-05"), (1e-04, "0.0001"), (0.177, "0.177"), (-0.6543, "-0.654"), (0.0362, "0.0362"),
    (374000.0, "374000"), (4, "4"), (np.int64(1104), "1104"), (12345.6, "12346"), (-0.0, "0"),
    (True, "yes"), (np.bool_(False), "no"), ("inside", "inside"), (6.71e-17, "0"), (-3.4e-17, "0"),
    (None, "–"), (float("nan"), "–"), (np.nan, "–"), (pd.NA, "–"), (pd.NaT, "–"), ("", "–"),
])
def test_format_number(value, text):
    assert format_number(value) == text


def test_the_learning_rates_stay_apart():
    assert format_number(1e-05) != format_number(1e-04)  # 0.000 and 0.000 once
    assert format_number(0.123456, digits=5) == "0.12346"


def _cells(html: str) -> list[str]:
    return [re.sub(r"<[^>]+>", "", cell).strip() for cell in re.findall(r"<td[^>]*>.*?</td>", html, flags=re.S)]


def test_paper_table_writes_every_cell_one_way():
    frame = pd.DataFrame({
        "statistic": ["setting_lr", "mcc", "mcc"],
        "paper": [1e-05, 0.6, np.nan],
        "ours": [1e-04, 0.47179, 0.1],
        "comparable": pd.array([False, True, pd.NA], dtype="boolean"),
        "seed": pd.array([pd.NA, 0, 1], dtype="Int64"),
        "why_not_comparable": ["embedded model, demo recipe, validation schedule not recorded", None, None],
    })
    html = paper_table(frame, once=()).to_html()
    cells = _cells(html)
    assert cells == ["setting_lr", "1e-05", "0.0001", "no", "–", "embedded model, demo recipe, validation schedule "
                     "not recorded", "mcc", "0.6", "0.472", "yes", "0", "–", "mcc", "–", "0.1", "–", "1", "–"]
    assert not re.search(r"\bnan\b|&lt;NA&gt;|<NA>|None", html)
    assert "why not comparable" in html and "why_not_comparable" not in html  # headers wrap at their spaces
    assert "overflow-wrap: anywhere" not in html and "word-break: normal" in html  # no word breaks mid-word
    assert "width: 10.5em" in html  # the prose column: 10 em and a half of padding, wrapped between words
    assert ">0<" not in html.split("<tbody>")[0]  # no index column


def test_identifiers_stay_on_one_line_and_a_common_text_is_said_once():
    frame = pd.DataFrame({"statistic": ["setting_n_seeds", "sigma_range_low"], "interval_low": [6.71e-17, 0.1],
                          "why_not_comparable": ["embedded model, demo recipe"] * 2})
    styler = paper_table(frame)
    html = styler.to_html()
    rule = re.search(r"_row0_col0[^{]*\{([^}]*)\}", html).group(1)
    assert "white-space: nowrap" in rule and "overflow-wrap: normal" in rule
    assert "why not comparable (every row): embedded model, demo recipe" in html
    assert _cells(html) == ["setting_n_seeds", "0", "sigma_range_low", "0.1"]  # said once, above the table
    varied = frame.assign(why_not_comparable=["a", "b"])
    assert "(every row)" not in paper_table(varied).to_html()
    # reasons every row lists are said once; a row keeps what else holds for it
    shared = frame.assign(why_not_comparable=["embedded model, demo recipe",
                                              "embedded model, demo recipe, extra data from SICK instead of MNLI"])
    html = paper_table(shared).to_html()
    assert "why not comparable (every row): embedded model, demo recipe; in the column" in html
    assert _cells(html) == ["setting_n_seeds", "0", "–",
                            "sigma_range_low", "0.1", "extra data from SICK instead of MNLI"]


def test_paper_table_shows_the_columns_asked_for_in_order():
    frame = pd.DataFrame({"a": [1.5], "b": ["x"], "c": [2.25]})
    assert _cells(paper_table(frame, ["c", "a"]).to_html()) == ["2.25", "1.5"]


def test_number_label_names_a_paper_number():
    numbers = paper_numbers()
    labels = number_label(numbers)
    assert labels.index.equals(numbers.index) and not labels.is_unique  # the statistic tells a σ range's ends apart
    assert labels.iloc[35] == "§5.2 base en Conditionals seed 1"
    change = numbers.index[numbers["statistic"] == "relative_change_mean_mcc"][0]
    assert labels[change] == "§5.3 extra-374000 vs base all overall"
    assert number_label(numbers.iloc[:0]).empty
