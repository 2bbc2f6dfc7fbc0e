"""Synthetic diagnostic sets and predictions tables for the explorer's tests (no model, no annotator run)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from diagnostics.core.schema import ENTAILMENT, NOT_ENTAILMENT
from diagnostics.core.taxonomy import FINE

WORDS = ("the cat dog sat on a mat under table every some no not never quickly big small red house river "
         "teacher student wrote read book letter gave him her to after before until because").split()


def synthetic_dataset(name: str, n: int, seed: int = 0, n_categories: int = 12) -> pd.DataFrame:
    """A diagnostic set: ``n`` pairs (a sentence and an edited copy) with 1-3 fine features each."""
    rng = np.random.default_rng(seed)
    categories = list(FINE[:n_categories])
    premises, hypotheses, features = [], [], []
    for _ in range(n):
        words = list(rng.choice(WORDS, int(rng.integers(6, 22))))
        premises.append(" ".join(words).capitalize() + ".")
        words[int(rng.integers(len(words)))] = str(rng.choice(WORDS))
        hypotheses.append(" ".join(words).capitalize() + ".")
        features.append(sorted(set(rng.choice(categories, int(rng.integers(1, 4)))), key=FINE.index))
    return pd.DataFrame({"id": [f"{name}-{i}" for i in range(n)], "premise": premises, "hypothesis": hypotheses,
                         "label": rng.choice([ENTAILMENT, NOT_ENTAILMENT], n), "features": features,
                         "dataset": name})


def synthetic_predictions(datasets: dict[str, tuple[str, pd.DataFrame]], seeds=(0, 1, 2),
                          experiments=("base",), seed: int = 1, flip: float = 0.15) -> pd.DataFrame:
    """Seeds that mostly agree: a per-example guess (right 65 % of the time) flipped per seed with ``flip``.

    ``datasets`` maps a language to (dataset name, dataset frame).
    """
    rng = np.random.default_rng(seed)
    parts = []
    for experiment in experiments:
        for language, (name, frame) in datasets.items():
            gold = (frame["label"] == ENTAILMENT).to_numpy()
            guess = np.where(rng.random(len(frame)) < 0.65, gold, ~gold)
            for s in seeds:
                entail = guess ^ (rng.random(len(frame)) < flip)
                probability = np.clip(np.where(entail, 0.5 + rng.random(len(frame)) * 0.45,
                                               0.5 - rng.random(len(frame)) * 0.45), 0, 1).round(4)
                parts.append(pd.DataFrame({
                    "experiment": experiment, "language": language, "model": "m", "seed": s, "dataset": name,
                    "example_id": frame["id"].to_numpy(), "label": frame["label"].to_numpy(),
                    "prediction": np.where(entail, ENTAILMENT, NOT_ENTAILMENT), "probability": probability}))
    return pd.concat(parts, ignore_index=True)


def fake_annotations(frame: pd.DataFrame, seed: int = 5) -> list[list[str]]:
    """Annotator features: the gold ones, some dropped (stands in for the rule annotator's output)."""
    rng = np.random.default_rng(seed)
    return [[f for f in fs if rng.random() < 0.7] for fs in frame["features"]]


def category_members(dataset: pd.DataFrame, category: str) -> set[str]:
    return set(dataset.loc[dataset["features"].map(lambda f: category in f), "id"])


def check_listing(listing: pd.DataFrame, predictions, dataset, annotations, language, experiment, category,
                   flipping_only=False):
    """The listed examples are the category's examples of that setting, with each seed's prediction."""
    rows = predictions[(predictions["language"] == language) & (predictions["experiment"] == experiment)]
    by_id = {i: g.set_index("seed") for i, g in rows.groupby("example_id")}
    expected = category_members(dataset, category)
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


def explorer_inputs():
    """Predictions of two languages (en with a second experiment), their datasets and fake annotations."""
    en, ru = synthetic_dataset("syn_en", 120, seed=0), synthetic_dataset("syn_ru", 100, seed=1)
    base = synthetic_predictions({"en": ("syn_en", en), "ru": ("syn_ru", ru)})
    extra = synthetic_predictions({"en": ("syn_en", en)}, experiments=("extra-100",), seed=2)
    predictions = pd.concat([base, extra], ignore_index=True)
    datasets = {"syn_en": en, "syn_ru": ru}
    annotations = {"syn_en": fake_annotations(en), "syn_ru": fake_annotations(ru)}
    return predictions, datasets, annotations


#: The two categories of the hand-built pair.
CAT_1, CAT_2 = FINE[0], FINE[1]
#: The hand-built pair of the comparison tests: example -> (gold, categories, which of A's three seeds are right,
#: which of B's three seeds are right, outcome)
KNOWN = {
    "h0": ("e", [CAT_1], "111", "111", "correct_both"),
    "h1": ("n", [CAT_1], "000", "111", "fixed"),
    "h2": ("e", [CAT_1], "111", "000", "broken"),
    "h3": ("n", [CAT_1, CAT_2], "110", "111", "unstable"),  # A flips
    "h4": ("e", [CAT_1, CAT_2], "111", "100", "unstable"),  # B flips
    "h5": ("n", [CAT_2], "100", "011", "unstable"),  # both flip
    "h6": ("e", [CAT_2], "000", "000", "wrong_both"),
    "h7": ("e", [CAT_2], "000", "111", "fixed"),
    "h8": ("n", [CAT_2], "000", "111", "fixed"),
    "h9": ("e", [CAT_2], "111", "111", "correct_both"),
}
#: Which side flips on the unstable examples.
FLIPS = {"h3": "A", "h4": "B", "h5": "A and B"}
#: The gold labels of KNOWN.
GOLD = {"e": ENTAILMENT, "n": NOT_ENTAILMENT}


def hand_dataset() -> pd.DataFrame:
    """The dataset of the hand-built pair (KNOWN): ten examples in two categories."""
    ids = list(KNOWN)
    return pd.DataFrame({"id": ids, "premise": [f"Premise of {i}." for i in ids],
                         "hypothesis": [f"Hypothesis of {i}." for i in ids],
                         "label": [GOLD[KNOWN[i][0]] for i in ids], "features": [KNOWN[i][1] for i in ids],
                         "dataset": "hand"})


def hand_table(side: int, probability: bool = True) -> pd.DataFrame:
    """One imported system's table: three seeds, right where KNOWN says (both systems: experiment=imported)."""
    rows = []
    for example_id, spec in KNOWN.items():
        gold = GOLD[spec[0]]
        wrong = NOT_ENTAILMENT if gold == ENTAILMENT else ENTAILMENT
        for seed, right in enumerate(spec[2 + side]):
            prediction = gold if right == "1" else wrong
            row = {"experiment": "imported", "language": "en", "model": "imported", "seed": seed,
                   "dataset": "hand", "example_id": example_id, "label": gold, "prediction": prediction}
            if probability:
                row["probability"] = 0.8 if prediction == ENTAILMENT else 0.3 - 0.1 * seed
            rows.append(row)
    return pd.DataFrame(rows)


def hand_pair():
    """The hand-built pair of imported tables compared, and its dataset."""
    from diagnostics import explorer as ex

    dataset = hand_dataset()
    pair = ex.build_comparison(hand_table(0), hand_table(1), {"hand": dataset}, names=("bert", "roberta"),
                               annotations=False)
    return pair, dataset


def comparison_store():
    """A run-store-like explorer (en with a second experiment of four seeds, ru), its predictions and datasets."""
    from diagnostics import explorer as ex

    en, ru = synthetic_dataset("syn_en", 120, seed=0), synthetic_dataset("syn_ru", 100, seed=1)
    predictions = pd.concat([synthetic_predictions({"en": ("syn_en", en), "ru": ("syn_ru", ru)}),
                             synthetic_predictions({"en": ("syn_en", en)}, experiments=("extra-100",), seed=2,
                                                   seeds=(0, 1, 2, 3))], ignore_index=True)
    datasets = {"syn_en": en, "syn_ru": ru}
    model = ex.build_explorer(predictions, datasets,
                              annotations={"syn_en": fake_annotations(en), "syn_ru": fake_annotations(ru)})
    return model, predictions, datasets
