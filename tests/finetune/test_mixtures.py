"""Training mixtures on the bundled data: subsets, extra English data, controlled feature presence."""

import numpy as np
import pandas as pd
import pytest

from diagnostics import data
from diagnostics.finetune import SweepConfig
from diagnostics.finetune._batching import batch_order
from diagnostics.finetune._mixtures import evaluation_sets, subset, training_mixture, with_presence


def test_subset_is_seeded_and_without_replacement():
    frame = data.load("rte", "train")
    a, b, c = subset(frame, 100, 0), subset(frame, 100, 0), subset(frame, 100, 1)
    assert a.equals(b) and not a["id"].equals(c["id"])
    assert a["id"].is_unique and set(a["id"]) <= set(frame["id"])
    assert subset(frame, None, 0).equals(frame.reset_index(drop=True))


def test_mixture_adds_collapsed_sick_with_the_data_seed():
    cfg = SweepConfig(models=["m"], languages=["en"], train_size=200, extra_data={"name": "sick", "size": 300})
    mix = training_mixture(cfg, "en")
    assert mix["dataset"].value_counts().to_dict() == {"sick": 300, "rte": 200}
    assert set(mix["label"]) == {"entailment", "not_entailment"}  # 3-way SICK collapsed
    again = training_mixture(cfg.with_overrides(["seeds=[7]"]), "en")
    assert mix.equals(again)  # the run seed never changes the data
    sick_ids = set(data.load("sick", "train")["id"])
    assert set(mix.loc[mix.dataset == "sick", "id"]) <= sick_ids


def test_a_shuffled_mixture_holds_the_same_pairs_in_one_order_of_the_data_seed():
    cfg = SweepConfig(models=["m"], languages=["en"], train_size=200, extra_data={"name": "sick", "size": 300},
                      recipe="jiant", optimizer="bert_adam")
    first = training_mixture(cfg, "en")
    assert list(first["dataset"]) == ["rte"] * 200 + ["sick"] * 300  # train_first: the language's own set first
    mixed = training_mixture(cfg.with_overrides(["mixture_order=shuffled"]), "en")
    key = ["dataset", "id"]
    assert mixed.sort_values(key, ignore_index=True).equals(first.sort_values(key, ignore_index=True))
    own = np.flatnonzero(mixed["dataset"] == "rte")
    assert own.min() < 50 and own.max() > 450  # spread over the whole file
    assert abs(np.mean(own < 250) - 0.5) < 0.15
    # one order per data seed, whatever the run seed
    assert mixed.equals(training_mixture(cfg.with_overrides(["mixture_order=shuffled", "seeds=[7]"]), "en"))
    other = training_mixture(cfg.with_overrides(["mixture_order=shuffled", "data_seed=1"]), "en")
    assert not other["id"].equals(mixed["id"])
    # recorded in the run hash only when set, so the runs stored before the setting keep their hash
    assert cfg.with_overrides(["mixture_order=train_first"]).run_hash() == cfg.run_hash()
    assert cfg.with_overrides(["mixture_order=shuffled"]).run_hash() != cfg.run_hash()


def test_extra_data_larger_than_available_is_a_clear_error():
    cfg = SweepConfig(models=["m"], languages=["en"], extra_data={"name": "sick", "size": 10**6})
    with pytest.raises(ValueError, match="extra_data.size"):
        training_mixture(cfg, "en")


def test_russian_mixture_and_evaluation_sets():
    cfg = SweepConfig(models=["m"], languages=["ru"], train_size=50)
    mix = training_mixture(cfg, "ru")
    assert len(mix) == 50 and set(mix["dataset"]) == {"terra"}
    sets = evaluation_sets(cfg, "ru")
    assert list(sets) == ["validation", "lidirus"] and len(sets["lidirus"]) == 1104


@pytest.mark.parametrize("share", [0.25, 0.5, 0.75])
def test_presence_controls_the_share(share):
    frame = pd.DataFrame({"id": [str(i) for i in range(400)]})
    has = np.arange(400) % 3 == 0  # 134 carry the feature
    out = with_presence(frame, has, share, 120, seed=0)
    assert len(out) == 120 and out["has_feature"].mean() == pytest.approx(share, abs=1 / 120)
    assert out["id"].is_unique
    assert (has[out["id"].astype(int)] == out["has_feature"]).all()


def test_presence_takes_the_largest_subset_or_refuses():
    frame = pd.DataFrame({"id": [str(i) for i in range(100)]})
    has = np.arange(100) < 10
    assert len(with_presence(frame, has, 0.5, None, 0)) == 20
    with pytest.raises(ValueError, match="only 10 carry it"):
        with_presence(frame, has, 0.5, 60, 0)


def test_batch_order_is_seeded_and_bucketing_reduces_padding():
    import torch

    lengths = np.random.default_rng(0).integers(10, 128, size=1000)
    order = lambda seed, b: batch_order(lengths, 16, torch.Generator().manual_seed(seed), bucketing=b)  # noqa: E731
    a, b = order(0, False), order(0, False)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not np.array_equal(np.concatenate(a), np.concatenate(order(1, False)))
    for batches in (a, order(0, True)):
        assert sorted(np.concatenate(batches).tolist()) == list(range(1000))
    padded = lambda bs: sum(len(x) * lengths[x].max() for x in bs)  # noqa: E731
    assert padded(order(0, True)) < 0.8 * padded(a)


@pytest.mark.slow
def test_presence_mixture_with_the_rule_annotator():
    cfg = SweepConfig(models=["m"], languages=["en"], train_size=40, presence={"feature": "Negation", "share": 0.5})
    mix = training_mixture(cfg, "en")
    assert len(mix) == 40 and mix["has_feature"].sum() == 20
    from diagnostics.annotate import annotate

    check = annotate(mix, "en", presence=True)["auto_features"]
    assert [("Negation" in f) for f in check] == mix["has_feature"].tolist()
