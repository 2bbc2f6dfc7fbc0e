"""What a run trains on (``_exposure``): counted against the real batch order, and the stopping rules' end step."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from diagnostics.finetune import SweepConfig, load_config
from diagnostics.finetune._batching import bucket_batches
from diagnostics.finetune._exposure import exposure, expected_stop

from _paths import ROOT


def _seen(own: int, total: int, steps: int, shuffled: bool, seed: int, chunk: int = 1000) -> tuple[int, int]:
    """Pairs, and own pairs among them, of the first ``steps`` batches of AllenNLP's order, counted (batch 4)."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(20, 200, size=total)
    is_own = np.arange(total) < own
    if shuffled:  # the mixture file in one seeded random order
        order = rng.permutation(total)
        lengths, is_own = lengths[order], is_own[order]
    pairs, seen, step = 0, 0, 0
    generator = torch.Generator().manual_seed(seed)
    while step < steps:  # epochs follow one another, each in a new order
        for batch in bucket_batches(lengths, 4, generator, chunk=chunk):
            if step == steps:
                break
            pairs += len(batch)
            seen += int(is_own[batch].sum())
            step += 1
    return pairs, seen


@pytest.mark.parametrize("shuffled", [False, True])
@pytest.mark.parametrize("own,total,steps", [(250, 5250, 625), (250, 1250, 700), (2490, 4990, 300)])
def test_expected_own_pairs_match_the_real_batch_order(own, total, steps, shuffled):
    order = "shuffled" if shuffled else "train_first"
    expected = exposure(steps, 4, own, total, order, chunk=1000)
    seen = [_seen(own, total, steps, shuffled, seed) for seed in range(8)]
    assert {pairs for pairs, _ in seen} == {expected.pairs}
    counts = [count for _, count in seen]
    spread = np.std(counts) / np.sqrt(len(counts)) + 1.0
    assert abs(np.mean(counts) - expected.own_pairs) < 4 * spread, (counts, expected)


def test_train_first_reads_the_own_set_first_and_shuffled_its_share():
    # 6,250 steps of 4: the first 25,000 pairs of a 52,490-pair mixture (RTE 2,490 + 50k)
    first = exposure(6250, 4, 2490, 52_490, "train_first")
    mixed = exposure(6250, 4, 2490, 52_490, "shuffled")
    assert first.pairs == mixed.pairs == 25_000
    assert first.own_pairs == 2490  # all of RTE: it sits in the first chunk
    assert mixed.own_pairs == pytest.approx(25_000 * 2490 / 52_490)
    # a recipe that shuffles every epoch whole does not care about the file's order
    whole = exposure(6250, 4, 2490, 52_490, "train_first", in_file_order=False)
    assert whole.own_pairs == pytest.approx(mixed.own_pairs)
    # past one epoch every pair is seen once per epoch
    assert exposure(2 * 13_123, 4, 2490, 52_490, "train_first").own_pairs == 2 * 2490
    with pytest.raises(ValueError, match="unknown mixture order"):
        exposure(10, 4, 1, 2, "rte_last")


def test_stopping_rules_end_runs_where_jiant_would():
    paper = load_config(ROOT / "configs" / "paper.yaml", [])
    size = 2490 + 50_000  # 13,123 steps an epoch, checks every 625
    # ten checks at most: the cap ends the run whatever the scores
    assert expected_stop(paper, size, "russiansuperglue", 5) == 6250
    # no cap: patience 20 ends it when the best check (the fifth) is 21 checks old
    assert expected_stop(paper, size, "jiant_superglue", 5) == 26 * 625
    # one check an epoch, ten at most: fewer checks than patience, so the budget
    assert expected_stop(paper, size, "per_epoch", 5) == 10 * 13_123
    # decays every bad check: lr 1e-5 halves below min_lr 1e-7 at the seventh, before patience runs out
    eager = paper.with_overrides({"lr_patience": 0, "patience": 100})
    assert expected_stop(eager, size, "jiant_superglue", 5) == (5 + 7) * 625
    assert expected_stop(SweepConfig(recipe="jiant", optimizer="bert_adam", max_steps=1000), size, None, 50) == 1000
