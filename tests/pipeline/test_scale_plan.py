"""A scale resolved against its inputs: which extra-data sizes run for which languages."""

from __future__ import annotations

from diagnostics.pipeline import ScalePlan
from diagnostics.pipeline._inputs import PipelineInputs

from _paper_inputs import STUDY_SIZES


def test_extra_other_sizes_and_extra_languages_override_the_design(tmp_path, tiny_model_dir):
    from diagnostics.pipeline._scale_plan import extra_plan

    def scale_spec(scale, runs, inputs):
        return ScalePlan.resolve(scale, runs, inputs).spec

    languages = ["en", "ru", "fr", "de", "sv"]
    spec = scale_spec("paper", tmp_path, PipelineInputs({}, []))
    plan = extra_plan(spec, languages)
    assert list(plan) == list(STUDY_SIZES) and plan[374000] == languages and plan[1000] == ["en", "ru"]
    more = scale_spec("paper", tmp_path, PipelineInputs({}, ["extra_other_sizes=[10000, 374000]"]))
    assert extra_plan(more, languages)[10000] == languages
    every = scale_spec("paper", tmp_path, PipelineInputs({}, ["extra_languages=null"]))
    assert all(found == languages for found in extra_plan(every, languages).values())
    none = scale_spec("paper", tmp_path, PipelineInputs({}, ["extra_other_sizes=[]"]))
    assert extra_plan(none, languages)[374000] == ["en", "ru"]
    shrunk = scale_spec("paper", tmp_path, PipelineInputs({}, ["extra_sizes=[40, 80]"]))  # the largest for others
    assert extra_plan(shrunk, languages) == {40: ["en", "ru"], 80: languages}
