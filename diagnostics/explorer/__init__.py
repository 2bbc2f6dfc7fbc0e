"""Instability explorer: which examples flip between seeds in the least stable categories, and what they share.

``model``: the state (:class:`ExplorerModel`, built by :func:`build_explorer`); ``widget``: the notebook widget
(:func:`explore`); ``html``: static tables where no widget runs; ``payload``: the JSON data of the report's
``explorer.html``; ``format``: seed labels, colours and rounding shared by every view. The figure of one
category's flipping examples is :func:`diagnostics.plots.flips.flipping_figure`.
"""

from __future__ import annotations

from diagnostics.lazy import lazy_exports

_EXPORTS = {
    "Explorer": "widget",
    "ExplorerModel": "model",
    "ExplorerWidget": "widget",
    "FILTERS": "model",
    "PAYLOAD_NAME": "payload",
    "ROW_LIMIT": "format",
    "build_explorer": "model",
    "build_payload": "payload",
    "cell_class": "widget",
    "display_round": "format",
    "explore": "widget",
    "legend_html": "format",
    "mcc_color": "format",
    "read_payload": "payload",
    "run_label": "format",
    "save_payload": "payload",
    "two_decimals": "format",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
