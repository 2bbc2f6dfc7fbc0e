"""How many of the paper's numbers would lie outside our intervals by chance, with its spread: a simulation.

"By chance" means: the study's numbers come from the same distribution as ours, and differ only by their seeds. The
rows are not independent (the four Conditionals runs of §5.2 are placed in one interval; the σ ranges of Table 6
read the same languages; §5.1's numbers all come from one run per language), so the count of rows outside is not a
sum of independent coin flips, and its spread is what says whether a count is surprising.

Each simulated replication draws, for every (experiment, language) the rows read, a study of ``n_paper`` runs and a
store of ours with our number of runs from a normal model of our runs: their mean and their covariance across
categories (:func:`~diagnostics.paper._draws.simulate_store`). The study's number is then its statistic on
the simulated study (a single-run number: its run with the printed seed index, the same run for every number of
that seed), our interval is built on the simulated store by the method of the row
(:func:`~diagnostics.paper._intervals.row_interval`), and the row is outside or not. The count over rows, per
replication, is the null distribution of the count: its mean, and the range that holds 90 % or 95 % of it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._draws import StoreValues, simulate_store
from ._intervals import NOISE, RecordingDraws, row_interval, statistic_draws
from ._samplers import RUN_VALUES, SAMPLERS
from ._view import StoreView

#: How many runs per setting the study had (§4: seeds 0-5).
PAPER_SEEDS = 6


def _paper_value(draws, view: StoreView, row) -> np.ndarray:
    """The study's number of one row on each simulated study."""
    if row.statistic in RUN_VALUES and not pd.isna(row.seed):
        return RUN_VALUES[row.statistic](draws, view, row).run(int(row.seed))
    values, _ = statistic_draws(draws, view, row)
    return values


def simulate_outside(view: StoreView, store: StoreValues, rows: list, level: float, n_sim: int, seed: int,
                     n_paper: int = PAPER_SEEDS) -> np.ndarray:
    """Whether each row's number lies outside its interval, in each of ``n_sim`` replications under the null.

    Parameters
    ----------
    view : StoreView
        The model's scores.
    store : StoreValues
        The model's runs as arrays.
    rows : list of namedtuple
        Rows of :func:`~diagnostics.paper.paper_numbers` that have an interval on ``store``.
    level : float
        Level of the intervals.
    n_sim : int
        Replications.
    seed : int
        Seed of the simulation: the same seed gives the same replications.
    n_paper : int
        Runs per setting of the simulated study.

    Returns
    -------
    numpy.ndarray of bool, shape (n_sim, len(rows))
        True where the row is outside; a replication where the row's interval or number is undefined or has no
        width counts as not outside.
    """
    used = []
    for row in rows:
        recorder = RecordingDraws(store)
        with np.errstate(all="ignore"):
            row_interval(recorder, view, row, level)
            if row.statistic in RUN_VALUES and not pd.isna(row.seed):
                RUN_VALUES[row.statistic](recorder, view, row)
            elif row.statistic in SAMPLERS:
                statistic_draws(recorder, view, row)
        used.extend(k for k in recorder.used if k not in used)
    paper = simulate_store(store, used, n_paper, n_sim, seed, "paper")
    ours = simulate_store(store, used, {k: store.get(*k).n_seeds for k in used}, n_sim, seed, "ours")
    outside = np.zeros((n_sim, len(rows)), dtype=bool)
    for j, row in enumerate(rows):
        with np.errstate(all="ignore"):
            found = row_interval(ours, view, row, level)
            value = _paper_value(paper, view, row)
        low, high = found["low"], found["high"]
        valid = np.isfinite(low) & np.isfinite(high) & np.isfinite(value) & (high - low > NOISE)
        outside[:, j] = valid & ((value < low) | (value > high))
    return outside


def count_summary(outside: np.ndarray, observed: int) -> dict:
    """The null distribution of a count of rows outside, summarised.

    Parameters
    ----------
    outside : numpy.ndarray of bool, shape (n_sim, n_rows)
        Per replication and row, whether the row is outside (:func:`simulate_outside`).
    observed : int
        How many of those rows are outside in the store.

    Returns
    -------
    dict
        ``expected_outside`` (mean count), ``range_90_low`` / ``range_90_high`` (5th and 95th percentile of the
        count), ``range_95_low`` / ``range_95_high`` (2.5th and 97.5th), ``share_at_least`` (share of replications
        with at least ``observed`` rows outside: how surprising the observed count is) and ``n_sim``.
    """
    counts = outside.sum(axis=1)
    if not len(counts):
        nan = float("nan")
        return {"expected_outside": nan, "range_90_low": nan, "range_90_high": nan, "range_95_low": nan,
                "range_95_high": nan, "share_at_least": nan, "n_sim": 0}
    q = np.quantile(counts, [0.05, 0.95, 0.025, 0.975], method="inverted_cdf")
    return {"expected_outside": float(counts.mean()), "range_90_low": int(q[0]), "range_90_high": int(q[1]),
            "range_95_low": int(q[2]), "range_95_high": int(q[3]),
            "share_at_least": float((counts >= observed).mean()), "n_sim": len(counts)}
