"""Wide tables that fit their page: header cells that may break after an underscore, in notebooks and the report.

A table's header names its columns as the code does (``n_seeds_conservative``, ``within_max_share``): one long word
each, so a browser cannot wrap it and a table of 15 such columns is wider than a notebook beside Lab's file browser.
:func:`breakable_headers` lets each header break after its underscores (an HTML ``<wbr>``: no character is added, a
copied header reads as before). The report applies it to every table it shows; :func:`use_breakable_headers`, which
:func:`diagnostics.pipeline.notebook_paths` calls in every analysis notebook, makes the notebook's pandas tables
render so (in JupyterLab and in the executed notebooks the report is made from).
"""

from __future__ import annotations

import re
from typing import Any

#: a header cell's opening tag and its text (pandas escapes the text, so it holds no ``<``)
_HEADER_CELL = re.compile(r"(<th\b[^>]*>)([^<]*)(?=</th>)")
#: where a header may break: after an underscore
_BREAK_AFTER = re.compile(r"_(?=[^_])")


def breakable_headers(table_html: str) -> str:
    """Let the header cells of an HTML table break after each underscore (``<wbr>``), nothing else changed.

    Parameters
    ----------
    table_html : str
        HTML holding one or more tables, as pandas writes them (``DataFrame.to_html`` / its notebook display); the
        text of a ``<th>`` cell is escaped, holding no tag.

    Returns
    -------
    str
        The same HTML with ``<wbr>`` after every underscore of a header cell's text that another character follows
        (``n_seeds`` -> ``n_<wbr>seeds``); data cells and everything outside header cells are left as they are.
    """
    return _HEADER_CELL.sub(lambda m: m[1] + _BREAK_AFTER.sub("_<wbr>", m[2]), table_html)


#: a table of at least this many columns (index levels included) is set compactly (:data:`WIDE_TABLE_STYLE`)
WIDE_COLUMNS = 12
#: how a wide table is set: a smaller font and narrower cell padding, columns as wide as their content needs (Lab
#: lays tables out with ``table-layout: fixed``, which keeps every header on one line)
WIDE_TABLE_STYLE = ("<style>table.dataframe.dx-wide{table-layout:auto;font-size:12px}"
                    "table.dataframe.dx-wide th,table.dataframe.dx-wide td{padding:.3em .25em}</style>")
_TABLE_TAG = re.compile(r'<table border="1" class="dataframe"')


def _frame_html(frame: Any) -> str | None:
    """A pandas DataFrame's notebook HTML with breakable headers, set compactly when it has :data:`WIDE_COLUMNS`
    columns or more (None, as pandas, when HTML display is off)."""
    table = frame._repr_html_()
    if table is None:
        return None
    if frame.shape[1] + frame.index.nlevels >= WIDE_COLUMNS and _TABLE_TAG.search(table):
        table = WIDE_TABLE_STYLE + _TABLE_TAG.sub('<table border="1" class="dataframe dx-wide"', table, count=1)
    return breakable_headers(table)


def use_breakable_headers(shell: Any = None) -> bool:
    """Make the running IPython kernel display every pandas DataFrame with breakable headers.

    Registers a ``text/html`` printer for ``pandas.DataFrame`` with the shell's display formatter: the table pandas
    would show, passed through :func:`breakable_headers`; a table of :data:`WIDE_COLUMNS` columns or more is also
    set in a smaller font with narrower cells (:data:`WIDE_TABLE_STYLE`), so that the 15 columns of "How many seeds
    do I need?" fit beside Lab's file browser at 1400 px. Idempotent; outside IPython (a script, the tests) nothing
    happens.

    Parameters
    ----------
    shell : IPython.core.interactiveshell.InteractiveShell, optional
        The shell to change; by default the running one (``IPython.get_ipython()``).

    Returns
    -------
    bool
        True when a shell's formatter was set, False when there is no IPython shell.
    """
    if shell is None:
        try:
            from IPython import get_ipython
        except ImportError:  # no IPython: not in a notebook
            return False
        shell = get_ipython()
    if shell is None or not hasattr(shell, "display_formatter"):
        return False
    import pandas as pd

    shell.display_formatter.formatters["text/html"].for_type(pd.DataFrame, _frame_html)
    return True
