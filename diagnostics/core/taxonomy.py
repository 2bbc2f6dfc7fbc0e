"""The GLUE / SuperGLUE diagnostic taxonomy: 4 coarse and 33 fine-grained categories.

Every dataset in the toolkit names categories with the canonical spellings defined here
(GLUE's own spellings). Source-specific spellings of the *coarse* keys are aliases:

* GLUE ``diagnostic-full.tsv`` column headers: ``Lexical Semantics``, ``Predicate-Argument Structure`` ...
* SuperGLUE AX-b and LiDiRus JSON keys: ``lexical-semantics``, ``predicate-argument-structure`` ...
* SweDiagnostics ``meta`` keys: ``lexical_semantics``, ``predicate_argument_structure`` ...

Fine-category names are spelled identically across those sources; :func:`canonical_fine` also
accepts case / separator variants (``active-passive``, ``named_entities``) and suggests near misses.
"""

from __future__ import annotations

import difflib
import re
from types import MappingProxyType

from diagnostics.core.errors import UserInputError

#: Coarse category -> its fine categories, in the order of the GLUE diagnostic paper.
TAXONOMY: MappingProxyType = MappingProxyType(
    {
        "Lexical Semantics": (
            "Lexical entailment",
            "Morphological negation",
            "Factivity",
            "Symmetry/Collectivity",
            "Redundancy",
            "Named entities",
            "Quantifiers",
        ),
        "Predicate-Argument Structure": (
            "Core args",
            "Prepositional phrases",
            "Ellipsis/Implicits",
            "Anaphora/Coreference",
            "Active/Passive",
            "Nominalization",
            "Genitives/Partitives",
            "Datives",
            "Relative clauses",
            "Coordination scope",
            "Intersectivity",
            "Restrictivity",
        ),
        "Logic": (
            "Negation",
            "Double negation",
            "Intervals/Numbers",
            "Conjunction",
            "Disjunction",
            "Conditionals",
            "Universal",
            "Existential",
            "Temporal",
            "Upward monotone",
            "Downward monotone",
            "Non-monotone",
        ),
        "Knowledge": ("Common sense", "World knowledge"),
    }
)

COARSE: tuple[str, ...] = tuple(TAXONOMY)
FINE: tuple[str, ...] = tuple(f for fines in TAXONOMY.values() for f in fines)
COARSE_OF: MappingProxyType = MappingProxyType({f: c for c, fines in TAXONOMY.items() for f in fines})

#: Spelling of the coarse keys in each source format.
COARSE_ALIASES: MappingProxyType = MappingProxyType(
    {
        "glue_tsv": {c: c for c in COARSE},
        "superglue_jsonl": {c.lower().replace(" ", "-"): c for c in COARSE},
        "swediagnostics_meta": {c.lower().replace(" ", "_").replace("-", "_"): c for c in COARSE},
    }
)


class UnknownCategoryError(UserInputError):
    """A category name that is neither canonical nor a known alias.

    Parameters
    ----------
    name : str
        The name as given (kept as ``name``).
    suggestions : list of str
        Near-miss canonical names (kept as ``suggestions``; named in the message).
    """

    def __init__(self, name: str, suggestions: list[str]):
        self.name = name
        self.suggestions = suggestions
        hint = f"; did you mean {' or '.join(repr(s) for s in suggestions)}?" if suggestions else ""
        super().__init__(f"unknown diagnostic category {name!r}{hint}")


def _key(name: str) -> str:
    return re.sub(r"[\s_\-/]+", " ", name.strip().lower())


_FINE_BY_KEY = {_key(f): f for f in FINE}
_COARSE_BY_KEY = {_key(c): c for c in COARSE}


def canonical_fine(name: str) -> str:
    """Return the canonical spelling of a fine-grained category.

    Parameters
    ----------
    name : str
        A category as written in some source (``"Active/Passive"``, ``"active_passive"``).

    Returns
    -------
    str
        The canonical name, one of :data:`FINE`.

    Raises
    ------
    UnknownCategoryError
        If no category matches; the error carries up to three near-miss suggestions.
    """
    hit = _FINE_BY_KEY.get(_key(name))
    if hit is None:
        raise UnknownCategoryError(name, suggest(name, FINE))
    return hit


def canonical_coarse(name: str) -> str:
    """Return the canonical spelling of a coarse category (any source's key spelling accepted).

    Parameters
    ----------
    name : str
        A coarse category as written in some source (``"Lexical Semantics"``, ``"lexical-semantics"``).

    Returns
    -------
    str
        The canonical name, one of :data:`COARSE`.

    Raises
    ------
    UnknownCategoryError
        If no coarse category matches, with near-miss suggestions.
    """
    hit = _COARSE_BY_KEY.get(_key(name))
    if hit is None:
        raise UnknownCategoryError(name, suggest(name, COARSE))
    return hit


def coarse_of(fine: str) -> str:
    """Return the coarse category of a fine-grained category (canonicalised first).

    Parameters
    ----------
    fine : str
        A fine category, in any spelling :func:`canonical_fine` accepts.

    Returns
    -------
    str
        The canonical coarse name.

    Raises
    ------
    UnknownCategoryError
        If ``fine`` is not a fine category.
    """
    return COARSE_OF[canonical_fine(fine)]


def suggest(name: str, choices: tuple[str, ...] = FINE, n: int = 3) -> list[str]:
    """Suggest near misses for a misspelt category name (case-insensitive).

    Parameters
    ----------
    name : str
        The misspelt name.
    choices : tuple of str
        Names to choose from (default: the fine categories).
    n : int
        Most suggestions returned.

    Returns
    -------
    list of str
        Up to ``n`` of ``choices``, closest first (``difflib`` ratio at least 0.6).
    """
    keyed = {_key(c): c for c in choices}
    return [keyed[k] for k in difflib.get_close_matches(_key(name), list(keyed), n=n, cutoff=0.6)]


def slug(category: str) -> str:
    """Turn a category into a file-system and column friendly identifier: ``"Active/Passive"`` -> ``"active_passive"``.

    Parameters
    ----------
    category : str

    Returns
    -------
    str
        Lower case, each run of other characters than letters and digits replaced by ``_``, no ``_`` at the ends.
    """
    return re.sub(r"[^a-z0-9]+", "_", category.lower()).strip("_")
