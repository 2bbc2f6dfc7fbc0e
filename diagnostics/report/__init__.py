"""Render executed analysis notebooks of a finished run directory into one self-contained HTML report.

:func:`render_report` writes ``index.html`` (and ``explorer.html`` when notebook 10 left the explorer's data);
:func:`render_explorer` writes the instability explorer's page alone, e.g. for two systems side by side
(:meth:`diagnostics.explorer.ComparisonModel.payload`).
"""

from __future__ import annotations

from diagnostics.core.lazy import lazy_exports

_EXPORTS = {
    "render_explorer": "_explorer",
    "render_report": "_html",
    # what `diagnostics report --compare-a/--compare-b` checks before anything is written
    "resolve_pair": "_explorer_compare",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
