"""The one predictions table: reading, validation and the keys that identify runs and settings.

Columns (see ``CONTRIBUTING.md``): ``experiment, language, model, seed, dataset, example_id, label,
prediction`` plus optional ``probability`` (P(entailment)) and ``pretrain_seed`` (nested designs).
``label``/``prediction`` are ``"entailment"``/``"not_entailment"``; ``example_id`` matches ``id`` of
``diagnostics.data.load(dataset)``.
"""

from __future__ import annotations

import difflib
import warnings
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from ..core.schema import LABELS
from ..core.schema import PREDICTION_OPTIONAL as OPTIONAL
from ..core.schema import PREDICTION_REQUIRED as REQUIRED
from ..core.tables import read_table
from ..data import DataFormatError
from ..data import shorten as _shorten

#: Columns that identify one setting (everything but the seeds).
SETTING_KEYS = ("experiment", "language", "model", "dataset")


def shorten(value: object) -> str:
    """Shorten a value's ``repr`` for messages (cut when long), numpy scalars shown as plain Python values."""
    return _shorten(value.item() if isinstance(value, np.generic) else value)


def run_keys(frame: pd.DataFrame) -> list[str]:
    """List the columns identifying one run: the setting keys, ``pretrain_seed`` when present, and ``seed``.

    Parameters
    ----------
    frame : pandas.DataFrame
        A predictions table (only its columns are read).

    Returns
    -------
    list of str
        Column names.
    """
    keys = list(SETTING_KEYS)
    if "pretrain_seed" in frame.columns:
        keys.append("pretrain_seed")
    return keys + ["seed"]


def read_predictions(path: str | Path, *, validate: bool = True, check_ids: bool = True, trust_labels: bool = False,
                     datasets: Mapping[str, pd.DataFrame] | None = None) -> pd.DataFrame:
    """Read a predictions table from parquet, CSV/TSV or JSON lines (:func:`diagnostics.core.tables.read_table`).

    Parameters
    ----------
    path : str or Path
        ``.parquet``/``.pq``, ``.csv``, ``.tsv`` or ``.jsonl``/``.ndjson`` file.
    validate : bool
        Run :func:`validate_predictions` (default). Errors name the file and the row.
    check_ids : bool
        Check the table against the dataset each row names: every ``example_id`` exists in
        ``diagnostics.data.load(dataset)`` and, unless ``trust_labels``, every gold ``label`` equals the dataset's.
    trust_labels : bool
        Keep the table's gold labels even where they differ from the dataset's.
    datasets : mapping, optional
        ``dataset name -> DataFrame`` (``id``, ``label``) to check against instead of the registered dataset.

    Returns
    -------
    pandas.DataFrame
        The table with normalised dtypes (``seed`` int, ``example_id`` str).

    Raises
    ------
    DataFormatError
        Unknown file type, an empty, truncated or otherwise unreadable file, or a validation failure (see
        :func:`validate_predictions`); the message names the file.
    FileNotFoundError
        ``path`` does not exist.
    """
    path = Path(path)
    if path.is_dir():
        raise DataFormatError(path, None, "a predictions file", "a folder")
    frame = read_table(path, line_column="_line")
    if not validate:
        return frame.drop(columns=["_line"])
    return validate_predictions(frame, source=path, check_ids=check_ids, trust_labels=trust_labels, datasets=datasets)


def _row_number(frame: pd.DataFrame, position: int, source: str | Path) -> int:
    """The row's line in its file (``_line``, from :func:`~diagnostics.core.tables.read_table`), else its 1-based
    row."""
    if "_line" in frame.columns:
        return int(frame["_line"].iloc[position])
    return position + 1


def validate_predictions(frame: pd.DataFrame, *, source: str | Path = "<predictions>", check_ids: bool = True,
                         datasets: Mapping[str, pd.DataFrame] | None = None,
                         trust_labels: bool = False) -> pd.DataFrame:
    """Check a predictions table and return it with normalised dtypes.

    Besides the format, the table is checked against the dataset each row names (one cached load per dataset):
    every ``example_id`` must exist there and every gold ``label`` must equal the dataset's, so that a table with
    inverted labels, or one whose ``dataset`` column names the wrong set, is refused rather than scored. Runs of
    one experiment, language and model that cover different examples are reported with an
    :class:`ExampleSetWarning` (see :func:`example_set_differences`).

    Parameters
    ----------
    frame : pandas.DataFrame
        The table, one row per (run, example).
    source : str or Path
        Name used in error messages (the file the table came from).
    check_ids : bool
        Check the table against each ``dataset``: ids, and gold labels unless ``trust_labels``.
    datasets : mapping, optional
        ``dataset name -> DataFrame with an id column`` (and ``label``, to check labels) to check against instead
        of ``diagnostics.data.load(name)`` (for user-supplied diagnostic sets).
    trust_labels : bool
        Keep the table's gold labels where they differ from the dataset's (ids are still checked).

    Returns
    -------
    pandas.DataFrame
        A copy with ``seed`` (and ``pretrain_seed``) as int64, ``example_id`` as str, ``probability`` as float,
        and the row order kept.

    Raises
    ------
    DataFormatError
        Missing columns, empty values, non-integer seeds, labels outside ``{entailment, not_entailment}``,
        probabilities outside [0, 1], unknown example ids, gold labels that differ from the dataset's (the message
        counts the rows and shows a few) or duplicated (run, example) rows. The message names ``source``, the row,
        what was expected and what was found.
    """
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"expected a pandas DataFrame, found {type(frame).__name__}")
    missing = [c for c in REQUIRED if c not in frame.columns]
    if missing:
        raise DataFormatError(source, None, f"columns {', '.join(REQUIRED)}",
                              f"no column(s) {', '.join(missing)} (columns: {', '.join(map(str, frame.columns))})")
    if frame.empty:
        raise DataFormatError(source, None, "at least one prediction row", "an empty table")
    out = frame.reset_index(drop=True).copy()
    for column in REQUIRED + tuple(c for c in OPTIONAL if c in out.columns and c != "probability"):
        bad = out[column].isna()
        if bad.any():
            pos = int(np.flatnonzero(bad.to_numpy())[0])
            raise DataFormatError(source, _row_number(out, pos, source), f"a value in column {column!r}", "nothing")
    for column in ("seed", "pretrain_seed"):
        if column not in out.columns:
            continue
        numeric = pd.to_numeric(out[column], errors="coerce")
        ok = numeric.notna() & (numeric == np.round(numeric))
        if not ok.all():
            pos = int(np.flatnonzero(~ok.to_numpy())[0])
            raise DataFormatError(source, _row_number(out, pos, source), f"an integer {column}",
                                  shorten(out[column].iloc[pos]))
        out[column] = numeric.astype("int64")
    for column in ("experiment", "language", "model", "dataset", "example_id"):
        out[column] = out[column].astype(str)
    for column in ("label", "prediction"):
        values = out[column].astype(str)
        ok = values.isin(LABELS)
        if not ok.all():
            pos = int(np.flatnonzero(~ok.to_numpy())[0])
            found = out[column].iloc[pos]
            close = difflib.get_close_matches(str(found).lower(), LABELS, n=1, cutoff=0.5)
            raise DataFormatError(source, _row_number(out, pos, source),
                                  f"{column} in {{entailment, not_entailment}}", shorten(found),
                                  f"did you mean {close[0]!r}?" if close else "")
        out[column] = values
    if "probability" in out.columns:
        prob = pd.to_numeric(out["probability"], errors="coerce")
        bad = prob.notna() & ~prob.between(0.0, 1.0) | (prob.isna() & out["probability"].notna())
        if bad.any():
            pos = int(np.flatnonzero(bad.to_numpy())[0])
            raise DataFormatError(source, _row_number(out, pos, source), "probability in [0, 1]",
                                  shorten(out["probability"].iloc[pos]))
        out["probability"] = prob.astype("float64")
    keys = run_keys(out) + ["example_id"]
    dup = out.duplicated(keys, keep="first")
    if dup.any():
        pos = int(np.flatnonzero(dup.to_numpy())[0])
        row = out.iloc[pos]
        first = int(np.flatnonzero((out[keys] == row[keys]).all(axis=1).to_numpy())[0])
        what = ", ".join(f"{k}={row[k]}" for k in keys)
        raise DataFormatError(source, _row_number(out, pos, source), "one row per (run, example)",
                              f"a duplicate of row {_row_number(out, first, source)} ({what})")
    if check_ids:
        _check_ids(out, source, datasets, trust_labels)
    for message in _example_set_messages(out, source):
        warnings.warn(ExampleSetWarning(message), stacklevel=2)
    return out.drop(columns=["_line"], errors="ignore")


def _check_ids(frame: pd.DataFrame, source: str | Path, datasets: Mapping[str, pd.DataFrame] | None,
               trust_labels: bool = False) -> None:
    from ._categories import dataset_frame

    for name in pd.unique(frame["dataset"]):
        pos = int(np.flatnonzero((frame["dataset"] == name).to_numpy())[0])
        try:
            known = dataset_frame(name if datasets is None or name not in datasets else datasets[name])
        except KeyError:
            raise DataFormatError(source, _row_number(frame, pos, source), "a registered dataset name "
                                  "(see `diagnostics data list`) or datasets= for your own", repr(name)) from None
        except FileNotFoundError:
            raise DataFormatError(source, _row_number(frame, pos, source), f"dataset {name!r} with its file",
                                  "a user-supplied dataset without a file",
                                  f"pass --dataset {name}=PATH (datasets= in Python)") from None
        rows = (frame["dataset"] == name).to_numpy()
        unknown = rows & ~frame["example_id"].isin(set(known["id"].astype(str))).to_numpy()
        if unknown.any():
            pos = int(np.flatnonzero(unknown)[0])
            count = int(unknown.sum())
            raise DataFormatError(source, _row_number(frame, pos, source), f"an example_id of dataset {name!r}",
                                  f"{shorten(frame['example_id'].iloc[pos])} ({count} unknown id(s) in all)")
        if not trust_labels and "label" in known.columns:
            _check_labels(frame, rows, name, known, source)


def _check_labels(frame: pd.DataFrame, rows: np.ndarray, name: str, known: pd.DataFrame,
                  source: str | Path) -> None:
    """Refuse rows whose gold label differs from the dataset's (unlabelled dataset rows cannot be checked)."""
    gold = known.loc[known["label"].notna(), ["id", "label"]].astype(str)
    ids = frame["example_id"].to_numpy()[rows]
    labels = frame["label"].to_numpy()[rows]
    first = gold.drop_duplicates("id").set_index("id")["label"]
    expected = first.reindex(ids).to_numpy()
    if gold["id"].is_unique:
        disagree = pd.notna(expected) & (expected != labels)
    else:  # ids repeat across splits (RTE-style sets): a row agrees with any labelled copy of its id
        agree = pd.MultiIndex.from_arrays([ids, labels]).isin(pd.MultiIndex.from_arrays([gold["id"], gold["label"]]))
        disagree = pd.notna(expected) & ~agree
    if not disagree.any():
        return
    where = np.flatnonzero(rows)[disagree]
    bad = pd.Series(np.flatnonzero(disagree)).groupby(ids[disagree], sort=False).first()
    shown = ", ".join(f"(id {ids[i]!r}, table {labels[i]!r}, dataset {expected[i]!r})" for i in bad.iloc[:3])
    raise DataFormatError(source, _row_number(frame, int(where[0]), source), f"the gold labels of dataset {name!r}",
                          f"{int(disagree.sum())} of {len(ids)} row(s) ({len(bad)} example(s)) with another label: "
                          f"{shown}" + (" ..." if len(bad) > 3 else ""),
                          "check the dataset column and the label encoding; --trust-labels (trust_labels=True) "
                          "keeps the table's labels")


class ExampleSetWarning(UserWarning):
    """Runs of one experiment, language and model predict different sets of examples."""


def example_set_differences(frame: pd.DataFrame) -> pd.DataFrame:
    """List the runs that miss examples other runs of their experiment, language and model predict.

    Each run's scores are computed on its own examples, so the spread over seeds of such runs mixes example sets;
    seed agreement uses only the shared examples, and Multi-Bootstrap refuses such a setting.

    Parameters
    ----------
    frame : pandas.DataFrame
        A predictions table (validated or at least with the required columns and one row per run and example).

    Returns
    -------
    pandas.DataFrame
        One row per such run: ``experiment, language, model``, ``pretrain_seed`` when present, ``seed``,
        ``n_examples`` (the run's (dataset, example) pairs) and ``n_union`` (the pairs of all runs of its
        experiment, language and model). Empty when every run covers the same examples.
    """
    group = ["experiment", "language", "model"]
    run = group + (["pretrain_seed"] if "pretrain_seed" in frame.columns else []) + ["seed"]
    columns = run + ["n_examples", "n_union"]
    if frame.empty:
        return pd.DataFrame(columns=columns)
    union = frame.drop_duplicates(group + ["dataset", "example_id"]).groupby(group, sort=True).size()
    counts = frame.drop_duplicates(run + ["dataset", "example_id"]).groupby(run, sort=True).size()
    out = counts.rename("n_examples").reset_index()
    out["n_union"] = union.reindex(pd.MultiIndex.from_frame(out[group])).to_numpy()
    return out.loc[out["n_examples"] < out["n_union"], columns].reset_index(drop=True)


def _example_set_messages(frame: pd.DataFrame, source: str | Path) -> list[str]:
    """One line per experiment, language and model whose runs cover different examples."""
    differences = example_set_differences(frame)
    messages = []
    for (experiment, language, model), part in differences.groupby(["experiment", "language", "model"], sort=True):
        runs = [" ".join(f"{k}={row[k]}" for k in ("pretrain_seed", "seed") if k in part.columns)
                + f": {row['n_examples']}" for _, row in part.head(5).iterrows()]
        more = f" and {len(part) - 5} more" if len(part) > 5 else ""
        messages.append(f"{source}: runs of experiment={experiment}, language={language}, model={model} cover "
                        f"different examples ({part['n_union'].iat[0]} in all; {', '.join(runs)}{more}); "
                        "each run is scored on its own examples, so the spread over seeds mixes example sets")
    return messages
