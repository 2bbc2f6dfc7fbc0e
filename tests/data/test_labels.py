"""Column labels of languages: a language scored on a set other than the study's says which set."""

from diagnostics.data import SUBSTITUTE_SETS, display_language


def test_a_substitute_set_is_named_beside_the_language():
    assert display_language("sv", "swediagnostics") == "sv (SweDiagnostics)"
    assert display_language("sv") == "sv" and display_language("sv", "diagnostic_sv") == "sv"
    assert display_language("en", "axb") == "en" and display_language("ru", "lidirus") == "ru"
    assert set(SUBSTITUTE_SETS) == {"swediagnostics"}
