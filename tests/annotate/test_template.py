"""`diagnostics annotate init LANG`: a rules file with every feature, a backend that really serves the language, and
one clear line when none does; pymorphy3 reads the language's own dictionary."""

from __future__ import annotations

import pandas as pd
import pytest
from typer.testing import CliRunner

from diagnostics.annotate import TEMPLATE_FEATURES, annotate, load_rules
from diagnostics.annotate._template import _EXAMPLES, available_backends, choose_backend, write_template
from diagnostics.cli import app
from diagnostics.core.errors import UserInputError
from diagnostics.core.resources import annotators_dir
from diagnostics.probe import STUDY_FEATURES

pytest.importorskip("pymorphy3_dicts_uk")


def _commented_features(path) -> set[str]:
    return {line[4:].split(":")[0] for line in path.read_text(encoding="utf-8").splitlines()
            if line.startswith("  # ") and line.rstrip().endswith(")") and ":  (" in line}


def test_template_features_are_the_bundled_rules_and_cover_the_study():
    for lang in ("en", "ru", "fr", "de", "sv"):
        assert tuple(load_rules(lang).features) == TEMPLATE_FEATURES, lang
    assert set(STUDY_FEATURES) <= set(TEMPLATE_FEATURES) and set(_EXAMPLES) == set(TEMPLATE_FEATURES)
    assert (annotators_dir() / "README.md").exists()


def test_init_uk_uses_the_ukrainian_dictionary_loads_and_annotates(tmp_path):
    out = tmp_path / "uk.yaml"
    result = CliRunner().invoke(app, ["annotate", "init", "uk", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "backend pymorphy3" in result.output and "pymorphy3-dicts-uk" in result.output
    rules = load_rules(out)
    assert rules.language == "uk" and rules.backend == "pymorphy3"
    active = set(rules.features)
    assert {"Datives", "Genitives/Partitives", "Intervals/Numbers", "Named entities", "Temporal"} <= active
    assert active | _commented_features(out) == set(TEMPLATE_FEATURES)  # every feature, active or commented
    pairs = pd.DataFrame({"id": [0], "premise": ["Він дав книжку Марії у 2010 році."],
                          "hypothesis": ["Книжку подарували Марії."], "label": ["entailment"], "language": ["uk"]})
    found = annotate(pairs, str(out), progress=False, presence=True)["auto_features"].iloc[0]
    assert {"Intervals/Numbers", "Genitives/Partitives"} <= set(found)
    # a second init keeps the file unless --force
    again = CliRunner().invoke(app, ["annotate", "init", "uk", "--out", str(out)])
    assert again.exit_code == 2 and "--force" in again.output
    assert CliRunner().invoke(app, ["annotate", "init", "uk", "--out", str(out), "--force"]).exit_code == 0


def test_pymorphy3_analyses_with_the_rules_language_never_russian_in_its_place():
    from diagnostics.annotate import get_pipeline

    uk = get_pipeline("pymorphy3", "uk")("Вона прочитала книжки.")
    ru = get_pipeline("pymorphy3", "ru")("Она прочитала книги.")
    assert [t.lemma_ for t in uk][1:3] == ["прочитати", "книжка"]  # Ukrainian lemmas (Russian: прочитать)
    assert [t.lemma_ for t in ru][1:3] == ["прочитать", "книга"]
    with pytest.raises(RuntimeError, match="pymorphy3.*'de'.*no pymorphy3 dictionary"):
        get_pipeline("pymorphy3", "de")


@pytest.mark.parametrize("lang, backend", [("en", "spacy"), ("fr", "spacy"), ("ru", "pymorphy3"), ("uk", "pymorphy3"),
                                           ("de", "hanta"), ("es", "simplemma"), ("sv", "simplemma")])
def test_backend_chosen_by_what_is_installed(lang, backend):
    assert choose_backend(lang).name == backend
    assert all(b.name != "blank" for b in available_backends(lang))


def test_a_language_no_backend_serves_gets_one_line(tmp_path):
    runner = CliRunner()
    result = runner.invoke(app, ["annotate", "init", "zu", "--out", str(tmp_path / "zu.yaml")])
    assert result.exit_code == 2
    assert result.output.count("\n") == 1 and "no installed backend serves 'zu'" in result.output
    assert not (tmp_path / "zu.yaml").exists()
    asked = runner.invoke(app, ["annotate", "init", "de", "--backend", "pymorphy3", "--out", str(tmp_path / "d.yaml")])
    assert asked.exit_code == 2 and "pymorphy3-dicts-de" in asked.output
    with pytest.raises(UserInputError, match="ISO 639"):
        write_template("U K")
    # Basque: spaCy tokenises it, no analyser is installed; tokens alone only when asked for
    assert runner.invoke(app, ["annotate", "init", "eu", "--out", str(tmp_path / "eu.yaml")]).exit_code == 2
    blank = runner.invoke(app, ["annotate", "init", "eu", "--backend", "blank", "--out", str(tmp_path / "eu.yaml")])
    assert blank.exit_code == 0, blank.output
    assert load_rules(tmp_path / "eu.yaml").backend == "blank"
