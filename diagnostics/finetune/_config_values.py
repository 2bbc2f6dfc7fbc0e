"""The value types of a sweep config (a model, extra data, a feature presence) and the readers of its structured
settings, each turning a value as written into its type or a :class:`~diagnostics.settings.Bad` naming the key."""

from __future__ import annotations

import numbers
import re
from dataclasses import dataclass
from typing import Any

from diagnostics.settings import (Bad, as_list, check_keys, read_integer, read_mapping, read_number, read_string,
                                  show)

MODEL_KEYS = ("name", "path", "pretrain_seed")
EXTRA_KEYS = ("name", "size", "split", "path")
PRESENCE_KEYS = ("feature", "share", "within")
#: The data references of one language in ``data.<language>``.
LANGUAGE_DATA_KEYS = ("train", "validation", "diagnostics")
_SEED_RANGE = re.compile(r"^\s*(\d+)\s*-\s*(\d+)\s*$")
_INTEGER = re.compile(r"^\s*[+-]?\d+\s*$")


@dataclass(frozen=True)
class ModelSpec:
    """One pretrained model of the sweep.

    Parameters
    ----------
    name : str
        Hub name, local folder or ``"embedded"`` (resolved by :func:`diagnostics.models.resolve_model`).
        Also the run folder's name (``/`` becomes ``__``) and the table's ``model`` column.
    path : str, optional
        Local folder to load instead of resolving ``name`` (lets several checkpoints carry readable names).
    pretrain_seed : int, optional
        Pretraining seed of this checkpoint (MultiBERTs-style); written to the table's ``pretrain_seed`` column.
    """

    name: str
    path: str | None = None
    pretrain_seed: int | None = None

    @classmethod
    def parse(cls, value: Any) -> ModelSpec:
        """Build from a name string, a mapping or an existing ``ModelSpec``.

        Parameters
        ----------
        value : str or dict or ModelSpec
            A model name, ``{"name": ..., "path": ..., "pretrain_seed": ...}`` or a spec.

        Returns
        -------
        ModelSpec
            The spec (``value`` itself when it already is one).

        Raises
        ------
        ValueError
            For another type.
        """
        if isinstance(value, ModelSpec):
            return value
        if isinstance(value, str):
            return cls(name=value)
        if isinstance(value, dict):
            return cls(**value)
        raise ValueError(f"cannot read a model from {value!r}")

    @property
    def slug(self) -> str:
        """File-system safe name of the model's folder in the run store."""
        return re.sub(r"[^A-Za-z0-9._=-]+", "__", self.name.strip("/")) or "model"


@dataclass(frozen=True)
class ExtraData:
    """Extra English NLI examples added to every language's training set (the study's §5.3).

    ``name`` is ``sick`` (bundled) or ``mnli`` (``path`` to a user copy); 3-way labels arrive collapsed to
    entailment / not_entailment by the loader. ``size`` examples are drawn with the sweep's ``data_seed``.

    Parameters
    ----------
    name : str
        Registered dataset name (``sick`` or ``mnli``).
    size : int
        Number of examples drawn.
    split : str, optional
        Split drawn from.
    path : str, optional
        A user copy of the data (needed for ``mnli``).
    """

    name: str = "sick"
    size: int = 1000
    split: str | None = "train"
    path: str | None = None


@dataclass(frozen=True)
class Presence:
    """A controlled share of training examples carrying a diagnostic feature (the study's §5.4).

    ``within`` says which part of the mixture is controlled. ``extra`` is the study's design: the language's whole
    train set (or its ``train_size`` subset) plus an ``extra_data.size`` subset of the extra English data in which
    ``share`` of pairs carry ``feature`` (the extra data annotated by the English rules). ``train``: the language's
    own training subset holds that share (annotated in the language), the extra data is drawn as usual. A pair
    carries the feature when either sentence shows it (:func:`diagnostics.annotate.annotate`, presence reading).

    Parameters
    ----------
    feature : str
        A fine diagnostic category.
    share : float
        Share of the controlled pairs that carry it, in [0, 1].
    within : {"train", "extra"}
        The controlled part of the mixture.
    """

    feature: str
    share: float
    within: str = "train"


def read_models(value: Any, key: str) -> list[ModelSpec]:
    """Read ``models``: names or mappings ``{name, path, pretrain_seed}``."""
    out = []
    for i, item in enumerate(as_list(value)):
        where = f"{key}[{i}]"
        if isinstance(item, ModelSpec):
            out.append(item)
        elif isinstance(item, str):
            out.append(ModelSpec(read_string(item, where)))
        elif isinstance(item, dict):
            check_keys(item, MODEL_KEYS, where)
            if "name" not in item:
                raise Bad(f"{where}.name", "expected a model name, found none")
            out.append(ModelSpec(read_string(item["name"], f"{where}.name"),
                                 read_string(item.get("path"), f"{where}.path", optional=True),
                                 read_integer(item.get("pretrain_seed"), f"{where}.pretrain_seed", optional=True)))
        else:
            raise Bad(where, f"expected a model name or a mapping {{name, path, pretrain_seed}}, found {show(item)}")
    return out


def read_languages(value: Any, key: str) -> list[str]:
    """Read ``languages``: a list of language codes."""
    return [read_string(item, f"{key}[{i}]") for i, item in enumerate(as_list(value))]


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


def read_extra_data(value: Any, key: str) -> ExtraData | None:
    """Read ``extra_data``: a mapping ``{name, size, split, path}`` or null."""
    if value is None or isinstance(value, ExtraData):
        return value
    if not isinstance(value, dict):
        raise Bad(key, f"expected a mapping {{name, size, split, path}} or null, found {show(value)}")
    check_keys(value, EXTRA_KEYS, key)
    defaults = ExtraData()
    return ExtraData(read_string(value.get("name", defaults.name), f"{key}.name"),
                     read_integer(value.get("size", defaults.size), f"{key}.size"),
                     read_string(value.get("split", defaults.split), f"{key}.split", optional=True),
                     read_string(value.get("path"), f"{key}.path", optional=True))


def read_presence(value: Any, key: str) -> Presence | None:
    """Read ``presence``: a mapping ``{feature, share, within}`` (or a list of them) or null."""
    if value is None or isinstance(value, Presence):
        return value
    if isinstance(value, (list, tuple)) and len(value) in (2, 3):
        value = dict(zip(PRESENCE_KEYS, value))
    if not isinstance(value, dict):
        raise Bad(key, f"expected a mapping {{feature, share, within}} or null, found {show(value)}")
    check_keys(value, PRESENCE_KEYS, key)
    for name in ("feature", "share"):
        if name not in value:
            raise Bad(f"{key}.{name}", "expected a value, found none")
    return Presence(read_string(value["feature"], f"{key}.feature"), read_number(value["share"], f"{key}.share"),
                    read_string(value.get("within", "train"), f"{key}.within"))


def read_fuse(value: Any, key: str) -> int | str:
    """Read ``fuse``: an integer >= 1 or ``auto``."""
    if isinstance(value, str) and value.strip().lower() == "auto":
        return "auto"
    if isinstance(value, str) and _INTEGER.match(value):
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise Bad(key, f"expected an integer >= 1 or auto, found {show(value)}")
    return int(value)
