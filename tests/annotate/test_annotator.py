"""The annotator: matcher patterns compiled from the rules, texts analysed in batches, pairs combined."""

import pandas as pd
import pytest

from diagnostics import data
from diagnostics.annotate import RulesError, annotate, get_annotator


def test_bad_matcher_pattern_is_reported_with_line(tmp_path):
    path = tmp_path / "xx.yaml"
    path.write_text("language: en\nbackend: blank\nfeatures:\n  Negation:\n    patterns:\n"
                    "      neg: [{IS_SENT_START: maybe}]\n", encoding="utf-8")
    with pytest.raises(RulesError, match=rf"{path}:4: feature 'Negation', pattern 'neg'"):
        annotate(pd.DataFrame({"premise": ["a"], "hypothesis": ["b"]}), path)


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
