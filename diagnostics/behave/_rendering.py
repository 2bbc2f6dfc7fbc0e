"""Fill the placeholders of a template sentence from the fillers bound to its slots."""

from __future__ import annotations

import re

from ._errors import TemplateError
from ._forms import agreement_key, form_of
from ._placeholders import AGREEMENT_REF, PLACEHOLDER, split_placeholder


def render(text: str, assignment: dict, language: str, *, path: str = "<template>", line: int | None = None) -> str:
    """Fill the placeholders of ``text`` from ``assignment`` (slot -> :class:`~diagnostics.behave._specs.Filler`).

    Parameters
    ----------
    text : str
        A template sentence (see :mod:`diagnostics.behave._templates` for the placeholder syntax).
    assignment : dict
        A filler for every slot the sentence names.
    language : str
        Language code (plural rules, Russian inflection).
    path : str
        The template file, for error messages.
    line : int, optional
        Line of the sentence in the file, for error messages.

    Returns
    -------
    str
        The sentence with every placeholder replaced.

    Raises
    ------
    TemplateError
        If a form is missing for the bound filler or no choice matches (names the template's file and line).
    """

    def substitute(match: re.Match) -> str:
        """The text of one placeholder."""
        slot, form, choices = split_placeholder(match.group(1))
        filler = assignment[slot]
        if choices is not None:
            return _choose(filler, choices, language, match.group(1), path, line)
        if form is None:
            if filler.value is not None:
                return str(filler.value)
            if filler.text is None:
                raise TemplateError(path, line, f"text for {{{slot}}} (entry has only forms {sorted(filler.forms)})",
                                    repr(filler.forms))
            return filler.text
        resolved = AGREEMENT_REF.sub(lambda m: str(agreement_key(assignment[m.group(1)], language)), form)
        value = form_of(filler, resolved, language)
        if value is None:
            raise TemplateError(path, line, f"form {resolved!r} of {filler.surface!r} in {{{match.group(1)}}} "
                                            f"(listed forms: {sorted(filler.forms) or 'none'})", "no such form")
        return value

    return PLACEHOLDER.sub(substitute, text)


def _choose(filler, choices: list, language: str, placeholder: str, path: str, line: int | None) -> str:
    """The choice for the filler's agreement key, else for one of its tags, else ``other``."""
    keys = [agreement_key(filler, language), *filler.tags, "other"]
    table = dict(choices)
    for key in keys:
        if key is not None and key in table:
            return table[key]
    raise TemplateError(path, line, f"a choice for {keys[:-1]} (or 'other') in {{{placeholder}}}",
                        f"{filler.surface!r} with choices {list(table)}")
