"""Bundled datasets, strict readers and the single entry point :func:`load`.

>>> from diagnostics import data
>>> data.load("lidirus").shape[0]
1104
"""

from .errors import DataFormatError
from .export import to_hf
from .normalise import normalise_csv_quotes
from .registry import REGISTRY, DatasetSpec, available, datasets_root, get_spec, load, manifest, register

__all__ = ["DataFormatError", "DatasetSpec", "REGISTRY", "available", "datasets_root", "get_spec", "load",
           "manifest", "normalise_csv_quotes", "register", "to_hf"]
