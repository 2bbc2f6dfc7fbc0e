"""Parse the ``lexicon`` of a template file and the typed ``slots`` of its tests, with ``file:line`` errors."""

from __future__ import annotations

import re

from ._errors import TemplateError
from ._specs import FORM_NAME, GENDERS, NAME, Filler, SlotSpec, entry_matches
from ._yamllines import line_of

_ENTRY_RESERVED = {"text", "gender", "tags"}
_BOUND = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:([+-])\s*(\d+))?\s*$")


def parse_lexicons(path, raw) -> dict[str, list[Filler]]:
    """Parse the ``lexicon`` mapping of a template file: lexicon name -> its entries, in file order.

    ``raw`` is as read by :func:`diagnostics.behave._yamllines.load_yaml`; ``path`` is for error messages. A malformed
    lexicon or entry raises ``TemplateError`` with ``file:line``.
    """
    if not isinstance(raw, dict) or not raw:
        raise TemplateError(path, getattr(raw, "line", None), "'lexicon' as a mapping of name -> list of entries",
                            repr(raw)[:60])
    lexicons = {}
    for name, entries in raw.items():
        line = line_of(raw, name)
        if not isinstance(name, str) or not NAME.match(name):
            raise TemplateError(path, line, "a lexicon name (letters, digits, _)", repr(name))
        if not isinstance(entries, list) or not entries:
            raise TemplateError(path, line, f"lexicon {name!r} as a non-empty list", repr(entries)[:60])
        lexicons[name] = [_parse_entry(path, e, line_of(entries, i, line)) for i, e in enumerate(entries)]
    return lexicons


def _parse_entry(path, raw, line) -> Filler:
    """One lexicon entry: a string, or a mapping of text / gender / tags / named forms."""
    if isinstance(raw, str):
        if not raw.strip():
            raise TemplateError(path, line, "a non-empty lexicon entry", repr(raw))
        return Filler(text=raw)
    if not isinstance(raw, dict):
        raise TemplateError(path, line, "a lexicon entry (a string or a mapping with text / gender / forms)",
                            repr(raw))
    gender = raw.get("gender")
    if gender is not None and gender not in GENDERS:
        raise TemplateError(path, line_of(raw, "gender", line), f"gender in {{{', '.join(GENDERS)}}}", repr(gender))
    tags = raw.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise TemplateError(path, line_of(raw, "tags", line), "tags as a list of strings", repr(tags))
    forms = {}
    for key, value in raw.items():
        if key in _ENTRY_RESERVED:
            continue
        if not isinstance(key, str) or not FORM_NAME.match(key) or not isinstance(value, str) or not value.strip():
            raise TemplateError(path, line_of(raw, key, line),
                                "a form name (letters, digits, _ +) mapped to a non-empty string",
                                f"{key!r}: {value!r}")
        forms[key] = value
    text = raw.get("text")
    if text is not None and (not isinstance(text, str) or not text.strip()):
        raise TemplateError(path, line_of(raw, "text", line), "text as a non-empty string", repr(text))
    if text is None and not forms:
        raise TemplateError(path, line, "an entry with text or at least one named form", repr(dict(raw)))
    return Filler(text=text, gender=gender, tags=tuple(tags), forms=forms)


def parse_slots(path, raw, line: int | None, lexicons: dict[str, list[Filler]]) -> dict[str, SlotSpec]:
    """Parse the ``slots`` of an MFT test: lexicon slots (optionally filtered) and integer ranges.

    ``raw`` maps slot name -> lexicon name, ``{from: lexicon, where: {...}}`` or ``{int: [lo, hi]}``; ``path`` and
    ``line`` (of the ``slots`` key) are for error messages; ``lexicons`` are the file's (:func:`parse_lexicons`). The
    slots come in file order; an integer bound may refer to an earlier integer slot (``n-1``). An unknown lexicon, a
    filter no entry matches, a bad bound ... raise ``TemplateError`` with ``file:line``.
    """
    if not isinstance(raw, dict) or not raw:
        raise TemplateError(path, line, "'slots' as a mapping of slot -> lexicon name or {int: [lo, hi]}", repr(raw))
    slots, ints = {}, set()
    for name, spec in raw.items():
        sline = line_of(raw, name, line)
        if not isinstance(name, str) or not NAME.match(name):
            raise TemplateError(path, sline, "a slot name (letters, digits, _)", repr(name))
        if isinstance(spec, str):
            spec = {"from": spec}
        if not isinstance(spec, dict):
            raise TemplateError(path, sline, "a lexicon name, {from: lexicon, where: {...}} or {int: [lo, hi]}",
                                repr(spec))
        if "int" in spec:
            bounds = spec["int"]
            if not isinstance(bounds, list) or len(bounds) != 2 or set(spec) != {"int"}:
                raise TemplateError(path, sline, "{int: [lo, hi]}", repr(dict(spec)))
            slots[name] = SlotSpec(name, bounds=tuple(_parse_bound(path, sline, b, ints) for b in bounds))
            ints.add(name)
            continue
        slots[name] = _lexicon_slot(path, sline, name, spec, lexicons)
    return slots


def _lexicon_slot(path, line, name: str, spec: dict, lexicons: dict[str, list[Filler]]) -> SlotSpec:
    """A slot filled from a lexicon, checked to have at least one entry passing its ``where`` filter."""
    lexicon = spec.get("from")
    if set(spec) - {"from", "where"}:
        raise TemplateError(path, line, "slot keys from / where / int", repr(sorted(spec)))
    if lexicon not in lexicons:
        raise TemplateError(path, line, f"a lexicon defined in this file ({', '.join(lexicons)})", repr(lexicon))
    where = spec.get("where", {})
    if not isinstance(where, dict) or not all(isinstance(v, str) for v in where.values()):
        raise TemplateError(path, line, "where: a mapping attribute -> value", repr(where))
    slot = SlotSpec(name, lexicon=lexicon, where=tuple(sorted(where.items())))
    if not [e for e in lexicons[lexicon] if entry_matches(e, slot.where)]:
        raise TemplateError(path, line, f"at least one entry of {lexicon!r} matching {dict(where)}", "none")
    return slot


def _parse_bound(path, line, value, earlier_ints):
    """An integer bound: a literal, or ``(slot, offset)`` for ``<earlier int slot> +/- k``."""
    if isinstance(value, bool):
        raise TemplateError(path, line, "an integer bound", repr(value))
    if isinstance(value, int):
        return value
    match = _BOUND.match(str(value))
    if not match or match.group(1) not in earlier_ints:
        raise TemplateError(path, line,
                            f"an integer or '<earlier int slot> +/- k' (int slots so far: {sorted(earlier_ints)})",
                            repr(value))
    offset = int(match.group(3) or 0) * (-1 if match.group(2) == "-" else 1)
    return (match.group(1), offset)
