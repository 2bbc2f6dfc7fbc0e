"""The reference study (Tikhonova et al., 2022) reproduced: every number it prints beside ours, in our distribution.

Built on the general statistics of :mod:`diagnostics.stats` (and the probing feature list of
:mod:`diagnostics.probe`); pure numpy / pandas / scipy. Functional API:

* the study's numbers: :func:`paper_numbers` (package data ``paper_numbers.csv``: one row per printed number, with
  its section, experiment, language, category, seed, statistic and kind)
* against the study: :func:`against_paper` (our value beside every number the paper prints, placed in our
  distribution: an interval over our seeds, the verdict, whether the comparison means anything),
  :func:`paper_verdict` (that in one line), :func:`paper_chance` (how many numbers would be outside by chance)
* display: :func:`paper_table`, :func:`format_number` and :func:`number_label` show such tables (significant
  digits, one dash for missing values, long text wrapped)
"""

from __future__ import annotations

from diagnostics.core.lazy import lazy_exports

_EXPORTS = {
    "paper_numbers": "_numbers",
    **dict.fromkeys(["against_paper", "paper_chance", "paper_verdict"], "_compare"),
    **dict.fromkeys(["format_number", "number_label", "paper_table"], "_display"),
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
