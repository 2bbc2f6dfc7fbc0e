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
        capability: Negation      # a fine category of diagnostics.core.taxonomy (or Typos / Punctuation)
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

from pathlib import Path

from diagnostics.core.resources import annotators_dir
from diagnostics.core.schema import LABELS
from diagnostics.core.taxonomy import FINE, UnknownCategoryError, canonical_fine

from ._errors import TemplateError
from ._forms import agreement_key, form_of
from ._lexicons import parse_lexicons, parse_slots
from ._placeholders import check_text
from ._plural import SUPPORTED
from ._rendering import render
from ._specs import EXPECTATIONS, NAME, TEST_TYPES, Filler, SlotSpec, TemplateSet, TestSpec
from ._yamllines import LineDict, LineList, line_of, load_yaml

#: Capabilities outside the diagnostic taxonomy (robustness to surface noise).
EXTRA_CAPABILITIES = ("Typos", "Punctuation")
_TEST_KEYS = {"name", "capability", "type", "label", "slots", "premise", "hypothesis", "of", "perturb"}
_MFT_KEYS = ("label", "slots", "premise", "hypothesis")
_PERTURB_KEYS = ("premise", "hypothesis", "resample", "typo", "punctuation")


def templates_root() -> Path:
    """Locate the folder of the shipped ``<lang>.yaml`` templates (``annotators/behave`` under the project root)."""
    return annotators_dir() / "behave"


def available_languages() -> list[str]:
    """List the language codes that have a template file in :func:`templates_root`.

    Returns
    -------
    list of str
        Sorted language codes.
    """
    return sorted(p.stem for p in templates_root().glob("*.yaml"))


def template_path(language_or_path: str | Path) -> Path:
    """Resolve a language code (``"ru"``) or a file path to a template file.

    A ``.yaml`` / ``.yml`` suffix or an existing file makes ``language_or_path`` a path; ``FileNotFoundError`` when no
    file is shipped for a language code.
    """
    candidate = Path(language_or_path)
    if candidate.suffix in (".yaml", ".yml") or candidate.is_file():
        return candidate
    path = templates_root() / f"{language_or_path}.yaml"
    if not path.is_file():
        raise FileNotFoundError(f"no behavioural templates for language {language_or_path!r}; "
                                f"available: {', '.join(available_languages())}")
    return path


def known_capabilities() -> tuple[str, ...]:
    """List every (canonical) capability a test may name: the 33 fine categories plus :data:`EXTRA_CAPABILITIES`."""
    return FINE + EXTRA_CAPABILITIES


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
    FileNotFoundError
        No shipped file for that language.
    """
    path = template_path(language_or_path)
    doc = load_yaml(path)
    if not isinstance(doc, LineDict):
        raise TemplateError(path, 1, "a mapping with keys language, lexicon, tests", type(doc).__name__)
    for key in ("language", "lexicon", "tests"):
        if key not in doc:
            raise TemplateError(path, doc.line, f"top-level key {key!r}", "nothing")
    language = doc["language"]
    if language not in SUPPORTED:
        raise TemplateError(path, line_of(doc, "language"), f"language in {{{', '.join(SUPPORTED)}}}",
                            repr(language))
    lexicons = parse_lexicons(path, doc["lexicon"])
    raw_tests = doc["tests"]
    if not isinstance(raw_tests, dict) or not raw_tests:
        raise TemplateError(path, line_of(doc, "tests"), "'tests' as a mapping of test id -> definition",
                            repr(raw_tests)[:60])
    tests: dict = {}
    for tid, raw in raw_tests.items():
        tests[tid] = _parse_test(path, language, tid, raw, line_of(raw_tests, tid), lexicons, tests)
    return TemplateSet(language=language, path=str(path), lexicons=lexicons, tests=tests)


def _parse_test(path, language, tid, raw, line, lexicons, parsed) -> TestSpec:
    """One test definition; ``parsed`` holds the tests above it (an INV / DIR test names one in ``of``)."""
    if not isinstance(tid, str) or not NAME.match(tid):
        raise TemplateError(path, line, "a test id (letters, digits, _)", repr(tid))
    if not isinstance(raw, dict):
        raise TemplateError(path, line, f"test {tid!r} as a mapping", repr(raw)[:60])
    extra = set(raw) - _TEST_KEYS
    if extra:
        raise TemplateError(path, line_of(raw, sorted(extra)[0], line), f"test keys among {sorted(_TEST_KEYS)}",
                            repr(sorted(extra)[0]))
    for key in ("name", "capability", "type"):
        if key not in raw:
            raise TemplateError(path, line, f"key {key!r} in test {tid!r}", "nothing")
    ttype = raw["type"]
    if ttype not in TEST_TYPES:
        raise TemplateError(path, line_of(raw, "type", line), f"type in {{{', '.join(TEST_TYPES)}}}", repr(ttype))
    spec = TestSpec(id=tid, name=str(raw["name"]), type=ttype, language=language, path=str(path), line=line,
                    capability=_canonical_capability(path, line_of(raw, "capability", line), raw["capability"]),
                    lines={k: line_of(raw, k, line) for k in raw})
    if ttype == "MFT":
        _parse_mft(spec, raw, lexicons)
    else:
        _parse_perturbation_test(spec, raw, parsed)
    return spec


def _canonical_capability(path, line, value) -> str:
    """The canonical fine category (or extra capability) a test names; suggests the closest on a typo."""
    if not isinstance(value, str):
        raise TemplateError(path, line, "capability as a string", repr(value))
    if value in EXTRA_CAPABILITIES:
        return value
    try:
        return canonical_fine(value)
    except UnknownCategoryError as err:
        hint = f" (did you mean {err.suggestions[0]!r}?)" if err.suggestions else ""
        raise TemplateError(path, line,
                            f"a fine category of diagnostics.core.taxonomy or one of {EXTRA_CAPABILITIES}{hint}",
                            repr(value)) from None


def _parse_mft(spec: TestSpec, raw, lexicons) -> None:
    """Fill in an MFT test: its gold label, slots and the two template sentences."""
    path, line = spec.path, spec.line
    for key in _MFT_KEYS:
        if key not in raw:
            raise TemplateError(path, line, f"key {key!r} in MFT test {spec.id!r}", "nothing")
    if raw["label"] not in LABELS:
        raise TemplateError(path, spec.lines["label"], f"label in {{{', '.join(LABELS)}}}", repr(raw["label"]))
    if "of" in raw or "perturb" in raw:
        raise TemplateError(path, line, "no 'of' / 'perturb' in an MFT test", "them")
    spec.label = raw["label"]
    spec.slots = parse_slots(path, raw["slots"], spec.lines["slots"], lexicons)
    spec.premise, spec.hypothesis = raw["premise"], raw["hypothesis"]
    for key in ("premise", "hypothesis"):
        check_text(path, spec.lines[key], raw[key], spec.slots, key)


def _parse_perturbation_test(spec: TestSpec, raw, parsed: dict) -> None:
    """Fill in an INV / DIR test from the MFT test it perturbs (``of``) and its ``perturb`` settings."""
    path, line = spec.path, spec.line
    for key in ("of", "perturb"):
        if key not in raw:
            raise TemplateError(path, line, f"key {key!r} in {spec.type} test {spec.id!r}", "nothing")
    for key in _MFT_KEYS:
        if key in raw:
            raise TemplateError(path, spec.lines[key],
                                f"no {key!r} in a {spec.type} test (it perturbs the cases of 'of')", key)
    base = parsed.get(raw["of"])
    if base is None or base.type != "MFT":
        mft = ", ".join(t for t, s in parsed.items() if s.type == "MFT")
        raise TemplateError(path, spec.lines["of"], f"'of' naming an MFT test defined above ({mft})", repr(raw["of"]))
    spec.of, spec.slots, spec.premise, spec.hypothesis = base.id, base.slots, base.premise, base.hypothesis
    spec.perturb = _parse_perturb(path, spec.lines["perturb"], raw["perturb"], spec.slots, base.id)


def _parse_perturb(path, line, raw, slots: dict, base_id: str) -> dict:
    """The ``perturb`` mapping of an INV / DIR test (a bare ``typo`` / ``punctuation`` means both sentences)."""
    perturb = raw
    if isinstance(perturb, str):
        perturb = {perturb: "both"} if perturb in ("typo", "punctuation") else perturb
    if not isinstance(perturb, dict) or not perturb or set(perturb) - set(_PERTURB_KEYS):
        raise TemplateError(path, line, f"perturb as a mapping with keys among {_PERTURB_KEYS}", repr(raw))
    for key in ("premise", "hypothesis"):
        if key in perturb:
            check_text(path, line, perturb[key], slots, f"perturb.{key}")
    if "resample" in perturb:
        names = perturb["resample"]
        if not isinstance(names, list) or not names or any(n not in slots or slots[n].lexicon is None for n in names):
            raise TemplateError(path, line, f"resample: a list of lexicon slots of {base_id!r}", repr(names))
    for key in ("typo", "punctuation"):
        if key in perturb and perturb[key] not in ("premise", "hypothesis", "both"):
            raise TemplateError(path, line, f"{key}: premise | hypothesis | both", repr(perturb[key]))
    return dict(perturb)


#: The template API (its parts live in .specs, .lexicons, .placeholders, .forms and .rendering).
__all__ = ["Filler", "SlotSpec", "TestSpec", "TemplateSet", "load_templates", "render", "form_of", "agreement_key",
           "templates_root", "available_languages", "template_path", "TEST_TYPES", "LABELS", "EXPECTATIONS",
           "EXTRA_CAPABILITIES", "known_capabilities", "LineList"]
