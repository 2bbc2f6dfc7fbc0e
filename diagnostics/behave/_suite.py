"""Generated cases and suites as plain jsonl files (one case per line) that users can share and extend."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pandas as pd

from diagnostics.core.io_utils import atomic_path
from diagnostics.core.schema import LABELS
from diagnostics.core.tables import iter_records

from ._errors import SuiteFormatError
from ._specs import EXPECTATIONS, TEST_TYPES


@dataclass(frozen=True)
class Case:
    """One behavioural test case.

    MFT cases carry the expected ``label``; INV and DIR cases carry the unperturbed pair
    (``original_premise``, ``original_hypothesis``) and an ``expectation``: ``same_prediction`` (INV) or
    ``entailment_must_not_stay`` (DIR: if the original is predicted entailment, the perturbed pair must not be).

    Parameters
    ----------
    id : str
        ``<language>/<test>/<nnnn>``.
    language : str
        Language code.
    test : str
        Id of the test that generated the case.
    capability : str
        The capability the test probes.
    type : {"MFT", "INV", "DIR"}
        Minimum functionality, invariance or directional test.
    premise, hypothesis : str
        The pair the model is asked about.
    label : str, optional
        Expected label of an MFT case.
    original_premise, original_hypothesis : str, optional
        The unperturbed pair of an INV / DIR case.
    expectation : str, optional
        ``same_prediction`` (INV) or ``entailment_must_not_stay`` (DIR).
    template : str
        Id of the base test whose templates rendered the pair.
    name : str
        The test's readable name.
    fillers : dict
        Slot -> surface of its filler (numbers as ints); ``<slot>->`` for a slot a perturbation resampled.
    perturbation : str
        The surface perturbations applied (``typo:premise;punctuation:both``), or empty.
    seed : int, optional
        Seed of the suite.
    """

    id: str
    language: str
    test: str
    capability: str
    type: str
    premise: str
    hypothesis: str
    label: str | None = None
    original_premise: str | None = None
    original_hypothesis: str | None = None
    expectation: str | None = None
    template: str = ""
    name: str = ""
    fillers: dict = field(default_factory=dict, compare=False, hash=False)
    perturbation: str = ""
    seed: int | None = None

    def to_dict(self) -> dict:
        """Convert the case to a JSON-ready mapping, without empty optional fields.

        Returns
        -------
        dict
            Field -> value; optional fields that are ``None`` or empty strings are left out.
        """
        out = asdict(self)
        return {k: v for k, v in out.items() if v not in (None, "") or k in _REQUIRED}


_REQUIRED = ("id", "language", "test", "capability", "type", "premise", "hypothesis")
_FIELDS = set(Case.__dataclass_fields__)
_STRINGS = ("id", "language", "test", "capability", "type", "premise", "hypothesis", "label", "original_premise",
            "original_hypothesis", "expectation", "template", "name", "perturbation")


def save_suite(cases, path: str | Path) -> Path:
    """Write cases as UTF-8 jsonl, one case per line, in the given order.

    Parameters
    ----------
    cases : iterable of Case
    path : str or Path

    Returns
    -------
    Path
        The written file.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as tmp, tmp.open("w", encoding="utf-8") as handle:
        for case in cases:
            handle.write(json.dumps(case.to_dict(), ensure_ascii=False) + "\n")
    return path


def _check_record(path, line, record) -> Case:
    if not isinstance(record, dict):
        raise SuiteFormatError(path, line, "a JSON object (one case)", type(record).__name__)
    unknown = set(record) - _FIELDS
    if unknown:
        raise SuiteFormatError(path, line, f"fields among {sorted(_FIELDS)}", repr(sorted(unknown)[0]))
    for key in _REQUIRED:
        if key not in record:
            raise SuiteFormatError(path, line, f"field {key!r}", "nothing")
    for key in _STRINGS:
        if key in record and record[key] is not None and (not isinstance(record[key], str) or not record[key].strip()
                                                           and key in _REQUIRED):
            raise SuiteFormatError(path, line, f"{key} as a non-empty string", repr(record[key])[:60])
    ttype = record["type"]
    if ttype not in TEST_TYPES:
        raise SuiteFormatError(path, line, f"type in {{{', '.join(TEST_TYPES)}}}", repr(ttype))
    if ttype == "MFT":
        if record.get("label") not in LABELS:
            raise SuiteFormatError(path, line, f"label in {{{', '.join(LABELS)}}} for an MFT case",
                                   repr(record.get("label")))
    else:
        for key in ("original_premise", "original_hypothesis"):
            if not record.get(key):
                raise SuiteFormatError(path, line, f"{key} for a {ttype} case", "nothing")
        expected = EXPECTATIONS[ttype]
        if record.setdefault("expectation", expected) != expected:
            raise SuiteFormatError(path, line, f"expectation {expected!r} for a {ttype} case",
                                   repr(record["expectation"]))
        if record.get("label") is not None:
            raise SuiteFormatError(path, line, f"no label in a {ttype} case (it has an expectation)",
                                   repr(record["label"]))
    if not isinstance(record.get("fillers", {}), dict):
        raise SuiteFormatError(path, line, "fillers as an object slot -> value", repr(record["fillers"])[:60])
    seed = record.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise SuiteFormatError(path, line, "seed as an integer", repr(seed))
    return Case(**record)


def load_suite(path: str | Path) -> list[Case]:
    """Read a suite file strictly.

    Parameters
    ----------
    path : str or Path
        A jsonl file of cases, read by :func:`diagnostics.core.tables.iter_records` (a byte order mark, CRLF line ends
        and blank lines are ignored).

    Returns
    -------
    list of Case

    Raises
    ------
    SuiteFormatError
        ``file:line: expected ..., found ...`` for invalid JSON, missing or mistyped fields, unknown types or
        labels, and duplicate case ids.
    """
    path = Path(path)
    cases, seen = [], {}
    for number, record in iter_records(path, objects=False, error=SuiteFormatError):
        case = _check_record(path, number, record)
        if case.id in seen:
            raise SuiteFormatError(path, number, "a unique case id", f"{case.id!r} (also on line {seen[case.id]})")
        seen[case.id] = number
        cases.append(case)
    if not cases:
        raise SuiteFormatError(path, None, "at least one case", "an empty file")
    return cases


def suite_frame(cases) -> pd.DataFrame:
    """Tabulate cases, one row per case (all fields; ``fillers`` stays a dict column).

    Parameters
    ----------
    cases : iterable of Case

    Returns
    -------
    pandas.DataFrame
        One column per :class:`Case` field, in field order.
    """
    return pd.DataFrame([asdict(c) for c in cases], columns=list(Case.__dataclass_fields__))
