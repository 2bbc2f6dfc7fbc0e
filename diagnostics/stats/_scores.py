"""MCC of every run in every diagnostic category, from the predictions table."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from ..core.schema import ENTAILMENT
from ..core.taxonomy import COARSE_OF
from ._categories import category_matrix, dataset_for, dataset_frame, dataset_frames
from ._mcc import binary_counts, mcc_from_counts
from ._table import run_keys, validate_predictions

#: ``category`` value of the paper's overall score (mean of the per-feature MCCs of a run).
OVERALL = "Overall (mean of fine)"
#: ``category`` value of the MCC over all examples of a run, pooled.
ALL = "All examples"
LEVELS = ("fine", "coarse", "overall", "all")


def category_scores(predictions: pd.DataFrame, dataset: str | pd.DataFrame | Mapping | None = None,
                    levels: tuple[str, ...] = LEVELS, validate: bool = True,
                    trust_labels: bool = False) -> pd.DataFrame:
    """MCC per run and diagnostic category, computed for every run at once.

    For each dataset, the predictions become an examples x runs matrix and the confusion counts of all runs
    in all categories are matrix products with the examples x categories indicator matrix.

    Parameters
    ----------
    predictions : pandas.DataFrame
        The predictions table (see :mod:`diagnostics.stats._table`).
    dataset : str, DataFrame or mapping, optional
        Where categories come from: ``None`` loads each value of the ``dataset`` column with
        ``diagnostics.data.load``; a name or a table (``id`` + ``features``) is used for every row; a mapping
        ``dataset name -> name or table`` for user-supplied sets.
    levels : tuple of str
        Any of ``"fine"`` (33 categories), ``"coarse"`` (4; an example counts when it has any of the coarse
        category's features), ``"overall"`` (the paper's overall MCC: the mean of the run's per-feature MCCs)
        and ``"all"`` (MCC over all of the run's examples pooled). Datasets without ``features`` give ``"all"``
        only.
    validate : bool
        Validate the table first (:func:`~diagnostics.stats.validate_predictions`: ids and gold labels checked
        against the dataset).
    trust_labels : bool
        With ``validate``, keep gold labels that differ from the dataset's instead of refusing the table.

    Returns
    -------
    pandas.DataFrame
        One row per run x category: the run keys (``experiment, language, model, dataset``, ``pretrain_seed``
        when present, ``seed``), ``level, category, coarse, n, mcc, accuracy, degenerate``. ``n`` is the number
        of the run's examples in the category. ``degenerate`` marks a single predicted class or a single gold
        class in the category: MCC is then 0 (sklearn's convention). For ``overall`` it is True only when all
        fine categories are degenerate.
    """
    for level in levels:
        if level not in LEVELS:
            raise ValueError(f"levels must be among {LEVELS}, found {level!r}")
    if validate:
        predictions = validate_predictions(predictions, datasets=dataset_frames(predictions, dataset),
                                           trust_labels=trust_labels)
    keys = run_keys(predictions)
    parts = [_dataset_scores(group, dataset_for(dataset, name), keys, levels)
             for name, group in predictions.groupby("dataset", sort=False)]
    return pd.concat(parts, ignore_index=True)


def _dataset_scores(group: pd.DataFrame, source, keys: list[str], levels) -> pd.DataFrame:
    frame = dataset_frame(source)
    ids = pd.Index(frame["id"].astype(str))
    if not ids.is_unique:
        ids = ids.unique()
    row = ids.get_indexer(group["example_id"].to_numpy())
    if (row < 0).any():
        raise KeyError(f"example ids not in dataset: {group['example_id'].to_numpy()[row < 0][:5].tolist()}")
    runs = group[keys].drop_duplicates().reset_index(drop=True)
    col = group.groupby(keys, sort=False).ngroup().to_numpy()
    # the run order of ngroup(sort=False) is the order of first appearance, as in drop_duplicates
    shape = (len(ids), len(runs))
    pred = np.zeros(shape)
    gold = np.zeros(shape)
    valid = np.zeros(shape, dtype=bool)
    pred[row, col] = (group["prediction"].to_numpy() == ENTAILMENT)
    gold[row, col] = (group["label"].to_numpy() == ENTAILMENT)
    valid[row, col] = True

    blocks = []
    fine_names, fine = category_matrix(frame, "fine", ids=ids.to_numpy())
    for level in ("fine", "coarse"):
        if level not in levels and not (level == "fine" and "overall" in levels):
            continue
        names, members = (fine_names, fine) if level == "fine" else category_matrix(frame, "coarse", ids=ids.to_numpy())
        if not names:
            continue
        counts = binary_counts(gold, pred, members, valid)
        blocks.append(_block(level, names, counts, runs))
    out = [b for b in blocks if b["level"].iat[0] in levels]
    if "overall" in levels and blocks and blocks[0]["level"].iat[0] == "fine":
        fine_block = blocks[0]
        present = fine_block[fine_block["n"] > 0]
        agg = present.groupby("_run", sort=True).agg(mcc=("mcc", "mean"), degenerate=("degenerate", "all"))
        agg = agg.reindex(range(len(runs)))
        overall = runs.copy()
        overall["_run"] = np.arange(len(runs))
        overall = overall.assign(level="overall", category=OVERALL, coarse=None, n=overall_n(fine, valid),
                                 mcc=agg["mcc"].to_numpy(), accuracy=np.nan,
                                 degenerate=agg["degenerate"].fillna(True).to_numpy().astype(bool))
        out.append(overall)
    if "all" in levels:
        counts = binary_counts(gold, pred, np.ones((len(ids), 1)), valid)
        out.append(_block("all", [ALL], counts, runs))
    result = pd.concat(out, ignore_index=True).sort_values(["_run"], kind="stable")
    result = result.drop(columns="_run").reset_index(drop=True)
    result["n"] = result["n"].astype("int64")
    return result


def overall_n(members: np.ndarray, valid: np.ndarray | None = None):
    """Count the examples of the overall row (:data:`OVERALL`): those in at least one fine category.

    The overall MCC is the mean of the per-feature MCCs, so it rests on the examples that carry a feature; an
    example without any fine category does not count. Every table with an overall row (``stats``, ``compare``)
    takes its ``n`` from here.

    Parameters
    ----------
    members : numpy.ndarray, shape (n_examples, n_fine)
        Membership of each example in each fine category.
    valid : numpy.ndarray of bool, shape (n_examples, n_runs), optional
        Which examples each run predicted.

    Returns
    -------
    int or numpy.ndarray
        The count; per run when ``valid`` is given.
    """
    in_any = np.asarray(members).astype(bool).any(axis=1)
    if valid is None:
        return int(in_any.sum())
    return (np.asarray(valid, dtype=bool) & in_any[:, None]).sum(axis=0)


def _block(level: str, names: list[str], counts: dict, runs: pd.DataFrame) -> pd.DataFrame:
    mcc, degenerate = mcc_from_counts(counts["tp"], counts["fp"], counts["fn"], counts["tn"])
    n = counts["tp"] + counts["fp"] + counts["fn"] + counts["tn"]
    with np.errstate(invalid="ignore", divide="ignore"):
        accuracy = (counts["tp"] + counts["tn"]) / n
    n_cat, n_run = mcc.shape
    block = runs.iloc[np.tile(np.arange(n_run), n_cat)].reset_index(drop=True)
    block["_run"] = np.tile(np.arange(n_run), n_cat)
    category = np.repeat(np.asarray(names, dtype=object), n_run)
    coarse = category if level == "coarse" else (
        np.array([COARSE_OF[c] for c in category], dtype=object) if level == "fine" else np.full(len(category), None))
    block = block.assign(level=level, category=category, coarse=coarse, n=n.ravel().round().astype("int64"),
                         mcc=mcc.ravel(), accuracy=accuracy.ravel(), degenerate=degenerate.ravel())
    return block[block["n"] > 0]

#: The earlier name of :func:`category_scores`.
mcc_by_category = category_scores
