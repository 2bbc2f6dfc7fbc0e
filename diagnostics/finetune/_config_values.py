"""The nested settings of a sweep config (a model, extra data, a feature presence), the readers of its other
structured settings and the checks shared by several settings (a diagnostic category, a registered dataset)."""

from __future__ import annotations

import math
import numbers
import re
from typing import Any

from diagnostics.settings import (Bad, Expected, Settings, as_list, check_keys, choice, hint, read_mapping,
                                  read_string, setting, show)

#: The data references of one language in ``data.<language>``.
LANGUAGE_DATA_KEYS = ("train", "validation", "diagnostics")
PRESENCE_WITHIN = ("train", "extra")
SUBMITIT_CLUSTERS = ("slurm", "local", "debug")
_REF_KEYS = ("name", "split", "path", "language")
_SEED_RANGE = re.compile(r"^\s*(\d+)\s*-\s*(\d+)\s*$")
_INTEGER = re.compile(r"^\s*[+-]?\d+\s*$")


def _category_hint(name: str) -> str:
    from diagnostics.core.taxonomy import UnknownCategoryError, canonical_fine

    try:
        canonical_fine(name)
    except UnknownCategoryError as err:
        return f" (did you mean {' or '.join(map(repr, err.suggestions))}?)" if err.suggestions else ""
    return ""


def _is_category(name: str) -> bool:
    from diagnostics.core.taxonomy import UnknownCategoryError, canonical_fine

    try:
        canonical_fine(name)
    except UnknownCategoryError:
        return False
    return True


def _is_registered(name: str) -> bool:
    from diagnostics.data import REGISTRY

    return name in REGISTRY


def _registry_hint(name: str) -> str:
    from diagnostics.data import REGISTRY

    return f"{hint(name, REGISTRY)}; see `diagnostics data list`"


#: A fine diagnostic category, in any spelling :func:`diagnostics.core.taxonomy.canonical_fine` reads.
DIAGNOSTIC_CATEGORY = Expected(_is_category, "a diagnostic category", _category_hint)
#: A dataset name of the registry (:func:`diagnostics.data.available`).
REGISTERED_DATASET = Expected(_is_registered, "a registered dataset", _registry_hint)


class ModelSpec(Settings, frozen=True):
    """One pretrained model of the sweep, written as its name or as a mapping ``{name, path, pretrain_seed}``."""

    _written_as = "a model name"

    name: str = setting(help="Hub name, local folder or ``\"embedded\"`` (resolved by "
                             ":func:`diagnostics.models.resolve_model`). Also the run folder's name (``/`` becomes "
                             "``__``) and the table's ``model`` column.")
    path: str | None = setting(None, help="Local folder to load instead of resolving ``name`` (lets several "
                                          "checkpoints carry readable names).")
    pretrain_seed: int | None = setting(None, help="Pretraining seed of this checkpoint (MultiBERTs-style); written "
                                                   "to the table's ``pretrain_seed`` column.")

    @classmethod
    def _from_shorthand(cls, value: Any) -> Any:
        return {"name": value} if isinstance(value, str) else value

    @property
    def slug(self) -> str:
        """File-system safe name of the model's folder in the run store."""
        return re.sub(r"[^A-Za-z0-9._=-]+", "__", self.name.strip("/")) or "model"


class ExtraData(Settings, frozen=True):
    """Extra English NLI examples added to every language's training set (the study's §5.3).

    3-way labels arrive collapsed to entailment / not_entailment by the loader; ``size`` examples are drawn with the
    sweep's ``data_seed``.
    """

    name: str = setting("sick", check=REGISTERED_DATASET,
                        help="Registered dataset name: ``sick`` (bundled) or ``mnli`` (``path`` to a user copy).")
    size: int = setting(1000, check=(lambda v: v >= 0, "an integer >= 0 (0: no extra data)"),
                        help="Number of examples drawn.")
    split: str | None = setting("train", help="Split drawn from.")
    path: str | None = setting(None, help="A user copy of the data (needed for ``mnli``).")

    def problems(self) -> list[tuple[str, str]]:
        """List the problems no single field shows: a ``split`` the registered dataset does not have.

        Returns
        -------
        list of (str, str)
            ``(key, message)`` per problem.
        """
        from diagnostics.data import REGISTRY

        spec = REGISTRY.get(self.name) if isinstance(self.name, str) else None
        if spec is None or self.path is not None or self.split is None or spec.folder is None \
                or self.split in spec.splits:
            return []
        return [("split", f"expected a split of {self.name} ({', '.join(spec.splits)}), found {self.split!r}"
                          f"{hint(self.split, spec.splits)}")]


class Presence(Settings, frozen=True):
    """A controlled share of training examples carrying a diagnostic feature (the study's §5.4).

    ``within`` says which part of the mixture is controlled. ``extra`` is the study's design: the language's whole
    train set (or its ``train_size`` subset) plus an ``extra_data.size`` subset of the extra English data in which
    ``share`` of pairs carry ``feature`` (the extra data annotated by the English rules). ``train``: the language's
    own training subset holds that share (annotated in the language), the extra data is drawn as usual. A pair
    carries the feature when either sentence shows it (:func:`diagnostics.annotate.annotate`, presence reading).
    Also written as a list ``[feature, share, within]``.
    """

    feature: str = setting(check=DIAGNOSTIC_CATEGORY, help="A fine diagnostic category.")
    share: float = setting(check=(lambda v: 0.0 <= v <= 1.0, "a number in [0, 1]"),
                           help="Share of the controlled pairs that carry it, in [0, 1].")
    within: str = setting("train", choices=PRESENCE_WITHIN, help="The controlled part of the mixture.")

    @classmethod
    def _from_shorthand(cls, value: Any) -> Any:
        if isinstance(value, (list, tuple)) and len(value) in (2, 3):
            return dict(zip(("feature", "share", "within"), value))
        return value


def read_seeds(value: Any, key: str) -> list[int]:
    """Read ``seeds``: a list of integers or an inclusive range ``"a-b"``; a bare integer is refused."""
    if isinstance(value, str):
        match = _SEED_RANGE.match(value)
        if match is None:
            raise Bad(key, f"expected a list of seeds ([0, 1, 2]) or a range (0-2), found {show(value)}")
        low, high = int(match.group(1)), int(match.group(2))
        if low > high:
            raise Bad(key, f"expected a range low-high with low <= high, found {value!r}")
        return list(range(low, high + 1))
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        count = f", 0-{value - 1} or [{', '.join(map(str, range(value)))}] for {value} seeds" \
            if 1 < value <= 10 else ""
        raise Bad(key, f"expected a list of seeds, found the single number {value}; write [{value}] for seed "
                        f"{value} alone{count}")
    if not isinstance(value, (list, tuple, range)):
        raise Bad(key, f"expected a list of seeds ([0, 1, 2]) or a range (0-2), found {show(value)}")
    seeds = []
    for i, item in enumerate(value):
        if isinstance(item, bool) or not isinstance(item, numbers.Integral) or item < 0:
            raise Bad(f"{key}[{i}]", f"expected an integer >= 0, found {show(item)}")
        seeds.append(int(item))
    return seeds


def read_language_data(value: Any, key: str) -> dict:
    """Read ``data``: language -> ``{train, validation, diagnostics}`` references."""
    value = read_mapping(value, key, "of language -> {train, validation, diagnostics}")
    out = {}
    for language, entry in value.items():
        where = f"{key}.{language}"
        out[language] = read_mapping(entry, where, "{train, validation, diagnostics}")
        check_keys(out[language], LANGUAGE_DATA_KEYS, where)
    return out


def read_extra_eval(value: Any, key: str) -> dict:
    """Read ``extra_eval``: language -> further evaluation sets."""
    return read_mapping(value, key, "of language -> [dataset, ...]")


def read_executor_options(value: Any, key: str) -> dict:
    """Read ``executor_options``: a mapping of the executor's options."""
    return read_mapping(value, key, "of executor options")


def read_fuse(value: Any, key: str) -> int | str:
    """Read ``fuse``: an integer >= 1 or ``auto``."""
    if isinstance(value, str) and value.strip().lower() == "auto":
        return "auto"
    if isinstance(value, str) and _INTEGER.match(value):
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise Bad(key, f"expected an integer >= 1 or auto, found {show(value)}")
    return int(value)


def listed_once(noun: str) -> Any:
    """A check of a list of the grid (``seeds``, ``languages``): not empty, and no item twice."""
    def check(items: list, key: str) -> list[tuple[str, str]]:
        if not items:
            return [(key, f"expected at least one {noun}, found none")]
        repeated = sorted({item for item in items if items.count(item) > 1})
        return [(key, f"expected each {noun} once, found {', '.join(map(str, repeated))} repeated")] if repeated else []

    return check


def models_problems(models: list[ModelSpec], key: str) -> list[tuple[str, str]]:
    """Check ``models``: at least one, and no two with one name (their runs would share a folder)."""
    if not models:
        return [(key, "expected at least one model, found none")]
    if len({model.slug for model in models}) != len(models):
        return [(key, "expected distinct names, found two models with one name; give each checkpoint its own name")]
    return []


def ref_problems(value: Any, key: str) -> list[tuple[str, str]]:
    """Problems of one dataset reference (``"name[:split]"`` or a mapping): structure, registered name, split."""
    from diagnostics.data import DataRef
    from diagnostics.data import REGISTRY

    if isinstance(value, DataRef):
        name, split, path, name_key = value.name, value.split, value.path, key
    elif isinstance(value, str):
        name, _, split = value.partition(":")
        split, path, name_key = split or None, None, key
    elif isinstance(value, dict):
        try:
            check_keys(value, _REF_KEYS, key)
            name = read_string(value.get("name"), f"{key}.name")
            split = read_string(value.get("split"), f"{key}.split", optional=True)
            path = read_string(value.get("path"), f"{key}.path", optional=True)
            read_string(value.get("language"), f"{key}.language", optional=True)
        except Bad as bad:
            return [(bad.key, bad.message)]
        name_key = f"{key}.name"
    else:
        return [(key, f"expected a dataset 'name[:split]' or a mapping {{name, split, path, language}}, found "
                      f"{show(value)}")]
    if name not in REGISTRY:
        return REGISTERED_DATASET(name, name_key)
    spec = REGISTRY[name]
    if path is None and spec.folder is not None and split is not None and split not in spec.splits:
        return [(key, f"expected a split of {name} ({', '.join(spec.splits)}), found {split!r}"
                      f"{hint(split, spec.splits)}")]
    return []


def data_problems(data: dict, key: str) -> list[tuple[str, str]]:
    """Check ``data``: every reference of every language (see :func:`ref_problems`)."""
    problems = []
    for language, entry in data.items():
        for part in ("train", "validation"):
            if entry.get(part) is not None:
                problems += ref_problems(entry[part], f"{key}.{language}.{part}")
        for i, ref in enumerate(as_list(entry.get("diagnostics"))):
            problems += ref_problems(ref, f"{key}.{language}.diagnostics[{i}]")
    return problems


def extra_eval_problems(extra_eval: dict, key: str) -> list[tuple[str, str]]:
    """Check ``extra_eval``: every further evaluation set of every language (see :func:`ref_problems`)."""
    return [p for language, refs in extra_eval.items() for i, ref in enumerate(as_list(refs))
            for p in ref_problems(ref, f"{key}.{language}[{i}]")]


def executor_options_problems(options: dict, key: str) -> list[tuple[str, str]]:
    """Check the options every executor reads: threads per worker, submitit's cluster, polling, grace, requeue."""
    problems = []
    threads = options.get("threads_per_worker")
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
        problems.append((f"{key}.threads_per_worker", f"expected an integer >= 1, found {show(threads)}"))
    if options.get("cluster") is not None and options["cluster"] not in SUBMITIT_CLUSTERS:
        problems.append((f"{key}.cluster", choice(str(options["cluster"]), SUBMITIT_CLUSTERS)))
    for name in ("poll_s", "lost_job_grace_s"):
        value = options.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                                  or not math.isfinite(value) or value < 0 or name == "poll_s" and value == 0):
            problems.append((f"{key}.{name}", f"expected a number of seconds {'> 0' if name == 'poll_s' else '>= 0'}"
                                              f", found {show(value)}"))
    if options.get("requeue") is not None and not isinstance(options["requeue"], bool):
        problems.append((f"{key}.requeue", f"expected true or false, found {show(options['requeue'])}"))
    return problems
