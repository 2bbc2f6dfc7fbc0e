"""Values shown in error messages: their repr, cut to a limit with an ellipsis."""

from diagnostics.data import shorten


def test_shorten_keeps_short_reprs_and_cuts_long_ones():
    assert shorten("entailed") == "'entailed'" and shorten(3) == "3" and shorten(None) == "None"
    long = shorten("x" * 100)
    assert len(long) == 60 and long == repr("x" * 100)[:57] + "..."
    assert shorten(list(range(5)), limit=8) == "[0, 1..."
    assert shorten("x" * 58) == repr("x" * 58)  # 60 characters with its quotes: kept whole
