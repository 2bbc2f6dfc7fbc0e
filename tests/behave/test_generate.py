"""Seeded generation, size caps, case records, and the strict jsonl suite format."""

import json

import pytest

from diagnostics.behave import Case, SuiteFormatError, generate_suite, generate_suites, load_suite, save_suite
from diagnostics.behave._perturb import add_typo, strip_punctuation

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


def test_typo_and_punctuation_perturbations():
    import random

    rng = random.Random(0)
    typo = add_typo("Anna bought a ticket.", rng)
    assert typo != "Anna bought a ticket." and sorted(typo) == sorted("Anna bought a ticket.")
    assert typo[0] == "A" and len(typo) == len("Anna bought a ticket.")
    assert add_typo("a b c.", rng) is None
    assert strip_punctuation("Anna left.") == "Anna left"
    assert strip_punctuation("Anna left") is None


def test_suite_roundtrip(tmp_path, suites):
    cases = suites["ru"] + suites["fr"]
    path = save_suite(cases, tmp_path / "suite.jsonl")
    assert "Анна" in path.read_text(encoding="utf-8") or "Иван" in path.read_text(encoding="utf-8")
    assert [c.to_dict() for c in load_suite(path)] == [c.to_dict() for c in cases]


def test_user_written_minimal_case(tmp_path):
    path = tmp_path / "mine.jsonl"
    path.write_text(json.dumps({"id": "x1", "language": "en", "test": "mine", "capability": "Negation",
                                "type": "MFT", "premise": "A.", "hypothesis": "B.", "label": "entailment"}) + "\n\n")
    (case,) = load_suite(path)
    assert case == Case(id="x1", language="en", test="mine", capability="Negation", type="MFT", premise="A.",
                        hypothesis="B.", label="entailment")


GOOD = {"id": "x1", "language": "en", "test": "t", "capability": "Negation", "type": "MFT", "premise": "A.",
        "hypothesis": "B.", "label": "entailment"}


@pytest.mark.parametrize("record,needle", [
    ({**GOOD, "label": "entailed"}, "label in"),
    ({**GOOD, "type": "CHK"}, "type in"),
    ({k: v for k, v in GOOD.items() if k != "premise"}, "field 'premise'"),
    ({**GOOD, "type": "INV", "label": None}, "original_premise"),
    ({**GOOD, "colour": 1}, "fields among"),
    ({**GOOD, "seed": "0"}, "seed as an integer"),
    ({**GOOD, "hypothesis": 3}, "hypothesis as a non-empty string"),
])
def test_suite_errors_name_file_and_line(tmp_path, record, needle):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(GOOD) + "\n" + json.dumps(record) + "\n")
    if record.get("id") == GOOD["id"] and needle != "fields among":
        record["id"] = "x2"
        path.write_text(json.dumps(GOOD) + "\n" + json.dumps(record) + "\n")
    with pytest.raises(SuiteFormatError) as err:
        load_suite(path)
    assert str(err.value).startswith(f"{path}:2: expected") and needle in str(err.value)


def test_suite_duplicate_ids_and_bad_json(tmp_path):
    path = tmp_path / "dup.jsonl"
    path.write_text(json.dumps(GOOD) + "\n" + json.dumps(GOOD) + "\n")
    with pytest.raises(SuiteFormatError, match=r"dup.jsonl:2: expected a unique case id, found 'x1' \(also on line 1\)"):
        load_suite(path)
    path.write_text(json.dumps(GOOD) + "\n{not json\n")
    with pytest.raises(SuiteFormatError, match=r"dup.jsonl:2: expected one JSON object per line"):
        load_suite(path)


def test_generate_suites_covers_all_languages():
    cases = generate_suites(seed=0, max_per_test=2)
    assert {c.language for c in cases} == set(LANGUAGES)
    with pytest.raises(ValueError):
        generate_suite("en", max_per_test=0)
    with pytest.raises(KeyError, match="unknown test"):
        generate_suite("en", tests=["nope"])
