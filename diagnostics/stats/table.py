"""The one predictions table: reading, validation and the keys that identify runs and settings.

Columns (see ``CONTRIBUTING.md``): ``experiment, language, model, seed, dataset, example_id, label,
prediction`` plus optional ``probability`` (P(entailment)) and ``pretrain_seed`` (nested designs).
``label``/``prediction`` are ``"entailment"``/``"not_entailment"``; ``example_id`` matches ``id`` of
``diagnostics.data.load(dataset)``.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from ..data.errors import DataFormatError
from ..data.errors import shorten as _shorten
from ..schema import LABELS
from ..schema import PREDICTION_OPTIONAL as OPTIONAL
from ..schema import PREDICTION_REQUIRED as REQUIRED

#: Columns that identify one setting (everything but the seeds).
SETTING_KEYS = ("experiment", "language", "model", "dataset")


def shorten(value: object) -> str:
    """``repr`` for messages, numpy scalars shown as plain Python values."""
    return _shorten(value.item() if isinstance(value, np.generic) else value)


def run_keys(frame: pd.DataFrame) -> list[str]:
    """Columns identifying one run: the setting keys, ``pretrain_seed`` when present, and ``seed``."""
    keys = list(SETTING_KEYS)
    if "pretrain_seed" in frame.columns:
        keys.append("pretrain_seed")
    return keys + ["seed"]


def read_predictions(path: str | Path, *, validate: bool = True, check_ids: bool = True) -> pd.DataFrame:
    """Read a predictions table from parquet, CSV/TSV or JSON lines.

    Parameters
    ----------
    path : str or Path
        ``.parquet``/``.pq``, ``.csv``, ``.tsv`` or ``.jsonl``/``.ndjson`` file.
    validate : bool
        Run :func:`validate_predictions` (default). Errors name the file and the row.
    check_ids : bool
        Check every ``example_id`` against ``diagnostics.data.load(dataset)``.

    Returns
    -------
    pandas.DataFrame
        The table with normalised dtypes (``seed`` int, ``example_id`` str).

    Raises
    ------
    DataFormatError
        Unknown file type, unreadable file, or a validation failure.
    FileNotFoundError
        ``path`` does not exist.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    suffix = path.suffix.lower()
    if suffix in (".parquet", ".pq"):
        frame = pd.read_parquet(path)
    elif suffix in (".csv", ".tsv"):
        frame = pd.read_csv(path, sep="\t" if suffix == ".tsv" else ",", dtype={"example_id": str},
                            keep_default_na=False, na_values=[""])
    elif suffix in (".jsonl", ".ndjson"):
        records = []
        with path.open(encoding="utf-8") as handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as err:
                    raise DataFormatError(path, number, "one JSON object per line", f"invalid JSON ({err.msg})") from None
                if not isinstance(record, dict):
                    raise DataFormatError(path, number, "a JSON object", type(record).__name__)
                record["_line"] = number
                records.append(record)
        frame = pd.DataFrame.from_records(records)
    else:
        raise DataFormatError(path, None, "a .parquet, .csv, .tsv or .jsonl file", f"suffix {suffix!r}")
    return validate_predictions(frame, source=path, check_ids=check_ids) if validate else frame


def _row_number(frame: pd.DataFrame, position: int, source: str | Path) -> int:
    """1-based line (CSV: header is line 1; jsonl: file line) or row number for messages."""
    if "_line" in frame.columns:
        return int(frame["_line"].iloc[position])
    if str(source).lower().endswith((".csv", ".tsv")):
        return position + 2
    return position + 1


def validate_predictions(frame: pd.DataFrame, *, source: str | Path = "<predictions>", check_ids: bool = True,
                         datasets: Mapping[str, pd.DataFrame] | None = None) -> pd.DataFrame:
    """Check a predictions table and return it with normalised dtypes.

    Parameters
    ----------
    frame : pandas.DataFrame
        The table, one row per (run, example).
    source : str or Path
        Name used in error messages (the file the table came from).
    check_ids : bool
        Check ``example_id`` against the ids of each ``dataset``.
    datasets : mapping, optional
        ``dataset name -> DataFrame with an id column`` to check against instead of
        ``diagnostics.data.load(name)`` (for user-supplied diagnostic sets).

    Returns
    -------
    pandas.DataFrame
        A copy with ``seed`` (and ``pretrain_seed``) as int64, ``example_id`` as str, ``probability`` as float,
        and the row order kept.

    Raises
    ------
    DataFormatError
        Missing columns, empty values, non-integer seeds, labels outside ``{entailment, not_entailment}``,
        probabilities outside [0, 1], unknown example ids or duplicated (run, example) rows. The message names
        ``source``, the row, what was expected and what was found.
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
        _check_ids(out, source, datasets)
    return out.drop(columns=["_line"], errors="ignore")


def _check_ids(frame: pd.DataFrame, source: str | Path, datasets: Mapping[str, pd.DataFrame] | None) -> None:
    from .categories import dataset_frame

    for name in pd.unique(frame["dataset"]):
        try:
            known = dataset_frame(name if datasets is None or name not in datasets else datasets[name])["id"]
        except KeyError:
            pos = int(np.flatnonzero((frame["dataset"] == name).to_numpy())[0])
            raise DataFormatError(source, _row_number(frame, pos, source), "a registered dataset name "
                                  "(see `diagnostics data list`) or datasets= for your own", repr(name)) from None
        rows = frame["dataset"] == name
        unknown = rows & ~frame["example_id"].isin(set(known.astype(str)))
        if unknown.any():
            pos = int(np.flatnonzero(unknown.to_numpy())[0])
            count = int(unknown.sum())
            raise DataFormatError(source, _row_number(frame, pos, source), f"an example_id of dataset {name!r}",
                                  f"{shorten(frame['example_id'].iloc[pos])} ({count} unknown id(s) in all)")
