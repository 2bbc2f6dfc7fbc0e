"""Probing labels: the study's presence reading over its 15 features (default) and the rules' pair reading, and the
name of the feature list that labelled a probe."""

import pandas as pd
import pytest

from diagnostics.annotate import annotate, supported_features
from diagnostics.core.taxonomy import COARSE, COARSE_OF, FINE
from diagnostics.data import load
from diagnostics.probe import choose_selection_set
from diagnostics.probe import (PROBE_LABELS, STUDY_FEATURES, STUDY_FEATURES_NAME, annotate_frame, feature_groups,
                               feature_list_name, parse_tasks, restrict_features)

pytest.importorskip("spacy")


@pytest.fixture(scope="module")
def pairs():
    return load("rte", "train").head(40).reset_index(drop=True)


#: The features the text of the study's §5.4 names (Lexical Semantics: quantifiers, negation morphemes, factivity
#: verbs, proper nouns; Logic: temporal indicators, negation, conditionals; Predicate-Argument Structure: pronouns,
#: "(e.g., Relative clauses, Datives)"; the presence experiment: Conjunction, Disjunction).
NAMED_IN_THE_TEXT = {"Quantifiers", "Morphological negation", "Factivity", "Named entities", "Temporal", "Negation",
                     "Conditionals", "Anaphora/Coreference", "Relative clauses", "Datives", "Conjunction",
                     "Disjunction"}


def test_study_features_hold_every_feature_the_text_names():
    assert NAMED_IN_THE_TEXT <= set(STUDY_FEATURES)
    # the other three are read off morphosyntactic tags
    assert set(STUDY_FEATURES) - NAMED_IN_THE_TEXT == {"Genitives/Partitives", "Intervals/Numbers", "Active/Passive"}


def test_feature_list_names_the_reading_and_list():
    assert STUDY_FEATURES_NAME == "study-text"
    assert feature_list_name("presence") == feature_list_name("presence", STUDY_FEATURES) == "study-text"
    # the same list in another order and spelling is still the study's
    assert feature_list_name("presence", [f.lower().replace("/", "_") for f in reversed(STUDY_FEATURES)]) \
        == "study-text"
    assert feature_list_name("presence", STUDY_FEATURES[:-1]) == "custom"
    assert feature_list_name("differs") == feature_list_name("differs", ["Negation"]) == "differs"
    with pytest.raises(ValueError, match="unknown feature"):
        feature_list_name("presence", ["Negaton"])
    with pytest.raises(ValueError, match="presence, differs"):
        feature_list_name("pair")


def test_study_features_are_fifteen_detected_fine_categories():
    assert len(STUDY_FEATURES) == len(set(STUDY_FEATURES)) == 15
    assert set(STUDY_FEATURES) <= set(FINE)
    for language in ("en", "ru", "fr", "de", "sv"):
        assert set(STUDY_FEATURES) <= set(supported_features(language))
    # the three probed coarse categories all have features among them
    assert {COARSE_OF[f] for f in STUDY_FEATURES} == {"Logic", "Lexical Semantics", "Predicate-Argument Structure"}
    assert PROBE_LABELS == ("presence", "differs")


def test_presence_is_the_default_and_keeps_the_study_features(pairs, tmp_path):
    default = annotate_frame(pairs, "en", cache_dir=tmp_path)
    everything = annotate(pairs, "en", presence=True)
    for got, found in zip(default["auto_features"], everything["auto_features"]):
        assert list(got) == [f for f in found if f in STUDY_FEATURES]
    for coarse, found in zip(default["auto_coarse"], default["auto_features"]):
        assert list(coarse) == [c for c in COARSE if any(COARSE_OF[f] == c for f in found)]
    # either sentence's evidence counts: at least as many pairs show a feature as under the pair reading
    differs = annotate_frame(pairs, "en", cache_dir=tmp_path, labels="differs")
    pair_reading = annotate(pairs, "en")
    assert [list(x) for x in differs["auto_features"]] == [list(x) for x in pair_reading["auto_features"]]
    for feature in STUDY_FEATURES:
        present = sum(feature in f for f in default["auto_features"])
        assert present >= sum(feature in f for f in differs["auto_features"])
    assert sum(map(len, default["auto_features"])) > sum(
        len([f for f in x if f in STUDY_FEATURES]) for x in differs["auto_features"])


def test_reading_and_feature_list_are_checked(pairs):
    with pytest.raises(ValueError, match="presence, differs"):
        annotate_frame(pairs.head(2), "en", labels="differ")
    with pytest.raises(ValueError, match="unknown feature"):
        restrict_features(pd.DataFrame({"auto_features": [["Negation"]]}), ["Negaton and more"])
    only = annotate_frame(pairs, "en", features=["Negation"])
    assert all(set(f) <= {"Negation"} for f in only["auto_features"])
    assert all(set(c) <= {"Logic"} for c in only["auto_coarse"])


def test_selection_frame_is_annotated_with_the_reading_asked_for(pairs, tmp_path):
    tasks = parse_tasks("logic")
    _, presence = choose_selection_set("en", "test", pairs[["premise", "hypothesis"]], tasks, cache_dir=tmp_path)
    _, differs = choose_selection_set("en", "test", pairs[["premise", "hypothesis"]], tasks, cache_dir=tmp_path,
                                      labels="differs")
    assert presence["auto_features"].map(list).tolist() == annotate_frame(pairs, "en", cache_dir=tmp_path)[
        "auto_features"].map(list).tolist()
    assert differs["auto_features"].map(list).tolist() == annotate(pairs, "en")["auto_features"].map(list).tolist()


def test_feature_groups_show_the_study_features_then_the_others():
    table = pd.DataFrame({"rte": [0.1 * i for i in range(len(FINE))]}, index=pd.Index(FINE, name="feature"))
    table.attrs["pairs"] = {"rte": 10}
    grouped = feature_groups(table)
    assert grouped.index.get_level_values(0).unique().tolist() == ["study (15)", "extra"]
    assert grouped.loc["study (15)"].index.tolist() == [f for f in FINE if f in STUDY_FEATURES]
    assert set(grouped.loc["extra"].index) == set(FINE) - set(STUDY_FEATURES)
    assert grouped.attrs["pairs"] == {"rte": 10}
