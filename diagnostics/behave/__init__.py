"""CheckList-style behavioural tests for NLI (MFT / INV / DIR) in en, ru, fr, de, sv, and their seed stability.

Templates with typed slots and per-language lexicons live in ``annotators/behave/<lang>.yaml``;
:func:`generate_suite` turns them into cases (seeded, capped per test), :func:`save_suite` /
:func:`load_suite` keep suites as jsonl, :func:`run_suite` / :func:`run_sweep` evaluate models, and
:func:`failure_rates` / :func:`summarise_across_seeds` aggregate. torch is imported only when a model folder
is loaded.
"""

from __future__ import annotations

from diagnostics.core.lazy import lazy_exports

_EXPORTS = {
    "SuiteFormatError": "_errors", "TemplateError": "_errors", "generate_suite": "_generate",
    "generate_suites": "_generate", "generate_test": "_generate", "SeedSummary": "_runner", "as_predictor": "_runner",
    "failure_rates": "_runner", "rs_corr": "_runner", "run_suite": "_runner", "run_sweep": "_runner",
    "summarise_across_seeds": "_runner", "Case": "_suite", "load_suite": "_suite", "save_suite": "_suite",
    "suite_frame": "_suite", "render": "_rendering", "available_languages": "_templates",
    "load_templates": "_templates",
    # used by the other stages, the notebooks and the docs
    "LexicalOverlapPredictor": "_baselines", "render_with": "_generate",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
