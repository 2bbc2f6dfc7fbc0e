"""An encoder loader for probing tests that loads each model once and counts the requests (vector-cache misses)."""

from __future__ import annotations

from diagnostics.probe import load_encoder


class CountingEncoder:
    """Loads each model once, counts how often the probing code asks for one (vector-cache misses)."""

    def __init__(self):
        self.calls = []
        self._loaded = {}

    def __call__(self, folder):
        self.calls.append(folder)
        if str(folder) not in self._loaded:
            self._loaded[str(folder)] = load_encoder(folder)
        return self._loaded[str(folder)]
