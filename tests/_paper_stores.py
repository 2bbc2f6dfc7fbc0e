"""Hand-built inputs of the paper stage's tests: category scores by seed, a paper row, the study's recorded run."""

from __future__ import annotations

import collections

import numpy as np
import pandas as pd

from diagnostics.stats import OVERALL

#: One printed number as the paper's statistics read it (the columns of :func:`diagnostics.paper.paper_numbers`).
Row = collections.namedtuple("Row", "statistic experiment reference language category seed kind value")
#: What a run of the study's recipe records beyond the sweep's settings (the resolved schedule and head).
STUDY_RUN = {"val_schedule": "russiansuperglue", "classifier_head": "jiant"}

#: Rows per section, counted by hand in the study's text (reference/paper-numbers.md): one row per printed number,
#: per seed of a value printed for several seeds, per category of a claim, and per end of a σ range.
SECTION_COUNTS = {"§4": 7, "§5.1": 28, "§5.2": 62, "§5.3": 39, "§5.4": 20, "§5.4 probing": 8, "data": 10}


def hand_scores(values: dict, experiment: str = "base", model: str = "m") -> pd.DataFrame:
    """A category_scores table by hand: ``{(language, category): [MCC of seed 0, 1, ...]}`` plus each run's overall
    row (the mean of its categories)."""
    rows = []
    for (language, category), mccs in values.items():
        dataset = {"en": "axb", "ru": "lidirus"}[language]
        for seed, value in enumerate(mccs):
            rows.append({"experiment": experiment, "language": language, "model": model, "dataset": dataset,
                         "seed": seed, "level": "fine", "category": category, "coarse": None, "n": 20, "mcc": value,
                         "accuracy": np.nan, "degenerate": False})
    frame = pd.DataFrame(rows)
    overall = frame.groupby(["experiment", "language", "model", "dataset", "seed"], as_index=False)["mcc"].mean()
    overall = overall.assign(level="overall", category=OVERALL, coarse=None, n=20, accuracy=np.nan, degenerate=False)
    return pd.concat([frame, overall[frame.columns]], ignore_index=True)


def paper_row(frame, statistic, language, category, seed=None):
    """The row of one statistic, language, category and seed (None: the row without a seed) of a comparison."""
    chosen = (frame["statistic"] == statistic) & (frame["language"] == language) & (frame["category"] == category)
    chosen &= frame["seed"].isna() if seed is None else (frame["seed"] == seed)
    return frame[chosen].iloc[0]


def six_seed_predictions() -> pd.DataFrame:
    """Six seeds of en (AX-b) and ru (LiDiRus) base runs of model ``m``, each copying the gold label with probability
    0.7."""
    from _stats_fixtures import synthetic_table

    return pd.concat([synthetic_table("axb", (("base", 0.7),), range(6), "en", seed=1, model="m"),
                      synthetic_table("lidirus", (("base", 0.7),), range(6), "ru", seed=2, model="m")],
                     ignore_index=True)


def probe_rows(language, model, seed, task, best_layer, best, majority=0.6) -> list[dict]:
    """13 layers of one probe: accuracy ``best`` at ``best_layer``, 0.05 lower elsewhere."""
    return [{"language": language, "model": model, "seed": seed, "task": task, "layer": layer, "majority": majority,
             "accuracy": best if layer == best_layer else best - 0.05} for layer in range(13)]
