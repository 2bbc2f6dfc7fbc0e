"""The one table reader and writer: CSV, TSV, JSON lines and parquet files under one set of rules.

Every stage reads and writes whole tables through :func:`read_table` / :func:`write_table` and text files line by
line through :func:`iter_lines` / :func:`iter_records`, so that one file reads the same everywhere:

* the format comes from the suffix (:data:`SUFFIXES`): ``.csv``, ``.tsv``, ``.jsonl`` / ``.ndjson``,
  ``.parquet`` / ``.pq``;
* text is strict UTF-8; a byte order mark is stripped, CRLF line ends read as LF;
* blank lines are skipped (they never make an empty record);
* the separator of a delimited file is sniffed (:func:`sniff_separator`: ``,``, tab, ``;`` as spreadsheets in
  many locales write it, ``|``), the suffix's (``,`` / tab) when nothing splits the lines consistently;
* cells of a delimited file are text (an empty cell is missing); list and dict cells are written as JSON and read
  back as lists and dicts; parquet keeps lists natively and stores dicts as JSON text (one struct type per column
  is all parquet allows);
* a malformed file raises :class:`DataFormatError` naming the file and the line (1-based, counting blank lines
  and the header), or the file alone for a problem of the whole file.

What the columns mean (a dataset's field names, the predictions-table columns) is the reader's business, not this
module's.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path

import pandas as pd

from .errors import UserInputError
from .io_utils import atomic_path

#: Suffix -> format.
SUFFIXES = {".csv": "csv", ".tsv": "tsv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".parquet": "parquet",
            ".pq": "parquet"}
#: The formats, as :func:`read_table` / :func:`write_table` take them.
FORMATS = ("csv", "tsv", "jsonl", "parquet")
#: Separators :func:`sniff_separator` tries.
SEPARATORS = (",", "\t", ";", "|")

_BOM = b"\xef\xbb\xbf"
_SNIFF_CHARS = 65536


class DataFormatError(UserInputError):
    """A data file does not match the expected format.

    The message always names the file, the 1-based line (or record) number, what was expected
    and what was found, e.g. ``data/x.jsonl:17: expected label in {entailment, not_entailment},
    found 'entailed'; did you mean 'entailment'?``.

    The parts of the message are kept as attributes of the same names, for programmatic use.

    Parameters
    ----------
    path : str or Path
    line : int or None
        1-based line or record number; ``None`` for a problem of the whole file.
    expected : str
        What the format requires.
    found : str
        What the file holds instead.
    suggestion : str
        A hint appended to the message (e.g. ``did you mean 'entailment'?``), or empty.
    """

    def __init__(self, path: str | Path, line: int | None, expected: str, found: str, suggestion: str = ""):
        self.path = str(path)
        self.line = line
        self.expected = expected
        self.found = found
        self.suggestion = suggestion
        where = f"{self.path}:{line}" if line is not None else self.path
        msg = f"{where}: expected {expected}, found {found}"
        if suggestion:
            msg += f"; {suggestion}"
        super().__init__(msg)


def table_format(path: str | Path) -> str:
    """The format of a table file, from its suffix.

    Parameters
    ----------
    path : str or Path

    Returns
    -------
    str
        One of :data:`FORMATS`.

    Raises
    ------
    DataFormatError
        A suffix not in :data:`SUFFIXES`.
    """
    suffix = Path(path).suffix.lower()
    if suffix not in SUFFIXES:
        raise DataFormatError(path, None, f"a {', '.join(SUFFIXES)} file", f"suffix {suffix or 'none'!r}")
    return SUFFIXES[suffix]


def iter_lines(path: str | Path, *, error: type[DataFormatError] = DataFormatError) -> Iterator[tuple[int, str]]:
    """Yield ``(line_number, text)`` for each line, decoding UTF-8 strictly line by line.

    A trailing newline at the end of the file does not produce an empty record; a trailing
    ``\\r`` (CRLF files) is removed, and so is a UTF-8 byte order mark. Blank lines are yielded (their numbers
    count); :func:`iter_records` skips them.

    Parameters
    ----------
    path : str or Path
    error : type
        The :class:`DataFormatError` subclass to raise.

    Yields
    ------
    tuple of (int, str)
        The 1-based line number and the line's text.

    Raises
    ------
    DataFormatError
        On a line that is not valid UTF-8.
    """
    raw = Path(path).read_bytes()
    if raw.startswith(_BOM):
        raw = raw[len(_BOM):]
    pieces = raw.split(b"\n")
    if pieces and pieces[-1] == b"":
        pieces.pop()
    for number, piece in enumerate(pieces, start=1):
        try:
            text = piece.decode("utf-8")
        except UnicodeDecodeError as err:
            bad = piece[max(err.start - 5, 0): err.end + 5]
            raise error(path, number, "UTF-8 text", f"undecodable bytes {bad!r} at column {err.start + 1}") from None
        yield number, text.removesuffix("\r")


def iter_records(path: str | Path, *, objects: bool = True,
                 error: type[DataFormatError] = DataFormatError) -> Iterator[tuple[int, object]]:
    """Yield ``(line_number, value)`` for each JSON line of a file, blank lines skipped.

    Parameters
    ----------
    path : str or Path
        A JSON lines file.
    objects : bool
        Require every value to be a JSON object (default).
    error : type
        The :class:`DataFormatError` subclass to raise.

    Yields
    ------
    tuple of (int, object)
        The 1-based line number and the decoded value.

    Raises
    ------
    DataFormatError
        Undecodable bytes, invalid JSON, or (``objects``) a value that is not an object; the message names the
        line.
    """
    for number, text in iter_lines(path, error=error):
        if not text.strip():
            continue
        try:
            value = json.loads(text)
        except json.JSONDecodeError as err:
            raise error(path, number, "one JSON object per line",
                        f"invalid JSON ({err.msg} at column {err.colno})") from None
        if objects and not isinstance(value, dict):
            raise error(path, number, "a JSON object", f"a JSON {type(value).__name__}")
        yield number, value


def _text(path: Path) -> str:
    """The whole file as text (BOM stripped, CRLF kept for the csv module); bad bytes name their line."""
    raw = path.read_bytes()
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        for _ in iter_lines(path):  # raises, naming the line
            pass
        raise


def sniff_separator(path: str | Path, default: str = ",") -> str:
    """Find the separator of a delimited text file from its first lines.

    Each of :data:`SEPARATORS` splits the first lines (quotes respected, blank lines skipped); a separator that
    gives every line the same number of fields, more than one, is a candidate, and the one giving the most fields
    wins (so a spreadsheet's ``;`` file reads right whatever its suffix).

    Parameters
    ----------
    path : str or Path
    default : str
        Returned when no candidate splits the lines consistently (a one-column file).

    Returns
    -------
    str
        The separator.
    """
    with open(path, encoding="utf-8-sig", errors="replace", newline="") as handle:
        sample = handle.read(_SNIFF_CHARS)
    return _sniff(sample, default, truncated=len(sample) == _SNIFF_CHARS)


def _sniff(sample: str, default: str, truncated: bool) -> str:
    best, best_fields = default, 1
    for sep in SEPARATORS:
        try:
            rows = [row for row in csv.reader(io.StringIO(sample, newline=""), delimiter=sep) if row]
        except csv.Error:
            continue
        rows = rows[:-1] if truncated and len(rows) > 1 else rows  # the last row may be cut short
        counts = {len(row) for row in rows[:50]}
        if len(counts) == 1 and (fields := counts.pop()) > best_fields:
            best, best_fields = sep, fields
    return best


def read_table(path: str | Path, *, fmt: str | None = None, sep: str | None = None,
               line_column: str | None = None) -> pd.DataFrame:
    """Read a whole table file.

    Parameters
    ----------
    path : str or Path
        The file; its suffix gives the format unless ``fmt`` does.
    fmt : {"csv", "tsv", "jsonl", "parquet"}, optional
        The format, whatever the suffix.
    sep : str, optional
        Separator of a delimited file; sniffed when ``None`` (see :func:`sniff_separator`).
    line_column : str, optional
        Add a first column of this name holding each row's line number in the file (the line a delimited row
        starts on; a parquet row's 1-based position), for messages about a row.

    Returns
    -------
    pandas.DataFrame
        One row per record. Delimited files: every cell text, ``None`` where empty, lists and dicts (cells
        holding JSON arrays or objects in every row of a column) decoded. JSON lines and parquet: the values as
        stored.

    Raises
    ------
    DataFormatError
        An unknown suffix or format, an empty file (0 bytes), undecodable bytes, a row with another number of
        fields than the header, invalid JSON, a damaged parquet file; the message names the file and line.
    FileNotFoundError
        ``path`` does not exist.
    """
    path = Path(path)
    if path.is_dir():
        raise DataFormatError(path, None, "a table file", "a folder")
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    fmt = table_format(path) if fmt is None else fmt
    if fmt not in FORMATS:
        raise DataFormatError(path, None, f"a format in {', '.join(FORMATS)}", repr(fmt))
    if path.stat().st_size == 0:
        raise DataFormatError(path, None, f"a {fmt} table", "an empty file (0 bytes)")
    if fmt == "parquet":
        frame = _decode_json(_read_parquet(path))
        lines = range(1, len(frame) + 1)
    elif fmt == "jsonl":
        numbered = list(iter_records(path))
        frame = pd.DataFrame.from_records([record for _, record in numbered])
        lines = [number for number, _ in numbered]
    else:
        frame, lines = _read_delimited(path, sep, "\t" if fmt == "tsv" else ",")
    if line_column is not None:
        frame.insert(0, line_column, pd.Series(list(lines), dtype="int64", index=frame.index))
    return frame


def _read_parquet(path: Path) -> pd.DataFrame:
    damaged: tuple[type[BaseException], ...] = (ValueError, OSError)
    try:
        import pyarrow

        damaged += (pyarrow.ArrowException,)
    except ImportError:
        pass
    try:
        return pd.read_parquet(path)
    except (PermissionError, IsADirectoryError):
        raise
    except damaged as err:
        reason = " ".join(str(err).split()) or type(err).__name__
        reason = reason if len(reason) <= 160 else reason[:157] + "..."
        raise DataFormatError(path, None, "a readable parquet file", f"{type(err).__name__}: {reason}") from None


def _read_delimited(path: Path, sep: str | None, default: str) -> tuple[pd.DataFrame, list[int]]:
    text = _text(path)
    if sep is None:
        sep = _sniff(text[:_SNIFF_CHARS], default, truncated=len(text) > _SNIFF_CHARS)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=sep, strict=True)
    header, rows, lines, last = None, [], [], 0
    try:
        for cells in reader:
            start, last = last + 1, reader.line_num
            if not cells or (len(cells) == 1 and not cells[0].strip()):
                continue
            if header is None:
                header = cells
                if len(set(header)) != len(header):
                    twice = sorted({c for c in header if header.count(c) > 1})
                    raise DataFormatError(path, start, "distinct column names", f"{twice[0]!r} twice")
                continue
            if len(cells) != len(header):
                raise DataFormatError(path, start, f"{len(header)} fields separated by {sep!r} (as the header)",
                                      f"{len(cells)}")
            rows.append(cells)
            lines.append(start)
    except csv.Error as err:
        raise DataFormatError(path, last + 1, f"a delimited row (separator {sep!r})", str(err)) from None
    if header is None:
        raise DataFormatError(path, None, "a header line", "only blank lines")
    frame = pd.DataFrame(rows, columns=header, dtype=object)
    frame = frame.mask(frame == "", None) if len(frame) else frame
    return _decode_json(frame), lines


def _decode_json(frame: pd.DataFrame) -> pd.DataFrame:
    for column in frame.columns:
        if frame[column].dtype == object or pd.api.types.is_string_dtype(frame[column]):
            decoded = _json_cells(frame[column])
            if decoded is not None:
                frame[column] = decoded
    return frame


def _json_cells(values: pd.Series) -> pd.Series | None:
    """The column decoded from JSON when every present cell is a JSON array or object, else None."""
    present = values.dropna()
    if present.empty or not isinstance(present.iat[0], str) or present.iat[0][:1] not in ("[", "{"):
        return None
    if not present.map(lambda v: isinstance(v, str)).all() or not present.map(lambda v: v[:1] in ("[", "{") and v[-1:] in ("]", "}")).all():
        return None
    try:
        return values.map(lambda v: None if v is None or v is pd.NA else json.loads(v)).astype(object)
    except json.JSONDecodeError:
        return None


def write_table(frame: pd.DataFrame, path: str | Path, *, fmt: str | None = None, sep: str | None = None) -> Path:
    """Write a table whole (a temporary file, then a rename) in the format its suffix names.

    Parameters
    ----------
    frame : pandas.DataFrame
        The table (its index is not written).
    path : str or Path
        The file; the folder is created.
    fmt : {"csv", "tsv", "jsonl", "parquet"}, optional
        The format, whatever the suffix.
    sep : str, optional
        Separator of a CSV file (default ``,``; TSV always uses a tab).

    Returns
    -------
    Path
        The written file: UTF-8, LF line ends, list and dict cells as JSON in CSV / TSV, dict cells as JSON in
        parquet.

    Raises
    ------
    UserInputError
        An unknown suffix or format.
    """
    path = Path(path)
    if fmt is None:
        suffix = path.suffix.lower()
        if suffix not in SUFFIXES:
            raise UserInputError(f"{path}: expected a {', '.join(SUFFIXES)} file name, found suffix {suffix!r}")
        fmt = SUFFIXES[suffix]
    if fmt not in FORMATS:
        raise UserInputError(f"{path}: expected a format in {', '.join(FORMATS)}, found {fmt!r}")
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as tmp:
        write_table_to(frame, tmp, fmt, sep=sep)
    return path


def write_table_to(frame: pd.DataFrame, tmp: str | Path, fmt: str, *, sep: str | None = None) -> None:
    """Write a table, under the rules of :func:`write_table`, to a temporary path an atomic writer handed out.

    For the files of an :class:`~diagnostics.core.io_utils.OutputSet` (``with files.file(name) as tmp``) or of an
    :func:`~diagnostics.core.io_utils.atomic_path` block that writes more than the table.

    Parameters
    ----------
    frame : pandas.DataFrame
        The table.
    tmp : str or Path
        The temporary file (its name says nothing of the format).
    fmt : {"csv", "tsv", "jsonl", "parquet"}
        The format.
    sep : str, optional
        Separator of a CSV file (default ``,``).

    Raises
    ------
    UserInputError
        An unknown format.
    """
    if fmt == "parquet":
        _as_json(frame, (dict,)).to_parquet(tmp, index=False)
    elif fmt == "jsonl":
        frame.to_json(tmp, orient="records", lines=True, force_ascii=False)
    elif fmt in ("csv", "tsv"):
        _as_json(frame, (list, tuple, dict)).to_csv(tmp, index=False, lineterminator="\n",
                                                    sep="\t" if fmt == "tsv" else (sep or ","))
    else:
        raise UserInputError(f"expected a table format in {', '.join(FORMATS)}, found {fmt!r}")


def _as_json(frame: pd.DataFrame, kinds: tuple[type, ...]) -> pd.DataFrame:
    """The frame with cells of ``kinds`` JSON-encoded (a copy only when a column changes)."""
    out = frame
    for column in frame.columns:
        if frame[column].dtype == object and frame[column].map(lambda v: isinstance(v, kinds)).any():
            out = out.copy() if out is frame else out
            out[column] = frame[column].map(
                lambda v: json.dumps(list(v) if isinstance(v, tuple) else v, ensure_ascii=False)
                if isinstance(v, kinds) else v)
    return out
