"""The explorer's static page: the least stable categories first, with their flipping examples."""

from __future__ import annotations

import pytest

from diagnostics import explorer as ex

from _explorer_data import explorer_inputs


@pytest.fixture()
def model():
    predictions, datasets, annotations = explorer_inputs()
    return ex.build_explorer(predictions, datasets, annotations=annotations)


def test_static_html_leads_with_the_least_stable_categories_and_their_flipping_examples(model):
    page = model.to_html()
    lead = model.least_stable(5)
    position = 0
    for category in lead["category"]:  # in order: each language's five, largest σ first
        position = page.index(f"<b>{category}</b>", position + 1)
    assert page.index("Per-seed MCC") > position
    first = lead.iloc[0]
    flipping = model.examples(int(first["setting"]), first["category"], flipping_only=True)
    for example_id in flipping["example_id"].head(20):
        assert f">{example_id}<" in page
