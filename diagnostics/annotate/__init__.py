"""Rule-based diagnostic feature annotation (rules as data in ``annotators/<lang>.yaml``).

>>> from diagnostics import annotate, data
>>> annotate.annotate(data.load("axb").head(2), "en")["auto_features"].tolist()  # doctest: +SKIP
[['Negation'], ['Negation']]

Heavy imports (spaCy, pymorphy3) happen on first use, not on ``import diagnostics.annotate``.
"""

from __future__ import annotations

from diagnostics.core.lazy import lazy_exports

_EXPORTS = {
    "annotate": "_engine", "supported_features": "_engine", "get_annotator": "_engine", "Annotator": "_engine",
    "evaluate": "_evaluation", "score": "_evaluation", "feature_distribution": "_evaluation",
    "diagnostic_set": "_evaluation", "split_half": "_evaluation",
    "load_rules": "_rules", "RulesError": "_rules", "RuleSet": "_rules", "available_languages": "_rules",
    "annotators_root": "_rules", "annotate_cached": "_cache", "rules_digest": "_cache",
    "register_backend": "_backends", "get_pipeline": "_backends", "morph_analyzer": "_backends",
    "write_template": "_template", "available_backends": "_template", "TEMPLATE_FEATURES": "_template",
    "agreement": "_agreement", "AGREEMENT_COLUMNS": "_agreement",
    "annotate_sets": "_sets",
    # what the commands use
    **dict.fromkeys(["check_output", "read_input", "write_output"], "_io"), "DIAGNOSTIC_SETS": "_evaluation",
    "tracking": "_agreement",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
