"""Annotations cached on disk, keyed by the texts and the rules file, so processes (sweep workers, notebooks,
the probes) annotate a training set once.

One entry is ``annotations-<lang>-<key>.json`` in the cache folder, written atomically; ``key`` hashes the
language, the reading (pair or presence), the rules file's sha256, the features asked for (when not all) and every
premise and hypothesis.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from ..core.hashing import text_hash
from ..core.io_utils import write_json_atomic

COLUMNS = ("auto_coarse", "auto_features")


def rules_digest(lang: str | Path) -> str:
    """Hash the rules file of a language code or rules path with sha256.

    Parameters
    ----------
    lang : str or Path
        A language code (``annotators/<lang>.yaml``) or a rules file.

    Returns
    -------
    str
        The hex digest of the file's bytes.
    """
    from ._rules import rules_path

    return hashlib.sha256(Path(rules_path(lang)).read_bytes()).hexdigest()


def annotate_cached(frame: pd.DataFrame, lang: str | Path, cache_dir: str | Path | None, *,
                    presence: bool = False, progress: bool = False,
                    features: Sequence[str] | None = None) -> pd.DataFrame:
    """:func:`diagnostics.annotate.annotate`, reusing an earlier result for the same texts and rules.

    Parameters
    ----------
    frame : pandas.DataFrame
        ``premise`` and ``hypothesis`` columns.
    lang : str or Path
        Language code or rules file.
    cache_dir : str or Path, optional
        Cache folder; None annotates without caching.
    presence : bool
        Count a feature when either sentence shows it (see :func:`diagnostics.annotate.annotate`).
    progress : bool
        Show a progress bar while annotating.
    features : sequence of str, optional
        Annotate only these features (see :func:`diagnostics.annotate.annotate`); cached apart from the whole set.

    Returns
    -------
    pandas.DataFrame
        ``frame`` with ``auto_coarse`` and ``auto_features`` (lists of category names).
    """
    from ._engine import annotate

    path = None
    if cache_dir is not None:
        texts = [text for column in ("premise", "hypothesis") for text in frame[column].fillna("").astype(str)]
        only = [] if features is None else ["features:" + ",".join(features)]
        key = text_hash([str(lang), str(bool(presence)), rules_digest(lang), *only, *texts])[:24]
        path = Path(cache_dir) / f"annotations-{Path(str(lang)).stem}-{key}.json"
        if path.is_file():
            cached = json.loads(path.read_text(encoding="utf-8"))
            if all(len(cached.get(c, ())) == len(frame) for c in COLUMNS):
                return frame.assign(**{c: cached[c] for c in COLUMNS})
    annotated = annotate(frame, lang, progress=progress, presence=presence, features=features)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_json_atomic(path, {c: [list(x) for x in annotated[c]] for c in COLUMNS}, indent=None, sort_keys=False,
                          default=None)
    return annotated
