"""How the evidence of premise and hypothesis becomes the features of a pair: differ / swap, except patterns,
min_overlap, unless_swapped, and presence ignoring them all."""

import pandas as pd

from diagnostics.annotate import annotate, load_rules


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
