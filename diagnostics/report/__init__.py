"""Render executed analysis notebooks of a finished run directory into one self-contained HTML report."""

from __future__ import annotations

from diagnostics.lazy import lazy_exports

_EXPORTS = {
    "render_report": "_html",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
