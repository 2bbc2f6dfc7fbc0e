"""The file formats a user's file may be read as (no pandas: the command line's help text needs them at start)."""

from __future__ import annotations

#: File-format kinds a user's file may be read as (``--kind`` of ``diagnostics data validate`` and
#: ``diagnostics annotate``) -> the registered dataset whose reader reads it (``load(KINDS[kind], path=...)``).
KINDS = {"rte": "rte_format", "diagnostic": "diagnostic_format", "swediagnostics": "swediagnostics",
         "glue-tsv": "axb", "sick": "sick", "mnli": "mnli"}
