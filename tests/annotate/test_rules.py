"""The rules files: the bundled ones load and name taxonomy features; a malformed one is refused with file and line."""

import pytest

from diagnostics.annotate import RulesError, available_languages, load_rules
from diagnostics.core.taxonomy import FINE


def test_bundled_rules_load_and_name_taxonomy_features():
    assert {"en", "ru", "fr", "de", "sv"} <= set(available_languages())
    for lang in ("en", "ru", "fr", "de", "sv"):
        rules = load_rules(lang)
        assert rules.language == lang
        assert set(rules.feature_names) <= set(FINE) and len(rules.feature_names) >= 15


@pytest.mark.parametrize("body,line,needle", [
    ("language: xx\nbackend: blank\nfeatures:\n  Negatoin:\n    words: [not]\n", 4, "did you mean 'Negation'"),
    ("language: xx\nbackend: blank\nfeatures:\n  Negation:\n    wordz: [not]\n", 5, "unknown key 'wordz'"),
    ("language: xx\nbackend: blank\nfeatures:\n  Negation:\n    words: [$nope]\n", 5, "unknown word list '$nope'"),
    ("language: xx\nbackend: blank\nfeatures:\n  Negation:\n    pair: sometimes\n    words: [x]\n", 5, "pair must be one of"),
    ("language: xx\nbackend: blank\nlists:\n  neg: [not, no]\nfeatures:\n  Negation:\n    words: [$neg]\n", 4, "booleans"),
    ("language: xx\nbackend: blank\nfeatures:\n  Negation: [\n", 5, "invalid YAML"),
    ("language: xx\nbackend: blank\nfeatures:\n  Negation:\n    min_overlap: 2\n    words: [x]\n", 5, "min_overlap must be"),
    ("language: xx\nbackend: blank\nmin_overlap: yes\nfeatures:\n  Negation:\n    words: [x]\n", 3, "min_overlap must be"),
    ("language: xx\nbackend: blank\nfeatures:\n  Negation:\n    words: [x]\n    except: [x]\n", 6, "except must map"),
    ("language: xx\nbackend: blank\nfeatures:\n  Universal:\n    unless_swapped: Quantifers\n    words: [all]\n", 5,
     "did you mean 'Quantifiers'"),
    ("language: xx\nbackend: blank\nfeatures:\n  Universal:\n    unless_swapped: Quantifiers\n    words: [all]\n", 4,
     "does not define"),
])
def test_bad_rules_file_names_file_and_line(tmp_path, body, line, needle):
    path = tmp_path / "xx.yaml"
    path.write_text(body, encoding="utf-8")
    with pytest.raises(RulesError) as err:
        load_rules(path)
    assert str(err.value).startswith(f"{path}:{line}:") and needle in str(err.value)
