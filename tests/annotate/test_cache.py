"""Annotations cached on disk, keyed by the rules, the reading and the features asked for."""

import pytest

from diagnostics import data


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
