"""The engine (annotate: features, sides, presence, some features only) and the annotate command on real bundled
data."""

import json

import pandas as pd
import pytest
from typer.testing import CliRunner

from diagnostics import data
from diagnostics.annotate import annotate, get_annotator, load_rules, score
from diagnostics.cli import app
from diagnostics.core.taxonomy import COARSE_OF, FINE


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


def test_annotate_rejects_frames_without_texts():
    with pytest.raises(ValueError, match="missing hypothesis"):
        annotate(pd.DataFrame({"premise": ["x"]}), "en")
    with pytest.raises(KeyError, match="no annotator rules for language 'xx'"):
        annotate(pd.DataFrame({"premise": ["x"], "hypothesis": ["y"]}), "xx")


def test_english_rules_reach_target_on_axb(axb_annotated):
    table = score(axb_annotated["features"], axb_annotated["auto_features"], load_rules("en").feature_names)
    assert table.iloc[-1]["f1"] >= 0.5
    assert table.set_index("feature").loc["Negation", "recall"] >= 0.7


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
