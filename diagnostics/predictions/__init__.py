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
  :func:`mcnemar_exact`; the figure and the files are drawn and written by
  :func:`diagnostics.plots.comparison_figure` and :func:`diagnostics.plots.write_comparison`.

>>> from diagnostics.predictions import match_key
>>> match_key("“Hi”,  she said.", "x") == match_key('"Hi", she said.', "x")
True
"""

from __future__ import annotations

from diagnostics.core.lazy import lazy_exports

_EXPORTS = {
    "Comparison": "_compare", "compare_tables": "_compare", "mcnemar_exact": "_compare", "to_columns": "_exporters",
    "to_lm_eval": "_exporters", "to_trainer": "_exporters",
    "write_table": "_exporters", "ImportRefusedError": "_importer", "ImportResult": "_importer",
    "import_predictions": "_importer", "import_with_report": "_importer", "parse_label_map": "_labels",
    "FORMATS": "_readers", "ROLES": "_readers", "detect_format": "_readers", "read_source": "_readers",
    "match_key": "_text",
    # used by the other stages, the notebooks and the docs
    **dict.fromkeys(["LABEL_NAMES", "label_key", "scores_to_predictions"], "_labels"),
    "normalise_text": "_text",
    "TABLE_SUFFIXES": "_exporters",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
