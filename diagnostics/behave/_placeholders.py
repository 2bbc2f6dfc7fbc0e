"""Placeholder syntax of template sentences: ``{a}``, ``{a.form}``, ``{a.gen_@b}`` and ``{a|m:x|f:y|other:z}``."""

from __future__ import annotations

import re

from ._errors import TemplateError
from ._specs import FORM_NAME

PLACEHOLDER = re.compile(r"\{([^{}]*)\}")
#: ``@slot`` inside a form name: the gender or plural category of that slot's filler.
AGREEMENT_REF = re.compile(r"@([A-Za-z_][A-Za-z0-9_]*)")


def split_placeholder(inner: str) -> tuple[str, str | None, list | None]:
    """Split the inside of a placeholder (the text between the braces) into slot, form and choices.

    ``"a.gent"`` -> ``("a", "gent", None)``; ``"a|m:x|f:y"`` -> ``("a", None, [("m", "x"), ("f", "y")])``. A choice
    without ``key:`` has key ``None``.
    """
    head, *options = inner.split("|")
    slot, _, form = head.strip().partition(".")
    choices = None
    if options:
        choices = []
        for option in options:
            key, sep, text = option.partition(":")
            choices.append((key.strip(), text) if sep else (None, option))
    return slot.strip(), (form.strip() or None), choices


def check_text(path, line: int | None, text, slots: dict, what: str) -> None:
    """Validate a template sentence: non-empty, balanced braces, placeholders naming slots of the test.

    ``slots`` holds the test's slots by name. ``path``, ``line`` and ``what`` (``premise``, ``perturb.hypothesis`` ...)
    are for the message of the ``TemplateError`` (with ``file:line``) raised on any malformed part.
    """
    if not isinstance(text, str) or not text.strip():
        raise TemplateError(path, line, f"{what} as a non-empty string", repr(text))
    if text.count("{") != text.count("}"):
        raise TemplateError(path, line, f"balanced braces in {what}", repr(text))
    for match in PLACEHOLDER.finditer(text):
        slot, form, choices = split_placeholder(match.group(1))
        refs = [slot] + AGREEMENT_REF.findall(form or "")
        for ref in refs:
            if ref not in slots:
                raise TemplateError(path, line, f"a slot of this test ({', '.join(slots)}) in {{{match.group(1)}}}",
                                    repr(ref))
        if form is not None and not FORM_NAME.match(form):
            raise TemplateError(path, line, "a form name of letters, digits, _ + @", repr(form))
        if choices is not None and any(k is None for k, _ in choices):
            raise TemplateError(path, line, "choices written key:text|key:text", repr(match.group(1)))
