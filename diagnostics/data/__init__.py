"""Bundled datasets, strict readers and the single entry point :func:`load`.

>>> from diagnostics import data
>>> data.load("lidirus").shape[0]
1104
"""

from .errors import DataFormatError
from .export import to_hf
from .normalise import normalise_csv_quotes
from .registry import (REGISTRY, USER_LANGUAGES, DatasetSpec, available, bind_files, datasets_root, get_spec, load,
                       manifest, register, user_dataset)
from .summary import dataset_statistics, words

__all__ = ["DataFormatError", "DatasetSpec", "REGISTRY", "USER_LANGUAGES", "available", "bind_files",
           "dataset_statistics", "datasets_root", "get_spec", "load", "manifest", "normalise_csv_quotes", "register",
           "to_hf", "user_dataset", "words"]
