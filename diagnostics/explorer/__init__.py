"""Instability explorer: which examples flip between seeds in the least stable categories, and what they share.

Private modules: ``_model``, the state (:class:`ExplorerModel`, built by :func:`build_explorer`); ``_widget``, the
notebook widget (:func:`explore`); ``_html``, static tables where no widget runs; ``_payload``, the JSON data of the
report's ``explorer.html``; ``_format``, seed labels, colours and rounding shared by every view. Two systems side by
side: ``_compare`` (:class:`ComparisonModel`, built by :meth:`ExplorerModel.compare` or, from two tables, by
:func:`build_comparison` in ``_compare_tables``), ``_compare_html`` (its strips and listing as HTML) and
``_compare_widget`` (:class:`ComparisonWidget`); ``_listing``, the paged listing both widgets share. The figure of
one category's flipping examples is :func:`diagnostics.plots.flipping_figure`.
"""

from __future__ import annotations

from diagnostics.core.lazy import lazy_exports

_EXPORTS = {
    "ComparisonModel": "_compare",
    "ComparisonWidget": "_compare_widget",
    "OUTCOMES": "_format",
    "OUTCOME_FILTERS": "_format",
    "Explorer": "_widget",
    "ExplorerModel": "_model",
    "ExplorerWidget": "_widget",
    "FILTERS": "_model",
    "PAYLOAD_NAME": "_payload",
    "ROW_LIMIT": "_format",
    "build_comparison": "_compare_tables",
    "build_explorer": "_model",
    "build_payload": "_payload",
    "cell_class": "_widget",
    "display_round": "_format",
    "explore": "_widget",
    "legend_html": "_format",
    "mcc_color": "_format",
    "read_payload": "_payload",
    "side_names": "_compare",
    "run_label": "_format",
    "save_payload": "_payload",
    "two_decimals": "_format",
    "write_payload": "_payload",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
