"""The three scales' settings: languages a scale may name, checks across fields, the paper scale's study design, and
the probe frames a language's user files give."""

from __future__ import annotations

import pytest

from diagnostics.finetune import SweepConfig
from diagnostics.pipeline._scales import SCALES, SPECS, ScaleSpec, known_languages, probe_frames
from diagnostics.settings import ConfigError

from _paper_inputs import STUDY_SIZES


def test_known_languages_are_the_bundled_and_the_user_file_languages():
    assert known_languages() == ["en", "ru", "sv", "fr", "de"]
    with pytest.raises(ConfigError, match=r"extra_languages\[0\]: expected a language code \(en, ru, sv, fr, de\), "
                                          r"found 'xx'"):
        ScaleSpec(extra_languages=("xx",))


def test_presence_within_extra_needs_the_subset_it_controls():
    with pytest.raises(ConfigError, match="presence_extra_size: expected an integer >= 1 with presence_within: extra"):
        ScaleSpec(presence_within="extra", presence_shares=(0.5,))
    assert ScaleSpec(presence_within="extra", presence_shares=(0.5,), presence_extra_size=10).problems() == []
    assert ScaleSpec(presence_within="extra").problems() == []  # no shares: nothing to control


def test_each_scale_has_settings_and_the_paper_scale_the_study_design():
    assert set(SPECS) == set(SCALES) == {"tiny", "demo", "paper"}
    paper = SPECS["paper"]
    assert paper.extra_sizes == STUDY_SIZES and paper.extra_languages == ("en", "ru")
    assert paper.presence_shares == (0.25, 0.5, 0.75) and paper.extra_source == "mnli"


def test_probe_frames_only_where_the_data_are_user_files(tmp_path):
    """The test frame of a user's diagnostic file (the train frame, annotated, is left to the pipeline's tests)."""
    import json

    from diagnostics import data

    bundled = SweepConfig(languages=("en", "ru"), models=("m",))
    assert probe_frames(bundled, "en") == {} and probe_frames(bundled, "ru") == {}
    rows = [{"idx": 0, "label": "not_entailment", "sentence1": "Le chat dort.", "sentence2": "Le chat ne dort pas.",
             "logic": "Negation"}]
    source = tmp_path / "ru.jsonl"
    source.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8")
    own = SweepConfig(languages=("ru",), models=("m",), data={"ru": {"diagnostics": [
        {"name": "diagnostic_format", "path": str(source), "language": "ru"}]}})
    frames = probe_frames(own, "ru")
    assert list(frames) == ["test"]  # the training data are the bundled TERRa: the probes read them themselves
    expected = data.load("diagnostic_format", path=source, language="ru")
    assert frames["test"].equals(expected) and frames["test"]["features"].tolist() == [["Negation"]]
