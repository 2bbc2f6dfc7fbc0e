"""Bundled datasets, strict readers and the single entry point :func:`load`.

>>> from diagnostics import data
>>> data.load("lidirus").shape[0]
1104
"""

from __future__ import annotations

from diagnostics.lazy import lazy_exports

_EXPORTS = {
    "DataFormatError": "errors", "DataRef": "refs", "to_hf": "export", "normalise_csv_quotes": "normalise",
    "REGISTRY": "registry",
    "USER_LANGUAGES": "registry", "DatasetSpec": "registry", "available": "registry",
    "datasets_root": "registry", "get_spec": "registry", "load": "registry", "manifest": "registry",
    "register": "registry", "user_dataset": "registry", "dataset_statistics": "summary", "words": "summary",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
