"""A classifier head's labels -> the task's two labels: the rule, visible and overridable.

The rule reads the model's own ``config.id2label``. Each class name is compared after
:func:`diagnostics.predictions.label_key` (any case, spaces and hyphens as underscores), so ``ENTAILMENT``,
``Entailment`` and ``entailment`` are one name. Names of 3-way NLI heads (entailment / neutral / contradiction, in
any order) collapse as the study collapses MNLI: neutral and contradiction become not_entailment; 2-way heads
(entailment / not_entailment and their usual spellings) map as they are. A user map (``--label-map``) wins: keyed
by class index (``0=entailment``) or by the head's own label name (``LABEL_1=entailment``). A head with a class the
rule cannot place (``LABEL_0``, ``positive`` ...), or without both an entailment and a not_entailment class, is
refused in one line that names its labels and shows a map to pass.
"""

from __future__ import annotations

from collections.abc import Mapping

from diagnostics.core.errors import UserInputError
from diagnostics.core.schema import ENTAILMENT, NOT_ENTAILMENT
from diagnostics.predictions import LABEL_NAMES, label_key, parse_label_map


def head_labels(id2label: Mapping, label_map: str | Mapping | None = None, *, what: str = "model") -> list[str]:
    """Give the task label (entailment / not_entailment) of every class index of a classifier head.

    Parameters
    ----------
    id2label : mapping
        The model's ``config.id2label`` (class index, as int or str -> the class's name).
    label_map : str or mapping, optional
        The user's map, ``"0=entailment,1=neutral,2=contradiction"`` or ``{"LABEL_1": "entailment", ...}``
        (see :func:`diagnostics.predictions.parse_label_map`); its keys are class indices or the head's names.
    what : str
        The model, named in messages.

    Returns
    -------
    list of str
        The task label of class 0, 1, ...

    Raises
    ------
    UserInputError
        A class the rule cannot place, or a head without both an entailment and a not_entailment class.
    """
    names = _class_names(id2label, what)
    user = parse_label_map(label_map) or {}
    out, unmapped = [], []
    for index, name in enumerate(names):
        label = user.get(str(index)) or user.get(label_key(name)) or LABEL_NAMES.get(label_key(name))
        if label is None:
            unmapped.append(name)
        out.append(label)
    shown = ", ".join(f"{i}={name}" for i, name in enumerate(names))
    if unmapped:
        hint = ",".join(f"{i}={ENTAILMENT if i == len(names) - 1 else NOT_ENTAILMENT}" for i in range(len(names)))
        raise UserInputError(f"{what}: cannot map the head's labels ({shown}) to {ENTAILMENT} / {NOT_ENTAILMENT}: "
                             f"{', '.join(map(repr, unmapped))} unknown; say which index is which with "
                             f"--label-map, e.g. --label-map {hint}")
    if ENTAILMENT not in out or NOT_ENTAILMENT not in out:
        raise UserInputError(f"{what}: the head's labels ({shown}) map to {', '.join(sorted(set(out)))} only; an "
                             f"NLI head needs a class for {ENTAILMENT} and one for {NOT_ENTAILMENT} (--label-map)")
    return out


def describe_rule(id2label: Mapping, labels: list[str]) -> dict[str, str]:
    """The rule as it was applied, for the run's record: ``"<index>=<head's name>" -> task label``.

    Parameters
    ----------
    id2label : mapping
        The model's ``config.id2label``.
    labels : list of str
        :func:`head_labels` of it.

    Returns
    -------
    dict of str to str
        One entry per class, in index order.
    """
    names = _class_names(id2label, "model")
    return {f"{i}={name}": label for i, (name, label) in enumerate(zip(names, labels))}


def _class_names(id2label: Mapping, what: str) -> list[str]:
    """The class names in index order; refuses a head whose indices are not 0..n-1."""
    try:
        by_index = {int(k): str(v) for k, v in dict(id2label or {}).items()}
    except (TypeError, ValueError):
        raise UserInputError(f"{what}: config.id2label has keys that are not class indices: "
                             f"{sorted(map(str, id2label))}") from None
    if sorted(by_index) != list(range(len(by_index))) or len(by_index) < 2:
        raise UserInputError(f"{what}: config.id2label should name classes 0..n-1 (n >= 2), found "
                             f"{sorted(by_index) or 'none'}")
    return [by_index[i] for i in range(len(by_index))]
