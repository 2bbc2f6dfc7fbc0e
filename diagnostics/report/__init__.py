"""Render executed analysis notebooks of a finished run directory into one self-contained HTML report."""

from .html import render_report

__all__ = ["render_report"]
