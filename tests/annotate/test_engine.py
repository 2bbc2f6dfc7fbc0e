"""Engine, rules-file validation, evaluation and CLI of the annotate stage on real bundled data."""

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from diagnostics import data
from diagnostics.annotate import (RulesError, annotate, available_languages, evaluate, feature_distribution,
                                  get_annotator, load_rules, score)
from diagnostics.cli import app
from diagnostics.core.taxonomy import COARSE_OF, FINE


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


def test_except_patterns_and_min_overlap(tmp_path):
    path = tmp_path / "xx.yaml"
    path.write_text("language: en\nbackend: blank\nmin_overlap: 0.5\nfeatures:\n"
                    "  Negation:\n    pair: differ\n    words: [not]\n"
                    "    except:\n      not_only: [{LOWER: not}, {LOWER: only}]\n"
                    "  Conjunction:\n    pair: differ\n    min_overlap: 0\n    words: [and]\n", encoding="utf-8")
    rules = load_rules(path)
    assert rules.features["Negation"].min_overlap == 0.5 and rules.features["Conjunction"].min_overlap == 0.0
    pairs = [("Ann does not sing .", "Ann does sing ."),          # negation differs: found
             ("Ann sings not only songs .", "Ann sings songs ."),  # "not only" is excepted: not evidence
             ("Ann does not sing .", "Bob runs home fast ."),     # overlap < 0.5: no feature from the rule
             ("Tea and milk .", "Bob runs home fast .")]          # the feature's own min_overlap: 0 wins
    out = annotate(pd.DataFrame(pairs, columns=["premise", "hypothesis"]), path)
    assert out["auto_features"].tolist() == [["Negation"], [], [], ["Conjunction"]]
    presence = annotate(pd.DataFrame(pairs, columns=["premise", "hypothesis"]), path, presence=True)
    assert "Negation" in presence["auto_features"][2]  # presence ignores pair conditions, min_overlap included


def test_unless_swapped_drops_a_feature_when_the_other_is_swapped(tmp_path):
    path = tmp_path / "xx.yaml"
    path.write_text("language: en\nbackend: blank\nfeatures:\n"
                    "  Quantifiers:\n    pair: swap\n    words: [all, most, some]\n"
                    "  Universal:\n    pair: differ\n    unless_swapped: Quantifiers\n    words: [all]\n", encoding="utf-8")
    pairs = [("all cats sleep", "Tom sleeps"),   # universal instantiated: Universal only
             ("all cats sleep", "most cats sleep")]  # one quantifier for another: Quantifiers only
    out = annotate(pd.DataFrame(pairs, columns=["premise", "hypothesis"]), path)
    assert out["auto_features"].tolist() == [["Universal"], ["Quantifiers"]]
    presence = annotate(pd.DataFrame(pairs, columns=["premise", "hypothesis"]), path, presence=True)
    assert presence["auto_features"][1] == ["Quantifiers", "Universal"]  # presence ignores pair conditions


def test_bad_matcher_pattern_is_reported_with_line(tmp_path):
    path = tmp_path / "xx.yaml"
    path.write_text("language: en\nbackend: blank\nfeatures:\n  Negation:\n    patterns:\n"
                    "      neg: [{IS_SENT_START: maybe}]\n", encoding="utf-8")
    with pytest.raises(RulesError, match=rf"{path}:4: feature 'Negation', pattern 'neg'"):
        annotate(pd.DataFrame({"premise": ["a"], "hypothesis": ["b"]}), path)


@pytest.fixture(scope="module")
def axb_annotated():
    return annotate(data.load("axb"), "en")


def test_annotate_adds_columns_and_sides(axb_annotated):
    first = axb_annotated.iloc[0]  # "The cat sat on the mat." / "The cat did not sit on the mat."
    assert first.auto_features == ["Negation"] and first.feature_sides == {"Negation": "hypothesis"}
    assert axb_annotated.iloc[1].feature_sides == {"Negation": "premise"}
    for feats, coarse, sides in axb_annotated[["auto_features", "auto_coarse", "feature_sides"]].itertuples(index=False):
        assert list(sides) == feats == [f for f in FINE if f in feats]
        assert set(coarse) == {COARSE_OF[f] for f in feats}
        assert set(sides.values()) <= {"premise", "hypothesis", "both"}


def test_presence_mode_is_a_superset_of_pair_rules():
    frame = data.load("axb").head(60)
    rules_mode = annotate(frame, "en")
    presence = annotate(frame, "en", presence=True)
    assert all(set(r) <= set(p) for r, p in zip(rules_mode.auto_features, presence.auto_features))
    assert sum(map(len, presence.auto_features)) > sum(map(len, rules_mode.auto_features))


def test_pairs_are_combined_in_order_with_repeated_and_shared_texts():
    """annotate() combines each pair as soon as its texts are analysed and forgets analyses no later pair needs:
    the result must equal analysing every distinct text first and combining afterwards."""
    frame = data.load("lidirus").head(120)
    # repeated premises, a pair repeated later, a text on both sides of one pair, a hypothesis reused as premise
    extra = pd.DataFrame({"premise": [frame.premise[0], frame.premise[5], frame.hypothesis[3], frame.premise[7]],
                          "hypothesis": [frame.hypothesis[9], frame.hypothesis[5], frame.premise[40], frame.premise[7]]})
    frame = pd.concat([frame[["premise", "hypothesis"]], extra, frame[["premise", "hypothesis"]].head(30)],
                      ignore_index=True)
    annotator = get_annotator("ru")
    for batch_size in (1, 7, 64):
        analyses = annotator.analyse_texts(list(dict.fromkeys(frame.premise.tolist() + frame.hypothesis.tolist())))
        expected = [annotator.combine(analyses[p], analyses[h]) for p, h in zip(frame.premise, frame.hypothesis)]
        assert annotate(frame, "ru", batch_size=batch_size)["feature_sides"].tolist() == expected
    assert sum(map(len, expected)) > 50  # the comparison is not between empty results


def test_annotate_rejects_frames_without_texts():
    with pytest.raises(ValueError, match="missing hypothesis"):
        annotate(pd.DataFrame({"premise": ["x"]}), "en")
    with pytest.raises(KeyError, match="no annotator rules for language 'xx'"):
        annotate(pd.DataFrame({"premise": ["x"], "hypothesis": ["y"]}), "xx")


def test_score_matches_hand_count():
    gold = pd.Series([["Negation"], ["Negation", "Datives"], [], ["Datives"]])
    pred = pd.Series([["Negation"], [], ["Negation"], ["Datives"]])
    table = score(gold, pred, ["Negation", "Datives"]).set_index("feature")
    assert table.loc["Negation", ["precision", "recall", "support"]].tolist() == [0.5, 0.5, 2]
    assert table.loc["Datives", ["precision", "recall", "f1"]].tolist() == [1.0, 0.5, pytest.approx(2 / 3)]
    assert table.loc["macro", "f1"] == pytest.approx((0.5 + 2 / 3) / 2)


def test_english_rules_reach_target_on_axb(axb_annotated):
    table = score(axb_annotated["features"], axb_annotated["auto_features"], load_rules("en").feature_names)
    assert table.iloc[-1]["f1"] >= 0.5
    assert table.set_index("feature").loc["Negation", "recall"] >= 0.7


def test_russian_rules_reach_target_on_lidirus():
    table = evaluate("ru").set_index("feature")
    # 0.501 with a capitalisation heuristic for named entities; natasha's recogniser finds far fewer false entities
    # in a sentence but scores lower on LiDiRus's pair tags (F1 0.24 vs 0.36: most entity swaps it finds are tagged
    # as other categories), see docs/annotation.md
    assert table.loc["macro", "f1"] >= 0.49
    assert table.loc["Named entities", "precision"] >= 0.2 and table.loc["Relative clauses", "f1"] >= 0.5
    assert table.loc["Negation", "recall"] >= 0.7


def test_evaluate_requires_a_file_for_french():
    with pytest.raises(ValueError, match="pass path="):
        evaluate("fr")


def test_feature_distribution_shares():
    table = feature_distribution(("rte",), limit=40)
    assert list(table.columns) == ["rte"] and table.attrs["pairs"] == {"rte": 40}
    assert ((table >= 0) & (table <= 1)).all().all() and table["rte"].max() > 0.2


def test_cli_run_and_evaluate_user_file(tmp_path):
    rows = [{"idx": i, "sentence1": p, "sentence2": h, "label": "not_entailment",
             "logic": "Negation"} for i, (p, h) in enumerate([
                 ("Le chat n'est pas sur le tapis.", "Le chat est sur le tapis."),
                 ("Le chat est sur le tapis.", "Le chat n'est pas sur le tapis.")])]
    rows.append({"idx": 2, "sentence1": "Jean a vu Marie.", "sentence2": "Marie a vu Jean.", "label": "not_entailment",
                 "predicate-argument-structure": "Core args"})
    source = tmp_path / "fr_diag.jsonl"
    source.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8")
    runner = CliRunner()
    out = tmp_path / "out.jsonl"
    result = runner.invoke(app, ["annotate", "run", "--lang", "fr", str(source), str(out), "--no-progress"])
    assert result.exit_code == 0, result.output
    written = pd.read_json(out, lines=True)
    assert written["auto_features"].tolist()[:2] == [["Negation"], ["Negation"]]
    result = runner.invoke(app, ["annotate", "evaluate", "--lang", "fr", "--path", str(source), "-o", str(tmp_path / "s.csv")])
    assert result.exit_code == 0, result.output
    scores = pd.read_csv(tmp_path / "s.csv").set_index("feature")
    assert scores.loc["Negation", "f1"] == 1.0
    assert (tmp_path / "s.png").stat().st_size > 10_000  # the figure beside the table
    result = runner.invoke(app, ["annotate", "evaluate", "--lang", "fr", "--path", str(source), "--presence", "-o",
                                 str(tmp_path / "p.csv")])
    assert result.exit_code == 0, result.output
    presence = pd.read_csv(tmp_path / "p.csv").set_index("feature")
    # the names of the third pair count in either sentence (presence), not across the pair, where they are the same
    assert scores.loc["Named entities", "predicted"] == 0 and presence.loc["Named entities", "predicted"] == 1
    bad = runner.invoke(app, ["annotate", "run", "--lang", "fr", str(tmp_path / "missing.jsonl"), str(out)])
    assert bad.exit_code == 2 and "no such file" in bad.output


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet", ".csv"])
def test_write_output_replaces_the_file_whole(tmp_path, monkeypatch, suffix):
    from diagnostics.annotate._io import write_output

    frame = annotate(pd.DataFrame({"premise": ["Il ne pleut pas."], "hypothesis": ["Il pleut."]}), "fr")
    out = write_output(frame, tmp_path / f"out{suffix}")
    first = out.read_bytes()

    def killed_half_way(self, target, *args, **kwargs):  # a writer interrupted after its first bytes
        Path(target).write_bytes(b"partial")
        raise KeyboardInterrupt

    for method in ("to_json", "to_parquet", "to_csv"):
        monkeypatch.setattr(pd.DataFrame, method, killed_half_way)
    with pytest.raises(KeyboardInterrupt):
        write_output(frame, out)
    assert out.read_bytes() == first  # the earlier table is intact
    assert sorted(p.name for p in tmp_path.iterdir()) == [out.name]  # and no temporary file is left behind


def test_split_half_chooses_modes_on_one_half_and_scores_the_other():
    import pandas as pd

    from diagnostics.annotate import split_half
    from diagnostics.annotate._evaluation import _halves

    frame = pd.DataFrame({"id": ["0", "1", "2", "3"], "premise": ["a", "b", "a", "c"],
                          "hypothesis": ["b", "a", "d", "e"]})
    assert _halves(frame, "id").tolist() == [True, False, True, False]
    assert _halves(frame, "group").tolist() == [True, True, True, False]  # pairs sharing "a" stay together
    table = split_half("ru", split="group")
    assert table["feature"].iloc[-1] == "macro"
    assert set(table["chosen_mode"].iloc[:-1]) <= {"either", "differ", "swap"}
    assert 0 < table["heldout_f1"].iloc[-1] < 1


def test_cached_annotations_are_reused_and_keyed_by_rules_and_reading(tmp_path, monkeypatch):
    from diagnostics.annotate import _engine as engine
    from diagnostics.annotate import annotate_cached

    frame = data.load("axb").head(12)
    rules = tmp_path / "xx.yaml"
    rules.write_text("language: xx\nbackend: blank\nfeatures:\n  Negation:\n    words: [not, never]\n")
    first = annotate_cached(frame, rules, tmp_path / "cache")
    assert first["auto_features"].map(lambda f: "Negation" in f).any()
    assert len(list((tmp_path / "cache").glob("annotations-xx-*.json"))) == 1

    def refuse(*args, **kwargs):
        raise AssertionError("annotated again instead of reading the cache")

    monkeypatch.setattr(engine, "annotate", refuse)
    again = annotate_cached(frame, rules, tmp_path / "cache")
    assert again["auto_features"].tolist() == first["auto_features"].tolist()
    # another reading, or edited rules, is another entry
    with pytest.raises(AssertionError, match="annotated again"):
        annotate_cached(frame, rules, tmp_path / "cache", presence=True)
    with pytest.raises(AssertionError, match="annotated again"):  # some features only: another entry
        annotate_cached(frame, rules, tmp_path / "cache", features=["Negation"])
    rules.write_text("language: xx\nbackend: blank\nfeatures:\n  Negation:\n    words: [never]\n")
    with pytest.raises(AssertionError, match="annotated again"):
        annotate_cached(frame, rules, tmp_path / "cache")


@pytest.mark.parametrize("lang,dataset,features,presence", [
    ("en", "rte", ["Negation"], True),              # word forms alone: the tokenizer only
    ("en", "sick", ["Negation", "Double negation"], True),
    ("en", "rte", ["Universal", "Negation"], False),  # the pair reading; Universal reads Quantifiers (unless_swapped)
    ("ru", "terra", ["Negation"], True),            # lemmas and exceptions: the whole pipeline
])
def test_some_features_annotate_as_their_share_of_all(lang, dataset, features, presence):
    frame = data.load(dataset, split="train").head(120)
    whole = annotate(frame, lang, presence=presence)
    some = annotate(frame, lang, presence=presence, features=features)
    kept = [{f: side for f, side in sides.items() if f in features} for sides in whole["feature_sides"]]
    assert some["feature_sides"].tolist() == kept
    assert some["auto_features"].tolist() == [[f for f in found if f in features] for found in whole["auto_features"]]
    assert sum(map(bool, kept)) >= 5  # the features are there to be found
    assert get_annotator(lang, features, presence).surface_only == (lang == "en" and presence)


def test_features_without_a_rule_are_refused():
    frame = data.load("rte", split="train").head(2)
    missing = next(f for f in FINE if f not in load_rules("sv").features)
    with pytest.raises(KeyError, match=f"no rule for {missing}"):
        annotate(frame, "sv", presence=True, features=["Negation", missing])
