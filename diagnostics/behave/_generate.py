"""Seeded generation of test cases from a template file, with a size cap per test."""

from __future__ import annotations

import random
from pathlib import Path

from ._errors import TemplateError
from ._perturb import add_typo, strip_punctuation
from ._suite import Case
from ._rendering import render
from ._specs import Filler, TemplateSet, TestSpec, entry_matches
from ._templates import load_templates

#: How many draws per wanted case before a test is declared exhausted (small lexicons).
ATTEMPTS_PER_CASE = 30


def _bound(value, assignment) -> int:
    if isinstance(value, int):
        return value
    slot, offset = value
    return assignment[slot].value + offset


def _draw(test: TestSpec, templates: TemplateSet, rng: random.Random, fixed: dict | None = None) -> dict:
    """Bind every slot of ``test``; fillers of one lexicon are distinct within a case."""
    assignment = dict(fixed or {})
    used: dict[str, set] = {}
    for name, filler in assignment.items():
        spec = test.slots[name]
        if spec.lexicon is not None:
            used.setdefault(spec.lexicon, set()).add(filler.surface)
    for name, spec in test.slots.items():
        if name in assignment:
            continue
        if spec.lexicon is None:
            lo, hi = (_bound(b, assignment) for b in spec.bounds)
            if lo > hi:
                raise TemplateError(test.path, test.lines.get("slots", test.line), f"a non-empty range for slot {name!r}",
                                    f"[{lo}, {hi}]")
            assignment[name] = Filler(text=None, value=rng.randint(lo, hi))
            continue
        taken = used.setdefault(spec.lexicon, set())
        pool = [e for e in templates.lexicons[spec.lexicon]
                if entry_matches(e, spec.where) and e.surface not in taken]
        if not pool:
            raise TemplateError(test.path, test.lines.get("slots", test.line),
                                f"enough distinct entries in lexicon {spec.lexicon!r} for the slots of {test.id!r}",
                                f"{len(templates.lexicons[spec.lexicon])} entries")
        assignment[name] = rng.choice(pool)
        taken.add(assignment[name].surface)
    return assignment


def _render_pair(test: TestSpec, assignment: dict, premise: str, hypothesis: str, lines: tuple) -> tuple[str, str]:
    lang = test.language
    return (render(premise, assignment, lang, path=test.path, line=lines[0]),
            render(hypothesis, assignment, lang, path=test.path, line=lines[1]))


def _perturb(test: TestSpec, templates: TemplateSet, assignment: dict, original: tuple[str, str],
             rng: random.Random):
    """Apply a test's perturbation; returns (premise, hypothesis, new assignment, description) or None."""
    perturb = test.perturb
    pline = test.lines.get("perturb", test.line)
    premise_t = perturb.get("premise", test.premise)
    hypothesis_t = perturb.get("hypothesis", test.hypothesis)
    steps = [k for k in ("premise", "hypothesis") if k in perturb]
    description = ["rewrite:" + "+".join(steps)] if steps else []
    if "resample" in perturb:
        keep = {k: v for k, v in assignment.items() if k not in perturb["resample"]}
        base = templates.tests[test.of]
        new = _draw(base, templates, rng, fixed=keep)
        if any(new[k].surface == assignment[k].surface for k in perturb["resample"]):
            return None
        # a resampled filler must differ from every filler of the original case (a real swap)
        old = {f.surface for f in assignment.values()}
        if any(new[k].surface in old for k in perturb["resample"]):
            return None
        assignment = new
        description.append("resample:" + "+".join(perturb["resample"]))
    base_lines = templates.tests[test.of].lines
    lines = (pline if "premise" in perturb else base_lines["premise"],
             pline if "hypothesis" in perturb else base_lines["hypothesis"])
    premise, hypothesis = _render_pair(test, assignment, premise_t, hypothesis_t, lines)
    for kind, fn in (("typo", lambda s: add_typo(s, rng)), ("punctuation", strip_punctuation)):
        where = perturb.get(kind)
        if where is None:
            continue
        if where in ("premise", "both"):
            premise = fn(premise)
        if premise is not None and where in ("hypothesis", "both"):
            hypothesis = fn(hypothesis)
        if premise is None or hypothesis is None:
            return None
        description.append(f"{kind}:{where}")
    if (premise, hypothesis) == original:
        return None
    return premise, hypothesis, assignment, ";".join(description)


def generate_test(test: TestSpec, templates: TemplateSet, seed: int, max_cases: int) -> list[Case]:
    """Generate up to ``max_cases`` distinct cases of one test.

    The random stream depends only on ``(seed, language, test id)``, so adding or editing another test never
    changes this test's cases. Fewer cases come back when the lexicons allow fewer distinct pairs.

    Parameters
    ----------
    test : TestSpec
    templates : TemplateSet
        The file the test belongs to (lexicons and base tests).
    seed : int
    max_cases : int

    Returns
    -------
    list of Case
    """
    rng = random.Random(f"{int(seed)}/{test.language}/{test.id}")
    base = templates.tests[test.template]
    base_lines = (base.lines["premise"], base.lines["hypothesis"])
    cases: list[Case] = []
    seen: set = set()
    attempts = 0
    while len(cases) < max_cases and attempts < max_cases * ATTEMPTS_PER_CASE:
        attempts += 1
        assignment = _draw(base, templates, rng)
        original = _render_pair(base, assignment, base.premise, base.hypothesis, base_lines)
        fields = dict(id="", language=test.language, test=test.id, capability=test.capability, type=test.type,
                      template=test.template, name=test.name, seed=int(seed),
                      fillers={k: f.surface for k, f in assignment.items()})
        if test.type == "MFT":
            key = original
            fields.update(premise=original[0], hypothesis=original[1], label=test.label)
        else:
            result = _perturb(test, templates, assignment, original, rng)
            if result is None:
                continue
            premise, hypothesis, new_assignment, description = result
            key = (original, premise, hypothesis)
            fields.update(premise=premise, hypothesis=hypothesis, original_premise=original[0],
                          original_hypothesis=original[1], expectation=test.expectation, perturbation=description)
            if new_assignment is not assignment:
                fields["fillers"] = {**fields["fillers"],
                                     **{f"{k}->": new_assignment[k].surface for k in test.perturb["resample"]}}
        if key in seen:
            continue
        seen.add(key)
        fields["id"] = f"{test.language}/{test.id}/{len(cases):04d}"
        cases.append(Case(**fields))
    return cases


def generate_suite(templates: TemplateSet | str | Path, seed: int = 0, max_per_test: int = 50,
                   tests: list[str] | None = None) -> list[Case]:
    """Generate a behavioural suite for one language.

    Parameters
    ----------
    templates : TemplateSet, str or Path
        A parsed template set, a language code (``"de"``) or a template file.
    seed : int
        Fully determines the cases: the same seed gives the identical suite.
    max_per_test : int
        Size cap per test.
    tests : list of str, optional
        Only these test ids (default: all, in file order).

    Returns
    -------
    list of Case
        The cases, test by test.
    """
    if max_per_test < 1:
        raise ValueError(f"max_per_test must be >= 1, got {max_per_test}")
    if not isinstance(templates, TemplateSet):
        templates = load_templates(templates)
    selected = list(templates.tests) if tests is None else list(tests)
    unknown = [t for t in selected if t not in templates.tests]
    if unknown:
        raise KeyError(f"unknown test(s) {unknown}; defined in {templates.path}: {', '.join(templates.tests)}")
    cases: list[Case] = []
    for tid in selected:
        cases += generate_test(templates.tests[tid], templates, seed, max_per_test)
    return cases


def generate_suites(languages=None, seed: int = 0, max_per_test: int = 50) -> list[Case]:
    """Generate and concatenate the suites of several languages (default: every shipped template file).

    Parameters
    ----------
    languages : iterable of str, optional
        Language codes (or template files); default every shipped template file's language.
    seed : int
        Seed of every suite (see :func:`generate_suite`).
    max_per_test : int
        Size cap per test.

    Returns
    -------
    list of Case
        The cases, language by language.
    """
    from ._templates import available_languages

    cases: list[Case] = []
    for language in languages or available_languages():
        cases += generate_suite(language, seed=seed, max_per_test=max_per_test)
    return cases


def bind(templates: TemplateSet, test_id: str, fillers: dict) -> dict:
    """Bind slots to lexicon entries by their recorded surface (a case's ``fillers``; numbers as ints).

    ``fillers`` maps slot -> recorded surface (or number). Each slot gets the first entry of its lexicon with that
    surface (a number gets ``Filler(value=...)``); ``KeyError`` for a slot without a filler, or a surface that is not an
    entry of the slot's lexicon.
    """
    test = templates.tests[test_id]
    assignment = {}
    for slot, spec in test.slots.items():
        if slot not in fillers:
            raise KeyError(f"no filler for slot {slot!r} of {test_id!r}")
        value = fillers[slot]
        if spec.lexicon is None:
            assignment[slot] = Filler(text=None, value=int(value))
            continue
        matches = [e for e in templates.lexicons[spec.lexicon] if e.surface == value]
        if not matches:
            raise KeyError(f"{value!r} is not an entry of lexicon {spec.lexicon!r}")
        assignment[slot] = matches[0]
    return assignment


def render_with(templates: TemplateSet | str | Path, test_id: str, **fillers) -> tuple[str, str]:
    """Render a test's premise and hypothesis for chosen slot fillers (preview and hand checks).

    For INV / DIR tests that rewrite a sentence (``perturb: {hypothesis: ...}``) the rewritten pair is returned;
    random perturbations (typos, resampling) are not applied.

    Parameters
    ----------
    templates : TemplateSet, language code or file
    test_id : str
    **fillers
        Slot -> lexicon entry (its text, or its first form for entries without text) or integer.

    Returns
    -------
    (str, str)

    Examples
    --------
    >>> render_with("ru", "symmetry_mft", a="Анна", b="Иван", s="поссорился")
    ('Анна поссорилась с Иваном.', 'Иван поссорился с Анной.')
    """
    if not isinstance(templates, TemplateSet):
        templates = load_templates(templates)
    test = templates.tests[test_id]
    base = templates.tests[test.template]
    assignment = bind(templates, base.id, fillers)
    premise = test.perturb.get("premise", base.premise)
    hypothesis = test.perturb.get("hypothesis", base.hypothesis)
    return _render_pair(test, assignment, premise, hypothesis, (base.lines["premise"], base.lines["hypothesis"]))
