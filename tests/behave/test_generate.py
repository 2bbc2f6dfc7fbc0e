"""Seeded generation: size caps, distinct cases, slots filled consistently, every language covered."""

import pytest

from diagnostics.behave import generate_suite, generate_suites, load_suite, save_suite

LANGUAGES = ["en", "ru", "fr", "de", "sv"]


@pytest.fixture(scope="module")
def suites():
    return {lang: generate_suite(lang, seed=3, max_per_test=12) for lang in LANGUAGES}


@pytest.mark.parametrize("language", LANGUAGES)
def test_same_seed_same_suite_different_seed_different(language, suites):
    again = generate_suite(language, seed=3, max_per_test=12)
    assert [c.to_dict() for c in again] == [c.to_dict() for c in suites[language]]
    other = generate_suite(language, seed=4, max_per_test=12)
    assert [c.to_dict() for c in other] != [c.to_dict() for c in suites[language]]


@pytest.mark.parametrize("language", LANGUAGES)
def test_cap_tests_and_records(language, suites):
    cases = suites[language]
    per_test = {}
    for c in cases:
        per_test.setdefault(c.test, []).append(c)
    assert len(per_test) >= 8
    assert all(1 <= len(v) <= 12 for v in per_test.values())
    assert len({c.id for c in cases}) == len(cases)
    for c in cases:
        assert c.language == language and c.template and c.fillers and c.seed == 3
        if c.type == "MFT":
            assert c.label in ("entailment", "not_entailment") and c.expectation is None
        else:
            assert c.original_premise and c.original_hypothesis and c.label is None
            assert (c.premise, c.hypothesis) != (c.original_premise, c.original_hypothesis)
            assert c.expectation == {"INV": "same_prediction", "DIR": "entailment_must_not_stay"}[c.type]


def test_adding_tests_does_not_change_others():
    full = [c for c in generate_suite("en", seed=1, max_per_test=5) if c.test == "symmetry_mft"]
    alone = generate_suite("en", seed=1, max_per_test=5, tests=["symmetry_mft"])
    assert [c.to_dict() for c in full] == [c.to_dict() for c in alone]


def test_cases_within_a_test_are_distinct_and_cap_is_reached():
    cases = generate_suite("de", seed=0, max_per_test=40, tests=["asymmetry_mft"])
    assert len(cases) == 40
    assert len({(c.premise, c.hypothesis) for c in cases}) == 40
    assert all(c.fillers["a"] != c.fillers["b"] for c in cases)


def test_small_lexicon_gives_fewer_cases_not_duplicates():
    cases = generate_suite("sv", seed=0, max_per_test=500, tests=["negation_mft"])
    assert len(cases) == 12 * 10  # 12 names x 10 professions


def test_name_swap_replaces_the_name_consistently():
    for c in generate_suite("ru", seed=2, max_per_test=20, tests=["name_swap_inv"]):
        old, new = c.fillers["a"], c.fillers["a->"]
        assert old != new and old != c.fillers["b"] and new != c.fillers["b"]
        assert c.premise.startswith(new + " ") and c.original_premise.startswith(old + " ")
        assert c.original_premise.split(" ", 1)[1].split(" ")[-1] == c.premise.split(" ", 1)[1].split(" ")[-1]


def test_numbers_respect_their_ranges():
    for c in generate_suite("en", seed=0, max_per_test=60, tests=["numbers_more_mft", "numbers_not_more_mft"]):
        n, m = c.fillers["n"], c.fillers["m"]
        assert (m < n) if c.label == "entailment" else (m >= n)
        assert f" {n} " in c.premise and f" {m} " in c.hypothesis


def test_suite_roundtrip(tmp_path, suites):
    cases = suites["ru"] + suites["fr"]
    path = save_suite(cases, tmp_path / "suite.jsonl")
    assert "Анна" in path.read_text(encoding="utf-8") or "Иван" in path.read_text(encoding="utf-8")
    assert [c.to_dict() for c in load_suite(path)] == [c.to_dict() for c in cases]


def test_generate_suites_covers_all_languages():
    cases = generate_suites(seed=0, max_per_test=2)
    assert {c.language for c in cases} == set(LANGUAGES)
    with pytest.raises(ValueError):
        generate_suite("en", max_per_test=0)
    with pytest.raises(KeyError, match="unknown test"):
        generate_suite("en", tests=["nope"])
