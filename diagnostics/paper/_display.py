"""Tables of the paper comparison for people: one number format, one mark for missing values, long text wrapped.

Every table of notebook 11 goes through :func:`paper_table`, whose cells all go through :func:`format_number`
(and :func:`number_label` names each paper number in one short column):
numbers keep their significant digits (the study's learning rate 1e-05 stays 1e-05 beside our 0.0001), counts stay
whole, floating-point noise (below 1e-12, e.g. the σ of equal runs, 6.7e-17) reads as 0, and every missing value
(None, NaN, ``pd.NA``) reads as one dash. The styled table keeps to the width of a JupyterLab notebook beside the
file browser: no index, headers with spaces instead of underscores, numbers and identifiers (``setting_n_seeds``)
on one line, prose wrapped between words inside capped widths (never cut, never broken inside a word), and a text
column that says the same in every row said once, above the table.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence

import numpy as np
import pandas as pd

#: What every missing value reads as.
MISSING = "–"
#: Widest text cell (CSS ``em``) before it wraps: a column of prose (cells of over 20 characters on average), any
#: other column.
_WIDE, _NARROW = 10.0, 6.5
#: Width of a character, in ``em`` (an average of proportional fonts; a column only needs to be about right).
_CHARACTER = 0.5
#: Magnitudes below this are floating-point noise and read as 0.
NOISE = 1e-12


def format_number(value, digits: int = 3) -> str:
    """Write one table cell: significant digits for numbers, one dash for anything missing.

    Parameters
    ----------
    value : object
        A cell: a number, a boolean, a string, or a missing value (None, NaN, ``pandas.NA``, ``NaT``).
    digits : int
        Significant digits of a float that is not whole.

    Returns
    -------
    str
        ``"–"`` for a missing value or an empty string; ``"yes"`` / ``"no"`` for booleans; a whole number without
        decimals (``"374000"``, ``"4"``); a float below 1e-12 in magnitude (floating-point noise) as ``"0"``; other
        floats with ``digits`` significant digits in ``g`` style (``1e-05`` -> ``"1e-05"``, ``0.12345`` ->
        ``"0.123"``), and without exponent from ``10**digits`` on (``12345.6`` -> ``"12346"``); strings as they are.

    Examples
    --------
    >>> [format_number(v) for v in (1e-05, 1e-04, 0.177, -0.6543, 374000.0, 6.71e-17, float("nan"), None, True)]
    ['1e-05', '0.0001', '0.177', '-0.654', '374000', '0', '–', '–', 'yes']
    """
    if value is None or value is pd.NA or value is pd.NaT:
        return MISSING
    if isinstance(value, str):
        return value if value else MISSING
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        x = float(value)
        if math.isnan(x):
            return MISSING
        if math.isinf(x):
            return "∞" if x > 0 else "−∞"
        if abs(x) < NOISE:
            return "0"
        if x.is_integer() and abs(x) < 1e15:
            return str(int(x))
        return f"{x:.0f}" if abs(x) >= 10 ** digits else f"{x:.{digits}g}"
    try:
        if pd.isna(value):
            return MISSING
    except (TypeError, ValueError):
        pass
    return str(value)


def _is_text(column: pd.Series) -> bool:
    return not (pd.api.types.is_numeric_dtype(column) or pd.api.types.is_bool_dtype(column))


def _is_identifier(values: pd.Series, digits: int) -> bool:
    """A column of single words (``setting_n_seeds``, ``inside``): shown on one line, never broken."""
    cells = [format_number(v, digits) for v in values]
    return bool(cells) and not any(any(ch.isspace() for ch in cell) for cell in cells)


def _text_width(values: pd.Series, header: str, digits: int) -> float:
    """The width (CSS ``em``) of a prose column: its longest cell or header word, capped (longer text wraps)."""
    cells = [format_number(v, digits) for v in values]
    lengths = [len(c) for c in cells] or [1]
    word = max([len(w) for w in header.split()] + [len(w) for c in cells for w in c.split()] or [1])
    cap = max(_WIDE if np.mean(lengths) > 20 else _NARROW, word * _CHARACTER)  # a word never breaks
    return round(min(max(max(lengths), word) * _CHARACTER, cap) + 0.5, 1)


def said_once(frame: pd.DataFrame, columns: Sequence[str], separator: str = ", ") -> tuple[pd.DataFrame, list[str]]:
    """Take out what a column says in every row, to say it once above the table.

    Parameters
    ----------
    frame : pandas.DataFrame
        The table.
    columns : sequence of str
        Columns that may be said once (e.g. ``why_not_comparable``); those absent are ignored.
    separator : str
        What joins the items of a cell that lists several (reasons): items every row lists are said once and the
        rest stay in the row.

    Returns
    -------
    (pandas.DataFrame, list of str)
        The table without what ``columns`` hold in every row (missing values included), and one line per such
        column: ``"why not comparable (every row): embedded model, demo recipe"``. A column whose rows all list
        some same items keeps each row's other items (missing where none is left), and the line says so; a column
        with nothing left is dropped.
    """
    lines, dropped, frame = [], [], frame.copy()
    for column in columns:
        if column not in frame.columns or not len(frame):
            continue
        name = str(column).replace("_", " ")
        cells = {format_number(v) for v in frame[column]}
        if len(cells) == 1:
            lines.append(f"{name} (every row): {cells.pop()}")
            dropped.append(column)
            continue
        if frame[column].isna().any():
            continue
        items = [str(v).split(separator) for v in frame[column]]
        common = [item for item in items[0] if all(item in row for row in items[1:])]
        if not common:
            continue
        rest = [separator.join(item for item in row if item not in common) or None for row in items]
        lines.append(f"{name} (every row): {separator.join(common)}; in the column, what else holds for a row")
        frame[column] = pd.Series(rest, index=frame.index, dtype=object)
        if frame[column].isna().all():
            dropped.append(column)
    return frame.drop(columns=dropped), lines


def number_label(frame: pd.DataFrame) -> pd.Series:
    """Name each paper number in a few words: section, experiment (and reference), language, category, seed.

    Parameters
    ----------
    frame : pandas.DataFrame
        Rows of :func:`~diagnostics.paper.against_paper` (or :func:`~diagnostics.paper.paper_numbers`).

    Returns
    -------
    pandas.Series of str
        E.g. ``"§5.2 base en Conditionals seed 1"``, ``"§5.3 extra-374000 vs base all overall"``; one per row,
        with the frame's index.
    """
    def label(row) -> str:
        experiment = row["experiment"] if pd.isna(row["reference"]) or not row["reference"] else \
            f"{row['experiment']} vs {row['reference']}"
        seed = "" if pd.isna(row["seed"]) else f" seed {int(row['seed'])}"
        return f"{row['section']} {experiment} {row['language']} {row['category']}{seed}"
    return frame.apply(label, axis=1).astype(object) if len(frame) else pd.Series([], index=frame.index, dtype=object)


def paper_table(frame: pd.DataFrame, columns: Sequence[str] | None = None, digits: int = 3,
                once: Sequence[str] = ("why_not_comparable",)):
    """Style a table for a notebook: :func:`format_number` in every cell, prose wrapped between words.

    Parameters
    ----------
    frame : pandas.DataFrame
        The table (e.g. rows of :func:`~diagnostics.paper.against_paper`).
    columns : sequence of str, optional
        The columns to show, in order (default: all).
    digits : int
        Significant digits of the numbers.
    once : sequence of str
        Columns said once, in the caption above the table, when every row holds the same value
        (:func:`said_once`).

    Returns
    -------
    pandas.io.formats.style.Styler
        Without the index; headers with spaces for underscores (they wrap between words, never inside one);
        numbers, booleans and identifier columns (cells of one word, e.g. ``setting_n_seeds``) on one line, never
        broken; each prose column as wide as its longest cell, at most 6.5 em (10 em for a column whose cells run
        over 20 characters on average) or its longest word, wrapped between words beyond that. Text is never cut.
        A notebook shows it as a cell's last expression or with ``display``.
    """
    shown = frame[list(columns)] if columns is not None else frame
    shown, caption = said_once(shown.reset_index(drop=True), once)
    headers = {c: str(c).replace("_", " ") for c in shown.columns}
    text = [c for c in shown.columns if _is_text(shown[c])]
    styler = shown.rename(columns=headers).style.hide(axis="index").format(lambda v: format_number(v, digits))
    if caption:
        styler.set_caption("<br>".join(caption))
    cell = "padding: 2px 4px; vertical-align: top; line-height: 1.25;"
    styler.set_table_styles([
        {"selector": "", "props": "border-collapse: collapse; table-layout: auto; width: auto; font-size: 0.8em;"},
        {"selector": "th", "props": f"{cell} text-align: left; white-space: normal; overflow-wrap: normal;"
                                    " border-bottom: 1px solid #999;"},
        {"selector": "td", "props": cell},
        {"selector": "tbody tr:nth-child(even)", "props": "background: rgba(0, 0, 0, 0.03);"},
        {"selector": "caption", "props": "caption-side: top; text-align: left; padding: 2px 4px;"},
    ], overwrite=True)
    numeric = [headers[c] for c in shown.columns if c not in text]
    if numeric:
        styler.set_properties(subset=numeric, **{"text-align": "right", "white-space": "nowrap"})
    for column in text:
        if _is_identifier(shown[column], digits):
            styler.set_properties(subset=[headers[column]], **{
                "text-align": "left", "white-space": "nowrap", "word-break": "normal", "overflow-wrap": "normal"})
            continue
        # a cell's width (not max-width, which table cells ignore) caps its column; words wrap whole
        width = f"{_text_width(shown[column], headers[column], digits)}em"
        styler.set_properties(subset=[headers[column]], **{
            "text-align": "left", "white-space": "normal", "word-break": "normal", "overflow-wrap": "normal",
            "width": width, "min-width": width, "max-width": width})
        styler.set_table_styles({headers[column]: [{"selector": "th", "props": f"width: {width};"}]}, overwrite=False)
    return styler
