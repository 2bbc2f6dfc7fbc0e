"""Render executed analysis notebooks of a finished run directory into one self-contained HTML report.

:func:`render_report` writes ``index.html`` (and ``explorer.html`` when notebook 10 left the explorer's data);
:func:`render_explorer` writes the instability explorer's page alone, e.g. for two systems side by side
(:meth:`diagnostics.explorer.ComparisonModel.payload`). :func:`use_breakable_headers` makes a notebook's wide tables
wrap their headers as the report's do (:func:`breakable_headers`).
"""

from __future__ import annotations

from diagnostics.core.lazy import lazy_exports

_EXPORTS = {
    # tables whose headers break after underscores: the report's and (through notebook_paths) the notebooks'
    "breakable_headers": "_tables",
    "use_breakable_headers": "_tables",
    "render_explorer": "_explorer",
    "render_report": "_html",
    # what `diagnostics report --compare-a/--compare-b` checks before anything is written
    "resolve_pair": "_explorer_compare",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
