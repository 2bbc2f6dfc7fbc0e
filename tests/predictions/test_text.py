"""The text keys a file's (premise, hypothesis) pair is matched under: quotes, Unicode forms and spaces normalised,
then (second tier) punctuation ignored."""

from __future__ import annotations

from diagnostics.predictions import match_key


def test_the_text_key_normalises_only_quotes_unicode_and_spaces():
    assert match_key("\u201cYes\u201d,\u00a0she said\u2019s", "ﬁne  day\u200b") == match_key('"Yes", she said\'s',
                                                                                            "fine day")
    assert match_key("\u00ab Oui \u00bb", "a") == match_key('"Oui"', "a")
    assert match_key("Yes", "a") != match_key("yes", "a")  # case is kept
    assert match_key("a", "b c") != match_key("a b", "c")  # the two texts stay apart


def test_normalise_text_straightens_quotes_and_collapses_invisible_and_white_space():
    from diagnostics.predictions._text import normalise_text

    assert normalise_text("\u00abLe chat\u00a0\u00bb  dort.\n") == '"Le chat " dort.'
    assert normalise_text("\ufeffso\u00adft\u200b \t ﬁne\u2019s") == "soft fine's"  # NFKC folds the ligature
    assert normalise_text("  A  \u201e B \u201c ") == 'A " B "'
    assert normalise_text("Caf\u0065\u0301") == "Caf\u00e9"  # one form of an accented letter


def test_loose_key_ignores_punctuation_but_keeps_words_case_and_the_two_sides():
    from diagnostics.predictions._text import loose_key

    assert loose_key("Ракета \u00abСатурн V\u00bb стартовала.", "Да.") == loose_key("Ракета Сатурн V стартовала", "Да")
    assert loose_key("It's here, now!", "b") == loose_key("Its here now", "b")
    assert loose_key("Yes", "b") != loose_key("yes", "b") and loose_key("a", "b c") != loose_key("a b", "c")
    assert loose_key("It rains", "b") != loose_key("It snows", "b")
