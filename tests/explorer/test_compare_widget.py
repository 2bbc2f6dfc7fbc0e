"""The comparison's widget, driven without a notebook front end."""

from __future__ import annotations

import pytest

from diagnostics import explorer as ex

from _explorer_data import comparison_store


@pytest.fixture(scope="module")
def store():
    return comparison_store()


def test_the_widget_drives_the_comparison(store):
    pytest.importorskip("ipywidgets")
    model, _, _ = store
    pair = model.compare({"experiment": "base", "language": "en"}, {"experiment": "extra-100"})
    widget = ex.ComparisonWidget(pair, row_limit=5)
    assert list(widget.buttons) == pair.category_names and widget.example.layout.display == "none"
    category = pair.category_names[3]
    button = widget.buttons[category]
    button.click()  # what a click in the front end does
    assert pair.selection == category and "dx-chosen" in button._dom_classes
    listing = pair.examples()
    assert widget.listing.value.count("<tr data-id=") == min(5, len(listing))
    assert f"data-category='{category}'" in widget.listing.value
    widget.outcome.value = "unstable"  # the filter
    assert pair.outcome == "unstable"
    unstable = pair.examples()
    assert (unstable["outcome"] == "unstable").all() and len(unstable) > 5
    assert widget.more.layout.display != "none"
    while widget.more.layout.display != "none":
        widget.more.click()
    for example_id in unstable["example_id"]:
        assert f"data-id='{example_id}' data-outcome='unstable'" in widget.listing.value
    first = str(unstable["example_id"].iat[0])
    widget.open_example(first)  # what choosing it in the "example" menu does
    assert f"data-id='{first}'" in widget.example_view.value
    with pytest.raises(ValueError, match="not among the listed"):
        widget.open_example("nowhere")
    other = widget.buttons[pair.category_names[0]]
    other.click()  # the outline moves; the listing starts again at row_limit
    assert "dx-chosen" in other._dom_classes and "dx-chosen" not in button._dom_classes
    strips = [c for c in widget.grid.children if "dx-cmp-strip" in getattr(c, "value", "")]
    assert len(strips) == len(pair.category_names) and all("class='pt b'" in s.value for s in strips)
    bundle = ex.explore(pair)._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle and "two systems side by side" in \
        bundle["text/plain"]
    static = ex.explore(pair, static=True)._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" not in static
    assert "Two systems side by side" in static["text/html"] and "dx-cmp-row" in static["text/html"]
