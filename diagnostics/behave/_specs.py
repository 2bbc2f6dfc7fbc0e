"""What a template file describes: lexicon entries, typed slots, behavioural tests and the parsed file."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

TEST_TYPES = ("MFT", "INV", "DIR")
#: What INV / DIR cases expect of the model's two predictions.
EXPECTATIONS = {"INV": "same_prediction", "DIR": "entailment_must_not_stay"}
GENDERS = ("m", "f", "n")
#: Names of lexicons, slots and tests.
NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
#: Names of the forms of a lexicon entry (``+`` joins grammemes, ``@slot`` stands for the agreement of a slot).
FORM_NAME = re.compile(r"^[A-Za-z0-9_+@]+$")


@dataclass(frozen=True)
class Filler:
    """One lexicon entry (or a number) bound to a slot.

    Parameters
    ----------
    text : str or None
        The entry's text (``None`` for a number, or an entry with named forms only).
    gender : str, optional
        ``m``, ``f`` or ``n``.
    tags : tuple of str
        Free tags that ``where`` filters and choices (``{a|tag:...}``) can test.
    forms : dict
        Named forms (form name -> text).
    value : int, optional
        The number bound to an integer slot.
    """

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
    """A typed slot: a lexicon (optionally filtered by ``where``) or an integer range.

    Parameters
    ----------
    name : str
        The slot's name in the sentences.
    lexicon : str, optional
        Lexicon its fillers come from; ``None`` for an integer slot.
    where : tuple of (str, str)
        Filter on the lexicon's entries (see :func:`entry_matches`).
    bounds : tuple
        ``(lo, hi)`` of an integer slot, each an int or ``(earlier int slot, offset)``.
    """

    name: str
    lexicon: str | None = None
    where: tuple[tuple[str, str], ...] = ()
    bounds: tuple = ()


@dataclass
class TestSpec:
    """One behavioural test as written in a template file.

    Parameters
    ----------
    id : str
        The test's id (its key in the file).
    name : str
        Human-readable description.
    capability : str
        Canonical fine category of :mod:`diagnostics.core.taxonomy`, or an extra capability (``Typos`` ...).
    type : str
        ``MFT``, ``INV`` or ``DIR``.
    language : str
        Language of the file.
    path : str
        The template file.
    line : int
        Line of the test in the file.
    label : str, optional
        Gold label of an MFT test's cases.
    slots : dict
        Slot name -> :class:`SlotSpec` (an INV / DIR test shares those of its ``of`` test).
    premise, hypothesis : str, optional
        The template sentences.
    of : str, optional
        Id of the MFT test an INV / DIR test perturbs.
    perturb : dict
        How an INV / DIR test perturbs the cases (``premise``, ``hypothesis``, ``resample``, ``typo``,
        ``punctuation``).
    lines : dict
        Line of each key of the test in the file.
    """

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
    """A parsed template file: language, lexicons and tests (in file order).

    Parameters
    ----------
    language : str
        Language code of the file.
    path : str
        The template file.
    lexicons : dict
        Lexicon name -> list of :class:`Filler`.
    tests : dict
        Test id -> :class:`TestSpec`.
    """

    language: str
    path: str
    lexicons: dict
    tests: dict

    def __len__(self) -> int:
        """Number of tests."""
        return len(self.tests)


def entry_matches(entry: Filler, where) -> bool:
    """Check a lexicon entry against a slot's ``where`` filter (``gender``, ``tag`` or a form's value).

    ``where`` holds ``(attribute, value)`` pairs, all of which must hold.
    """
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
