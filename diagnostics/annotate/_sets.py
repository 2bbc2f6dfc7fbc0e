"""The annotator's features of whole data sets, for slicing a model's results by feature (each pair annotated once)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from ..core.errors import UserInputError


def annotate_sets(frames: Mapping[str, pd.DataFrame], cache_dir: str | Path | None = None, *,
                  language: str | None = None, progress: bool = False) -> dict[str, pd.DataFrame]:
    """Annotate every pair of some data sets with the rule annotator of their language, cached on disk.

    Parameters
    ----------
    frames : mapping of str to pandas.DataFrame
        Data set name -> its table (``id``, ``premise``, ``hypothesis`` and, unless ``language`` is given, a
        ``language`` column), e.g. from :func:`diagnostics.data.load`.
    cache_dir : str or Path, optional
        Where :func:`~diagnostics.annotate.annotate_cached` keeps the annotations (``None``: not cached).
    language : str, optional
        The language of every set (default: each set's ``language`` column).
    progress : bool
        Show a progress bar while annotating.

    Returns
    -------
    dict of str to pandas.DataFrame
        Data set name -> ``id``, ``language`` and ``auto_features`` (lists of fine feature names), for
        :func:`diagnostics.stats.feature_slices`.

    Raises
    ------
    UserInputError
        A set without a language, or in a language that has no annotator rules.
    """
    from ._cache import annotate_cached
    from ._rules import available_languages

    out = {}
    for name, frame in frames.items():
        lang = language
        if lang is None:
            found = frame["language"].dropna().astype(str).unique() if "language" in frame.columns else []
            if len(found) != 1:
                raise UserInputError(f"data set {name}: cannot tell its language (found {list(found) or 'none'}); "
                                     "name it (--language)")
            lang = found[0]
        if lang not in available_languages():
            raise UserInputError(f"data set {name}: no annotator rules for language {lang!r} (rules exist for "
                                 f"{', '.join(available_languages())})")
        pairs = frame[["premise", "hypothesis"]].fillna("").astype(str)
        annotated = annotate_cached(pairs, lang, cache_dir, progress=progress)
        out[name] = pd.DataFrame({"id": frame["id"].astype(str).to_numpy(), "language": lang,
                                  "auto_features": [list(f) for f in annotated["auto_features"]]})
    return out
