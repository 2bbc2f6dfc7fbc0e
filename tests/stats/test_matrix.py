"""One setting as an examples x runs matrix (``diagnostics.stats._matrix``), its one selector with one error style,
and the one compare function's explicit ``alternative=`` and ``adjust=``."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from _stats_fixtures import synthetic_table

from diagnostics.core.errors import UserInputError
from diagnostics.stats import (SettingMatrix, adjust_pvalues, compare_settings, select_setting, setting_arrays,
                               setting_matrices, validate_predictions)


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    return validate_predictions(synthetic_table("axb", experiments=(("base", 0.62), ("better", 0.75)), seeds=range(3)),
                                check_ids=False)


def test_one_structure_serves_the_instances_and_the_bootstrap(table):
    whole = {m.setting["experiment"]: m for m in setting_matrices(table)}
    picked = select_setting(table, {"experiment": "base"})
    arrays = setting_arrays(table, {"experiment": "base"})
    assert isinstance(picked, SettingMatrix) and isinstance(arrays, SettingMatrix)
    assert picked.runs == arrays.runs == whole["base"].runs == [0, 1, 2] == arrays.seeds
    assert np.array_equal(picked.pred, whole["base"].pred)
    # setting_arrays puts the examples in the dataset's order and attaches the categories
    position = pd.Index(picked.ids).get_indexer(arrays.ids)
    assert np.array_equal(arrays.predictions, picked.pred[position]) and arrays.labels is arrays.gold
    assert arrays.categories.shape == (len(arrays.ids), len(arrays.category_names)) == (len(arrays.ids), 33)


def test_a_nested_design_reshapes_and_an_incomplete_one_is_refused(table):
    base = table[table["experiment"] == "base"]
    nested = base.assign(pretrain_seed=base["seed"] % 2, seed=base["seed"] // 2)
    m = select_setting(nested, {})
    assert m.nested and m.runs == [(0, 0), (0, 1), (1, 0)] and m.seeds == [0, 1] and m.inner_seeds == [0, 1]
    with pytest.raises(UserInputError, match=r"every fine-tuning seed \[0, 1\] under every pretraining seed"):
        m.predictions  # noqa: B018
    square = pd.concat([nested, nested[nested["pretrain_seed"] == 0].assign(pretrain_seed=1, seed=1)])
    assert setting_arrays(square, None).predictions.shape == (len(m.ids), 2, 2)
    short = base[~((base["seed"] == 2) & (base["example_id"] == base["example_id"].iat[0]))]
    with pytest.raises(UserInputError, match=r"runs \[2\] lack predictions"):
        setting_arrays(short, {"experiment": "base"})


def test_every_selection_refusal_is_one_user_error(table):
    with pytest.raises(UserInputError, match=r"setting \{'epoch': 1\}: no column 'epoch'") as unknown:
        select_setting(table, {"epoch": 1})
    assert isinstance(unknown.value, KeyError)
    with pytest.raises(UserInputError, match=r"setting \{'experiment': 'nope'\}: no row"):
        select_setting(table, {"experiment": "nope"})
    with pytest.raises(UserInputError, match=r"^A: 2 settings \(experiment=base.*select exactly one \(--pick\)$"):
        setting_arrays(table, {}, what="A", hint="--pick")
    conflicting = table.copy()
    first = conflicting.index[conflicting["seed"] == 1][0]
    conflicting.loc[first, "label"] = "not_entailment" if conflicting.at[first, "label"] == "entailment" \
        else "entailment"
    with pytest.raises(UserInputError, match="different gold labels"):
        select_setting(conflicting, {"experiment": "base"})


def test_alternative_and_adjust_are_explicit(table):
    a, b = {"experiment": "base"}, {"experiment": "better"}
    runs = {alt: compare_settings(table, a, b, n_boot=200, alternative=alt, dataset="axb")
            for alt in ("two-sided", "greater", "less")}
    two, greater, less = (runs[k]["p_value"].to_numpy() for k in ("two-sided", "greater", "less"))
    assert np.allclose(two, np.minimum(1.0, 2 * np.minimum(greater, less)))
    assert greater[-2] < 0.05 < less[-2]  # all examples: b is better
    frame = runs["two-sided"]
    family = frame["in_family"].to_numpy()
    assert (frame["alternative"] == "two-sided").all() and (frame["adjust"] == "holm").all()
    assert np.allclose(frame.loc[family, "p_adjusted"], adjust_pvalues(two[family], "holm"))
    assert frame.loc[~family, "p_adjusted"].equals(frame.loc[~family, "p_value"])
    assert (frame["significant"] == (frame["p_adjusted"] <= 0.05)).all()
    assert frame["n"].iat[-2] == len(setting_arrays(table, a).ids) and bool(frame["paired"].iat[0])
    none = compare_settings(table, a, b, n_boot=200, adjust="none", by=None)
    assert none["p_adjusted"].equals(none["p_value"])
    bh = compare_settings(table, a, b, n_boot=200, adjust="bh")
    assert np.allclose(bh.loc[family, "p_adjusted"], bh.loc[family, "p_bh"])
    for option, value in (("alternative", "two_sided"), ("adjust", "bonferroni"), ("paired", "maybe")):
        with pytest.raises(UserInputError, match=f"{option}: expected one of"):
            compare_settings(table, a, b, n_boot=10, **{option: value})


def test_two_tables_compare_like_one(table):
    a = table[table["experiment"] == "base"]
    b = table[table["experiment"] == "better"]
    one = compare_settings(table, {"experiment": "base"}, {"experiment": "better"}, n_boot=100, by=None)
    two = compare_settings(a, None, None, n_boot=100, by=None, predictions_b=b)
    assert np.allclose(one["p_value"], two["p_value"]) and np.allclose(one["delta_ci_low"], two["delta_ci_low"])
