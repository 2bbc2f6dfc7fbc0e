"""The opt-in undoing of CSV-escaping leftovers in TERRa's texts."""

import pytest

from diagnostics import data
from diagnostics.data._normalise import normalise_csv_quotes


def test_normalise_quotes_is_opt_in_and_keeps_raw():
    raw = data.load("terra", "train")
    norm = data.load("terra", "train", normalise_quotes=True)
    assert raw["premise"].str.contains('""', regex=False).sum() > 700
    assert not norm["premise"].str.contains('""', regex=False).any()
    assert (norm["premise_raw"] == raw["premise"]).all()
    changed = norm["premise"] != raw["premise"]
    assert changed.sum() == raw["premise"].str.contains('""', regex=False).sum()


@pytest.mark.parametrize("text,expected", [
    ('"""Да"", - сказал он."', '"Да", - сказал он.'),   # wrapped and doubled: both undone
    ('Он сказал ""да"".', 'Он сказал "да".'),           # doubled only: no wrapping pair to remove
    ('"Да" - сказал он.', '"Да" - сказал он.'),          # no doubled quote: unchanged, outer quotes included
    ('Обычный текст.', 'Обычный текст.'),
    ('""', ''),                                          # a quoted empty text
])
def test_normalise_csv_quotes(text, expected):
    assert normalise_csv_quotes(text) == expected
