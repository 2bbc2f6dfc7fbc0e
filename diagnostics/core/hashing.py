"""Content hashes shared by the on-disk caches (probe vectors, annotations)."""

from __future__ import annotations

import hashlib


def text_hash(texts: list[str]) -> str:
    """Hash an ordered list of texts with sha256 (length-prefixed UTF-8, so no two lists collide by concatenation).

    Parameters
    ----------
    texts : list of str
        The texts, in order (non-strings are hashed as ``str(text)``).

    Returns
    -------
    str
        Hex digest.
    """
    h = hashlib.sha256()
    for text in texts:
        raw = str(text).encode("utf-8")
        h.update(len(raw).to_bytes(8, "little"))
        h.update(raw)
    return h.hexdigest()
