"""CheckList-style behavioural tests for NLI (MFT / INV / DIR) in en, ru, fr, de, sv, and their seed stability.

Templates with typed slots and per-language lexicons live in ``annotators/behave/<lang>.yaml``;
:func:`generate_suite` turns them into cases (seeded, capped per test), :func:`save_suite` /
:func:`load_suite` keep suites as jsonl, :func:`run_suite` / :func:`run_sweep` evaluate models, and
:func:`failure_rates` / :func:`summarise_across_seeds` aggregate. torch is imported only when a model folder
is loaded.
"""

from __future__ import annotations

from diagnostics.lazy import lazy_exports

_EXPORTS = {
    "SuiteFormatError": "errors", "TemplateError": "errors", "generate_suite": "generate",
    "generate_suites": "generate", "generate_test": "generate", "SeedSummary": "runner", "as_predictor": "runner",
    "failure_rates": "runner", "rs_corr": "runner", "run_suite": "runner", "run_sweep": "runner",
    "summarise_across_seeds": "runner", "Case": "suite", "load_suite": "suite", "save_suite": "suite",
    "suite_frame": "suite", "render": "rendering", "available_languages": "templates", "load_templates": "templates",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
