"""Instance-level agreement between seeds: pairwise agreement rate and Fleiss' kappa, per category."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..core.schema import ENTAILMENT
from ._categories import category_matrix, dataset_for, dataset_frame
from ._scores import ALL
from ._table import SETTING_KEYS


def fleiss_kappa_from_counts(counts) -> float:
    """Fleiss' kappa from a subjects x classes table of rating counts.

    Parameters
    ----------
    counts : array_like, shape (n_subjects, n_classes)
        ``counts[i, j]`` raters put subject i in class j; every row sums to the same number of raters (>= 2).

    Returns
    -------
    float
        (P_bar - P_e) / (1 - P_e); NaN when P_e == 1 (every rating in one class: chance agreement is total).

    References
    ----------
    Fleiss, J. L. (1971). Measuring nominal scale agreement among many raters. Psychological Bulletin 76(5).
    """
    table = np.asarray(counts, dtype=np.float64)
    if table.ndim != 2 or table.shape[0] == 0:
        raise ValueError(f"counts must be a non-empty (n_subjects, n_classes) table, found shape {table.shape}")
    raters = table.sum(axis=1)
    if not np.allclose(raters, raters[0]) or raters[0] < 2:
        raise ValueError("every subject needs the same number (>= 2) of ratings")
    n = raters[0]
    p_j = table.sum(axis=0) / table.sum()
    p_i = ((table * table).sum(axis=1) - n) / (n * (n - 1))
    p_bar, p_e = p_i.mean(), (p_j * p_j).sum()
    return float("nan") if np.isclose(p_e, 1.0) else float((p_bar - p_e) / (1 - p_e))


def fleiss_kappa(ratings) -> float:
    """Fleiss' kappa of an examples x raters matrix of labels (any hashable labels).

    Parameters
    ----------
    ratings : array_like, shape (n_examples, n_raters)
        Here: predictions of each seed (rater) on each example.

    Returns
    -------
    float
        See :func:`fleiss_kappa_from_counts`.
    """
    arr = np.asarray(ratings)
    if arr.ndim != 2:
        raise ValueError(f"ratings must be (n_examples, n_raters), found shape {arr.shape}")
    _, codes = np.unique(arr, return_inverse=True)
    codes = codes.reshape(arr.shape)
    counts = np.stack([(codes == c).sum(axis=1) for c in range(codes.max() + 1)], axis=1)
    return fleiss_kappa_from_counts(counts)


def pairwise_agreement(ratings) -> float:
    """Compute the mean over rater pairs of the share of examples on which both give the same label.

    Parameters
    ----------
    ratings : array_like, shape (n_examples, n_raters)
        Labels of each rater (any hashable values); at least two raters.

    Returns
    -------
    float
        Observed agreement, in [0, 1].

    Raises
    ------
    ValueError
        When ``ratings`` is not 2-D with at least two columns.
    """
    arr = np.asarray(ratings)
    if arr.ndim != 2 or arr.shape[1] < 2:
        raise ValueError(f"ratings must be (n_examples, n_raters >= 2), found shape {arr.shape}")
    _, codes = np.unique(arr, return_inverse=True)
    codes = codes.reshape(arr.shape)
    k = arr.shape[1]
    counts = np.stack([(codes == c).sum(axis=1) for c in range(codes.max() + 1)], axis=1).astype(np.float64)
    # agreeing ordered pairs of raters per example / all ordered pairs
    return float((((counts * (counts - 1)).sum(axis=1)) / (k * (k - 1))).mean())


def binary_agreement(predictions: np.ndarray, categories: np.ndarray) -> dict[str, np.ndarray]:
    """Pairwise agreement and Fleiss' kappa of binary predictions in every category at once.

    Parameters
    ----------
    predictions : numpy.ndarray, shape (n_examples, n_raters)
        0/1 predictions of each seed.
    categories : numpy.ndarray of bool, shape (n_examples, n_categories)

    Returns
    -------
    dict
        ``n, agreement, kappa`` arrays of shape (n_categories,); kappa is NaN where every prediction in the
        category is the same class.
    """
    pred = np.asarray(predictions, dtype=np.float64)
    k = pred.shape[1]
    if k < 2:
        raise ValueError("agreement needs at least two seeds")
    m = np.asarray(categories, dtype=np.float64)
    pos = pred.sum(axis=1)
    per_example = (pos * (pos - 1) + (k - pos) * (k - pos - 1)) / (k * (k - 1))
    n = m.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        p_bar = (m.T @ per_example) / n
        p_pos = (m.T @ pos) / (n * k)
        p_e = p_pos ** 2 + (1 - p_pos) ** 2
        kappa = np.where(np.isclose(p_e, 1.0), np.nan, (p_bar - p_e) / (1 - p_e))
    return {"n": n, "agreement": p_bar, "kappa": kappa}


def agreement(predictions: pd.DataFrame, dataset=None, by: str = "category") -> pd.DataFrame:
    """Agreement between the seeds of each setting, per category and over all examples.

    Parameters
    ----------
    predictions : pandas.DataFrame
        A validated predictions table.
    dataset : str, DataRef, DataFrame or mapping, optional
        Category source: one for every setting, or dataset name -> source (see
        :func:`~diagnostics.stats.dataset_for`; default: each setting's dataset by name).
    by : {"category", "coarse"}
        Fine or coarse categories.

    Returns
    -------
    pandas.DataFrame
        Setting keys, ``level, category, n, n_seeds, agreement`` (mean pairwise agreement rate between seeds),
        ``kappa`` (Fleiss' kappa, seeds as raters). Settings with one seed are skipped. Only examples predicted
        by every seed of the setting are used.
    """
    if by not in ("category", "coarse"):
        raise ValueError(f"by must be 'category' or 'coarse', found {by!r}")
    seed_cols = ["pretrain_seed", "seed"] if "pretrain_seed" in predictions.columns else ["seed"]
    parts = []
    for setting, rows in predictions.groupby(list(SETTING_KEYS), sort=False):
        wide = rows.pivot_table(index="example_id", columns=seed_cols, values="prediction", aggfunc="first")
        wide = wide.dropna()
        if wide.shape[1] < 2 or wide.empty:
            continue
        pred = (wide.to_numpy() == ENTAILMENT).astype(np.int8)
        frame = dataset_frame(dataset_for(dataset, setting[3]))
        names, cats = category_matrix(frame, "fine" if by == "category" else "coarse", ids=wide.index.to_numpy())
        cats = np.column_stack([cats, np.ones(len(wide), dtype=bool)])
        res = binary_agreement(pred, cats)
        level = "fine" if by == "category" else "coarse"
        part = pd.DataFrame({"level": [level] * len(names) + ["all"], "category": names + [ALL],
                             "n": res["n"].astype(int), "n_seeds": pred.shape[1], "agreement": res["agreement"],
                             "kappa": res["kappa"]})
        for i, key in enumerate(SETTING_KEYS):
            part.insert(i, key, setting[i])
        parts.append(part)
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(
        columns=[*SETTING_KEYS, "level", "category", "n", "n_seeds", "agreement", "kappa"])
