"""The datasets of a plan that stand in for the study's own (SweDiagnostics for its Swedish translation, the bundled
SICK for MNLI), recorded in ``pipeline.json`` and said as notices."""

from __future__ import annotations

from diagnostics.finetune import SweepConfig


#: Dataset -> (what it is, what the study used in its place); see :mod:`diagnostics.data._labels`.
STUDY_SETS = {"swediagnostics": ("SweDiagnostics (SuperLim 2)", "the study's Swedish diagnostic (the authors' "
                                 "translation of the English set, not public)"),
              "sick": ("the bundled SICK", "MNLI, the study's extra English data")}


def substitutions(configs: dict[str, SweepConfig]) -> dict[str, list[dict[str, str]]]:
    """Collect, per language, the datasets of a plan that stand in for the study's.

    A language scored on SweDiagnostics (SuperLim 2) instead of the study's own Swedish translation, and the
    bundled SICK trained on instead of MNLI, are listed here; the pipeline records them in ``pipeline.json``
    (:func:`diagnostics.pipeline._inputs.load_substitutions`) and says them as notices. ``configs`` are the
    plan's sweeps (:func:`experiment_configs`). Returns language -> ``{"dataset", "role", "name", "label",
    "instead_of"}`` per substitute: ``role`` ``diagnostic`` or ``extra``, ``name`` what it is, ``label`` the
    column label of :func:`diagnostics.data.display_language` (``sv (SweDiagnostics)``), ``instead_of`` what the
    study used; languages without any are left out.
    """
    from diagnostics.data import SUBSTITUTE_SETS, display_language

    out: dict[str, list[dict[str, str]]] = {}

    def add(language: str, entry: dict[str, str]) -> None:
        if entry not in out.setdefault(language, []):
            out[language].append(entry)

    for config in configs.values():
        for language in config.languages:
            for ref in config.language_data(language)["diagnostics"]:
                if ref.name in SUBSTITUTE_SETS and ref.path is None:
                    name, instead_of = STUDY_SETS.get(ref.name, (SUBSTITUTE_SETS[ref.name], "the study's set"))
                    add(language, {"dataset": ref.name, "role": "diagnostic", "name": name,
                                   "label": display_language(language, ref.name), "instead_of": instead_of})
            if config.extra_data is not None and config.extra_data.name == "sick":
                name, instead_of = STUDY_SETS["sick"]
                add(language, {"dataset": "sick", "role": "extra", "name": name, "label": "SICK",
                               "instead_of": instead_of})
    return out
