"""Bring your own predictions: import other tools' prediction files as the one predictions table, export it back,
and compare two systems per diagnostic category.

* import: :func:`import_predictions` (the table) and :func:`import_with_report` (the table and how every row
  matched: :class:`ImportResult`) read CSV / TSV / JSON lines / parquet tables with a column mapping,
  lm-evaluation-harness ``--log_samples`` files and ``Trainer.predict`` score arrays; rows are matched to the
  dataset by id, by normalised (premise, hypothesis) text (:func:`match_key`) or by position, and a partial match
  is refused unless asked for (:class:`ImportRefusedError`);
* export: :func:`to_columns`, :func:`to_lm_eval`, :func:`to_trainer`, and :func:`write_table` for the table itself;
* compare: :func:`compare_tables` (the report of :func:`diagnostics.stats.compare_settings` for two tables:
  per-category Multi-Bootstrap delta with adjusted p-values, McNemar's exact test for single runs),
  :func:`mcnemar_exact`; the figure and the files are drawn and written by :mod:`diagnostics.plots.compare`.

>>> from diagnostics.predictions import match_key
>>> match_key("“Hi”,  she said.", "x") == match_key('"Hi", she said.', "x")
True
"""

from __future__ import annotations

from diagnostics.lazy import lazy_exports

_EXPORTS = {
    "Comparison": "compare", "compare_tables": "compare", "mcnemar_exact": "compare", "to_columns": "exporters",
    "to_lm_eval": "exporters", "to_trainer": "exporters",
    "write_table": "exporters", "ImportRefusedError": "importer", "ImportResult": "importer",
    "import_predictions": "importer", "import_with_report": "importer", "parse_label_map": "labels",
    "FORMATS": "readers", "ROLES": "readers", "detect_format": "readers", "read_source": "readers", "match_key": "text",
    "normalise_text": "text",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
