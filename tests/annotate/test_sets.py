"""The annotator's features of whole data sets: each set annotated in its language, ids kept, bad languages refused."""

import pytest

from diagnostics import data
from diagnostics.annotate import annotate, annotate_sets
from diagnostics.core.errors import UserInputError


def test_each_set_is_annotated_in_its_own_language(tmp_path):
    axb = data.load("axb")
    frames = {"first": axb.head(8), "second": axb.iloc[8:20]}
    out = annotate_sets(frames, tmp_path / "cache")
    assert list(out) == ["first", "second"]
    for name, lang in (("first", "en"), ("second", "en")):
        assert out[name].columns.tolist() == ["id", "language", "auto_features"]
        assert out[name]["id"].tolist() == frames[name]["id"].tolist() and set(out[name]["language"]) == {lang}
        direct = annotate(frames[name][["premise", "hypothesis"]], lang)["auto_features"].tolist()
        assert out[name]["auto_features"].tolist() == direct
    assert len(list((tmp_path / "cache").glob("annotations-*.json"))) == 2
    assert any(out["first"]["auto_features"])  # there is something to compare


def test_a_set_without_one_known_language_is_refused():
    frame = data.load("axb").head(2)
    with pytest.raises(UserInputError, match=r"data set x: cannot tell its language \(found none\)"):
        annotate_sets({"x": frame.drop(columns="language")})
    mixed = frame.assign(language=["en", "ru"])
    with pytest.raises(UserInputError, match=r"cannot tell its language \(found \['en', 'ru'\]\)"):
        annotate_sets({"x": mixed})
    with pytest.raises(UserInputError, match="no annotator rules for language 'xx'"):
        annotate_sets({"x": frame}, language="xx")
