"""The instability explorer's state (``ExplorerModel``), its ipywidgets front end and its static fallback, tested
without a notebook front end: choosing a cell lists exactly that category's examples with every seed's prediction."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from diagnostics import explorer as ex
from diagnostics import stats
from diagnostics.core.schema import ENTAILMENT
from diagnostics.plots import _flips as flips

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


def _members(dataset: pd.DataFrame, category: str) -> set[str]:
    return set(dataset.loc[dataset["features"].map(lambda f: category in f), "id"])


def _check_listing(listing: pd.DataFrame, predictions, dataset, annotations, language, experiment, category,
                   flipping_only=False):
    """The listed examples are the category's examples of that setting, with each seed's prediction."""
    rows = predictions[(predictions["language"] == language) & (predictions["experiment"] == experiment)]
    by_id = {i: g.set_index("seed") for i, g in rows.groupby("example_id")}
    expected = _members(dataset, category)
    if flipping_only:
        expected = {i for i in expected if by_id[i]["prediction"].nunique() > 1}
    assert set(listing["example_id"]) == expected and len(listing) == len(expected)
    auto = dict(zip(dataset["id"], annotations))
    texts = dataset.set_index("id")
    for row in listing.itertuples(index=False):
        row = row._asdict()
        mine = by_id[row["example_id"]]
        for seed in mine.index:
            assert row[f"prediction_{seed}"] == mine.at[seed, "prediction"]
            assert row[f"probability_{seed}"] == pytest.approx(mine.at[seed, "probability"])
        labels = list(mine["prediction"])
        pairs = [(a, b) for i, a in enumerate(labels) for b in labels[i + 1:]]
        assert row["flip_rate"] == pytest.approx(sum(a != b for a, b in pairs) / len(pairs))
        assert row["premise"] == texts.at[row["example_id"], "premise"]
        assert row["label"] == texts.at[row["example_id"], "label"]
        assert row["features"] == texts.at[row["example_id"], "features"]
        assert row["auto_features"] == auto[row["example_id"]]


def test_selecting_a_cell_lists_exactly_that_categorys_examples(model, setup):
    predictions, datasets, annotations = setup
    assert model.selected is None and model.examples().empty
    category = model.category_names[2]
    model.select(category, 1, language="ru", experiment="base")
    assert model.selected == {"experiment": "base", "language": "ru", "model": "m", "dataset": "syn_ru",
                              "category": category, "seed": "1"}
    _check_listing(model.examples(), predictions, datasets["syn_ru"], annotations["syn_ru"], "ru", "base", category)
    # another cell: the listing follows
    other = model.category_names[5]
    model.select(other, 0, language="en", experiment="extra-100")
    _check_listing(model.examples(), predictions, datasets["syn_en"], annotations["syn_en"], "en", "extra-100",
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
    _check_listing(flipping, predictions, datasets["syn_en"], annotations["syn_en"], "en", "base", category,
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
    _check_listing(listing, predictions, datasets["syn_en"], annotations["syn_en"], "en", "base", category)
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
    assert set(model.examples()["example_id"]) <= _members(datasets["syn_ru"], category)
    assert (model.examples()["flip_rate"] > 0).all()


def test_display_bundle_holds_the_widget_and_the_static_fallback(model):
    pytest.importorskip("ipywidgets")
    bundle = ex.explore(model)._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert "<table" in bundle["text/html"] and "least stable" in bundle["text/html"]
    static = ex.explore(model, static=True)._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" not in static and "<table" in static["text/html"]


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


def test_a_saved_payload_reads_back_and_a_cut_one_is_refused_in_one_line(model, tmp_path):
    from diagnostics.core.errors import UserInputError

    path = model.save_payload(tmp_path)
    assert ex.read_payload(path) == json.loads(json.dumps(model.payload()))
    cut = tmp_path / "cut.json"
    cut.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    with pytest.raises(UserInputError, match="cut short") as caught:
        ex.read_payload(cut)
    assert str(cut) in str(caught.value) and "\n" not in str(caught.value)


def test_payload_round_trips_the_predictions(model, setup, tmp_path):
    predictions, datasets, _ = setup
    path = model.save_payload(tmp_path)
    data = json.loads(path.read_text(encoding="utf-8"))
    assert path.name == ex.PAYLOAD_NAME and data["categories"] == model.category_names
    for setting in data["settings"]:
        ds = data["datasets"][setting["dataset"]]
        k = len(setting["seeds"])
        rows = predictions[(predictions["language"] == setting["language"])
                           & (predictions["experiment"] == setting["experiment"])]
        for row in rows.sample(60, random_state=0).itertuples(index=False):
            r = ds["ids"].index(row.example_id)
            j = setting["seeds"].index(str(row.seed))
            assert setting["pred"][r * k + j] == ("1" if row.prediction == ENTAILMENT else "0")
            assert setting["prob"][r * k + j] == round(round(float(row.probability), 3) * 1000)  # 3 digits shown
            assert ds["texts"][ds["premise"][r]] == datasets[ds["name"]].set_index("id").at[row.example_id,
                                                                                            "premise"]
        for c, category in enumerate(data["categories"]):
            members = {ds["ids"][r] for r in ds["members"][c]}
            assert members == _members(datasets[ds["name"]], category)


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


def test_flipping_figure_and_focus(model):
    lead = model.least_stable(1)
    fig = flips.flipping_figure(model, int(lead["setting"].iat[0]), lead["category"].iat[0])
    assert fig.axes and fig.axes[0].get_title(loc="left").startswith(lead["category"].iat[0])
    shortened = flips.focus("a b c d e f is g", "a b c d e f isn't g", width=40, context=2)
    assert shortened == ("… e f is g", "… e f isn't g")


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
    assert listing["auto_features"].isna().all() and set(listing["example_id"]) == _members(en, category)
    data = model.payload()
    assert data["settings"][0]["prob"] is None and data["settings"][0]["seeds"] == ["0/0", "0/1", "1/0", "1/1"]
    assert data["datasets"][0]["auto"] is None
    assert "<table" in model.to_html() and flips.flipping_figure(model, 0, category).axes
