"""A fast matcher for the common subset of spaCy ``Matcher`` token patterns.

spaCy's ``Matcher`` runs every Python-level predicate (``IN``, ``REGEX``, ``IS_SUPERSET`` on ``MORPH``, extension
attributes) once per token and pattern state. On a dictionary backend (Russian: a blank tokeniser plus cached
pymorphy3 lookups) that costs several times the analysis itself. This matcher gives the same matches for the
pattern syntax the rules files use, but decides every token spec once per distinct *token reading* (text, lemma,
POS, tag, morphology, ... only the attributes the specs ask about) and caches the answer as a bit mask; a
sentence then costs one dictionary lookup per token plus the pattern walk over bit masks. The words new to the
cache in a batch of docs are tested together, one attribute at a time: a listed value (``==``, ``IN``) is one
dictionary lookup for all specs, other tests run only for the specs the word can still satisfy, and ``MORPH`` and
extension values are read only for those words. The caller may cache its own per-word data with the masks
(``word_data``), so that one pass over the tokens serves both.

Patterns it does not support (operator ``!``, fuzzy matching, unusual attributes) are refused by
:meth:`TokenMatcher.add`, which returns ``False``; the caller keeps those in a spaCy ``Matcher``. Matches are
the same set of ``(key, start, end)`` spaCy returns: every span some path through the pattern covers
(``tests/annotate/test_token_matcher.py`` compares both matchers on the bundled diagnostic sets).
"""

from __future__ import annotations

import itertools
import math
import operator
import re
from collections.abc import Callable

#: boolean lexical flags of the Matcher -> the Token attribute
_FLAGS = {"IS_ALPHA": "is_alpha", "IS_ASCII": "is_ascii", "IS_DIGIT": "is_digit", "IS_LOWER": "is_lower",
          "IS_UPPER": "is_upper", "IS_TITLE": "is_title", "IS_PUNCT": "is_punct", "IS_SPACE": "is_space",
          "IS_STOP": "is_stop", "LIKE_NUM": "like_num", "LIKE_URL": "like_url", "LIKE_EMAIL": "like_email",
          "IS_BRACKET": "is_bracket", "IS_QUOTE": "is_quote", "IS_CURRENCY": "is_currency"}
#: Matcher attributes this matcher reads (with ``Doc.to_array``, one C call per sentence) -> the array column
_ARRAY_ATTRS = {"ORTH": "ORTH", "TEXT": "ORTH", "LOWER": "LOWER", "NORM": "NORM", "LEMMA": "LEMMA", "POS": "POS",
                "TAG": "TAG", "DEP": "DEP", "ENT_TYPE": "ENT_TYPE", "SHAPE": "SHAPE", "MORPH": "MORPH",
                "LENGTH": "LENGTH", "IS_SENT_START": "SENT_START", **{flag: flag for flag in _FLAGS}}
#: attributes whose values are not strings
_NOT_STRINGS = frozenset({"LENGTH", "IS_SENT_START", *_FLAGS})
_COMPARE = {"==": operator.eq, "!=": operator.ne, ">=": operator.ge, "<=": operator.le, ">": operator.gt,
            "<": operator.lt}
_SET_OPS = ("IS_SUPERSET", "IS_SUBSET", "INTERSECTS")
_OP = re.compile(r"^\{(\d*)(,?)(\d*)\}$")


class Unsupported(Exception):
    """A pattern uses syntax this matcher leaves to spaCy."""


class TokenMatcher:
    """Token patterns compiled to per-reading bit masks.

    Parameters
    ----------
    context_free : bool
        The backend analyses each word on its own (pymorphy3, simplemma, blank): every token attribute except
        ``IS_SENT_START`` is a function of the token text, so the text (and sentence-start flag) is the whole
        reading. Otherwise (trained pipelines, taggers) the reading is every attribute the specs ask about.
    max_cache : int
        Readings kept before the cache is emptied (bounded memory on large corpora).
    word_data : callable, optional
        ``token -> anything`` the caller needs of each word, computed once per reading and cached with its mask
        (:meth:`match` returns it per token): one pass over the tokens serves both.
    word_attrs : tuple of str
        The Matcher attributes ``word_data`` reads; they join the reading of a backend that is not context-free.
    """

    def __init__(self, context_free: bool = False, max_cache: int = 200_000, word_data: Callable | None = None,
                 word_attrs: tuple[str, ...] = ()):
        self.context_free = context_free
        self.word_data = word_data
        self.word_attrs = tuple(word_attrs)
        self._specs: list[tuple] = []          # distinct compiled token specs (tuples of conditions)
        self._spec_index: dict[tuple, int] = {}
        self._patterns: list[tuple[int, tuple]] = []  # (key, elements); element = (spec bit, min, max)
        self._attrs: list[str] = []            # token attributes the specs read
        self._extensions: list[str] = []
        self._compiled = None                  # built on first use after an add
        self._cache: dict = {}                 # reading -> mask
        self._word_cache: dict = {}            # reading -> word_data
        self._max_cache = max_cache

    def __len__(self) -> int:
        return len(self._patterns)

    def add(self, key: int, pattern: list[dict]) -> bool:
        """Compile one spaCy token pattern under ``key`` (a string id); ``False`` when it is not supported.

        ``key`` is the match id (the vocabulary's hash of the pattern's name), reported with each match; ``pattern`` is
        a spaCy ``Matcher`` token pattern. A refused pattern adds nothing.
        """
        sizes = len(self._specs), len(self._attrs), len(self._extensions)
        try:
            elements = tuple(self._element(spec) for spec in pattern)
            if not elements or all(low == 0 for _, low, _ in elements):
                raise Unsupported  # spaCy's handling of patterns that can match nothing is left to spaCy
        except Unsupported:  # forget the specs and attributes of the refused pattern's other tokens
            for spec in self._specs[sizes[0]:]:
                del self._spec_index[spec]
            del self._specs[sizes[0]:], self._attrs[sizes[1]:], self._extensions[sizes[2]:]
            return False
        self._patterns.append((key, elements))
        self._compiled = None
        self.clear_cache()  # the readings change with the attributes the specs read
        return True

    def clear_cache(self) -> None:
        """Forget the cached readings (what a new corpus costs is then measured from scratch)."""
        self._cache.clear()
        self._word_cache.clear()
        if self._compiled is not None:
            self._compiled.clear()

    def __call__(self, doc) -> list[tuple[int, int, int]]:
        """``(key, start, end)`` of every span of ``doc`` some pattern matches (spaCy ``Matcher`` semantics)."""
        return self.match(doc)[0]

    def match(self, doc) -> tuple[list[tuple[int, int, int]], list | None]:
        """Match one doc: ``(matches, word_data)``.

        ``matches`` holds ``(key, start, end)`` of every matched span, as :meth:`__call__` returns them; ``word_data``
        the ``word_data`` of every token (``None`` without a ``word_data`` function).
        """
        return self.pipe([doc])[0]

    def pipe(self, docs: list) -> list[tuple[list[tuple[int, int, int]], list | None]]:
        """Apply :meth:`match` to every doc of ``docs``: one ``(matches, word_data)`` per doc.

        The words new to the cache are tested together, one attribute at a time (cheaper than word by word).
        """
        if not self._patterns and self.word_data is None:
            return [([], None) for _ in docs]
        if self._compiled is None:
            self._compiled = _Compiled(self)
        compiled = self._compiled
        if len(self._cache) > self._max_cache:
            self.clear_cache()
        cache = self._cache
        readings = [compiled.readings(doc) for doc in docs]
        masks = [list(map(cache.get, doc_readings)) for doc_readings in readings]
        new: dict = {}  # reading -> a token with it, for the words not seen before
        for doc, doc_readings, doc_masks in zip(docs, readings, masks):
            if None in doc_masks:
                for i, mask in enumerate(doc_masks):
                    if mask is None and doc_readings[i] not in new:
                        new[doc_readings[i]] = doc[i]
        if new:
            tokens = list(new.values())
            cache.update(zip(new, compiled.masks(tokens)))
            if self.word_data is not None:
                self._word_cache.update(zip(new, map(self.word_data, tokens)))
            masks = [list(map(cache.get, doc_readings)) if None in doc_masks else doc_masks
                     for doc_readings, doc_masks in zip(readings, masks)]
        data = [None] * len(docs) if self.word_data is None else \
            [list(map(self._word_cache.get, doc_readings)) for doc_readings in readings]
        return [(self._match(compiled, doc_masks), doc_data) for doc_masks, doc_data in zip(masks, data)]

    @staticmethod
    def _match(compiled: _Compiled, masks: list[int]) -> list[tuple[int, int, int]]:
        """Matches of a doc from the masks of its tokens: each pattern walked from its anchor tokens."""
        n = len(masks)
        matches = []
        anchored, anchor_bits = compiled.anchored, compiled.anchor_bits
        # (the tokens with an anchor bit, found without a Python step per token)
        for position in itertools.compress(range(n), map(operator.and_, masks, itertools.repeat(anchor_bits))):
            mask = masks[position] & anchor_bits
            while mask:  # each spec bit of this token that anchors some pattern
                lowest = mask & -mask
                mask ^= lowest
                for key, elements, offset, checks in anchored[lowest]:
                    start = position - offset
                    if start < 0:
                        continue
                    if checks is not None:  # every element exactly once: one candidate span
                        end = start + len(elements)
                        if end <= n:
                            for relative, bit in checks:  # the elements other than the anchor
                                if not masks[start + relative] >> bit & 1:
                                    break
                            else:
                                matches.append((key, start, end))
                    else:
                        matches.extend((key, start, end) for end in _ends(elements, 0, start, masks, n)
                                       if end > start)
        for key, elements in compiled.unanchored:
            for start in range(n):
                matches.extend((key, start, end) for end in _ends(elements, 0, start, masks, n) if end > start)
        return matches

    # --- compilation --------------------------------------------------------------------------------------

    def _element(self, spec: dict) -> tuple[int, int, float]:
        spec = dict(spec)
        low, high = _quantifier(spec.pop("OP", None))
        conditions = []
        for attr, value in spec.items():
            conditions.extend(self._conditions(attr, value))
        conditions = tuple(sorted(conditions, key=lambda c: c[:2]))  # the same spec in any key order
        if conditions not in self._spec_index:
            self._spec_index[conditions] = len(self._specs)
            self._specs.append(conditions)
        return self._spec_index[conditions], low, high

    def _conditions(self, attr: str, value) -> list[tuple]:
        if attr == "_":
            if not isinstance(value, dict):
                raise Unsupported
            out = []
            for name, ext_value in value.items():
                if not isinstance(ext_value, dict) or set(ext_value) - set(_SET_OPS):
                    raise Unsupported  # plain extension values and IN on extensions: left to spaCy
                if name not in self._extensions:
                    self._extensions.append(name)
                for op, wanted in ext_value.items():
                    out.append(("_" + name, op, _frozen(wanted)))
            return out
        if attr not in _ARRAY_ATTRS or attr in _FLAGS and not isinstance(value, bool):
            raise Unsupported
        if attr not in self._attrs:
            self._attrs.append(attr)
        if not isinstance(value, dict):
            if attr == "MORPH" or isinstance(value, list) \
                    or isinstance(value, bool) != (attr in _FLAGS or attr == "IS_SENT_START"):
                raise Unsupported  # MORPH equality is a whole-analysis match: left to spaCy
            return [(attr, "==", value)]
        out = []
        is_string = attr not in _NOT_STRINGS and attr != "MORPH"
        for op, wanted in value.items():
            if op in ("IN", "NOT_IN") and is_string:
                out.append((attr, op, _frozen(wanted)))
            elif op == "REGEX" and isinstance(wanted, str) and is_string:
                out.append((attr, op, re.compile(wanted)))
            elif op in _SET_OPS and attr == "MORPH" and isinstance(wanted, list) \
                    and all(isinstance(w, str) and "|" not in w for w in wanted):
                out.append((attr, op, frozenset(wanted)))
            elif op in _COMPARE and attr == "LENGTH" and isinstance(wanted, int):
                out.append((attr, op, wanted))
            else:
                raise Unsupported
        return out

class _Compiled:
    """What matching needs, derived from the added patterns: the reading function, the spec tests as one
    column per attribute, and the patterns grouped by the spec bit of an anchor token."""

    def __init__(self, matcher: TokenMatcher):
        self.attrs, self.extensions = list(matcher._attrs), list(matcher._extensions)
        self.context_free = matcher.context_free
        if self.context_free:  # the text is the reading, with the sentence-start flag where a spec reads it
            self.columns = ["ORTH", "SENT_START"] if "IS_SENT_START" in self.attrs else ["ORTH"]
        else:
            self.columns = list(dict.fromkeys(_ARRAY_ATTRS[a] for a in [*self.attrs, *matcher.word_attrs])) or ["ORTH"]
        # the spec tests, one column per attribute (see _Column): plain Token attributes read together with
        # one attrgetter, the others (MORPH, LENGTH, sentence start, extensions) only while a spec that asks
        # about them can still match
        everything = (1 << len(matcher._specs)) - 1
        columns = {attr: _Column(attr, matcher._specs, everything)
                   for attr in [*self.attrs, *("_" + name for name in self.extensions)]}
        plain = [attr for attr in self.attrs if attr in _TOKEN_ATTRS]
        self.read = _getter([_TOKEN_ATTRS[attr] for attr in plain])
        self.plain = [columns[attr] for attr in plain]
        self.ext_readers = [_extension_reader(name) for name in self.extensions]
        self.lazy = [(columns[attr], _READ_LATER.get(attr) or _extension_reader(attr[1:]))
                     for attr in sorted(set(columns) - set(plain), key=lambda attr: attr.startswith("_"))]
        self.everything = everything
        # each pattern is looked up from one "anchor" element in its fixed-width head (the elements before the
        # first quantifier), the most selective by the kind of its conditions: a listed word rather than a
        # part of speech, a part of speech rather than a morphological or shape condition
        self.anchored: dict[int, list] = {}
        self.unanchored: list = []
        self.anchor_bits = 0
        for key, elements in matcher._patterns:
            head = list(itertools.takewhile(lambda e: e[1] == e[2] == 1, elements))
            if not head:  # an optional or repeated first element: every start position is tried
                self.unanchored.append((key, elements))
                continue
            offset = min(range(len(head)), key=lambda i: _selectivity(matcher._specs[head[i][0]]))
            # a fixed-width pattern: (position, bit) of the elements besides the anchor; otherwise None
            checks = tuple((i, bit) for i, (bit, _, _) in enumerate(elements) if i != offset) \
                if len(head) == len(elements) else None
            self.anchored.setdefault(1 << head[offset][0], []).append((key, elements, offset, checks))
            self.anchor_bits |= 1 << head[offset][0]

    def readings(self, doc) -> list:
        """Per token, what determines its mask: the text (and sentence-start flag) for a context-free backend,
        otherwise every attribute the specs read (and the extension values); columns read in one call."""
        if not len(doc):
            return []
        rows = doc.to_array(self.columns)
        if len(self.columns) == 1:
            return rows.tolist()
        if self.context_free:  # the text, as a pair with True where the token starts a sentence (spaCy: 1)
            readings = rows[:, 0].tolist()
            for i in (rows[:, 1] == 1).nonzero()[0].tolist():
                readings[i] = (readings[i], True)
            return readings
        rows = list(zip(*rows.T.tolist()))  # a tuple per token
        if self.ext_readers:
            return [(row, *(read(token) for read in self.ext_readers)) for row, token in zip(rows, doc)]
        return rows

    def masks(self, tokens: list) -> list[int]:
        """Bit masks of the specs each token satisfies: the AND over the attributes of the specs each value
        meets, one attribute at a time over all tokens."""
        masks = [self.everything] * len(tokens)
        values = zip(*map(self.read, tokens)) if self.plain else ()
        for column, column_values in zip(self.plain, values):
            masks = column.apply(masks, column_values)
        for column, read in self.lazy:  # read only while a spec still alive asks about the attribute
            constrained = column.constrained
            masks = column.apply(masks, [read(token) if mask & constrained else None
                                         for mask, token in zip(masks, tokens)])
        return masks

    def clear(self) -> None:
        """Forget the cached value masks."""
        for column in [*self.plain, *(column for column, _ in self.lazy)]:
            column.cache.clear()


class _Column:
    """The conditions of every spec on one attribute: per value, the bits of the specs whose conditions on it
    the value meets (specs without a condition on it included). ``==``/``IN`` conditions are one dictionary
    lookup; the others (``NOT_IN``, ``REGEX``, comparisons, set predicates) are tested, and their result is
    cached per value, except for the word's own text, lemma and forms, which hardly ever repeat."""

    def __init__(self, attr: str, specs: list[tuple], everything: int):
        self.constrained = 0
        self.index: dict = {}     # value -> bits of the specs whose ==/IN conditions allow it
        self.tested: list = []    # (bit, test) of the specs with other conditions on this attribute
        for bit, conditions in enumerate(specs):
            own = [c for c in conditions if c[0] == attr]
            if not own:
                continue
            self.constrained |= 1 << bit
            if all(op in ("==", "IN") for _, op, _ in own):
                allowed = frozenset.intersection(*(frozenset(w if op == "IN" else (w,)) for _, op, w in own))
                for value in allowed:
                    self.index[value] = self.index.get(value, 0) | 1 << bit
            else:
                self.tested.append((1 << bit, _all_of([_condition_test(c) for c in own])))
        self.base = everything & ~self.constrained
        self.convert = _CONVERT.get(attr)
        self.cache: dict = {}
        # (MORPH, the one value with a conversion, is never a word attribute: only cached values are converted)
        self.cached = bool(self.tested) and attr not in _WORD_ATTRS

    def apply(self, masks: list[int], values) -> list[int]:
        """``masks`` ANDed with the bits each value allows (a token whose mask has no spec asking about this
        attribute keeps its mask; its value is not looked at)."""
        constrained, base, index = self.constrained, self.base, self.index
        if self.cached:
            cache, compute = self.cache, self._compute
            return [mask & (cache[value] if value in cache else compute(value)) if mask & constrained else mask
                    for mask, value in zip(masks, values)]
        out = [mask & (base | index.get(value, 0)) if mask & constrained else mask
               for mask, value in zip(masks, values)]
        for bit, test in self.tested:  # only where the spec is still alive
            out = [new | bit if mask & bit and test(value) else new for new, mask, value in zip(out, masks, values)]
        return out

    def _compute(self, value) -> int:
        """Bits of the specs ``value`` allows (and caches them)."""
        mask = self.base | self.index.get(value, 0)
        converted = value if self.convert is None else self.convert(value)
        for bit, test in self.tested:
            if test(converted):
                mask |= bit
        self.cache[value] = mask
        return mask


#: Matcher attributes that are plain Token attributes (read together with one ``attrgetter``)
_TOKEN_ATTRS = {"ORTH": "orth_", "TEXT": "orth_", "LOWER": "lower_", "NORM": "norm_", "LEMMA": "lemma_",
                "POS": "pos_", "TAG": "tag_", "DEP": "dep_", "ENT_TYPE": "ent_type_", "SHAPE": "shape_", **_FLAGS}
#: the other Matcher attributes (read only while a spec that asks about them can still match)
_READ_LATER = {"MORPH": lambda t: str(t.morph), "LENGTH": len, "IS_SENT_START": lambda t: t.is_sent_start is True}
#: attributes whose values identify the word (their test results are not worth caching)
_WORD_ATTRS = frozenset({"ORTH", "TEXT", "LOWER", "NORM", "LEMMA"})
#: a value as the tests compare it, where that differs from its cache key
_CONVERT = {"MORPH": lambda morph: frozenset(morph.split("|")) if morph else frozenset()}


def _extension_reader(name: str) -> Callable:
    """``token -> `` the extension value as spaCy's set predicates see it (see :func:`_ext_set`)."""
    return lambda token: _ext_set(token._.get(name))


def _getter(names: list[str]) -> Callable:
    """``token -> tuple`` of the named Token attributes (one C-level call for two or more)."""
    if len(names) > 1:
        return operator.attrgetter(*names)
    return (lambda t: (getattr(t, names[0]),)) if names else (lambda t: ())


def _all_of(tests: list[Callable]) -> Callable[[object], bool]:
    """One test that passes when all ``tests`` pass."""
    if len(tests) == 1:
        return tests[0]
    return lambda value: all(test(value) for test in tests)


def _condition_test(condition: tuple) -> Callable[[object], bool]:
    """A test ``value -> bool`` of one ``(attribute, operator, wanted)`` condition (``MORPH`` and extension
    values arrive as frozensets, or ``None`` where spaCy's set predicates fail)."""
    _, op, wanted = condition
    if op == "==":
        return lambda v: v == wanted
    if op == "IN":
        return lambda v: v in wanted
    if op == "NOT_IN":
        return lambda v: v not in wanted
    if op == "REGEX":
        return lambda v: wanted.search(v) is not None
    if op in _COMPARE:
        compare = _COMPARE[op]
        return lambda v: compare(v, wanted)
    if op == "IS_SUPERSET":
        return lambda v: v is not None and wanted <= v
    if op == "IS_SUBSET":
        return lambda v: v is not None and v <= wanted
    return lambda v: v is not None and not v.isdisjoint(wanted)  # INTERSECTS


def _ext_set(value):
    """An extension value as spaCy's set predicates see it: a set of strings, or ``None`` when they fail."""
    if isinstance(value, str):
        return frozenset((value,))
    try:
        return frozenset(value) if all(isinstance(v, str) for v in value) else None
    except TypeError:
        return None


def _selectivity(conditions: tuple) -> int:
    """Rank of a spec as a pattern anchor: 0 = a listed word (rare), 1 = a part of speech, 2 = anything else."""
    kinds = {(attr, op in ("==", "IN")) for attr, op, _ in conditions}
    if any(ok for attr, ok in kinds if attr in ("LOWER", "ORTH", "TEXT", "LEMMA", "NORM")):
        return 0
    if ("POS", True) in kinds or ("TAG", True) in kinds:
        return 1
    return 2


def _frozen(wanted) -> frozenset:
    """A list of strings from a pattern as a frozenset (anything else is left to spaCy)."""
    if not isinstance(wanted, list) or not all(isinstance(w, str) for w in wanted):
        raise Unsupported
    return frozenset(wanted)


def _quantifier(op) -> tuple[int, float]:
    """``(min, max)`` repetitions of a spaCy ``OP`` value."""
    if op is None:
        return 1, 1
    fixed = {"?": (0, 1), "*": (0, math.inf), "+": (1, math.inf)}
    if op in fixed:
        return fixed[op]
    found = _OP.match(op) if isinstance(op, str) else None
    if not found:
        raise Unsupported  # "!" and anything else
    low, comma, high = found.groups()
    if not comma:
        return int(low), int(low)
    return int(low or 0), int(high) if high else math.inf


def _ends(elements: tuple, index: int, position: int, masks: list[int], n: int) -> set[int]:
    """End positions of every way ``elements[index:]`` can match from ``position``."""
    if index == len(elements):
        return {position}
    bit, low, high = elements[index]
    ends: set[int] = set()
    count = 0
    while True:
        if count >= low:
            ends |= _ends(elements, index + 1, position, masks, n)
        if count == high or position >= n or not masks[position] >> bit & 1:
            return ends
        position += 1
        count += 1
