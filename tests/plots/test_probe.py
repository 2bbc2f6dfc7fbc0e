"""Probing figures (``diagnostics/plots/_probe.py``): a metric by layer with a line per fine-tuned seed, the
pretrained model dashed, the seed band and the chance level; MDL metrics with their reference lines; probing
protocols on one set of panels; and the heat map of the across-seed spread."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from diagnostics.plots import accuracy_by_layer, compare_by_layer, mdl_by_layer, seed_spread_by_layer  # noqa: E402

LAYERS = [0, 1, 2, 3]
MAJORITY = 0.7


def _value(task, seed, layer):
    base = {"logic": 0.6, "knowledge": 0.5}[task]
    return base + 0.05 * layer + (0.0 if pd.isna(seed) else 0.02 * (seed + 1))


@pytest.fixture(scope="module")
def table():
    rows = []
    for language in ("en", "ru"):
        for task in ("logic", "knowledge"):
            for model, seed in (("xlmr", np.nan), ("xlmr-rte", 0), ("xlmr-rte", 1)):
                for layer in reversed(LAYERS):  # unsorted on purpose
                    value = _value(task, seed, layer)
                    rows.append({"model": model, "seed": seed, "language": language, "task": task, "layer": layer,
                                 "majority": MAJORITY, "accuracy": value, "balanced_accuracy": value - 0.1,
                                 "compression": 1 + value, "mdl_selectivity": value})
    frame = pd.DataFrame(rows)
    frame["seed"] = frame["seed"].astype("Int64")  # as probe_models writes it: missing for the pretrained model
    return frame


def _line(ax, label):
    (line,) = [line for line in ax.lines if line.get_label() == label]
    return line


def test_a_line_per_seed_the_pretrained_model_the_band_and_chance(table):
    fig = accuracy_by_layer(table, language="en")
    logic, knowledge = fig.axes
    assert logic.get_title() == "Logic" and knowledge.get_title() == "Knowledge"
    assert logic.get_ylabel() == "probe accuracy (en)" and logic.get_xlabel() == "layer (0 = embeddings)"
    for ax, task in ((logic, "logic"), (knowledge, "knowledge")):
        for seed in (0, 1):
            line = _line(ax, f"seed {seed}")
            assert list(line.get_xdata()) == LAYERS  # sorted by layer
            np.testing.assert_allclose(line.get_ydata(), [_value(task, seed, layer) for layer in LAYERS])
        pretrained = _line(ax, "xlmr (pretrained)")
        assert pretrained.get_linestyle() == "--" and pretrained.get_color() == "black"
        np.testing.assert_allclose(pretrained.get_ydata(), [_value(task, np.nan, layer) for layer in LAYERS])
        np.testing.assert_allclose(_line(ax, "majority baseline").get_ydata(), [MAJORITY, MAJORITY])
        (band,) = ax.collections  # seed mean ± σ
        assert band.get_label() == "seed mean ± σ"
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend == ["seed 0", "seed 1", "seed mean ± σ", "xlmr (pretrained)", "majority baseline"]  # once each


def test_several_metrics_are_rows_of_panels_with_their_chance_levels(table):
    fig = accuracy_by_layer(table, metric=["accuracy", "balanced_accuracy"], language="ru", tasks=["knowledge"],
                            band=False)
    top, bottom = fig.axes
    assert top.get_ylabel() == "probe accuracy (ru)" and bottom.get_ylabel() == "probe balanced accuracy (ru)"
    assert list(_line(bottom, "chance (0.5)").get_ydata()) == [0.5, 0.5]
    assert not top.collections and top.get_title() == "Knowledge"


def test_baseline_false_draws_no_chance_line(table):
    (ax, _) = accuracy_by_layer(table, language="en", baseline=False).axes
    assert not [line for line in ax.lines if line.get_label() == "majority baseline"]


def test_the_table_must_hold_one_language_the_metric_and_the_tasks(table):
    with pytest.raises(ValueError, match=r"the table holds 2 languages \(en, ru\); pass language="):
        accuracy_by_layer(table)
    with pytest.raises(KeyError, match="no column 'macro_f1' in the probing table"):
        accuracy_by_layer(table, metric="macro_f1", language="en")
    with pytest.raises(ValueError, match="tasks not in the table: logics"):
        accuracy_by_layer(table, language="en", tasks=["logics"])


def test_mdl_compression_has_the_uniform_code_and_the_label_prior(table):
    fig = mdl_by_layer(table, language="en", tasks=["logic"])
    compression, selectivity = fig.axes
    assert compression.get_ylabel() == "probe MDL compression (uniform / online) (en)"
    assert list(_line(compression, "uniform code (no compression)").get_ydata()) == [1.0, 1.0]
    entropy = -(MAJORITY * np.log2(MAJORITY) + (1 - MAJORITY) * np.log2(1 - MAJORITY))
    assert _line(compression, "label prior only (1 / H)").get_ydata()[0] == pytest.approx(1 / entropy)
    assert list(_line(selectivity, "no selectivity").get_ydata()) == [0.0, 0.0]
    np.testing.assert_allclose(_line(compression, "seed 1").get_ydata(),
                               [1 + _value("logic", 1, layer) for layer in LAYERS])


def test_compare_by_layer_a_colour_per_table(table):
    cv = table[table["seed"].isna()].assign(balanced_accuracy_std=0.03)
    annotator = table.assign(balanced_accuracy=table["balanced_accuracy"] - 0.05)
    fig = compare_by_layer({"annotator": annotator, "gold CV": cv}, language="en", tasks=["logic"])
    (ax,) = fig.axes
    rows = table[(table["language"] == "en") & (table["task"] == "logic")]
    pretrained = rows[rows["seed"].isna()].sort_values("layer")["balanced_accuracy"].to_numpy()
    tuned = rows[rows["seed"].notna()].groupby("layer")["balanced_accuracy"].mean().to_numpy()
    np.testing.assert_allclose(_line(ax, "annotator: pretrained").get_ydata(), pretrained - 0.05)
    np.testing.assert_allclose(_line(ax, "annotator: fine-tuned seed mean").get_ydata(), tuned - 0.05)
    np.testing.assert_allclose(_line(ax, "gold CV: pretrained").get_ydata(), pretrained)
    assert not [line for line in ax.lines if line.get_label() == "gold CV: fine-tuned seed mean"]  # no seeds
    assert _line(ax, "annotator: fine-tuned seed mean").get_linestyle() == "--"
    assert _line(ax, "annotator: pretrained").get_color() != _line(ax, "gold CV: pretrained").get_color()
    assert [c.get_label() for c in ax.collections] == ["gold CV: ± σ across folds"]  # only where a spread is known
    assert list(_line(ax, "chance (0.5)").get_ydata()) == [0.5, 0.5]
    assert ax.get_ylabel() == "probe balanced accuracy (en)"


def test_compare_by_layer_refuses_nothing_or_a_missing_metric(table):
    with pytest.raises(ValueError, match="no table to compare"):
        compare_by_layer({})
    with pytest.raises(KeyError, match="no column 'macro_f1' in table 'a'"):
        compare_by_layer({"a": table}, metric="macro_f1")


def test_seed_spread_is_the_sd_over_seeds_per_language_task_and_layer(table):
    ax = seed_spread_by_layer(table).axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["en · Knowledge", "en · Logic", "ru · Knowledge",
                                                            "ru · Logic"]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["0", "1", "2", "3"]
    cells = np.asarray(ax.collections[0].get_array()).reshape(4, 4)
    np.testing.assert_allclose(cells, np.std([0.02, 0.04], ddof=1))  # seeds 0.02 apart at every layer
    assert ax.get_title() == "Seed spread of probe accuracy"
    with pytest.raises(ValueError, match="at least two fine-tuned seeds"):
        seed_spread_by_layer(table[table["seed"] != 1])
