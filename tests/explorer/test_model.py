"""The explorer's state: a cell lists exactly its category's examples with every seed's prediction, filters, the
least stable categories, tables without probabilities and nested designs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from diagnostics import explorer as ex
from diagnostics import stats
from diagnostics.plots import _flips as flips

from _explorer_data import category_members, check_listing, explorer_inputs, synthetic_predictions


@pytest.fixture(scope="module")
def setup():
    return explorer_inputs()


@pytest.fixture()
def model(setup):
    predictions, datasets, annotations = setup
    return ex.build_explorer(predictions, datasets, annotations=annotations)


def test_selecting_a_cell_lists_exactly_that_categorys_examples(model, setup):
    predictions, datasets, annotations = setup
    assert model.selected is None and model.examples().empty
    category = model.category_names[2]
    model.select(category, 1, language="ru", experiment="base")
    assert model.selected == {"experiment": "base", "language": "ru", "model": "m", "dataset": "syn_ru",
                              "category": category, "seed": "1"}
    check_listing(model.examples(), predictions, datasets["syn_ru"], annotations["syn_ru"], "ru", "base", category)
    # another cell: the listing follows
    other = model.category_names[5]
    model.select(other, 0, language="en", experiment="extra-100")
    check_listing(model.examples(), predictions, datasets["syn_en"], annotations["syn_en"], "en", "extra-100",
                   other)
    assert model.filters["language"] == "en" and model.filters["experiment"] == "extra-100"


def test_flipping_only_filter_and_sort_order(model, setup):
    predictions, datasets, annotations = setup
    category = model.category_names[0]
    model.select(category, 0, language="en", experiment="base")
    listing = model.examples()
    flips = listing["flip_rate"].to_numpy()
    assert (np.diff(flips) <= 1e-12).all(), "flipping examples first"
    model.set_filters(flipping_only=True)
    flipping = model.examples()
    assert 0 < len(flipping) < len(listing) and (flipping["flip_rate"] > 0).all()
    check_listing(flipping, predictions, datasets["syn_en"], annotations["syn_en"], "en", "base", category,
                   flipping_only=True)


def test_filters_hide_the_selection_and_the_heatmap_follows(model, setup):
    predictions, datasets, _ = setup
    assert model.filters == {"language": "en", "experiment": "base", "model": None}
    assert model.options() == {"language": ["en", "ru"], "experiment": ["base", "extra-100"], "model": ["m"]}
    heat = model.heatmap()
    assert list(heat.columns) == [("base", "en", "m", s) for s in ("0", "1", "2")]
    scores = stats.category_scores(predictions, datasets, levels=("fine",), validate=False)
    mine = scores[(scores["language"] == "en") & (scores["experiment"] == "base")]
    for row in mine.itertuples(index=False):
        assert heat.at[row.category, ("base", "en", "m", str(row.seed))] == pytest.approx(row.mcc)
    model.select(model.category_names[0], 2, language="en", experiment="base")
    model.set_filters(language="ru")
    assert model.selected is None and model.examples().empty
    model.set_filters(language=None, experiment=None)
    assert len(model.columns()) == 9 and model.heatmap().shape == (len(model.category_names), 9)
    with pytest.raises(ValueError, match="language must be one of"):
        model.set_filters(language="xx")
    with pytest.raises(ValueError, match="several settings"):
        model.select(model.category_names[0], 0)
    with pytest.raises(ValueError, match="not among the setting's seeds"):
        model.select(model.category_names[0], 7, language="ru")


def test_least_stable_are_the_largest_sigmas_per_language(model, setup):
    predictions, datasets, _ = setup
    lead = model.least_stable(5)
    assert list(lead["language"]) == ["en"] * 5 + ["ru"] * 5 and (lead["experiment"] == "base").all()
    stab = stats.stability(stats.category_scores(predictions, datasets, levels=("fine",), validate=False))
    for language, group in lead.groupby("language"):
        expected = stab[(stab["language"] == language) & (stab["experiment"] == "base")].nlargest(5, "std")
        assert list(group["category"]) == list(expected["category"])
        np.testing.assert_allclose(group["sigma"], expected["std"])


def test_tables_without_probabilities_and_nested_designs(setup):
    _, datasets, _ = setup
    en = datasets["syn_en"]
    plain = synthetic_predictions({"en": ("syn_en", en)}, seeds=(0, 1)).drop(columns="probability")
    nested = pd.concat([plain.assign(pretrain_seed=0),
                        synthetic_predictions({"en": ("syn_en", en)}, seeds=(0, 1), seed=9)
                        .drop(columns="probability").assign(pretrain_seed=1)], ignore_index=True)
    model = ex.build_explorer(nested, {"syn_en": en}, annotations=False)
    assert model.runs[0] == [(0, 0), (0, 1), (1, 0), (1, 1)]
    category = model.category_names[0]
    model.select(category, (1, 0))
    listing = model.examples()
    assert [c for c in listing.columns if c.startswith("prediction_")] == [
        "prediction_0/0", "prediction_0/1", "prediction_1/0", "prediction_1/1"]
    assert not any(c.startswith("probability_") for c in listing.columns)
    assert listing["auto_features"].isna().all() and set(listing["example_id"]) == category_members(en, category)
    data = model.payload()
    assert data["settings"][0]["prob"] is None and data["settings"][0]["seeds"] == ["0/0", "0/1", "1/0", "1/1"]
    assert data["datasets"][0]["auto"] is None
    assert "<table" in model.to_html() and flips.flipping_figure(model, 0, category).axes
