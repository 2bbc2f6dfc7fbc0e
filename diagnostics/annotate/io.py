"""Read annotation input (registered dataset or file) and write annotated tables by file extension."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from ..data.registry import KINDS  # file-format kinds accepted by ``--kind`` -> registry name of the reader
from ..io_utils import atomic_path

_AUTO = {".jsonl": ("diagnostic", "rte", "swediagnostics", "mnli"), ".json": ("diagnostic", "rte"),
         ".tsv": ("glue-tsv", "mnli"), ".txt": ("sick", "glue-tsv")}
WRITERS = (".jsonl", ".parquet", ".csv")


def read_input(source: str | Path, lang: str, kind: str = "auto") -> pd.DataFrame:
    """Load pairs to annotate.

    Parameters
    ----------
    source : str or Path
        A registered dataset name (``rte``, ``lidirus``), or a file: ``.csv`` / ``.parquet`` with ``premise`` and
        ``hypothesis`` columns, or any format :func:`diagnostics.data.load` reads (``.jsonl``, ``.tsv``, ``.txt``).
    lang : str
        Language recorded for rows read from files.
    kind : str
        ``auto`` (by extension, trying the readers in turn) or one of :data:`KINDS`.

    Raises
    ------
    diagnostics.data.DataFormatError
        The file matches none of the candidate formats (the message of the last reader tried).
    FileNotFoundError
        ``source`` is neither a registered dataset nor an existing file.
    """
    from .. import data

    path = Path(source)
    if not path.exists():
        if str(source) in data.REGISTRY:
            return data.load(str(source))
        raise FileNotFoundError(f"{source}: no such file, and not a registered dataset "
                                f"({', '.join(sorted(data.REGISTRY))})")
    if kind != "auto":
        if kind not in KINDS:
            raise ValueError(f"kind must be auto or one of {', '.join(KINDS)}, found {kind!r}")
        return data.load(KINDS[kind], path=path, language=lang)
    suffix = path.suffix.lower()
    if suffix in (".csv", ".parquet"):
        frame = pd.read_csv(path) if suffix == ".csv" else pd.read_parquet(path)
        missing = [c for c in ("premise", "hypothesis") if c not in frame.columns]
        if missing:
            raise data.DataFormatError(path, 1, "columns premise and hypothesis", f"columns {list(frame.columns)}")
        return frame
    error = None
    for candidate in _AUTO.get(suffix, tuple(KINDS)):
        try:
            return data.load(KINDS[candidate], path=path, language=lang)
        except (data.DataFormatError, KeyError, ValueError) as err:
            error = err
    raise error


def write_output(frame: pd.DataFrame, path: str | Path) -> Path:
    """Write a table as ``.jsonl``, ``.parquet`` or ``.csv`` (lists and dicts JSON-encoded in CSV).

    The table goes to a temporary file beside ``path`` that then replaces it, so a run killed while writing
    leaves the previous file (or none), never a truncated one.

    Raises
    ------
    ValueError
        The extension is not one of :data:`WRITERS`.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in WRITERS:
        raise ValueError(f"{path}: output extension must be one of {', '.join(WRITERS)}")
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as tmp:
        if suffix == ".jsonl":
            frame.to_json(tmp, orient="records", lines=True, force_ascii=False)
        elif suffix == ".parquet":
            out = frame.copy()
            if "feature_sides" in out:  # parquet wants one struct type; a JSON string keeps any set of keys
                out["feature_sides"] = out["feature_sides"].map(lambda d: json.dumps(d, ensure_ascii=False))
            out.to_parquet(tmp, index=False)
        else:
            out = frame.copy()
            for column in out.columns:
                if out[column].map(lambda v: isinstance(v, (list, dict))).any():
                    out[column] = out[column].map(lambda v: json.dumps(v, ensure_ascii=False)
                                                  if isinstance(v, (list, dict)) else v)
            out.to_csv(tmp, index=False)
    return path
