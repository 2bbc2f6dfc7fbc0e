"""Display labels of a language's column in tables and figures, naming a substitute diagnostic set.

The reference study scores Swedish on its own translation of the diagnostic set; the Swedish set bundled here is
SweDiagnostics (SuperLim), a different set of pairs. A column scored on it is labelled ``"sv (SweDiagnostics)"``
so that no table or figure passes it off as the study's Swedish column.
"""

from __future__ import annotations

#: Dataset name -> the name shown after the language code, for sets that are not the study's own.
SUBSTITUTE_SETS = {"swediagnostics": "SweDiagnostics"}


def display_language(language: str, dataset: str | None = None) -> str:
    """The label of a language's column: the code, plus the diagnostic set when it substitutes the study's.

    Parameters
    ----------
    language : str
        Language code (``"en"``, ``"sv"``).
    dataset : str, optional
        Name of the diagnostic set the language was scored on (``"swediagnostics"``).

    Returns
    -------
    str
        ``"sv (SweDiagnostics)"`` for a language scored on ``swediagnostics``, else ``language`` unchanged.
    """
    name = SUBSTITUTE_SETS.get(str(dataset)) if dataset is not None else None
    return f"{language} ({name})" if name else str(language)
