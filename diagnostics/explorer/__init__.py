"""Instability explorer: which examples flip between seeds in the least stable categories, and what they share.

Private modules: ``_model``, the state (:class:`ExplorerModel`, built by :func:`build_explorer`); ``_widget``, the
notebook widget (:func:`explore`); ``_html``, static tables where no widget runs; ``_payload``, the JSON data of the
report's ``explorer.html``; ``_format``, seed labels, colours and rounding shared by every view. The figure of one
category's flipping examples is :func:`diagnostics.plots.flipping_figure`.
"""

from __future__ import annotations

from diagnostics.lazy import lazy_exports

_EXPORTS = {
    "Explorer": "_widget",
    "ExplorerModel": "_model",
    "ExplorerWidget": "_widget",
    "FILTERS": "_model",
    "PAYLOAD_NAME": "_payload",
    "ROW_LIMIT": "_format",
    "build_explorer": "_model",
    "build_payload": "_payload",
    "cell_class": "_widget",
    "display_round": "_format",
    "explore": "_widget",
    "legend_html": "_format",
    "mcc_color": "_format",
    "read_payload": "_payload",
    "run_label": "_format",
    "save_payload": "_payload",
    "two_decimals": "_format",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
