"""Numbers as the explorer shows them: the same digits in every view."""

from __future__ import annotations

import pytest

from diagnostics import explorer as ex

from _explorer_data import explorer_inputs


@pytest.fixture()
def model():
    predictions, datasets, annotations = explorer_inputs()
    return ex.build_explorer(predictions, datasets, annotations=annotations)


def test_every_view_shows_the_same_digits(model):
    """The payload stores each number rounded once to the digits shown, so the page prints the notebook's."""
    data = model.payload()
    for i, setting in enumerate(data["settings"]):
        heat = model._mcc.get(i)
        for c, values in enumerate(setting["mcc"]):
            if values is None:
                continue
            for seed, value in zip(setting["seeds"], values):
                exact = heat.at[data["categories"][c], seed]
                shown = ex.two_decimals(exact)
                assert (value is None and shown == "") or f"{value:.2f}".replace("-0.00", "0.00") == shown
    assert ex.display_round(0.3947, 2) == 0.39 and f"{ex.display_round(0.125, 2):.2f}" == f"{0.125:.2f}" == "0.12"
    assert ex.display_round(float("nan"), 2) is None and ex.display_round(None, 3) is None
