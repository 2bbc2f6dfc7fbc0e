"""Bundled datasets, strict readers and the single entry point :func:`load`.

>>> from diagnostics import data
>>> data.load("lidirus").shape[0]
1104
"""

from __future__ import annotations

from diagnostics.core.lazy import lazy_exports

_EXPORTS = {
    "DataFormatError": "_errors", "DataRef": "_refs", "to_hf": "_export", "normalise_csv_quotes": "_normalise",
    "REGISTRY": "_registry",
    "USER_LANGUAGES": "_registry", "DatasetSpec": "_registry", "available": "_registry",
    "datasets_root": "_registry", "get_spec": "_registry", "load": "_registry", "manifest": "_registry",
    "register": "_registry", "user_dataset": "_registry", "dataset_statistics": "_summary", "words": "_summary",
    # used by the other stages, the notebooks and the docs
    "shorten": "_errors",
    "KINDS": "_kinds",
    **dict.fromkeys(["SUBSTITUTE_SETS", "display_language"], "_labels"),
    **dict.fromkeys(["THREE_WAY", "collapse"], "_readers"),
    "user_file_refs": "_refs",
    "category_counts": "_summary",
    "summarise": "_summary",
    "compare_diagnostics": "_consistency",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
