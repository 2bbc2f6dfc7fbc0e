"""Runner mechanics: judging MFT / INV / DIR, failure rates, seed statistics, and a real transformers model."""

import numpy as np
import pandas as pd
import pytest
from scipy.stats import pearsonr

from diagnostics.behave import (Case, failure_rates, generate_suite, generate_suites, rs_corr, run_suite, run_sweep,
                                save_suite, summarise_across_seeds)
from diagnostics.behave import LexicalOverlapPredictor

E, N = "entailment", "not_entailment"


def _case(i, type_, premise, hypothesis, label=None, original=None, test="t", capability="Negation"):
    extra = {} if type_ == "MFT" else dict(original_premise=original[0], original_hypothesis=original[1],
                                           expectation={"INV": "same_prediction", "DIR": "entailment_must_not_stay"}[type_])
    return Case(id=f"c{i}", language="en", test=test, capability=capability, type=type_, premise=premise,
                hypothesis=hypothesis, label=label, **extra)


HAND = [
    _case(0, "MFT", "p0", "h0", label=E, test="m1"),
    _case(1, "MFT", "p1", "h1", label=N, test="m1"),
    _case(2, "MFT", "p2", "h2", label=N, test="m1"),
    _case(3, "INV", "p3x", "h3", original=("p0", "h0"), test="i1", capability="Typos"),
    _case(4, "INV", "p4x", "h4", original=("p1", "h1"), test="i1", capability="Typos"),
    _case(5, "DIR", "p0", "h0neg", original=("p0", "h0"), test="d1"),
    _case(6, "DIR", "p1", "h1neg", original=("p1", "h1"), test="d1"),
]
TABLE = {("p0", "h0"): E, ("p1", "h1"): E, ("p2", "h2"): N, ("p3x", "h3"): N, ("p4x", "h4"): E,
         ("p0", "h0neg"): E, ("p1", "h1neg"): N}


def lookup(premises, hypotheses):
    return [TABLE[(p, h)] for p, h in zip(premises, hypotheses)]


def test_hand_computed_outcomes():
    results = run_suite(HAND, lookup)
    # c0 right, c1 wrong, c2 right; c3 flips E->N (fail), c4 stays E (pass); c5 E stays E (fail), c6 E->N (pass)
    assert results["failed"].tolist() == [False, True, False, True, False, True, False]
    assert results["original_prediction"].tolist()[3:] == [E, E, E, E]
    rates = failure_rates(results, by="test").set_index("test")["failure_rate"]
    assert rates.to_dict() == pytest.approx({"m1": 1 / 3, "i1": 0.5, "d1": 0.5})
    by_cap = failure_rates(results, by="capability").set_index("capability")
    assert by_cap.loc["Negation", "failures"] == 2 and by_cap.loc["Negation", "n"] == 5
    assert failure_rates(results, by="language")["failure_rate"].item() == pytest.approx(3 / 7)


def test_predictor_output_is_checked():
    with pytest.raises(ValueError, match="expected 'entailment'"):
        run_suite(HAND, lambda p, h: ["yes"] * len(p))
    with pytest.raises(ValueError, match="returned 1 predictions"):
        run_suite(HAND, lambda p, h: [E])


def test_always_entailment_on_generated_suites():
    results = run_suite(generate_suites(seed=0, max_per_test=5), lambda p, h: [E] * len(p))
    for (test_type, test), block in results.groupby(["type", "test"]):
        if test_type == "MFT":
            assert block["failed"].tolist() == (block["label"] == N).tolist()
        else:
            assert block["failed"].all() == (test_type == "DIR") and block["failed"].any() == (test_type == "DIR")


def test_lexical_overlap_fails_negated_premises_everywhere():
    cases = generate_suites(seed=0, max_per_test=10)
    rates = failure_rates(run_suite(cases, LexicalOverlapPredictor()), by="test")
    negation = rates[rates["test"] == "negation_mft"].set_index("language")["failure_rate"]
    assert (negation == 1.0).all() and len(negation) == 5  # every hypothesis word is in the negated premise


def _noisy(seed, flip):
    rng = np.random.default_rng(seed)

    def predict(premises, hypotheses):
        return [N if rng.random() < flip else E for _ in premises]
    return predict


def test_summary_across_seeds_matches_numpy_and_scipy():
    cases = generate_suite("en", seed=0, max_per_test=15)
    runs = {f"seed={k}": _noisy(k, 0.3 + 0.1 * k) for k in range(3)}
    results = run_sweep(cases, runs)
    assert sorted(results["seed"].unique()) == [0, 1, 2]
    summary = summarise_across_seeds(results, by="test")
    wide = failure_rates(results, by="test").pivot(index="seed", columns="test", values="failure_rate")
    row = summary.rates.set_index("test").loc["negation_mft"]
    assert row["mean"] == pytest.approx(wide["negation_mft"].mean())
    assert row["std"] == pytest.approx(np.std(wide["negation_mft"].to_numpy(), ddof=1))
    assert row["n_seeds"] == 3
    expected = np.mean([pearsonr(wide.iloc[i], wide.iloc[j])[0] for i, j in [(0, 1), (0, 2), (1, 2)]])
    stability = summary.stability.iloc[0]
    assert stability["rs_corr"] == pytest.approx(expected) and stability["n_pairs"] == 3
    assert stability["n_groups"] == wide.shape[1]


def test_rs_corr_skips_constant_vectors():
    value, pairs = rs_corr(np.array([[0.1, 0.5, 0.9], [0.2, 0.4, 0.8], [0.5, 0.5, 0.5]]))
    assert pairs == 1 and value == pytest.approx(pearsonr([0.1, 0.5, 0.9], [0.2, 0.4, 0.8])[0])
    assert np.isnan(rs_corr(np.ones((2, 3)))[0])


def test_summary_requires_seeds():
    with pytest.raises(ValueError, match="seed"):
        summarise_across_seeds(run_suite(HAND, lookup))


@pytest.fixture(scope="module")
def tiny_runs(tmp_path_factory):
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from diagnostics.models import tiny_random_model

    root = tmp_path_factory.mktemp("behave")
    base = tiny_random_model(root / "tiny", seed=0)
    tokenizer = AutoTokenizer.from_pretrained(base)
    runs = []
    for seed in (0, 1, 2):
        import torch

        torch.manual_seed(seed)
        model = AutoModelForSequenceClassification.from_pretrained(base, num_labels=2)
        if seed == 2:  # a top-1 "fine-tuned" seed: its last layer differs from the others'
            with torch.no_grad():
                model.bert.encoder.layer[-1].output.dense.weight.mul_(3.0)
        run = root / "runs" / "demo" / "en" / "tiny" / f"seed={seed}"
        model.save_pretrained(run / "checkpoint")
        tokenizer.save_pretrained(run / "checkpoint")
        runs.append(run)
    return runs


@pytest.mark.slow
def test_tiny_transformers_models_across_seeds(tiny_runs, tmp_path):
    cases = generate_suite("ru", seed=0, max_per_test=4) + generate_suite("sv", seed=0, max_per_test=4)
    suite = save_suite(cases, tmp_path / "s.jsonl")
    results = run_sweep(suite, tiny_runs, batch_size=16)
    assert len(results) == 3 * len(cases)
    assert set(results["prediction"]) <= {E, N}
    assert results[["experiment", "model"]].drop_duplicates().values.tolist() == [["demo", "tiny"]]
    assert sorted(results["seed"].unique()) == [0, 1, 2]
    # each folder through run_suite alone gives the same judgements as the one-pass sweep, whose later seeds
    # start from the first seed's hidden states (shared lower layers)
    for seed, run in enumerate(tiny_runs):
        again = run_suite(cases, run, batch_size=16)
        ours = results[results["seed"] == seed].reset_index(drop=True)
        pd.testing.assert_frame_equal(again, ours[again.columns])
    assert not results[results["seed"] == 2]["prediction"].equals(results[results["seed"] == 0]["prediction"])
    summary = summarise_across_seeds(results, by="capability")
    assert set(summary.stability["language"]) == {"ru", "sv"}
    assert (summary.rates["n_seeds"] == 3).all()
