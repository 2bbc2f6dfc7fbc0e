"""Foreign label values -> the study's binary labels.

A file may spell labels as strings in any case (``Entailment``, ``NOT_ENTAILMENT``, ``not entailment``,
``non-entailment``), as 3-way NLI labels (``neutral`` and ``contradiction`` collapse to not_entailment, as the study
collapses MNLI and SICK), or as codes (``0``/``1``, ``True``/``False``, class or choice indices) whose meaning only
the user knows: those need a label map, ``"0=entailment,1=not_entailment"``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np
import pandas as pd

from ..core.errors import UserInputError
from ..core.schema import ENTAILMENT, LABELS, NOT_ENTAILMENT
from ..data import THREE_WAY, collapse

#: Label names a file may use without a map (after :func:`label_key`), and the binary label each stands for.
NAMES = {**{name: collapse(name) for name in THREE_WAY}, NOT_ENTAILMENT: NOT_ENTAILMENT,
         "non_entailment": NOT_ENTAILMENT, "not_entailed": NOT_ENTAILMENT, "entailed": ENTAILMENT}
#: The public name of :data:`NAMES` (the label names read without a map, e.g. a classifier head's).
LABEL_NAMES = NAMES


#: Answer words of multiple-choice prompts (lm-evaluation-harness's RTE choices are ``[" False", " True"]``, its
#: MNLI ones ``[" True", " Neither", " False"]``) and the binary label each stands for; read from a sample's choice
#: texts only, after :func:`label_key` (an explicit label map still wins).
CHOICE_NAMES = {**NAMES, "true": ENTAILMENT, "yes": ENTAILMENT, "false": NOT_ENTAILMENT, "no": NOT_ENTAILMENT,
                "neither": NOT_ENTAILMENT, "maybe": NOT_ENTAILMENT}


def label_key(value: object) -> str:
    """Spell a label value the way label maps and names are compared.

    Parameters
    ----------
    value : object
        A cell: a string, an integer, a float holding an integer (``1.0`` from a spreadsheet), a boolean.

    Returns
    -------
    str
        Stripped and case-folded, with spaces and hyphens as underscores (``"Not entailment"`` ->
        ``"not_entailment"``); integral numbers without a fraction (``1.0`` -> ``"1"``).
    """
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value)).casefold()
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        value = int(value)
    return "_".join(str(value).strip().casefold().replace("-", " ").split())


def parse_label_map(spec: str | Mapping | None) -> dict[str, str] | None:
    """Read a label map: which value of the file means which label.

    Parameters
    ----------
    spec : str, mapping or None
        ``"0=entailment,1=not_entailment"`` (values may also be ``neutral`` or ``contradiction``, collapsed), or a
        mapping ``{0: "entailment", 1: "not_entailment"}``; ``None`` for no map.

    Returns
    -------
    dict or None
        :func:`label_key` of each file value -> a label of :data:`diagnostics.core.schema.LABELS`.

    Raises
    ------
    UserInputError
        An item without ``=``, a label that is not an NLI label, or one value mapped twice.
    """
    if spec is None:
        return None
    if isinstance(spec, str):
        items = []
        for item in (part.strip() for part in spec.split(",")):
            if not item:
                continue
            key, sep, value = item.rpartition("=")
            if not sep or not key.strip():
                raise UserInputError(f"label map {spec!r}: expected VALUE=LABEL items separated by commas "
                                     f"(e.g. 0={ENTAILMENT},1={NOT_ENTAILMENT}), found {item!r}")
            items.append((key, value))
    else:
        items = list(spec.items())
    out: dict[str, str] = {}
    for key, value in items:
        label = NAMES.get(label_key(value))
        if label is None:
            raise UserInputError(f"label map: {key}={value}: expected a label in {', '.join(LABELS + THREE_WAY[1:])}, "
                                 f"found {value!r}")
        k = label_key(key)
        if k in out and out[k] != label:
            raise UserInputError(f"label map: value {key!r} is mapped twice ({out[k]} and {label})")
        out[k] = label
    if not out:
        raise UserInputError(f"label map {spec!r}: no VALUE=LABEL item")
    return out


def to_labels(values: Iterable, label_map: Mapping[str, str] | None = None) -> pd.Series:
    """Translate label values into binary labels.

    Gives ``entailment`` / ``not_entailment``, or ``None`` where the value is missing or means no label.
    ``label_map`` (from :func:`parse_label_map`) is consulted first; values it does not hold are read as label
    names (:data:`NAMES`, any case).
    """
    out = []
    for value in values:
        if value is None or (not isinstance(value, str) and pd.isna(value)):
            out.append(None)
            continue
        key = label_key(value)
        out.append((label_map or {}).get(key) or NAMES.get(key))
    return pd.Series(out, dtype=object)


def index_map(n_classes: int, label_map: Mapping[str, str] | None, default: tuple[str, ...] | None,
              what: str) -> list[str]:
    """Give the label of every class (or choice) index of a score vector.

    ``label_map`` (from :func:`parse_label_map`, keyed by the indices ``"0"``, ``"1"`` ...) wins over ``default``,
    the format's convention for ``n_classes`` classes (labels or 3-way names), ``None`` when it has none. ``what``
    names the source for messages (``"logits of run.npy"``). Returns a binary label per index. Raises
    ``UserInputError`` without a map and a default for this many classes, or when the map misses an index.
    """
    if label_map is None:
        if default is None or len(default) != n_classes:
            raise UserInputError(f"{what}: {n_classes} scores per row and no label map; say which index is which "
                                 f"label, e.g. --label-map 0={ENTAILMENT},1=neutral,2=contradiction")
        return [NAMES[label_key(name)] for name in default]
    missing = [str(i) for i in range(n_classes) if str(i) not in label_map]
    if missing:
        raise UserInputError(f"{what}: {n_classes} scores per row, but the label map has no index "
                             f"{', '.join(missing)} (it maps {', '.join(sorted(label_map))})")
    return [label_map[str(i)] for i in range(n_classes)]


def scores_to_predictions(scores: np.ndarray, labels: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Turn score vectors (logits, log-likelihoods) into a prediction and P(entailment) per row.

    Parameters
    ----------
    scores : numpy.ndarray, shape (n_rows, n_classes)
        The scores of each row.
    labels : list of str
        The binary label of each class (:func:`index_map`).

    Returns
    -------
    prediction : numpy.ndarray of str
        The label of the highest score (the first on ties, as ``numpy.argmax``).
    probability : numpy.ndarray of float
        P(entailment): the softmax mass of the classes labelled entailment.
    """
    scores = np.asarray(scores, dtype=np.float64)
    best = np.argmax(scores, axis=1)
    prediction = np.asarray(labels, dtype=object)[best]
    shifted = np.exp(scores - scores.max(axis=1, keepdims=True))
    mass = shifted / shifted.sum(axis=1, keepdims=True)
    probability = mass[:, np.asarray(labels, dtype=object) == ENTAILMENT].sum(axis=1)
    return prediction, probability
