"""Diagnostic categories of a dataset as an examples x categories indicator matrix."""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from ..core.taxonomy import COARSE, COARSE_OF, FINE
from ..data import DataRef


@lru_cache(maxsize=16)
def _load(ref: DataRef, stamp: tuple) -> pd.DataFrame:
    """The table of a dataset reference, cached on the reference's value (and its file's size and time)."""
    from ..data import load

    return load(ref)


def _stamp(path: str | None) -> tuple:
    """Size and modification time of a user file (part of the cache key: an edited file reloads)."""
    if path is None:
        return ()
    try:
        stat = Path(path).stat()
    except OSError:
        return ()
    return stat.st_size, stat.st_mtime_ns


def dataset_frame(dataset: str | DataRef | pd.DataFrame) -> pd.DataFrame:
    """The dataset as a DataFrame with an ``id`` column (loaded by reference and cached, or passed through).

    Parameters
    ----------
    dataset : str or DataRef or pandas.DataFrame
        A registered dataset name (``axb``, ``lidirus`` ...), a reference to one (a user file travels as
        ``DataRef(name, "test", path)``), or an already loaded table.

    Returns
    -------
    pandas.DataFrame
        Do not modify the returned frame: loaded datasets are cached.

    Raises
    ------
    KeyError
        Unknown dataset name.
    FileNotFoundError
        A user-supplied dataset named without its file.
    ValueError
        A DataFrame without an ``id`` column.
    """
    if isinstance(dataset, pd.DataFrame):
        if "id" not in dataset.columns:
            raise ValueError(f"a dataset table needs an 'id' column, found columns {list(dataset.columns)}")
        return dataset
    ref = dataset if isinstance(dataset, DataRef) else DataRef(str(dataset))
    return _load(ref, _stamp(ref.path))


def category_matrix(dataset: str | DataRef | pd.DataFrame, level: str = "fine",
                    ids: np.ndarray | None = None) -> tuple[list[str], np.ndarray]:
    """Indicator matrix of diagnostic categories.

    Parameters
    ----------
    dataset : str or DataRef or pandas.DataFrame
        Registered name, a reference (see :func:`dataset_frame`) or a table with ``id`` and ``features`` (lists
        of canonical fine names).
    level : {"fine", "coarse"}
        Fine categories (taxonomy order, 33) or coarse ones (4). An example belongs to a coarse category when
        it has any of its fine features (GLUE convention).
    ids : array of str, optional
        Row order of the matrix; default the dataset order. Ids absent from the dataset raise ``KeyError``.

    Returns
    -------
    names : list of str
        Categories present in the dataset (at least one example), taxonomy order.
    matrix : numpy.ndarray of bool, shape (n_examples, n_categories)
    """
    frame = dataset_frame(dataset)
    if level not in ("fine", "coarse"):
        raise ValueError(f"level must be 'fine' or 'coarse', found {level!r}")
    if "features" not in frame.columns:
        return [], np.zeros((len(frame) if ids is None else len(ids), 0), dtype=bool)
    features = frame["features"]
    if ids is not None:
        index = pd.Index(frame["id"].astype(str))
        pos = index.get_indexer(np.asarray(ids, dtype=str))
        if (pos < 0).any():
            raise KeyError(f"example ids not in the dataset: {[str(i) for i in np.asarray(ids)[pos < 0][:5]]}")
        features = features.iloc[pos]
    names = FINE if level == "fine" else COARSE
    column = {name: j for j, name in enumerate(names)}
    matrix = np.zeros((len(features), len(names)), dtype=bool)
    for i, feats in enumerate(features):
        for fine in feats if feats is not None else ():
            matrix[i, column[fine if level == "fine" else COARSE_OF[fine]]] = True
    keep = matrix.any(axis=0)
    return [n for n, k in zip(names, keep) if k], matrix[:, keep]


def dataset_for(dataset: str | DataRef | pd.DataFrame | Mapping | None, name: str) -> str | DataRef | pd.DataFrame:
    """The category source of the table rows whose ``dataset`` column is ``name``.

    Parameters
    ----------
    dataset : str, DataRef, pandas.DataFrame, mapping or None
        What the caller was given: ``None`` (each row's own dataset name), one source for every row, or a mapping
        from dataset name to its source (a ``DataRef`` carrying a user file, or a table; names it lacks use their
        own name).
    name : str
        A value of the table's ``dataset`` column.

    Returns
    -------
    str or DataRef or pandas.DataFrame
        A registered dataset name, a reference or a loaded table, for :func:`dataset_frame`.
    """
    if dataset is None:
        return name
    if isinstance(dataset, Mapping):
        return dataset.get(name, name)
    return dataset


def dataset_frames(predictions: pd.DataFrame,
                   dataset: str | DataRef | pd.DataFrame | Mapping | None) -> dict[str, pd.DataFrame] | None:
    """The datasets to check a predictions table against, when the caller names them.

    Parameters
    ----------
    predictions : pandas.DataFrame
        The predictions table (its ``dataset`` column gives the names).
    dataset : str, DataRef, pandas.DataFrame, mapping or None
        As in :func:`dataset_for`.

    Returns
    -------
    dict of str to pandas.DataFrame or None
        Dataset name -> its table, for :func:`~diagnostics.stats.validate_predictions`; ``None`` when
        ``dataset`` is ``None`` (each row is checked against the dataset it names).
    """
    if isinstance(dataset, Mapping):
        return {k: dataset_frame(v) for k, v in dataset.items()}
    if dataset is not None:
        return {name: dataset_frame(dataset) for name in pd.unique(predictions["dataset"].astype(str))}
    return None
