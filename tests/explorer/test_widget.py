"""The instability explorer's ipywidgets front end and its display bundle, driven without a notebook front end; the
flipping figure of a category."""

from __future__ import annotations


import numpy as np
import pytest

from diagnostics import explorer as ex
from diagnostics.plots import _flips as flips

from _explorer_data import category_members, check_listing, explorer_inputs



@pytest.fixture(scope="module")
def setup():
    return explorer_inputs()


@pytest.fixture()
def model(setup):
    predictions, datasets, annotations = setup
    return ex.build_explorer(predictions, datasets, annotations=annotations)


def test_the_widget_drives_the_model(model, setup):
    pytest.importorskip("ipywidgets")
    predictions, datasets, annotations = setup
    widget = ex.ExplorerWidget(model, row_limit=10)
    assert len(widget.buttons) == len(model.columns()) * len(model.category_names) - sum(
        np.isnan(model.heatmap().to_numpy()).ravel())
    category = model.category_names[3]
    button = widget.buttons[(0, category, "2")]
    button.click()  # what a click in the front end does
    assert model.selected["category"] == category and model.selected["seed"] == "2"
    listing = model.examples()
    check_listing(listing, predictions, datasets["syn_en"], annotations["syn_en"], "en", "base", category)
    # the chosen cell is outlined (and only it); the listing shows the first row_limit examples, "show more" the rest
    assert "dx-chosen" in button._dom_classes and button.layout.border == "2px solid #000"
    assert ex.cell_class(0, 3, "2") in button._dom_classes
    assert sum("dx-chosen" in b._dom_classes for b in widget.buttons.values()) == 1
    assert len(listing) > 10
    shown = [x for x in listing["example_id"] if f">{x}<" in widget.listing.value]
    assert shown == list(listing["example_id"].head(10))
    assert widget.more.layout.display != "none" and f"of {len(listing) - 10} not shown" in \
        widget.more.description
    while widget.more.layout.display != "none":
        widget.more.click()
    for example_id in listing["example_id"]:
        assert f">{example_id}<" in widget.listing.value
    other = widget.buttons[(0, category, "0")]
    other.click()  # the outline moves, the listing starts again at row_limit rows
    assert "dx-chosen" in other._dom_classes and "dx-chosen" not in button._dom_classes
    assert button.layout.border == "" and widget.listing.value.count("<tr data-id=") == 10
    assert "dx-legend" in widget.widget.children[1].value
    widget.dropdowns["language"].value = "ru"  # a filter change hides the selection and redraws the grid
    assert model.selected is None and {key[0] for key in widget.buttons} == {1}
    widget.flipping.value = True
    assert model.flipping_only
    widget.buttons[(1, category, "0")].click()
    assert set(model.examples()["example_id"]) <= category_members(datasets["syn_ru"], category)
    assert (model.examples()["flip_rate"] > 0).all()


def test_display_bundle_holds_the_widget_and_the_static_fallback(model):
    pytest.importorskip("ipywidgets")
    bundle = ex.explore(model)._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert "<table" in bundle["text/html"] and "least stable" in bundle["text/html"]
    static = ex.explore(model, static=True)._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" not in static and "<table" in static["text/html"]


def test_flipping_figure_and_focus(model):
    lead = model.least_stable(1)
    fig = flips.flipping_figure(model, int(lead["setting"].iat[0]), lead["category"].iat[0])
    assert fig.axes and fig.axes[0].get_title(loc="left").startswith(lead["category"].iat[0])
    shortened = flips.focus("a b c d e f is g", "a b c d e f isn't g", width=40, context=2)
    assert shortened == ("… e f is g", "… e f isn't g")
