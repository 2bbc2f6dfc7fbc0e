"""Preflight: what this machine must hold before a sweep runs (models, data files and their sizes).

A :class:`~diagnostics.finetune.SweepConfig` is checked on its own when it is built; these checks read the
machine: a model's folder and ``config.json`` (not its weights), and every data source the sweep names (bundled
sets take milliseconds, a full MNLI copy a few seconds). Each problem is a ``(key, message)`` pair that
:class:`~diagnostics.settings.ConfigError` names with the config file's line.
"""

from __future__ import annotations

from pathlib import Path

from diagnostics.core.errors import UserInputError
from diagnostics.data import DataRef
from diagnostics.models import read_model_config
from diagnostics.models import ModelNotCachedError
from diagnostics.settings import ConfigError

from ._config_values import ModelSpec


def locate_model(model: ModelSpec, *, download: bool = True) -> Path | None:
    """The local folder of a model, checked (``config.json`` and safetensors weights) but not loaded.

    Parameters
    ----------
    model : ModelSpec
        ``model.path`` when given, else ``model.name`` (see :func:`diagnostics.models.resolve_model`).
    download : bool
        Fetch a hub model that is not cached (when the hub may be asked); with ``False`` such a model raises
        :class:`~diagnostics.models.ModelNotCachedError` (a plan checks without downloading).

    Returns
    -------
    Path or None
        The folder; ``None`` for the embedded model not built yet (it is built from the installed package on
        first use).

    Raises
    ------
    FileNotFoundError
        The folder does not exist or is incomplete, or a hub id is neither in the local Hugging Face cache nor
        obtainable from the hub (:class:`~diagnostics.models.ModelNotAvailableError`).
    """
    from diagnostics.models import EMBEDDED_ALIASES, ModelNotAvailableError, resolve_model

    target = model.path or model.name
    try:
        return resolve_model(target, prepare=False, download=download).path
    except ModelNotAvailableError:
        if target in EMBEDDED_ALIASES:
            return None
        raise


def model_problems(config, *, availability: bool = True, download: bool = True) -> list[tuple[str, str]]:
    """List the models of a config that this machine cannot load, and settings their ``config.json`` does not allow.

    Parameters
    ----------
    config : SweepConfig
        A validated config.
    availability : bool
        Report models that cannot be found locally (default); with ``False`` they are skipped silently (for a
        caller that reports them in its own words).
    download : bool
        Fetch a hub model that is not cached; with ``False`` it is skipped (its configuration is checked when the
        run downloads it).

    Returns
    -------
    list of (str, str)
        ``(key, message)``: ``models[i]`` (or ``models[i].path``) for a missing model, ``train_top_k_layers``
        above the model's ``num_hidden_layers``, ``max_seq_length`` above its position embeddings.
    """
    problems = []
    for i, model in enumerate(config.models):
        key = f"models[{i}].path" if model.path else f"models[{i}]"
        try:
            folder = locate_model(model, download=download)
        except ModelNotCachedError:
            continue
        except FileNotFoundError as err:
            if availability:
                first = " ".join(str(err).split()).split(". ")[0].rstrip(".")
                problems.append((key, f"model {model.name!r} is not available locally: {first}"))
            continue
        if folder is None:
            continue
        try:
            settings = read_model_config(folder)
        except (OSError, UserInputError) as err:
            problems.append((key, " ".join(str(err).split())))
            continue
        layers = settings.get("num_hidden_layers")
        k = config.train_top_k_layers
        if isinstance(layers, int) and k is not None and k > layers:
            problems.append(("train_top_k_layers", f"expected at most {layers} (the layers of model "
                                                   f"{model.name!r}), found {k}"))
        positions = settings.get("max_position_embeddings")
        if isinstance(positions, int):
            if "roberta" in str(settings.get("model_type", "")) or settings.get("model_type") == "camembert":
                positions -= (settings.get("pad_token_id") or 1) + 1  # positions are offset past the padding index
            if config.max_seq_length > positions:
                problems.append(("max_seq_length", f"expected at most {positions} (the positions of model "
                                                   f"{model.name!r}), found {config.max_seq_length}"))
            elif config.truncation == "per_sentence" and 2 * (config.max_seq_length - 2) + 4 > positions:
                # each sentence keeps max_seq_length - 2 tokens; up to 4 special tokens join them (XLM-R's)
                most = positions // 2
                problems.append(("max_seq_length", f"expected at most {most} with truncation: per_sentence (two "
                                                   f"sentences of max_seq_length - 2 tokens and the special tokens "
                                                   f"must fit the {positions} positions of model {model.name!r}), "
                                                   f"found {config.max_seq_length}"))
    return problems


def _source_name(ref: DataRef) -> str:
    if ref.path:
        return ref.path
    return f"{ref.name}:{ref.split}" if ref.split else ref.name


def data_problems(config, cache: dict | None = None) -> list[tuple[str, str]]:
    """Data sources of a config that cannot be read, lack labels or hold fewer labelled pairs than asked.

    Every train, validation, diagnostic, extra evaluation and extra training source of the (validated) config is read
    once (bundled sets take milliseconds; a full MNLI copy a few seconds), and once for all calls that share
    ``cache`` (the configs of one study). Returns ``(key, message)`` pairs, e.g. ``("train_size", "expected at most
    2490 (the labelled pairs of rte:train (en)), found 5000")``.
    """
    from diagnostics.core.errors import one_line

    cache = {} if cache is None else cache
    problems = []

    def labelled(ref: DataRef, key: str) -> tuple[int, int] | None:
        """(labelled pairs, pairs) of a source, or None when it cannot be read (the problem is recorded)."""
        from diagnostics.data import REGISTRY

        spec = REGISTRY.get(ref.name)
        if spec is not None and spec.folder is None and not ref.path:
            problems.append((f"{key}.path", f"expected a file for the user-supplied dataset {ref.name!r}, found none"))
            return None
        handle = (ref.name, ref.split, ref.path, ref.language)
        if handle not in cache:
            try:
                frame = ref.load()
                cache[handle] = (int(frame["label"].notna().sum()), len(frame))
            except (UserInputError, OSError, KeyError) as err:
                cache[handle] = one_line(err)
        found = cache[handle]
        if isinstance(found, str):
            problems.append((key, f"cannot read {_source_name(ref)}: {found}"))
            return None
        return found

    for language in config.languages:
        refs = config.language_data(language)
        given = config.data.get(language, {})
        for part in ("train", "validation"):
            key = f"data.{language}.{part}"
            counts = labelled(refs[part], key)
            if counts is not None and counts[0] == 0:
                problems.append((key if part in given else "languages",
                                 f"expected a labelled {part} set, found {counts[1]} pairs without labels in "
                                 f"{_source_name(refs[part])} ({language})"))
            if part == "train" and counts is not None and config.train_size is not None \
                    and config.train_size > counts[0] > 0:
                problems.append(("train_size", f"expected at most {counts[0]} (the labelled pairs of "
                                               f"{_source_name(refs[part])} ({language})), found {config.train_size}"))
        for i, ref in enumerate(refs["diagnostics"]):
            labelled(ref, f"data.{language}.diagnostics[{i}]")
        for i, ref in enumerate(refs["extra_eval"]):
            labelled(ref, f"extra_eval.{language}[{i}]")
    extra = config.extra_data
    if extra is not None and extra.size > 0:
        ref = DataRef(extra.name, extra.split if extra.path is None else None, extra.path)
        counts = labelled(ref, "extra_data")
        if counts is not None and extra.size > counts[0]:
            problems.append(("extra_data.size", f"expected at most {counts[0]} (the labelled pairs of "
                                                f"{_source_name(ref)}), found {extra.size}"))
    return list(dict.fromkeys(problems))


def input_problems(config, cache: dict | None = None) -> list[tuple[str, str]]:
    """What this machine lacks to run a config: :func:`model_problems` then :func:`data_problems`.

    Parameters
    ----------
    config : SweepConfig
        A validated config.
    cache : dict, optional
        Labelled-pair counts of the sources already read (see :func:`data_problems`).

    Returns
    -------
    list of (str, str)
        ``(key, message)`` per problem; empty when the sweep can start.
    """
    return model_problems(config) + data_problems(config, cache)


def check_inputs(config, cache: dict | None = None) -> None:
    """Check what this machine must hold before a sweep runs: models, data files and their sizes.

    ``config`` must be validated; ``cache`` is shared between configs so that each data source is read once (see
    :func:`data_problems`). Raises ``ConfigError``, named with the config file's lines, for a model not available
    locally, a ``train_top_k_layers`` or ``max_seq_length`` the model does not allow, or a data source missing,
    unreadable, unlabelled or smaller than ``train_size`` / ``extra_data.size``.
    """
    problems = input_problems(config, cache)
    if problems:
        raise ConfigError(problems, config._source)
