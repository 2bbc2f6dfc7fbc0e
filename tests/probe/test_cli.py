"""``diagnostics probe run`` end to end (tiny models, real RTE/AX-b pairs, rule annotations) and the figures."""

from __future__ import annotations

import shutil

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from diagnostics.cli import app
from diagnostics.plots import accuracy_by_layer, compare_by_layer, seed_spread_by_layer


def synthetic_table(seeds=(None, 0, 1, 2), layers=4, tasks=("logic", "negation")) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    rows = []
    for seed in seeds:
        for task in tasks:
            for layer in range(layers):
                acc = 0.6 + 0.02 * layer + rng.normal(0, 0.01)
                rows.append({"model": "pre" if seed is None else f"seed={seed}", "seed": seed, "language": "en",
                             "task": task, "layer": layer, "accuracy": acc, "control": 0.5,
                             "selectivity": acc - 0.5, "majority": 0.55, "balanced_accuracy": acc - 0.05,
                             "balanced_accuracy_std": 0.02})
    return pd.DataFrame(rows).astype({"seed": "Int64"})


def test_accuracy_by_layer_draws_each_seed_the_reference_band_and_baseline():
    fig = accuracy_by_layer(synthetic_table())
    assert len(fig.axes) == 2
    ax = fig.axes[0]
    labels = [line.get_label() for line in ax.get_lines()]
    assert labels.count("seed 0") == 1 and "seed 2" in labels
    assert "pre (pretrained)" in labels and "majority baseline" in labels
    assert len(ax.collections) == 1  # the seed band
    reference = ax.get_lines()[labels.index("pre (pretrained)")]
    table = synthetic_table()
    expected = table[(table["seed"].isna()) & (table["task"] == "logic")].sort_values("layer")["accuracy"]
    np.testing.assert_allclose(reference.get_ydata(), expected)
    assert ax.get_title() == "Logic" and fig.axes[1].get_title() == "negation"
    majority = ax.get_lines()[labels.index("majority baseline")]
    np.testing.assert_allclose(majority.get_ydata(), 0.55)


def test_balanced_accuracy_beside_accuracy_with_each_chance_level():
    table = synthetic_table()
    fig = accuracy_by_layer(table, metric=["accuracy", "balanced_accuracy"])
    assert len(fig.axes) == 2 * 2  # metrics x tasks
    top, bottom = fig.axes[0], fig.axes[2]  # logic: accuracy row, balanced-accuracy row
    chance = {line.get_label(): line.get_ydata()[0] for ax in (top, bottom) for line in ax.get_lines()
              if line.get_label() in ("majority baseline", "chance (0.5)")}
    assert chance == {"majority baseline": 0.55, "chance (0.5)": 0.5}
    assert "balanced accuracy" in bottom.get_ylabel() and bottom.get_xlabel().startswith("layer")
    pretrained = [line for line in bottom.get_lines() if line.get_label() == "pre (pretrained)"][0]
    expected = table[table["seed"].isna() & (table["task"] == "logic")].sort_values("layer")["balanced_accuracy"]
    np.testing.assert_allclose(pretrained.get_ydata(), expected)
    with pytest.raises(KeyError, match="macro_f1"):
        accuracy_by_layer(table, metric=["accuracy", "macro_f1"])


def test_compare_by_layer_draws_each_protocol_and_the_fold_spread():
    annotator = synthetic_table().drop(columns=["balanced_accuracy_std"])
    gold = synthetic_table().assign(balanced_accuracy=lambda t: t["balanced_accuracy"] + 0.1)
    fig = compare_by_layer({"annotator-trained": annotator, "gold CV": gold}, metric="balanced_accuracy")
    ax = fig.axes[0]
    lines = {line.get_label(): line for line in ax.get_lines()}
    assert {"annotator-trained: pretrained", "gold CV: pretrained", "gold CV: fine-tuned seed mean",
            "chance (0.5)"} <= set(lines)
    logic = gold[(gold["task"] == "logic")]
    np.testing.assert_allclose(lines["gold CV: fine-tuned seed mean"].get_ydata(),
                               logic[logic["seed"].notna()].groupby("layer")["balanced_accuracy"].mean())
    assert len(ax.collections) == 1  # only the gold table has a fold spread
    with pytest.raises(KeyError):
        compare_by_layer({"a": annotator}, metric="macro_f1")


def test_plot_errors_and_spread_heatmap():
    table = synthetic_table()
    with pytest.raises(ValueError, match="languages"):
        accuracy_by_layer(pd.concat([table, table.assign(language="ru")]))
    with pytest.raises(ValueError, match="not in the table"):
        accuracy_by_layer(table, tasks=["knowledge"])
    fig = seed_spread_by_layer(table)
    assert len(fig.axes[0].texts) == 2 * 4  # one annotated cell per task x layer
    with pytest.raises(ValueError, match="two fine-tuned seeds"):
        seed_spread_by_layer(synthetic_table(seeds=(None, 0)))


@pytest.mark.slow
def test_cli_probe_run_writes_tables_and_figures(tmp_path):
    from diagnostics.models import tiny_random_model

    pre = tiny_random_model(tmp_path / "pre", seed=0, num_hidden_layers=1)
    store = tmp_path / "runs" / "exp" / "en" / "tiny"
    tiny_random_model(store / "seed=0" / "checkpoint", seed=1, num_hidden_layers=1)
    shutil.copytree(pre, store / "seed=1" / "checkpoint")
    for k in (0, 1):
        (store / f"seed={k}" / "DONE").write_text("{}")
    (store / "seed=2").mkdir()  # unfinished run: skipped
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["probe", "run", "--model", str(pre), "--model", str(store), "--lang", "en",
                                      "--tasks", "logic,lexical_semantics", "--max-train", "60", "--max-test",
                                      "50", "--out", str(out), "--threads", "1", "--no-progress", "--gold-cv",
                                      "--mdl", "--mdl-alpha", "probe"])
    assert result.exit_code == 0, result.output
    table = pd.read_csv(out / "probe_en.csv")
    assert sorted(table["model"].unique()) == ["pre", "seed=0", "seed=1"]
    assert len(table) == 3 * 2 * 2  # models x tasks x (embeddings + 1 layer)
    summary = pd.read_csv(out / "probe_en_summary.csv")
    assert (summary["n_seeds"] == 2).all()
    # seed=1 is a byte copy of the pretrained model: identical probes
    a = table[table["model"] == "pre"].reset_index(drop=True)
    b = table[table["model"] == "seed=1"].reset_index(drop=True)
    np.testing.assert_allclose(a["accuracy"], b["accuracy"])
    assert (out / "probe_en_accuracy.png").stat().st_size > 10_000
    assert (out / "probe_en_selectivity.png").is_file() and (out / "probe_en_balanced_accuracy.png").is_file()
    assert (table["selection"] == "test").all() and (table["n_selection"] == 60).all()  # the study's protocol
    assert "annotated RTE-style test split" in result.output
    gold = pd.read_csv(out / "probe_en_gold_cv.csv")
    assert len(gold) == len(table) and (gold["n_pairs"] == 50).all()
    assert list((out / "cache").glob("annotations-en-*.json"))
    assert "training labels: presence" in result.output
    assert (table["feature_list"] == "study-text").all()  # the study's list labelled the probes
    # MDL beside the accuracy tables: the same models, tasks, layers and training pairs; with --mdl-alpha probe the
    # accuracy probes' strengths
    codes = pd.read_csv(out / "probe_en_mdl.csv")
    keys = ["model", "task", "layer"]
    assert codes[keys].equals(table[keys]) and (codes["n_pairs"] == table["n_train"]).all()
    np.testing.assert_array_equal(codes["alpha"], table["alpha"].fillna(0.1))
    np.testing.assert_allclose(codes["uniform_codelength"], 60.0)
    mdl_summary = pd.read_csv(out / "probe_en_mdl_summary.csv")
    assert set(mdl_summary["metric"]) == {"compression", "online_codelength", "mdl_selectivity"}
    assert (out / "probe_en_mdl.png").stat().st_size > 10_000
    assert "best compression per model and task" in result.output
    # without --mdl the earlier call's MDL files go (they would read as this call's)
    result = CliRunner().invoke(app, ["probe", "run", "--model", str(pre), "--model", str(store), "--lang", "en",
                                      "--tasks", "logic,lexical_semantics", "--max-train", "60", "--max-test",
                                      "50", "--out", str(out), "--threads", "1", "--no-progress", "--gold-cv"])
    assert result.exit_code == 0, result.output
    assert not list(out.glob("probe_en_mdl*")) and (out / "probe_en_gold_cv.csv").is_file()

    # the rules' pair reading as a named option: same pairs, other training labels
    other = tmp_path / "differs"
    result = CliRunner().invoke(app, ["probe", "run", "--model", str(pre), "--lang", "en", "--tasks",
                                      "logic,lexical_semantics", "--max-train", "60", "--max-test", "50", "--out",
                                      str(other), "--cache-dir", str(out / "cache"), "--threads", "1",
                                      "--no-progress", "--probe-labels", "differs"])
    assert result.exit_code == 0, result.output
    assert "training labels: differs" in result.output
    differs = pd.read_csv(other / "probe_en.csv").set_index(["task", "layer"])
    presence = a.set_index(["task", "layer"])
    assert (differs["n_train"] == presence["n_train"]).all()
    assert not np.allclose(differs["train_positive_rate"], presence["train_positive_rate"])
    assert (differs["feature_list"] == "differs").all()


def test_cli_reports_bad_input(tmp_path):
    result = CliRunner().invoke(app, ["probe", "run", "--model", str(tmp_path / "nowhere"), "--out",
                                      str(tmp_path / "o")])
    assert result.exit_code == 2
    assert "error:" in result.output
    result = CliRunner().invoke(app, ["probe", "run", "--model", "embedded", "--class-weight", "auto", "--out",
                                      str(tmp_path / "o")])
    assert result.exit_code == 2 and "--class-weight" in result.output
    result = CliRunner().invoke(app, ["probe", "run", "--model", "embedded", "--probe-labels", "pair", "--out",
                                      str(tmp_path / "o")])
    assert result.exit_code == 2 and "--probe-labels: expected presence or differs, found 'pair'" in result.output
    result = CliRunner().invoke(app, ["probe", "run", "--model", "embedded", "--mdl", "--mdl-data", "gold", "--out",
                                      str(tmp_path / "o")])
    assert result.exit_code == 2 and "--mdl-data: expected train or test, found 'gold'" in result.output
    result = CliRunner().invoke(app, ["probe", "run", "--model", "embedded", "--mdl", "--mdl-alpha", "0", "--out",
                                      str(tmp_path / "o")])
    assert result.exit_code == 2 and "--mdl-alpha: expected a number > 0 or 'probe', found '0'" in result.output
