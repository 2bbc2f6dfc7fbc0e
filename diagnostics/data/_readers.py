"""Strict readers for every supported file format.

Each reader turns one file into a tidy :class:`pandas.DataFrame` with the columns
``id, premise, hypothesis, label, language`` (+ ``label3`` where the source has 3-way labels,
+ ``features``/``coarse`` for diagnostic sets). Any malformed record raises
:class:`~diagnostics.data.DataFormatError` naming file and line; nothing is skipped but blank lines.
Reading the file (BOM, line ends, blank lines, JSON lines) follows the one set of rules of
:mod:`diagnostics.core.tables`; what is here is each format's own knowledge: its field names, labels and categories.
"""

from __future__ import annotations

import csv
import warnings
from collections.abc import Iterator
from pathlib import Path

import pandas as pd

from diagnostics.core.schema import ENTAILMENT, NOT_ENTAILMENT
from diagnostics.core.schema import LABELS as BINARY
from diagnostics.core.taxonomy import (
    COARSE,
    COARSE_ALIASES,
    COARSE_OF,
    FINE,
    UnknownCategoryError,
    canonical_fine,
    suggest,
)

from ..core.tables import iter_lines, iter_records
from ._errors import DataFormatError, shorten

THREE_WAY = (ENTAILMENT, "neutral", "contradiction")


def collapse(label3: str) -> str:
    """Map a 3-way NLI label to the binary RTE label (neutral, contradiction -> not_entailment).

    Parameters
    ----------
    label3 : str
        ``entailment``, ``neutral`` or ``contradiction``.

    Returns
    -------
    str
        ``entailment`` for ``entailment``, else ``not_entailment``.
    """
    return ENTAILMENT if label3 == ENTAILMENT else NOT_ENTAILMENT


def _text(path: Path, line: int, record: dict, key: str) -> str:
    if key not in record:
        raise DataFormatError(path, line, f"field {key!r}", f"keys {sorted(record)}")
    value = record[key]
    if not isinstance(value, str) or not value.strip():
        raise DataFormatError(path, line, f"a non-empty string in {key!r}", shorten(value))
    return value


def _identifier(path: Path, line: int, record: dict, key: str) -> str:
    if key not in record:
        raise DataFormatError(path, line, f"field {key!r}", f"keys {sorted(record)}")
    value = record[key]
    if isinstance(value, bool) or not isinstance(value, (int, str)) or (isinstance(value, str) and not value.strip()):
        raise DataFormatError(path, line, f"an integer or non-empty string id in {key!r}", shorten(value))
    return str(value)


def _misspelt_fields(path: Path, line: int, record: dict, fields: tuple[str, ...]) -> None:
    """Refuse a record with an unknown key that is a misspelling of a missing field (``lable`` for ``label``).

    Without this, an RTE file whose label key is misspelt would read as unlabelled.
    """
    missing = tuple(f for f in fields if f not in record)
    for key in record if missing else ():
        near = suggest(str(key), missing, n=1) if key not in fields else []
        if near:
            raise DataFormatError(path, line, f"field {near[0]!r}", f"no {near[0]!r} but an unknown key {key!r}",
                                  f"did you mean {near[0]!r}?")


def _label(path: Path, line: int, value: object, allowed: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in allowed:
        hint = ""
        if isinstance(value, str):
            near = suggest(value, allowed, n=1)
            hint = f"did you mean {near[0]!r}?" if near else ""
        raise DataFormatError(path, line, f"label in {{{', '.join(allowed)}}}", shorten(value), hint)
    return value


class _Table:
    """Collects rows, enforcing unique ids and a consistent labelled / unlabelled state."""

    def __init__(self, path: Path):
        self.path = path
        self.rows: list[dict] = []
        self.first_line: dict[str, int] = {}
        self.labelled: bool | None = None

    def check_labelled(self, line: int, has_label: bool) -> None:
        if self.labelled is None:
            self.labelled = has_label
        elif has_label != self.labelled:
            expected = "a 'label' like the records before it" if self.labelled else "no 'label' (earlier records are unlabelled)"
            raise DataFormatError(self.path, line, expected, "a label" if has_label else "no 'label' field")

    def add(self, line: int, row: dict) -> None:
        previous = self.first_line.get(row["id"])
        if previous is not None:
            raise DataFormatError(self.path, line, "a unique id", f"id {row['id']!r} already used on line {previous}")
        self.first_line[row["id"]] = line
        self.rows.append(row)

    def frame(self, columns: list[str]) -> pd.DataFrame:
        if not self.rows:
            raise DataFormatError(self.path, None, "at least one record", "an empty file")
        frame = pd.DataFrame(self.rows, columns=columns)
        frame["id"] = frame["id"].astype(str)
        return frame


def _tags(path: Path, line: int, coarse: str, cell: object) -> list[str]:
    """Parse a ``;``-separated cell of fine tags that must belong to ``coarse``."""
    if cell is None or cell == "":
        return []
    if not isinstance(cell, str):
        raise DataFormatError(path, line, f"a ';'-separated string of {coarse} categories", shorten(cell))
    tags = []
    for raw in cell.split(";"):
        name = raw.strip()
        if not name:
            raise DataFormatError(path, line, f"a {coarse} category between ';'", shorten(cell))
        try:
            fine = canonical_fine(name)
        except UnknownCategoryError as err:
            hint = f"did you mean {' or '.join(repr(s) for s in err.suggestions)}?" if err.suggestions else ""
            raise DataFormatError(path, line, f"a {coarse} category", repr(name), hint) from None
        if COARSE_OF[fine] != coarse:
            raise DataFormatError(path, line, f"a {coarse} category", f"{fine!r}, which belongs to {COARSE_OF[fine]}")
        if fine not in tags:
            tags.append(fine)
    return tags


def _diagnostic_row(path, line, ident, premise, hypothesis, label_value, tag_cells, language, three_way):
    label = _label(path, line, label_value, THREE_WAY if three_way else BINARY)
    features: list[str] = []
    for coarse, cell in tag_cells.items():
        features += _tags(path, line, coarse, cell)
    row = {
        "id": ident,
        "premise": premise,
        "hypothesis": hypothesis,
        "label": collapse(label),
        "label3": label if three_way else None,
        "language": language,
        "features": sorted(features, key=FINE.index),
        "coarse": sorted({COARSE_OF[f] for f in features}, key=COARSE.index),
    }
    return row


DIAGNOSTIC_COLUMNS = ["id", "premise", "hypothesis", "label", "label3", "language", "features", "coarse"]
RTE_COLUMNS = ["id", "premise", "hypothesis", "label", "language"]


def read_rte_jsonl(path: str | Path, language: str) -> pd.DataFrame:
    """Read an RTE-style JSONL file (SuperGLUE RTE, TERRa, or a translation in that format).

    Each line: ``{"premise": str, "hypothesis": str, "idx": int|str, "label": "entailment"|"not_entailment"}``;
    ``label`` is absent in unlabelled test files (then the ``label`` column is missing values). Columns
    ``id, premise, hypothesis, label, language``, one row per line. Raises ``DataFormatError`` on the first
    malformed record, naming the file and the line.
    """
    path = Path(path)
    table = _Table(path)
    for line, record in iter_records(path):
        _misspelt_fields(path, line, record, ("premise", "hypothesis", "idx", "label"))
        has_label = "label" in record
        table.check_labelled(line, has_label)
        table.add(
            line,
            {
                "id": _identifier(path, line, record, "idx"),
                "premise": _text(path, line, record, "premise"),
                "hypothesis": _text(path, line, record, "hypothesis"),
                "label": _label(path, line, record["label"], BINARY) if has_label else None,
                "language": language,
            },
        )
    return table.frame(RTE_COLUMNS)


def read_diagnostic_jsonl(path: str | Path, language: str) -> pd.DataFrame:
    """Read a diagnostic set in the SuperGLUE AX-b / LiDiRus JSONL format.

    Each line: ``{"idx", "label", "sentence1", "sentence2"}`` plus, only when non-empty, the coarse keys
    ``lexical-semantics``, ``predicate-argument-structure``, ``logic``, ``knowledge`` holding
    ``;``-separated fine categories. Labels are binary (``entailment`` / ``not_entailment``). Columns
    ``id, premise, hypothesis, label, language, features, coarse`` (``features``: the fine categories in taxonomy
    order; ``coarse``: their coarse categories). Raises ``DataFormatError`` on the first malformed record, naming
    the file and the line.
    """
    path = Path(path)
    table = _Table(path)
    aliases = COARSE_ALIASES["superglue_jsonl"]
    known = {"idx", "label", "sentence1", "sentence2", *aliases}
    for line, record in iter_records(path):
        extra = sorted(set(record) - known)
        if extra:
            near = suggest(extra[0], tuple(known), n=1)
            raise DataFormatError(path, line, f"keys among {sorted(known)}", f"unknown key {extra[0]!r}", f"did you mean {near[0]!r}?" if near else "")
        table.check_labelled(line, "label" in record)
        if "label" not in record:
            raise DataFormatError(path, line, "field 'label' (diagnostic sets are labelled)", f"keys {sorted(record)}")
        row = _diagnostic_row(
            path,
            line,
            _identifier(path, line, record, "idx"),
            _text(path, line, record, "sentence1"),
            _text(path, line, record, "sentence2"),
            record["label"],
            {coarse: record.get(key) for key, coarse in aliases.items()},
            language,
            three_way=False,
        )
        table.add(line, row)
    return table.frame([c for c in DIAGNOSTIC_COLUMNS if c != "label3"])


GLUE_TSV_HEADER = ["Lexical Semantics", "Predicate-Argument Structure", "Logic", "Knowledge", "Domain", "Premise", "Hypothesis", "Label"]


def _tsv_rows(path: Path, header: list[str] | None) -> Iterator[tuple[int, dict]]:
    """Yield ``(line, row)`` of a tab-separated file with literal quotes, checking the column count."""
    lines = ((number, text) for number, text in iter_lines(path) if text.strip())
    try:
        start, first = next(lines)
    except StopIteration:
        raise DataFormatError(path, None, "a header line", "an empty file") from None
    columns = first.split("\t")
    if header is not None and columns != header:
        raise DataFormatError(path, start, f"header {header}", f"{columns}")
    for number, text in lines:
        cells = next(csv.reader([text], delimiter="\t", quoting=csv.QUOTE_NONE))
        if len(cells) != len(columns):
            raise DataFormatError(path, number, f"{len(columns)} tab-separated columns", f"{len(cells)}")
        yield number, dict(zip(columns, cells))


def read_glue_diagnostic_tsv(path: str | Path, language: str = "en") -> pd.DataFrame:
    """Read GLUE's ``diagnostic-full.tsv`` (3-way labels, domain, fine tags); ids are the row index 0..n-1.

    Columns ``id, premise, hypothesis, label, label3, language, features, coarse, domain``. Raises
    ``DataFormatError`` on the first malformed record, naming the file and the line.
    """
    path = Path(path)
    table = _Table(path)
    coarse_columns = GLUE_TSV_HEADER[:4]
    for line, row in _tsv_rows(path, GLUE_TSV_HEADER):
        for key in ("Premise", "Hypothesis"):
            if not row[key].strip():
                raise DataFormatError(path, line, f"a non-empty {key}", "an empty cell")
        out = _diagnostic_row(path, line, str(line - 2), row["Premise"], row["Hypothesis"], row["Label"],
                              {c: row[c] for c in coarse_columns}, language, three_way=True)
        out["domain"] = row["Domain"] or None
        table.add(line, out)
    return table.frame(DIAGNOSTIC_COLUMNS + ["domain"])


def read_swediagnostics_jsonl(path: str | Path, language: str = "sv") -> pd.DataFrame:
    """Read SuperLim 2 SweDiagnostics JSONL (``id, label, premise, hypothesis, meta{...}``, 3-way labels).

    Columns ``id, premise, hypothesis, label, label3, language, features, coarse, domain``. Raises
    ``DataFormatError`` on the first malformed record, naming the file and the line.
    """
    path = Path(path)
    table = _Table(path)
    aliases = COARSE_ALIASES["swediagnostics_meta"]
    for line, record in iter_records(path):
        meta = record.get("meta")
        if not isinstance(meta, dict):
            raise DataFormatError(path, line, "an object in 'meta'", shorten(meta))
        unknown = sorted(set(meta) - set(aliases) - {"domain"})
        if unknown:
            near = suggest(unknown[0], (*aliases, "domain"), n=1)
            raise DataFormatError(path, line, f"meta keys among {sorted(aliases) + ['domain']}", repr(unknown[0]), f"did you mean {near[0]!r}?" if near else "")
        if "label" not in record:
            raise DataFormatError(path, line, "field 'label'", f"keys {sorted(record)}")
        out = _diagnostic_row(path, line, _identifier(path, line, record, "id"), _text(path, line, record, "premise"),
                              _text(path, line, record, "hypothesis"), record["label"],
                              {coarse: meta.get(key) for key, coarse in aliases.items()}, language, three_way=True)
        out["domain"] = meta.get("domain") or None
        table.add(line, out)
    return table.frame(DIAGNOSTIC_COLUMNS + ["domain"])


SICK_HEADER = ["pair_ID", "sentence_A", "sentence_B", "entailment_label", "relatedness_score", "entailment_AB",
               "entailment_BA", "sentence_A_original", "sentence_B_original", "sentence_A_dataset",
               "sentence_B_dataset", "SemEval_set"]


def read_sick(path: str | Path, language: str = "en") -> pd.DataFrame:
    """Read ``SICK.txt``: the 3-way label to ``label3``, its collapse to ``label``, the SemEval set to ``semeval_set``.

    Columns ``id, premise, hypothesis, label, language, label3, semeval_set``. The SemEval set (``train``,
    ``trial`` or ``test``) is stripped of surrounding whitespace (one TRAIN cell carries a stray space). Raises
    ``DataFormatError`` on the first malformed record, naming the file and the line.
    """
    path = Path(path)
    table = _Table(path)
    for line, row in _tsv_rows(path, SICK_HEADER):
        label3 = _label(path, line, row["entailment_label"].lower(), THREE_WAY)
        semeval = row["SemEval_set"].strip().lower()
        if semeval not in ("train", "trial", "test"):
            raise DataFormatError(path, line, "SemEval_set in {TRAIN, TRIAL, TEST}", repr(row["SemEval_set"]))
        for key in ("sentence_A", "sentence_B"):
            if not row[key].strip():
                raise DataFormatError(path, line, f"a non-empty {key}", "an empty cell")
        table.add(line, {"id": row["pair_ID"], "premise": row["sentence_A"], "hypothesis": row["sentence_B"],
                         "label": collapse(label3), "label3": label3, "language": language, "semeval_set": semeval})
    return table.frame(RTE_COLUMNS + ["label3", "semeval_set"])


def read_mnli(path: str | Path, language: str = "en") -> pd.DataFrame:
    """Read MNLI as GLUE ``.tsv`` (``sentence1``, ``sentence2``, ``gold_label``) or MultiNLI ``.jsonl``.

    A ``path`` with any suffix other than ``.tsv`` is read as JSON lines (MultiNLI). 3-way labels are kept in
    ``label3`` and collapsed to ``label`` (neutral, contradiction -> not_entailment). Pairs whose ``gold_label`` is
    ``-`` (no annotator consensus, only in MultiNLI dev/test) have no gold label: they are dropped with a warning
    stating how many. Columns ``id, premise, hypothesis, label, language, label3, genre``. Raises
    ``DataFormatError`` on the first malformed record, naming the file and the line.
    """
    path = Path(path)
    read = _mnli_tsv_at_once(path, language) if path.suffix == ".tsv" else None
    frame, no_consensus = read if read is not None else _mnli_record_by_record(path, language)
    if no_consensus:
        warnings.warn(f"{path}: dropped {no_consensus} pairs with gold_label '-' (no annotator consensus)", stacklevel=2)
    return frame


_MNLI_COLUMNS = RTE_COLUMNS + ["label3", "genre"]
#: The fields every MNLI record needs (GLUE's ``.tsv`` columns, MultiNLI's JSON keys).
_MNLI_FIELDS = ("gold_label", "sentence1", "sentence2", "pairID")


def _mnli_record_by_record(path: Path, language: str) -> tuple[pd.DataFrame, int]:
    """MNLI read and checked one record at a time: the frame and the pairs without consensus; raises
    ``DataFormatError`` at the first record at fault."""
    table = _Table(path)
    no_consensus = 0
    records = _tsv_rows(path, None) if path.suffix == ".tsv" else iter_records(path)
    for line, record in records:
        _misspelt_fields(path, line, record, _MNLI_FIELDS)
        gold = record.get("gold_label")
        if gold == "-":
            no_consensus += 1
            continue
        label3 = _label(path, line, gold, THREE_WAY)
        ident = _identifier(path, line, record, "pairID")
        table.add(line, {"id": ident, "premise": _text(path, line, record, "sentence1"),
                         "hypothesis": _text(path, line, record, "sentence2"), "label": collapse(label3),
                         "label3": label3, "language": language, "genre": record.get("genre")})
    return table.frame(_MNLI_COLUMNS), no_consensus


def _mnli_tsv_at_once(path: Path, language: str) -> tuple[pd.DataFrame, int] | None:
    """GLUE's MNLI ``.tsv`` parsed by Arrow's CSV reader and checked column by column (MNLI train has 393k pairs):
    what :func:`_mnli_record_by_record` gives, or ``None`` where anything is amiss, for that reading to name the
    line."""
    import pyarrow as pa
    import pyarrow.compute as pc
    from pyarrow import csv as arrow_csv

    raw = path.read_bytes()
    # lines end at "\n" alone there (a lone "\r" and a NUL are the csv module's cases); a line of blanks has too few
    # columns here, and a row of empty cells no label: both are left to it
    if raw.count(b"\r") != raw.count(b"\r\n") or b"\0" in raw:
        return None
    header = raw.split(b"\n", 1)[0].rstrip(b"\r").decode("utf-8-sig", errors="replace").split("\t")
    if len(set(header)) != len(header) or not set(_MNLI_FIELDS) <= set(header):
        return None
    try:
        table = arrow_csv.read_csv(
            pa.BufferReader(raw),
            parse_options=arrow_csv.ParseOptions(delimiter="\t", quote_char=False, newlines_in_values=False),
            convert_options=arrow_csv.ConvertOptions(column_types=dict.fromkeys(header, pa.string()),
                                                     strings_can_be_null=False, check_utf8=True))
    except (pa.ArrowInvalid, UnicodeDecodeError):
        return None
    if table.column_names != header:
        return None
    gold = table.column("gold_label")
    kept = table.filter(pc.not_equal(gold, "-"))
    blank = [pc.any(pc.equal(pc.utf8_trim_whitespace(kept.column(name)), "")).as_py()
             for name in ("pairID", "sentence1", "sentence2")]
    if (not kept.num_rows or not pc.all(pc.is_in(kept.column("gold_label"), pa.array(THREE_WAY))).as_py()
            or any(blank) or pc.count_distinct(kept.column("pairID")).as_py() != kept.num_rows):
        return None
    label3 = kept.column("gold_label")
    label = pc.if_else(pc.equal(label3, ENTAILMENT), ENTAILMENT, NOT_ENTAILMENT)
    frame = pa.table([kept.column("pairID"), kept.column("sentence1"), kept.column("sentence2"), label, label3],
                     names=["id", "premise", "hypothesis", "label", "label3"]).to_pandas()
    frame["language"] = language
    frame["genre"] = kept.column("genre").to_pandas() if "genre" in header else None
    frame = frame[_MNLI_COLUMNS]
    return frame, table.num_rows - kept.num_rows
