"""The datasets of a plan that stand in for the study's own: SweDiagnostics for the Swedish translation, the bundled
SICK for MNLI."""

from __future__ import annotations

from diagnostics.finetune import SweepConfig
from diagnostics.pipeline._substitutes import STUDY_SETS, substitutions

SV_DATA = {"train": "rte:train", "validation": "rte:validation"}


def test_swediagnostics_and_sick_are_named_per_language_once():
    swedish = SweepConfig(languages=("sv", "en"), models=("m",), data={"sv": SV_DATA})
    with_sick = SweepConfig(languages=("en", "ru"), models=("m",),
                            extra_data={"name": "sick", "size": 100, "split": "train"})
    found = substitutions({"base": swedish, "extra-100": with_sick, "again": with_sick})
    assert list(found) == ["sv", "en", "ru"]
    (sv,) = found["sv"]
    assert (sv["dataset"], sv["role"], sv["label"]) == ("swediagnostics", "diagnostic", "sv (SweDiagnostics)")
    assert (sv["name"], sv["instead_of"]) == STUDY_SETS["swediagnostics"]
    assert found["en"] == found["ru"] == [{"dataset": "sick", "role": "extra", "name": "the bundled SICK",
                                           "label": "SICK", "instead_of": STUDY_SETS["sick"][1]}]


def test_the_users_own_file_substitutes_nothing(tmp_path):
    own = {**SV_DATA, "diagnostics": [{"name": "swediagnostics", "path": str(tmp_path / "sv.jsonl")}]}
    assert substitutions({"base": SweepConfig(languages=("sv",), models=("m",), data={"sv": own})}) == {}
    assert substitutions({"base": SweepConfig(languages=("en", "ru"), models=("m",))}) == {}
