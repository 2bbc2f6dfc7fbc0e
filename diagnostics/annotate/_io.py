"""Read annotation input (registered dataset or file) and write annotated tables by file extension."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..core.errors import UserInputError
from ..core.tables import iter_records, read_table, write_table
from ..data import KINDS  # file-format kinds accepted by ``--kind`` -> registry name of the reader

_AUTO = {".jsonl": ("diagnostic", "rte", "swediagnostics", "mnli"), ".json": ("diagnostic", "rte"),
         ".tsv": ("glue-tsv", "mnli"), ".txt": ("sick", "glue-tsv")}
WRITERS = (".jsonl", ".parquet", ".csv")


def read_input(source: str | Path, lang: str, kind: str = "auto") -> pd.DataFrame:
    """Load pairs to annotate, as a table with at least ``premise`` and ``hypothesis`` columns.

    ``source`` is a registered dataset name (``rte``, ``lidirus``), or a file: ``.csv`` / ``.parquet`` with ``premise``
    and ``hypothesis`` columns, or any format :func:`diagnostics.data.load` reads (``.jsonl``, ``.tsv``, ``.txt``);
    ``FileNotFoundError`` when it is neither. ``lang`` is recorded for rows read from files. ``kind`` is ``auto`` (by
    extension, trying the readers in turn) or one of :data:`KINDS` (``UserInputError`` otherwise).

    A file that matches none of the candidate formats raises ``diagnostics.data.DataFormatError`` with the problem of
    the reader that read furthest into the file (a problem every reader meets, such as invalid JSON on line 2, rather
    than the last reader's complaint about line 1).

    Parameters
    ----------
    source : str or Path
        A registered dataset name or a file.
    lang : str
        Language code recorded for rows read from files.
    kind : str
        ``auto`` or one of :data:`KINDS`.

    Returns
    -------
    pandas.DataFrame
        The pairs, with at least ``premise`` and ``hypothesis`` columns.
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
            raise UserInputError(f"--kind: expected auto or one of {', '.join(KINDS)}, found {kind!r}")
        return data.load(KINDS[kind], path=path, language=lang)
    suffix = path.suffix.lower()
    if suffix in (".csv", ".parquet"):
        frame = read_table(path)
        missing = [c for c in ("premise", "hypothesis") if c not in frame.columns]
        if missing:
            raise data.DataFormatError(path, 1, "columns premise and hypothesis", f"columns {list(frame.columns)}")
        return frame
    errors = []
    for candidate in _likely_first(path, _AUTO.get(suffix, tuple(KINDS))):
        try:
            return data.load(KINDS[candidate], path=path, language=lang)
        except UserInputError as err:
            errors.append(err)
    # the reader that got furthest is the file's format (or all failed alike: invalid JSON, bad bytes); on a tie,
    # the one whose fields the first record has
    raise max(errors, key=lambda err: getattr(err, "line", None) or 0)


#: Fields of the first record that mark each JSON lines format.
_JSON_FIELDS = {"diagnostic": {"idx", "label", "sentence1", "sentence2"},
                "rte": {"idx", "premise", "hypothesis", "label"},
                "swediagnostics": {"id", "premise", "hypothesis", "meta", "label"},
                "mnli": {"pairID", "sentence1", "sentence2", "gold_label"}}


def _likely_first(path: Path, candidates: tuple[str, ...]) -> list[str]:
    """``candidates`` ordered by how many of their fields the file's first JSON record has (stable)."""
    try:
        first = next((record for _, record in iter_records(path, objects=False)), None)
    except (OSError, UserInputError):
        return list(candidates)
    if not isinstance(first, dict):
        return list(candidates)
    return sorted(candidates, key=lambda kind: -len(_JSON_FIELDS.get(kind, set()) & set(first)))


def check_output(path: str | Path, writers: tuple[str, ...] = WRITERS) -> None:
    """Refuse an output file whose extension names no writer, before any work is done.

    Raises ``UserInputError`` when the extension is not one of ``writers`` (default :data:`WRITERS`) or the path is a
    folder.

    Parameters
    ----------
    path : str or Path
        The output file.
    writers : tuple of str
        The extensions accepted.
    """
    path = Path(path)
    if path.suffix.lower() not in writers:
        raise UserInputError(f"{path}: expected an output file ending in {', '.join(writers)}, found "
                             f"{path.suffix or 'no extension'!r}")
    if path.is_dir():
        raise UserInputError(f"{path}: expected an output file, found a folder")


def write_output(frame: pd.DataFrame, path: str | Path) -> Path:
    """Write a table as ``.jsonl``, ``.parquet`` or ``.csv`` with :func:`diagnostics.core.tables.write_table`.

    The suffix of ``path`` chooses the format (``UserInputError`` for one not in :data:`WRITERS`); its folder is created
    and the written file returned. Lists and dicts are JSON-encoded in CSV, dicts (``feature_sides``) in parquet. The
    table goes to a temporary file beside ``path`` that then replaces it, so a run killed while writing leaves the
    previous file (or none), never a truncated one.

    Parameters
    ----------
    frame : pandas.DataFrame
        The table to write.
    path : str or Path
        The output file.

    Returns
    -------
    Path
        The written file.
    """
    path = Path(path)
    check_output(path)
    return write_table(frame, path)
