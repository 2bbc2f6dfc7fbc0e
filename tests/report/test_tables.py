"""Wide tables wrap their headers after underscores: in the report, and in a notebook's kernel once
``use_breakable_headers`` (which every analysis notebook's ``notebook_paths`` calls) has set its display formatter.
How wide the tables then are at 1400 px is measured in a browser by ``tests/test_lab_browser.py`` (slow)."""

from __future__ import annotations

import re
from types import SimpleNamespace

import nbformat
import pandas as pd

from diagnostics.report import breakable_headers, render_report, use_breakable_headers


def _frame() -> pd.DataFrame:
    columns = pd.MultiIndex.from_tuples([("separation", "balanced_accuracy"), ("separation", "mdl_selectivity"),
                                         ("n_seeds_conservative", "a<b_c")])
    return pd.DataFrame([["keep_this_cell", 0.5, 3]], index=pd.Index(["row_0"], name="category_name"),
                        columns=columns)


def _text(html: str) -> str:
    return re.sub(r"<wbr>", "", html)


def test_headers_break_after_underscores_and_nothing_else_changes():
    table = _frame()._repr_html_()
    wrapped = breakable_headers(table)
    assert _text(wrapped) == table  # the same table once the break opportunities are taken out
    headers = re.findall(r"<th\b[^>]*>([^<]*(?:<wbr>[^<]*)*)</th>", wrapped)
    assert "balanced_<wbr>accuracy" in headers and "n_<wbr>seeds_<wbr>conservative" in headers
    assert "a&lt;b_<wbr>c" in headers  # escaped text stays escaped
    assert "row_<wbr>0" in headers and "category_<wbr>name" in headers  # index cells are header cells too
    assert "<td>keep_this_cell</td>" in wrapped  # data cells untouched
    assert breakable_headers(wrapped) == wrapped  # idempotent: no underscore is followed by a letter any more


def test_a_kernels_formatter_shows_dataframes_with_breakable_headers():
    from IPython.core.formatters import DisplayFormatter

    shell = SimpleNamespace(display_formatter=DisplayFormatter())
    frame = _frame()
    before, _ = shell.display_formatter.format(frame)
    assert use_breakable_headers(shell) is True
    after, _ = shell.display_formatter.format(frame)
    assert "balanced_<wbr>accuracy" in after["text/html"] and "balanced_<wbr>" not in before["text/html"]
    assert after["text/html"] == breakable_headers(before["text/html"]) and after["text/plain"] == before["text/plain"]
    assert use_breakable_headers() is False  # no IPython shell runs these tests: nothing to set


def test_the_report_wraps_the_headers_of_every_table(tmp_path):
    frame = _frame()
    cell = nbformat.v4.new_code_cell("frame", outputs=[nbformat.v4.new_output(
        "execute_result", data={"text/html": frame._repr_html_(), "text/plain": repr(frame)}, execution_count=1)])
    (tmp_path / "notebooks").mkdir()
    nbformat.write(nbformat.v4.new_notebook(cells=[cell]), tmp_path / "notebooks" / "02_seed_stability.ipynb")
    page = render_report(tmp_path).read_text(encoding="utf-8")
    assert "n_<wbr>seeds_<wbr>conservative" in page and "<td>keep_this_cell</td>" in page
