"""The synthetic explorer of the explorer's tests: two languages, two experiments, fake annotations."""

from __future__ import annotations

import pandas as pd
import pytest

from diagnostics import explorer as ex

from _explorer_data import fake_annotations, synthetic_dataset, synthetic_predictions


@pytest.fixture(scope="module")
def setup():
    en, ru = synthetic_dataset("syn_en", 120, seed=0), synthetic_dataset("syn_ru", 100, seed=1)
    base = synthetic_predictions({"en": ("syn_en", en), "ru": ("syn_ru", ru)})
    extra = synthetic_predictions({"en": ("syn_en", en)}, experiments=("extra-100",), seed=2)
    predictions = pd.concat([base, extra], ignore_index=True)
    datasets = {"syn_en": en, "syn_ru": ru}
    annotations = {"syn_en": fake_annotations(en), "syn_ru": fake_annotations(ru)}
    return predictions, datasets, annotations


@pytest.fixture()
def model(setup):
    predictions, datasets, annotations = setup
    return ex.build_explorer(predictions, datasets, annotations=annotations)
