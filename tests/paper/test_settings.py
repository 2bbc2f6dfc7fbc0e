"""The run settings of a store read from its configs, and the reasons a setting is not the study's."""

from __future__ import annotations

from diagnostics.paper._settings import diagnostic_reason, is_mbert, run_settings, setting_reasons

from _paper_stores import STUDY_RUN


def test_the_run_records_the_resolved_schedule_and_head():
    config = {"run": {"experiment": "base", "language": "en", "model": "m", "val_schedule": "jiant_superglue"},
              "sweep": {"val_schedule": None, "classifier_head": "jiant"}}
    setting = run_settings([config]).iloc[0]
    assert setting["val_schedule"] == "jiant_superglue" and setting["classifier_head"] == "jiant"


def test_recipe_and_data_reasons():
    study = {"model": "bert-base-multilingual-cased", "recipe": "jiant", "batch_size": 4, "lr": 1e-5,
             "train_top_k_layers": None, "train_size": None, "extra_name": None, "extra_size": 0,
             "experiment": "base", **STUDY_RUN}
    assert setting_reasons(study) == []
    assert setting_reasons({**study, "recipe": "epoch"}) == ["epoch recipe"]  # a config without `recipe` reads epoch
    assert setting_reasons({**study, "experiment": "extra-10000", "extra_name": "sick", "extra_size": 10000}) == \
        ["extra data from SICK instead of MNLI"]
    assert setting_reasons({**study, "train_size": 1000, "extra_name": "sick", "extra_size": 3000}) == \
        ["a 1000-pair training subset", "3000 SICK pairs added to the language's own data"]
    assert setting_reasons({**study, "val_schedule": None, "classifier_head": float("nan")}) == \
        ["classifier head not recorded"]  # the paper prints no schedule: an assumption, not a reason
    assert setting_reasons({**study, "val_schedule": "per_epoch", "mixture_order": "shuffled"}) == []
    assert is_mbert("mbert", "/models/anything") and is_mbert("local", "/models/bert-base-multilingual-cased")
    assert not is_mbert("embedded")
    assert diagnostic_reason("sv", "swediagnostics") == "sv scored on SweDiagnostics instead of the study's sv set"
    assert diagnostic_reason("fr", "diagnostic_fr") is not None
    assert diagnostic_reason("fr", "diagnostic_fr", {"fr": ["diagnostic_fr"]}) is None
    assert diagnostic_reason("en", "axb") is None
