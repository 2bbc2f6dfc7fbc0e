"""Template files: per-language lexicons and behavioural tests with typed slots.

A file ``annotators/behave/<lang>.yaml`` has three keys (see ``annotators/behave/README.md``)::

    language: en
    lexicon:                      # lexicon name -> entries
      name:
        - {text: John, gender: m}
      profession:
        - {text: engineer, indef: an engineer}    # extra keys are named forms: {p.indef}
    tests:                        # test id -> definition
      negation_mft:
        name: Negated premise does not entail the affirmative
        capability: Negation      # a fine category of diagnostics.taxonomy (or Typos / Punctuation)
        type: MFT
        label: not_entailment
        slots: {a: name, p: profession, n: {int: [2, 9]}, m: {int: [1, n-1]}}
        premise: "{a} is not {p.indef}."
        hypothesis: "{a} is {p.indef}."
      ner_swap_inv:               # INV / DIR tests perturb the cases of an MFT test
        type: INV
        of: symmetry_mft
        perturb: {resample: [a]}

Placeholders: ``{a}`` the filler; ``{a.form}`` a named form (``@b`` inside the form name is replaced by the
gender of ``b``, or by the CLDR plural category when ``b`` is a number: ``{x.gen_@n}``); for Russian,
forms made of pymorphy3 grammemes (``{a.gent}``, ``{a.ablt}``) are inflected automatically unless the entry
lists them; ``{a|m:купил|f:купила}`` chooses text by the gender, plural category or tags of ``a``
(``other`` is the fallback).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from diagnostics.resources import annotators_dir
from diagnostics.schema import LABELS
from diagnostics.taxonomy import FINE, UnknownCategoryError, canonical_fine

from .errors import TemplateError
from .inflect import RU_GRAMMEMES, inflect_ru
from .plural import SUPPORTED, plural_category
from .yamllines import LineDict, LineList, line_of, load_yaml

TEST_TYPES = ("MFT", "INV", "DIR")
#: Capabilities outside the diagnostic taxonomy (robustness to surface noise).
EXTRA_CAPABILITIES = ("Typos", "Punctuation")
#: What INV / DIR cases expect of the model's two predictions.
EXPECTATIONS = {"INV": "same_prediction", "DIR": "entailment_must_not_stay"}
GENDERS = ("m", "f", "n")
_ENTRY_RESERVED = {"text", "gender", "tags"}
_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_FORM = re.compile(r"^[A-Za-z0-9_+@]+$")
_BOUND = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:([+-])\s*(\d+))?\s*$")
_PERTURB_KEYS = ("premise", "hypothesis", "resample", "typo", "punctuation")


@dataclass(frozen=True)
class Filler:
    """One lexicon entry (or a number) bound to a slot."""

    text: str | None
    gender: str | None = None
    tags: tuple[str, ...] = ()
    forms: dict = field(default_factory=dict, compare=False, hash=False)
    value: int | None = None

    @property
    def surface(self):
        """What a case records for this slot: the number, the text, or else the first listed form."""
        if self.value is not None:
            return self.value
        return self.text if self.text is not None else next(iter(self.forms.values()))


@dataclass(frozen=True)
class SlotSpec:
    """A typed slot: a lexicon (optionally filtered by ``where``) or an integer range."""

    name: str
    lexicon: str | None = None
    where: tuple[tuple[str, str], ...] = ()
    bounds: tuple = ()  # (lo, hi), each an int or (slot, offset)


@dataclass
class TestSpec:
    """One behavioural test as written in a template file."""

    id: str
    name: str
    capability: str
    type: str
    language: str
    path: str
    line: int
    label: str | None = None
    slots: dict = field(default_factory=dict)
    premise: str | None = None
    hypothesis: str | None = None
    of: str | None = None
    perturb: dict = field(default_factory=dict)
    lines: dict = field(default_factory=dict)

    @property
    def template(self) -> str:
        """Id of the template whose sentences the cases are built from (``of`` for INV / DIR)."""
        return self.of or self.id

    @property
    def expectation(self) -> str | None:
        """``same_prediction`` (INV), ``entailment_must_not_stay`` (DIR), ``None`` for MFT."""
        return EXPECTATIONS.get(self.type)


@dataclass
class TemplateSet:
    """A parsed template file: language, lexicons and tests (in file order)."""

    language: str
    path: str
    lexicons: dict
    tests: dict

    def __len__(self) -> int:
        return len(self.tests)


def templates_root() -> Path:
    """Folder holding the shipped template files (``annotators/behave`` under the project root)."""
    return annotators_dir() / "behave"


def available_languages() -> list[str]:
    """Language codes that have a template file in :func:`templates_root`."""
    return sorted(p.stem for p in templates_root().glob("*.yaml"))


def template_path(language_or_path: str | Path) -> Path:
    """Resolve a language code (``"ru"``) or a file path to a template file."""
    candidate = Path(language_or_path)
    if candidate.suffix in (".yaml", ".yml") or candidate.is_file():
        return candidate
    path = templates_root() / f"{language_or_path}.yaml"
    if not path.is_file():
        raise FileNotFoundError(f"no behavioural templates for language {language_or_path!r}; "
                                f"available: {', '.join(available_languages())}")
    return path


# ----------------------------------------------------------------------------------------------- parsing

def _err(path, line, expected, found):
    return TemplateError(path, line, expected, found)


def _parse_entry(path, raw, line) -> Filler:
    if isinstance(raw, str):
        if not raw.strip():
            raise _err(path, line, "a non-empty lexicon entry", repr(raw))
        return Filler(text=raw)
    if not isinstance(raw, dict):
        raise _err(path, line, "a lexicon entry (a string or a mapping with text / gender / forms)", repr(raw))
    gender = raw.get("gender")
    if gender is not None and gender not in GENDERS:
        raise _err(path, line_of(raw, "gender", line), f"gender in {{{', '.join(GENDERS)}}}", repr(gender))
    tags = raw.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise _err(path, line_of(raw, "tags", line), "tags as a list of strings", repr(tags))
    forms = {}
    for key, value in raw.items():
        if key in _ENTRY_RESERVED:
            continue
        if not isinstance(key, str) or not _FORM.match(key) or not isinstance(value, str) or not value.strip():
            raise _err(path, line_of(raw, key, line), "a form name (letters, digits, _ +) mapped to a non-empty string",
                       f"{key!r}: {value!r}")
        forms[key] = value
    text = raw.get("text")
    if text is not None and (not isinstance(text, str) or not text.strip()):
        raise _err(path, line_of(raw, "text", line), "text as a non-empty string", repr(text))
    if text is None and not forms:
        raise _err(path, line, "an entry with text or at least one named form", repr(dict(raw)))
    return Filler(text=text, gender=gender, tags=tuple(tags), forms=forms)


def _parse_lexicons(path, raw) -> dict:
    if not isinstance(raw, dict) or not raw:
        raise _err(path, getattr(raw, "line", None), "'lexicon' as a mapping of name -> list of entries", repr(raw)[:60])
    lexicons = {}
    for name, entries in raw.items():
        line = line_of(raw, name)
        if not isinstance(name, str) or not _NAME.match(name):
            raise _err(path, line, "a lexicon name (letters, digits, _)", repr(name))
        if not isinstance(entries, list) or not entries:
            raise _err(path, line, f"lexicon {name!r} as a non-empty list", repr(entries)[:60])
        lexicons[name] = [_parse_entry(path, e, line_of(entries, i, line)) for i, e in enumerate(entries)]
    return lexicons


def _parse_bound(path, line, value, earlier_ints):
    if isinstance(value, bool):
        raise _err(path, line, "an integer bound", repr(value))
    if isinstance(value, int):
        return value
    match = _BOUND.match(str(value))
    if not match or match.group(1) not in earlier_ints:
        raise _err(path, line, f"an integer or '<earlier int slot> +/- k' (int slots so far: {sorted(earlier_ints)})",
                   repr(value))
    offset = int(match.group(3) or 0) * (-1 if match.group(2) == "-" else 1)
    return (match.group(1), offset)


def _parse_slots(path, raw, line, lexicons) -> dict:
    if not isinstance(raw, dict) or not raw:
        raise _err(path, line, "'slots' as a mapping of slot -> lexicon name or {int: [lo, hi]}", repr(raw))
    slots, ints = {}, set()
    for name, spec in raw.items():
        sline = line_of(raw, name, line)
        if not isinstance(name, str) or not _NAME.match(name):
            raise _err(path, sline, "a slot name (letters, digits, _)", repr(name))
        if isinstance(spec, str):
            spec = {"from": spec}
        if not isinstance(spec, dict):
            raise _err(path, sline, "a lexicon name, {from: lexicon, where: {...}} or {int: [lo, hi]}", repr(spec))
        if "int" in spec:
            bounds = spec["int"]
            if not isinstance(bounds, list) or len(bounds) != 2 or set(spec) != {"int"}:
                raise _err(path, sline, "{int: [lo, hi]}", repr(dict(spec)))
            slots[name] = SlotSpec(name, bounds=tuple(_parse_bound(path, sline, b, ints) for b in bounds))
            ints.add(name)
            continue
        lexicon = spec.get("from")
        if set(spec) - {"from", "where"}:
            raise _err(path, sline, "slot keys from / where / int", repr(sorted(spec)))
        if lexicon not in lexicons:
            raise _err(path, sline, f"a lexicon defined in this file ({', '.join(lexicons)})", repr(lexicon))
        where = spec.get("where", {})
        if not isinstance(where, dict) or not all(isinstance(v, str) for v in where.values()):
            raise _err(path, sline, "where: a mapping attribute -> value", repr(where))
        slots[name] = SlotSpec(name, lexicon=lexicon, where=tuple(sorted(where.items())))
        if not [e for e in lexicons[lexicon] if _matches(e, slots[name].where)]:
            raise _err(path, sline, f"at least one entry of {lexicon!r} matching {dict(where)}", "none")
    return slots


def _matches(entry: Filler, where) -> bool:
    """Whether an entry satisfies a slot's ``where`` filter (``gender``, ``tag`` or a form's value)."""
    for key, value in where:
        if key == "gender":
            ok = entry.gender == value
        elif key == "tag":
            ok = value in entry.tags
        else:
            ok = entry.forms.get(key) == value
        if not ok:
            return False
    return True


def _check_text(path, line, text, slots, what) -> None:
    if not isinstance(text, str) or not text.strip():
        raise _err(path, line, f"{what} as a non-empty string", repr(text))
    if text.count("{") != text.count("}"):
        raise _err(path, line, f"balanced braces in {what}", repr(text))
    for match in _PLACEHOLDER.finditer(text):
        slot, form, choices = _split_placeholder(match.group(1))
        refs = [slot] + re.findall(r"@([A-Za-z_][A-Za-z0-9_]*)", form or "")
        for ref in refs:
            if ref not in slots:
                raise _err(path, line, f"a slot of this test ({', '.join(slots)}) in {{{match.group(1)}}}", repr(ref))
        if form is not None and not _FORM.match(form):
            raise _err(path, line, "a form name of letters, digits, _ + @", repr(form))
        if choices is not None and any(k is None for k, _ in choices):
            raise _err(path, line, "choices written key:text|key:text", repr(match.group(1)))


def _split_placeholder(inner: str):
    """``"a.gent"`` -> ("a", "gent", None); ``"a|m:x|f:y"`` -> ("a", None, [("m","x"), ("f","y")])."""
    head, *options = inner.split("|")
    slot, _, form = head.strip().partition(".")
    choices = None
    if options:
        choices = []
        for option in options:
            key, sep, text = option.partition(":")
            choices.append((key.strip(), text) if sep else (None, option))
    return slot.strip(), (form.strip() or None), choices


def _canonical_capability(path, line, value) -> str:
    if not isinstance(value, str):
        raise _err(path, line, "capability as a string", repr(value))
    if value in EXTRA_CAPABILITIES:
        return value
    try:
        return canonical_fine(value)
    except UnknownCategoryError as err:
        hint = f" (did you mean {err.suggestions[0]!r}?)" if err.suggestions else ""
        raise _err(path, line, f"a fine category of diagnostics.taxonomy or one of {EXTRA_CAPABILITIES}{hint}",
                   repr(value)) from None


def _parse_test(path, language, tid, raw, line, lexicons, parsed) -> TestSpec:
    if not isinstance(tid, str) or not _NAME.match(tid):
        raise _err(path, line, "a test id (letters, digits, _)", repr(tid))
    if not isinstance(raw, dict):
        raise _err(path, line, f"test {tid!r} as a mapping", repr(raw)[:60])
    known = {"name", "capability", "type", "label", "slots", "premise", "hypothesis", "of", "perturb"}
    extra = set(raw) - known
    if extra:
        raise _err(path, line_of(raw, sorted(extra)[0], line), f"test keys among {sorted(known)}", repr(sorted(extra)[0]))
    for key in ("name", "capability", "type"):
        if key not in raw:
            raise _err(path, line, f"key {key!r} in test {tid!r}", "nothing")
    ttype = raw["type"]
    if ttype not in TEST_TYPES:
        raise _err(path, line_of(raw, "type", line), f"type in {{{', '.join(TEST_TYPES)}}}", repr(ttype))
    spec = TestSpec(id=tid, name=str(raw["name"]), type=ttype, language=language, path=str(path), line=line,
                    capability=_canonical_capability(path, line_of(raw, "capability", line), raw["capability"]),
                    lines={k: line_of(raw, k, line) for k in raw})
    if ttype == "MFT":
        for key in ("label", "slots", "premise", "hypothesis"):
            if key not in raw:
                raise _err(path, line, f"key {key!r} in MFT test {tid!r}", "nothing")
        if raw["label"] not in LABELS:
            raise _err(path, spec.lines["label"], f"label in {{{', '.join(LABELS)}}}", repr(raw["label"]))
        if "of" in raw or "perturb" in raw:
            raise _err(path, line, "no 'of' / 'perturb' in an MFT test", "them")
        spec.label = raw["label"]
        spec.slots = _parse_slots(path, raw["slots"], spec.lines["slots"], lexicons)
        spec.premise, spec.hypothesis = raw["premise"], raw["hypothesis"]
        for key in ("premise", "hypothesis"):
            _check_text(path, spec.lines[key], raw[key], spec.slots, key)
        return spec
    for key in ("of", "perturb"):
        if key not in raw:
            raise _err(path, line, f"key {key!r} in {ttype} test {tid!r}", "nothing")
    for key in ("label", "slots", "premise", "hypothesis"):
        if key in raw:
            raise _err(path, spec.lines[key], f"no {key!r} in a {ttype} test (it perturbs the cases of 'of')", key)
    base = parsed.get(raw["of"])
    if base is None or base.type != "MFT":
        raise _err(path, spec.lines["of"], f"'of' naming an MFT test defined above ({', '.join(t for t, s in parsed.items() if s.type == 'MFT')})",
                   repr(raw["of"]))
    spec.of, spec.slots, spec.premise, spec.hypothesis = base.id, base.slots, base.premise, base.hypothesis
    perturb = raw["perturb"]
    if isinstance(perturb, str):
        perturb = {perturb: "both"} if perturb in ("typo", "punctuation") else perturb
    pline = spec.lines["perturb"]
    if not isinstance(perturb, dict) or not perturb or set(perturb) - set(_PERTURB_KEYS):
        raise _err(path, pline, f"perturb as a mapping with keys among {_PERTURB_KEYS}", repr(raw["perturb"]))
    for key in ("premise", "hypothesis"):
        if key in perturb:
            _check_text(path, pline, perturb[key], spec.slots, f"perturb.{key}")
    if "resample" in perturb:
        names = perturb["resample"]
        if not isinstance(names, list) or not names or any(n not in spec.slots or spec.slots[n].lexicon is None
                                                           for n in names):
            raise _err(path, pline, f"resample: a list of lexicon slots of {base.id!r}", repr(names))
    for key in ("typo", "punctuation"):
        if key in perturb and perturb[key] not in ("premise", "hypothesis", "both"):
            raise _err(path, pline, f"{key}: premise | hypothesis | both", repr(perturb[key]))
    spec.perturb = dict(perturb)
    return spec


def load_templates(language_or_path: str | Path) -> TemplateSet:
    """Read and validate a template file.

    Parameters
    ----------
    language_or_path : str or Path
        A language code with a shipped file (``"ru"``) or the path of a template file.

    Returns
    -------
    TemplateSet

    Raises
    ------
    TemplateError
        With ``file:line`` for any malformed part (unknown slot, lexicon, capability, label, form ...).
    """
    path = template_path(language_or_path)
    doc = load_yaml(path)
    if not isinstance(doc, LineDict):
        raise _err(path, 1, "a mapping with keys language, lexicon, tests", type(doc).__name__)
    for key in ("language", "lexicon", "tests"):
        if key not in doc:
            raise _err(path, doc.line, f"top-level key {key!r}", "nothing")
    language = doc["language"]
    if language not in SUPPORTED:
        raise _err(path, line_of(doc, "language"), f"language in {{{', '.join(SUPPORTED)}}}", repr(language))
    lexicons = _parse_lexicons(path, doc["lexicon"])
    raw_tests = doc["tests"]
    if not isinstance(raw_tests, dict) or not raw_tests:
        raise _err(path, line_of(doc, "tests"), "'tests' as a mapping of test id -> definition", repr(raw_tests)[:60])
    tests: dict = {}
    for tid, raw in raw_tests.items():
        tests[tid] = _parse_test(path, language, tid, raw, line_of(raw_tests, tid), lexicons, tests)
    return TemplateSet(language=language, path=str(path), lexicons=lexicons, tests=tests)


# --------------------------------------------------------------------------------------------- rendering

def agreement_key(filler: Filler, language: str) -> str | None:
    """Gender of a lexicon filler, or the CLDR plural category of a number."""
    if filler.value is not None:
        return plural_category(language, filler.value)
    return filler.gender


def form_of(filler: Filler, form: str, language: str) -> str | None:
    """A named form of a filler: listed in the lexicon, else (Russian) inflected by pymorphy3; ``None`` if neither."""
    if form in filler.forms:
        return filler.forms[form]
    if form == "text":
        return filler.text
    parts = tuple(form.split("+"))
    if language == "ru" and filler.text and set(parts) <= RU_GRAMMEMES:
        return inflect_ru(filler.text, parts, filler.gender)
    return None


def render(text: str, assignment: dict, language: str, *, path: str = "<template>", line: int | None = None) -> str:
    """Fill the placeholders of ``text`` from ``assignment`` (slot -> :class:`Filler`).

    Raises
    ------
    TemplateError
        If a form is missing for the bound filler or no choice matches (names the template's file and line).
    """

    def substitute(match: re.Match) -> str:
        slot, form, choices = _split_placeholder(match.group(1))
        filler = assignment[slot]
        if choices is not None:
            keys = [agreement_key(filler, language), *filler.tags, "other"]
            table = dict(choices)
            for key in keys:
                if key is not None and key in table:
                    return table[key]
            raise _err(path, line, f"a choice for {keys[:-1]} (or 'other') in {{{match.group(1)}}}",
                       f"{filler.surface!r} with choices {list(table)}")
        if form is None:
            if filler.value is not None:
                return str(filler.value)
            if filler.text is None:
                raise _err(path, line, f"text for {{{slot}}} (entry has only forms {sorted(filler.forms)})",
                           repr(filler.forms))
            return filler.text
        resolved = re.sub(r"@([A-Za-z_][A-Za-z0-9_]*)", lambda m: str(agreement_key(assignment[m.group(1)], language)),
                          form)
        value = form_of(filler, resolved, language)
        if value is None:
            raise _err(path, line, f"form {resolved!r} of {filler.surface!r} in {{{match.group(1)}}} "
                                   f"(listed forms: {sorted(filler.forms) or 'none'})", "no such form")
        return value

    return _PLACEHOLDER.sub(substitute, text)


def known_capabilities() -> tuple[str, ...]:
    """Every capability a test may name: the 33 fine categories plus :data:`EXTRA_CAPABILITIES`."""
    return FINE + EXTRA_CAPABILITIES


__all__ = ["Filler", "SlotSpec", "TestSpec", "TemplateSet", "load_templates", "render", "form_of", "agreement_key",
           "templates_root", "available_languages", "template_path", "TEST_TYPES", "LABELS", "EXPECTATIONS",
           "EXTRA_CAPABILITIES", "known_capabilities", "LineList"]
