"""``seed_plan_figure`` (``diagnostics/plots/_plan.py``): per setting (and example scale) a panel, per unit
(category) a line of the simulated interval half-width (or power) over the number of seeds, the target dashed."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from diagnostics.plots import seed_plan_figure  # noqa: E402

SEEDS = [2, 4, 8]


def _curve(languages=("en", "ru"), categories=("Negation", "Quantifiers"), scales=(1.0,), metric="halfwidth",
           quantity="mean"):
    rows = []
    for language in languages:
        for scale in scales:
            for k, category in enumerate(categories):
                for n in reversed(SEEDS):  # unsorted on purpose: the figure sorts by seeds
                    rows.append({"experiment": "rte", "language": language, "model": "mbert", "category": category,
                                 "example_scale": scale, "n_seeds": n, "metric": metric, "quantity": quantity,
                                 "value": (0.4 + 0.1 * k) / np.sqrt(n) / scale})
    return pd.DataFrame(rows)


def test_a_panel_per_setting_a_line_per_unit_over_the_seeds():
    curve = _curve()
    fig = seed_plan_figure(curve, target=0.15)
    panels = [ax for ax in fig.axes if ax.axison]
    assert [ax.get_title() for ax in panels] == ["rte / en / mbert", "rte / ru / mbert"]
    for ax in panels:
        units = [line for line in ax.lines if not line.get_label().startswith("_")]
        assert [line.get_label() for line in units] == ["Negation", "Quantifiers"]
        for k, line in enumerate(units):
            assert list(line.get_xdata()) == SEEDS
            np.testing.assert_allclose(line.get_ydata(), [(0.4 + 0.1 * k) / np.sqrt(n) for n in SEEDS])
        target = [line for line in ax.lines if line.get_label() == "_target"]
        assert len(target) == 1 and set(target[0].get_ydata()) == {0.15}
        assert [t.get_text() for t in ax.get_legend().get_texts()] == ["Negation", "Quantifiers"]  # not the target
        assert ax.get_xlabel() == "seeds" and ax.get_ylabel() == "CI half-width of the mean MCC"
    assert fig.get_suptitle() == "Seeds needed: simulated interval half-width (target 0.15)"


def test_example_scales_get_panels_of_their_own_and_power_its_axis():
    fig = seed_plan_figure(_curve(languages=("en",), scales=(1.0, 2.0), metric="power"))
    panels = [ax for ax in fig.axes if ax.axison]
    assert [ax.get_title() for ax in panels] == ["rte / en / mbert, examples ×1", "rte / en / mbert, examples ×2"]
    assert panels[0].get_ylabel() == "power" and fig.get_suptitle() == "Seeds needed: simulated power"
    assert not [line for line in panels[0].lines if line.get_label() == "_target"]  # no target given


def test_the_sigma_quantity_names_its_axis_and_four_panels_wrap_to_two_rows():
    fig = seed_plan_figure(_curve(languages=("en", "ru", "de", "fr"), quantity="sigma"))
    assert len(fig.axes) == 6  # 3 columns x 2 rows
    assert sum(ax.axison for ax in fig.axes) == 4  # the two spare panels are blank
    assert fig.axes[0].get_ylabel() == "CI half-width of the seed σ"


def test_many_units_share_a_colour_ramp_without_a_legend():
    categories = [f"c{i}" for i in range(13)]
    ax = seed_plan_figure(_curve(languages=("en",), categories=categories)).axes[0]
    assert len(ax.lines) == 13 and ax.get_legend() is None
    assert len({line.get_color() for line in ax.lines}) == 13  # each its own shade


def test_an_empty_curve_is_refused():
    with pytest.raises(ValueError, match="nothing to plot: the seed plan's curve is empty"):
        seed_plan_figure(_curve().iloc[:0])
