"""``SweepConfig``: one typed description of a seed sweep, read from YAML/TOML with ``key=value`` overrides.

The defaults are the reference study's stated settings (Tikhonova et al., 2022: mBERT, seeds 0-5, batch 4, lr 1e-5,
dropout 0.1, full fine-tuning) trained by the ``epoch`` recipe (AdamW, clipping 1.0, linear warm-up and decay, one
validation per epoch, early stopping after ``patience`` epochs). The study trained under jiant v1's SuperGLUE recipe;
``recipe: jiant`` reproduces that (``configs/paper.yaml``; sources in ``docs/finetune.md``).
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import hashlib
import json
import math
import numbers
import re
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from diagnostics.errors import UserInputError

#: RTE-style train / validation data and the diagnostic sets of each language (contract of the data stage).
LANGUAGE_DEFAULTS: dict[str, dict[str, Any]] = {
    "en": {"train": "rte:train", "validation": "rte:validation", "diagnostics": ["axb"]},
    "ru": {"train": "terra:train", "validation": "terra:validation", "diagnostics": ["lidirus"]},
    "sv": {"train": None, "validation": None, "diagnostics": ["swediagnostics"]},
    "fr": {"train": None, "validation": None, "diagnostics": []},
    "de": {"train": None, "validation": None, "diagnostics": []},
}


class ConfigError(UserInputError):
    """Sweep config values that cannot be right, one ``(key, message)`` per problem, all on one line.

    Each problem reads ``<file>:<line>: <key>: expected ..., found ...`` when the config came from a file (the
    line of the key), ``<file> (--set key=value): <key>: ...`` when an override set it, else ``<key>: ...``.

    Parameters
    ----------
    problems : list of (str, str)
        Dotted key (``lr``, ``extra_data.size``, ``models[0].path``; ``""`` for the whole file) and message.
    source : ConfigSource, optional
        Where the values came from.
    """

    def __init__(self, problems: list[tuple[str, str]], source: ConfigSource | None = None):
        self.problems = list(problems)
        self.source = source
        super().__init__("; ".join(self.lines()))

    def lines(self) -> list[str]:
        """Every problem as one located line.

        Returns
        -------
        list of str
            ``<where>: <key>: <message>`` per problem (``<where>`` left out when unknown).
        """
        out = []
        for key, message in self.problems:
            where = self.source.where(key) if self.source is not None else None
            out.append(": ".join(part for part in (where, key, message) if part))
        return out

    def located(self, source: ConfigSource | None) -> ConfigError:
        """The same problems named with ``source`` (unchanged when already located or ``source`` is None).

        Parameters
        ----------
        source : ConfigSource or None
            Where the values came from.

        Returns
        -------
        ConfigError
        """
        if self.source is not None or source is None:
            return self
        return ConfigError(self.problems, source)


_KEY_PARTS = re.compile(r"\[(\d+)\]|([^.\[\]]+)")


@dataclass(frozen=True)
class ConfigSource:
    """Where a config's values came from: its file (with the line of every key for YAML) and the overrides.

    Parameters
    ----------
    path : str, optional
        The config file.
    document : object, optional
        The file's mapping as read by :func:`diagnostics.yaml_lines.load_yaml_lines` (lines of keys), if YAML.
    overrides : tuple of (str, str or None)
        Dotted key and how it was given (``--set lr=1``; ``None`` for values set by code), in order.
    key_lines : dict, optional
        Dotted key -> line, for files read without line-aware containers (TOML).
    """

    path: str | None = None
    document: Any = field(default=None, compare=False, repr=False)
    overrides: tuple[tuple[str, str | None], ...] = ()
    key_lines: dict[str, int] | None = field(default=None, compare=False, repr=False)

    def with_overrides(self, items: list[tuple[str, str | None]]) -> ConfigSource:
        """Return this source with more overrides (later ones win).

        Parameters
        ----------
        items : list of (str, str or None)
            Dotted key and how it was given.

        Returns
        -------
        ConfigSource
        """
        return dataclasses.replace(self, overrides=self.overrides + tuple(items))

    def where(self, key: str) -> str | None:
        """Name the place of ``key``: ``file:line``, ``file (--set k=v)``, ``--set k=v``, ``file`` or None.

        Parameters
        ----------
        key : str
            Dotted key with list indices (``models[0].path``).

        Returns
        -------
        str or None
        """
        for given, label in reversed(self.overrides):
            if key == given or key.startswith((given + ".", given + "[")) or given.startswith(key + ".") and key:
                if label is None:
                    return None
                return f"{self.path} ({label})" if self.path else label
        if self.path is None:
            return None
        from diagnostics.yaml_lines import LineDict, LineList, line_of

        line = None
        node = self.document
        for index, name in _KEY_PARTS.findall(key):
            step = int(index) if index else name
            if isinstance(node, LineDict) and step in node or isinstance(node, LineList) and isinstance(step, int) \
                    and 0 <= step < len(node):
                line = line_of(node, step)
                node = node[step]
            else:
                break
        if line is None and self.key_lines:
            parts = key.replace("[", ".[").split(".")
            line = next((self.key_lines[".".join(parts[:n])] for n in range(len(parts), 0, -1)
                         if ".".join(parts[:n]) in self.key_lines), None)
        return f"{self.path}:{line}" if line else self.path


@dataclass(frozen=True)
class DataRef:
    """A dataset reference: a registered name, a split, and optionally a user file (``path``) in its format.

    Written in config files either as ``"rte:train"`` or as a mapping ``{name, split, path, language}``.

    Parameters
    ----------
    name : str
        Registered dataset name (see :func:`diagnostics.data.available`).
    split : str, optional
        Split to load (``None``: every split, or the one bound file).
    path : str, optional
        A user file read with the dataset's reader instead of the bundled copy.
    language : str, optional
        Language recorded for the rows (default: the dataset's).
    """

    name: str
    split: str | None = None
    path: str | None = None
    language: str | None = None

    @classmethod
    def parse(cls, value: Any) -> DataRef:
        """Build from ``"name[:split]"``, a mapping, or an existing ``DataRef``.

        Parameters
        ----------
        value : str or dict or DataRef
            ``"rte:train"``, ``{"name": ..., "split": ..., "path": ..., "language": ...}`` or a reference.

        Returns
        -------
        DataRef
            The reference (``value`` itself when it already is one).

        Raises
        ------
        ValueError
            For unknown mapping keys or another type.
        """
        if isinstance(value, DataRef):
            return value
        if isinstance(value, str):
            name, _, split = value.partition(":")
            return cls(name=name, split=split or None)
        if isinstance(value, dict):
            unknown = set(value) - {"name", "split", "path", "language"}
            if unknown:
                raise ValueError(f"unknown keys in dataset reference {value!r}: {sorted(unknown)}")
            return cls(**value)
        raise ValueError(f"cannot read a dataset reference from {value!r}")

    def load(self):
        """Load the referenced table, via :func:`diagnostics.data.load`.

        Returns
        -------
        pandas.DataFrame
            The dataset's rows (see :func:`diagnostics.data.load` for the columns).
        """
        from diagnostics import data

        return data.load(self.name, self.split, self.path, language=self.language)

    @property
    def key(self) -> str:
        """Short name used in the predictions table's ``dataset`` column."""
        return self.name


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


@dataclass
class SweepConfig:
    """Everything that defines a seed sweep. Defaults: the study's batch, lr, dropout and seeds, ``epoch`` recipe.

    Every field is also a config-file key and a ``--set key=value`` override.

    Parameters
    ----------
    experiment : str
        Name of the experiment: runs go to ``<output_dir>/<experiment>/<language>/<model>/seed=<k>/``.
    output_dir : str
        Root of the run store.
    models : list of ModelSpec
        The pretrained models of the grid (names, mappings or :class:`ModelSpec`, parsed by :meth:`ModelSpec.parse`).
    languages : list of str
        The languages of the grid.
    seeds : list of int
        The fine-tuning seeds of the grid (distinct).
    data : dict
        Language -> overrides of its ``train`` / ``validation`` / ``diagnostics`` references (see
        :data:`LANGUAGE_DEFAULTS`; required for sv/fr/de training data).
    extra_eval : dict
        Language -> further evaluation sets (dataset references).
    train_size : int, optional
        Train on a subset of this many examples of the language's train set (``None``: all of it).
    data_seed : int
        Seed of every data draw (subsets, extra data, presence), the same for every run seed.
    extra_data : ExtraData, optional
        Extra English NLI examples added to the training mixture.
    presence : Presence, optional
        A controlled share of training examples carrying a diagnostic feature.
    max_seq_length : int
        Maximum tokens per pair (longer pairs are truncated, longest side first).
    batch_size : int
        Training examples per batch.
    eval_batch_size : int
        Examples per batch when evaluating.
    lr : float
        Peak learning rate.
    head_lr : float, optional
        Learning rate of the pooler and classifier (``None``: ``lr``).
    weight_decay : float
        Weight decay (``epoch`` recipe: not applied to biases and LayerNorm weights; ``jiant`` recipe: applied to
        every parameter, as jiant v1 gave its optimizer one group).
    dropout : float
        Hidden, attention and classifier dropout.
    optimizer : {"adamw", "adam", "sgd", "bert_adam"}
        The optimiser. ``bert_adam`` (with ``recipe: jiant`` only) is the BertAdam that jiant v1 ran: Adam without
        bias correction, weight decay added to the update, its own warm-up schedule and a per-tensor gradient clip
        (:class:`diagnostics.finetune.jiant.BertAdam`).
    adam_eps : float
        Epsilon of Adam / AdamW / BertAdam (BertAdam's own default, used by jiant, is 1e-6).
    max_grad_norm : float
        Gradient clipping norm over all trainable parameters together (0: none).
    scheduler : {"linear", "constant"}
        Learning-rate schedule after the warm-up: linear decay to zero, or constant.
    warmup_ratio : float
        Share of the training steps spent warming the learning rate up linearly (``jiant`` recipe: BertAdam's
        ``warmup``, a share of its ``t_total``).
    max_epochs : int
        Most epochs trained.
    max_steps : int, optional
        Most optimisation steps (``None``: no limit besides ``max_epochs``).
    patience : int
        Early stopping. ``epoch`` recipe: stop after this many epochs without a better validation
        ``selection_metric``. ``jiant`` recipe: counted in validation checks, stop when the best check is
        ``patience + 1`` checks old. The best epoch / check is kept.
    selection_metric : {"accuracy", "mcc"}
        The validation score that selects the epoch.
    train_top_k_layers : int, optional
        ``None`` = full fine-tuning (the study's). ``k`` = only the top ``k`` encoder layers, pooler and
        classifier train; the frozen lower layers run once per sweep in eval mode (dropout off) and their outputs
        are cached (``feature_dtype``) and shared by every seed. Much cheaper (a CPU demo needs it), but the lower
        layers keep their pretrained weights: seed variance then only comes from the head, the top layers and the
        data order, so it underestimates the instability of full fine-tuning.
    freeze_embeddings : bool
        Keep the embeddings frozen.
    feature_dtype : {"float16", "bfloat16", "float32"}
        Storage type of the cached lower-layer outputs (with ``train_top_k_layers``).
    length_bucketing : bool
        Inputs are padded per batch to the longest member (dynamic padding); with this, batches group examples of
        similar length (fewer pad tokens, still a seeded random order).
    pad_to_max_length : bool
        Pad every batch to ``max_seq_length`` instead (the static baseline of the padding benchmark).
    skip_padding : bool
        Run the token-wise parts of each encoder layer (query/key/value and output projections, feed-forward) on
        the real tokens only (:mod:`diagnostics.finetune.unpadding`): the same values for every real token and the
        same logits, less work on padded batches. Dropout masks are then drawn for real tokens only, so a seed's
        run differs (equally randomly) from one with ``skip_padding: false``. It pays on a CPU (1.33x on random
        RTE batches); on a GPU the gathers and scatters cost more than they save (0.42x at batch 4 on an H100), so
        ``configs/paper.yaml`` turns it off.
    deterministic : bool
        Request ``torch.use_deterministic_algorithms`` (warn-only) during the run.
    device : str
        ``"auto"`` uses CUDA when available; else a torch device name.
    precision : str
        ``"auto"`` is bf16 (or fp16) autocast on CUDA and fp32 on CPU. ``"bf16"`` on CPU is bf16 autocast where
        the CPU has native bf16 (AVX512-BF16 / AMX; about 2x faster for this model here) and fp32 elsewhere;
        ``metrics.json`` records which one ran. ``"fp32"`` turns autocast off; ``"fp16"`` is fp16 autocast on
        CUDA (fp32 on CPU).
    num_threads : int, optional
        Torch's intra-op threads (``None``: torch's default).
    save_checkpoint : bool
        Also write the best model (safetensors, a full Hugging Face folder) under ``seed=<k>/checkpoint/``.
    executor : {"inprocess", "pool", "submitit"}
        Where runs execute: here one after another, local processes, or SLURM (set ``executor_options.cluster``
        to ``local`` or ``debug`` for submitit's local executors).
    workers : int
        Processes of the ``pool`` executor.
    executor_options : dict
        Options of the executor (submitit parameters such as ``timeout_min``, ``slurm_partition``).
    progress : bool
        Show progress bars.
    fuse : int or "auto"
        Runs trained together as one computation (:mod:`diagnostics.finetune.fused`): ``1`` trains each run alone;
        ``K`` groups up to K seeds of one experiment, language and model into one job whose runs share every
        forward, backward and optimizer pass (each keeps its own initialisation, data order, optimizer state,
        schedule, clipping, validations and stopping); ``auto`` as many as fit the device's memory with a margin
        (:func:`diagnostics.finetune.grouping.auto_group_size`). Where and how runs execute, not what they are: not
        in the run hash; each run records its group in ``metrics.json``. Fused groups never skip padding.
    recipe : {"epoch", "jiant"}
        The training loop. ``epoch``: validation after every epoch, the schedule of ``scheduler`` /
        ``warmup_ratio``, early stopping after ``patience`` epochs. ``jiant``: jiant v1's trainer as the study ran
        it (validation every ``val_interval`` steps, learning rate multiplied by ``lr_decay_factor`` on a plateau,
        stop at ``min_lr`` / ``patience`` / ``max_vals`` / ``max_epochs``; length-bucketed batches, biggest
        first; needs ``optimizer: bert_adam``). See :mod:`diagnostics.finetune.jiant`.
    val_interval : int, optional
        ``jiant`` recipe: optimizer steps between validation checks; ``None``: one epoch of the run's training
        mixture (``ceil(pairs / batch_size)`` steps).
    max_vals : int
        ``jiant`` recipe: most validation checks; training stops at the last.
    lr_patience : int
        ``jiant`` recipe: the learning rate is decayed after ``lr_patience + 1`` checks without an improvement
        larger than ``scheduler_threshold``.
    lr_decay_factor : float
        ``jiant`` recipe: factor of that decay.
    min_lr : float
        ``jiant`` recipe: training stops when a decay takes the learning rate below this.
    scheduler_threshold : float
        ``jiant`` recipe: smallest absolute improvement of the selection metric that resets the plateau count.
    val_data_limit : int, optional
        ``jiant`` recipe: validation checks score the first this many validation pairs (``None``: all).
    bert_adam_max_grad_norm : float
        ``optimizer: bert_adam``: each parameter tensor's gradient is clipped to this norm inside the optimizer,
        after the global ``max_grad_norm`` clip (0: none).
    """

    experiment: str = "default"
    output_dir: str = "runs"
    models: list[ModelSpec] = field(default_factory=lambda: [ModelSpec("bert-base-multilingual-cased")])
    languages: list[str] = field(default_factory=lambda: ["en", "ru"])
    seeds: list[int] = field(default_factory=lambda: [0, 1, 2, 3, 4, 5])
    data: dict[str, dict[str, Any]] = field(default_factory=dict)
    extra_eval: dict[str, list[Any]] = field(default_factory=dict)
    train_size: int | None = None
    data_seed: int = 0
    extra_data: ExtraData | None = None
    presence: Presence | None = None
    max_seq_length: int = 256
    batch_size: int = 4
    eval_batch_size: int = 64
    lr: float = 1e-5
    head_lr: float | None = None
    weight_decay: float = 0.01
    dropout: float = 0.1
    optimizer: str = "adamw"
    adam_eps: float = 1e-8
    max_grad_norm: float = 1.0
    scheduler: str = "linear"
    warmup_ratio: float = 0.1
    max_epochs: int = 10
    max_steps: int | None = None
    patience: int = 3
    selection_metric: str = "accuracy"
    train_top_k_layers: int | None = None
    freeze_embeddings: bool = False
    feature_dtype: str = "float16"
    length_bucketing: bool = False
    pad_to_max_length: bool = False
    skip_padding: bool = True
    deterministic: bool = True
    device: str = "auto"
    precision: str = "auto"
    num_threads: int | None = None
    save_checkpoint: bool = False
    executor: str = "inprocess"
    workers: int = 1
    executor_options: dict[str, Any] = field(default_factory=dict)
    progress: bool = True
    fuse: int | str = 1
    recipe: str = "epoch"
    val_interval: int | None = None
    max_vals: int = 10
    lr_patience: int = 4
    lr_decay_factor: float = 0.5
    min_lr: float = 1e-7
    scheduler_threshold: float = 1e-4
    val_data_limit: int | None = 5000
    bert_adam_max_grad_norm: float = 1.0

    #: Where the values came from (file, lines, overrides), to name them in errors; not a setting.
    _source = None

    def __post_init__(self) -> None:
        _normalise(self)
        self.validate()

    def validate(self) -> None:
        """Check ranges, enumerations, dataset names and consistency of the (already typed) settings.

        Raises
        ------
        ConfigError
            Naming every bad key with what was expected and what was found (and the file and line when the
            config came from a file).
        """
        problems = _problems(self)
        if problems:
            raise ConfigError(problems, self._source)

    def check_inputs(self, cache: dict | None = None) -> None:
        """Check what this machine must hold before anything runs: models, data files and their sizes.

        Parameters
        ----------
        cache : dict, optional
            Shared between configs so that each data source is read once (see :func:`data_problems`).

        Raises
        ------
        ConfigError
            A model not available locally, a ``train_top_k_layers`` or ``max_seq_length`` the model does not
            allow, a data source missing, unreadable, unlabelled or smaller than ``train_size`` /
            ``extra_data.size``.
        """
        problems = input_problems(self, cache)
        if problems:
            raise ConfigError(problems, self._source)

    def language_data(self, language: str) -> dict[str, Any]:
        """Resolve a language's data references (the defaults of :data:`LANGUAGE_DEFAULTS` updated by ``data``).

        Parameters
        ----------
        language : str
            A language code.

        Returns
        -------
        dict
            ``{"train": DataRef or None, "validation": DataRef or None, "diagnostics": [DataRef, ...],
            "extra_eval": [DataRef, ...]}``.

        Raises
        ------
        ConfigError
            For keys of ``data.<language>`` other than train, validation and diagnostics.
        """
        base = dict(LANGUAGE_DEFAULTS.get(language, {"train": None, "validation": None, "diagnostics": []}))
        base.update(self.data.get(language, {}))
        unknown = sorted(set(base) - set(_LANGUAGE_DATA_KEYS))
        if unknown:
            message = f"unknown key{_hint(unknown[0], _LANGUAGE_DATA_KEYS)}; expected {', '.join(_LANGUAGE_DATA_KEYS)}"
            raise ConfigError([(f"data.{language}.{unknown[0]}", message)], self._source)
        return {
            "train": None if base["train"] is None else DataRef.parse(base["train"]),
            "validation": None if base["validation"] is None else DataRef.parse(base["validation"]),
            "diagnostics": [DataRef.parse(d) for d in _as_list(base["diagnostics"])],
            "extra_eval": [DataRef.parse(d) for d in _as_list(self.extra_eval.get(language, []))],
        }

    def to_dict(self) -> dict[str, Any]:
        """Convert to a plain JSON-serialisable dict (round-trips through :meth:`from_dict`).

        Returns
        -------
        dict
            Field name -> value, nested dataclasses as dicts.
        """
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, values: dict[str, Any], source: ConfigSource | None = None) -> SweepConfig:
        """Build from a mapping, rejecting unknown keys with a suggestion.

        Parameters
        ----------
        values : dict
            Field name -> value (as read from a config file).
        source : ConfigSource, optional
            Where the values came from; errors then name the file and line (or the override) of each bad key.

        Returns
        -------
        SweepConfig
            The validated config.

        Raises
        ------
        ConfigError
            For unknown keys or invalid settings (a ``ValueError``).
        """
        if not isinstance(values, dict):
            raise ConfigError([("", f"expected a mapping of config keys, found {_show(values)}")], source)
        known = [f.name for f in dataclasses.fields(cls)]
        unknown = [key for key in values if key not in known]
        if unknown:
            raise ConfigError([(str(key), f"unknown config key{_hint(key, known)}") for key in unknown], source)
        try:
            config = cls(**values)
        except ConfigError as err:
            raise err.located(source) from None
        config._source = source
        return config

    def with_overrides(self, overrides: list[str] | dict[str, Any]) -> SweepConfig:
        """A copy with ``key=value`` overrides applied (dotted keys reach nested mappings: ``extra_data.size=500``).

        Values are parsed as YAML scalars/flow collections: ``seeds=[0,1]``, ``lr=5e-5``, ``extra_data=null``.

        Parameters
        ----------
        overrides : list of str or dict
            ``["lr=5e-5", "extra_data.size=500"]`` or ``{"lr": 5e-5}``.

        Returns
        -------
        SweepConfig
            A new, validated config; this one is unchanged.
        """
        items = _override_items(overrides, self._source)
        source = (self._source or ConfigSource()).with_overrides([(key, label) for key, _, label in items])
        try:
            values = apply_overrides(self.to_dict(), [(key, value) for key, value, _ in items])
        except ConfigError as err:
            raise err.located(source) from None
        return SweepConfig.from_dict(values, source)

    def run_hash(self) -> str:
        """Hash the settings that change a run's result (not executor, progress, output place or the grid).

        Returns
        -------
        str
            The first 16 hex digits of the sha256 of those settings.
        """
        payload = {k: v for k, v in self.to_dict().items() if k not in NOT_IN_RUN_HASH
                   and not (k in HASHED_WHEN_SET and v == HASHED_WHEN_SET[k])}
        return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()[:16]


#: Settings that do not change a run's result: where and how it runs, and the grid it belongs to.
NOT_IN_RUN_HASH = frozenset({"experiment", "output_dir", "models", "languages", "seeds", "executor", "workers",
                             "executor_options", "progress", "num_threads", "fuse"})

#: Settings added after runs were stored, with their defaults: at the default they stay out of the run hash, so
#: the hash of every run made before they existed is unchanged.
HASHED_WHEN_SET = {"recipe": "epoch", "val_interval": None, "max_vals": 10, "lr_patience": 4, "lr_decay_factor": 0.5,
                   "min_lr": 1e-7, "scheduler_threshold": 1e-4, "val_data_limit": 5000,
                   "bert_adam_max_grad_norm": 1.0}


def apply_overrides(values: dict[str, Any], overrides: list[str] | dict[str, Any]) -> dict[str, Any]:
    """``values`` (a config mapping) with ``key=value`` overrides applied; dotted keys reach nested mappings.

    Parameters
    ----------
    values : dict
        A config as a plain mapping (left unchanged; nested mappings on an overridden path are copied).
    overrides : list of str or dict
        ``["lr=5e-5", "extra_data.size=500"]`` (values parsed as YAML), ``[("lr", 5e-5)]`` or ``{"lr": 5e-5}``.

    Returns
    -------
    dict
        A new mapping with the overrides applied.

    Raises
    ------
    ConfigError
        For an override that is not ``key=value`` or whose value is not YAML, or a dotted key through a value
        that is not a mapping.
    """
    values = dict(values)
    items = overrides.items() if isinstance(overrides, dict) else \
        (o if isinstance(o, tuple) else _split_override(o) for o in overrides)
    for key, value in items:
        parts = key.split(".")
        target = values
        for part in parts[:-1]:
            inner = target.get(part)
            if inner is None:
                inner = {}
            if not isinstance(inner, dict):
                raise ConfigError([(key, f"expected {part!r} to be a mapping to set {key}, found "
                                         f"{_show(inner)}")])
            target[part] = dict(inner)
            target = target[part]
        target[parts[-1]] = value
    return values


def split_override(text: str) -> tuple[str, Any]:
    """Split ``"key=value"`` into ``(key, value parsed as YAML)``.

    Parameters
    ----------
    text : str
        One override, e.g. ``"seeds=[0,1]"``.

    Returns
    -------
    tuple of (str, object)
        The stripped key and the parsed value (``None`` for an empty value).

    Raises
    ------
    ValueError
        For text without ``=`` or with an empty key.
    """
    return _split_override(text)


def _split_override(text: str) -> tuple[str, Any]:
    import yaml

    key, sep, raw = text.partition("=")
    if not sep or not key.strip():
        raise ConfigError([("", f"--set {text}: expected key=value, found no '='" if not sep else
                                f"--set {text}: expected key=value, found an empty key")])
    try:
        return key.strip(), yaml.safe_load(raw) if raw.strip() else None
    except yaml.YAMLError as err:
        problem = getattr(err, "problem", None) or "invalid YAML"
        raise ConfigError([(key.strip(), f"expected a YAML value, found {raw!r} ({problem})")],
                          ConfigSource(overrides=((key.strip(), f"--set {text}"),))) from None


def _override_items(overrides: list[str] | dict[str, Any],
                    source: ConfigSource | None = None) -> list[tuple[str, Any, str | None]]:
    """``(key, value, how it was given)`` per override; a value that is not YAML is named with ``source``."""
    if isinstance(overrides, dict):
        return [(key, value, None) for key, value in overrides.items()]
    items = []
    for text in overrides:
        try:
            key, value = _split_override(text)
        except ConfigError as err:
            located = source.with_overrides(err.source.overrides) if source and err.source else source
            raise ConfigError(err.problems, err.source if source is None else located) from None
        items.append((key, value, f"--set {text}"))
    return items


def _as_list(value: Any) -> list:
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return list(value)
    return [value]


_FLOAT = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")


def read_config_file(path: str | Path) -> dict[str, Any]:
    """Read the top-level mapping of a YAML (``.yaml``/``.yml``) or TOML (``.toml``) config file.

    Parameters
    ----------
    path : str or Path
        The file; a ``.toml`` suffix is read as TOML, anything else as YAML.

    Returns
    -------
    dict
        The mapping (empty for an empty YAML file).

    Raises
    ------
    FileNotFoundError
        When the file does not exist.
    ValueError
        When its top level is not a mapping.
    """
    from diagnostics.yaml_lines import plain

    return plain(_read_document(path))


def config_source(path: str | Path, overrides: list[str] = ()) -> ConfigSource:
    """Where the values of a config file and its ``--set`` overrides come from, for errors naming file and line.

    Parameters
    ----------
    path : str or Path
        The config file (YAML or TOML).
    overrides : list of str
        ``key=value`` overrides applied on top of it, as given to ``--set``.

    Returns
    -------
    ConfigSource
    """
    document = _read_document(path)
    source = ConfigSource(str(path), document, key_lines=_toml_key_lines(path) if Path(path).suffix == ".toml"
                          else None)
    return source.with_overrides([(key, label) for key, _, label in _override_items(list(overrides), source)])


def _toml_key_lines(path: str | Path) -> dict[str, int]:
    """Dotted key -> line of the ``key = value`` lines and ``[table]`` headers of a TOML file."""
    lines, table = {}, ""
    for number, text in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        header = re.match(r"^\s*\[+\s*([\w.\-]+)\s*\]+", text)
        if header:
            table = header.group(1)
            lines.setdefault(table, number)
            continue
        assignment = re.match(r"^\s*([\w\-]+)\s*=", text)
        if assignment:
            lines.setdefault(f"{table}.{assignment.group(1)}" if table else assignment.group(1), number)
    return lines


def _read_document(path: str | Path) -> dict[str, Any]:
    """The top-level mapping of a config file; from YAML with the line of every key (``LineDict``)."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"sweep config {path} does not exist")
    if path.is_dir():
        raise IsADirectoryError(f"sweep config {path} is a folder, not a file")
    if path.suffix == ".toml":
        import tomllib

        try:
            values = tomllib.loads(path.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as err:
            match = re.search(r"\(at line (\d+), column \d+\)", str(err))
            where = f"{path}:{match.group(1)}" if match else str(path)
            problem = str(err).split(" (at line")[0]
            raise ConfigError([("", f"{where}: invalid TOML: {problem}")]) from None
    else:
        from diagnostics.yaml_lines import YAMLLineError, load_yaml_lines

        try:
            values = load_yaml_lines(path)
        except YAMLLineError as err:
            last = max(1, len(path.read_text(encoding="utf-8").splitlines()))
            if err.line is None or err.line <= last:
                raise
            raise YAMLLineError(path, last, err.problem) from None  # "end of stream" lies past the last line
        values = {} if values is None else values
    if not isinstance(values, dict):
        raise ConfigError([("", f"{path}:1: expected a mapping of config keys at the top level, found "
                                f"{_show(values)}")])
    return values


def load_config(path: str | Path, overrides: list[str] | None = None) -> SweepConfig:
    """Read a sweep config from YAML (``.yaml``/``.yml``) or TOML (``.toml``), then apply ``key=value`` overrides.

    Parameters
    ----------
    path : str or Path
        The config file. Keys are :class:`SweepConfig` fields (a top-level ``pipeline`` section, read by
        ``diagnostics pipeline`` only, is ignored); unknown keys are an error.
    overrides : list of str, optional
        ``["lr=5e-5", "seeds=[0,1]"]``, as given to ``diagnostics sweep run --set``.

    Returns
    -------
    SweepConfig
        The validated config.
    """
    from diagnostics.yaml_lines import plain

    document = _read_document(path)
    source = ConfigSource(str(path), document, key_lines=_toml_key_lines(path) if Path(path).suffix == ".toml"
                          else None)
    items = _override_items(overrides or [], source)
    source = source.with_overrides([(key, label) for key, _, label in items])
    values = plain(document)
    values.pop("pipeline", None)  # read by ``diagnostics pipeline`` only (its data files and plan settings)
    try:
        values = apply_overrides(values, [(key, value) for key, value, _ in items])
    except ConfigError as err:
        raise err.located(source) from None
    return SweepConfig.from_dict(values, source)


# Validation. Every value is checked when a config is built (from a file, overrides or code) by ``_normalise``
# (types and structure) and ``_problems`` (ranges, enumerations, registered names); ``input_problems`` checks what
# this machine must hold before anything runs (models, data files and their sizes).

OPTIMIZERS = ("adamw", "adam", "sgd", "bert_adam")
RECIPES = ("epoch", "jiant")
SCHEDULERS = ("linear", "constant")
SELECTION_METRICS = ("accuracy", "mcc")
FEATURE_DTYPES = ("float16", "bfloat16", "float32")
PRECISIONS = ("auto", "fp32", "bf16", "fp16")
DEVICES = ("auto", "cpu", "cuda", "cuda:<n>", "mps")
EXECUTORS = ("inprocess", "pool", "submitit")
PRESENCE_WITHIN = ("train", "extra")
SUBMITIT_CLUSTERS = ("slurm", "local", "debug")

_REF_KEYS = ("name", "split", "path", "language")
_MODEL_KEYS = ("name", "path", "pretrain_seed")
_EXTRA_KEYS = ("name", "size", "split", "path")
_PRESENCE_KEYS = ("feature", "share", "within")
_LANGUAGE_DATA_KEYS = ("train", "validation", "diagnostics")
_SEED_RANGE = re.compile(r"^\s*(\d+)\s*-\s*(\d+)\s*$")
_INTEGER = re.compile(r"^\s*[+-]?\d+\s*$")
_DEVICE = re.compile(r"^(auto|cpu|cuda(:\d+)?|mps)$")
#: Spellings from other tools, mapped to ours for the suggestion of an enumeration.
_ALIASES = {"gpu": "cuda", "cuda0": "cuda:0", "float16": "fp16", "half": "fp16", "bfloat16": "bf16",
            "float32": "fp32", "full": "fp32", "fp16": "float16", "bf16": "bfloat16", "fp32": "float32",
            "adam_w": "adamw", "local": "inprocess", "process": "pool", "slurm": "submitit", "acc": "accuracy"}

#: Allowed values of the numeric settings: field -> (test, what is expected). ``None`` passes for optional ones.
_RANGES: dict[str, tuple[Any, str]] = {
    "train_size": (lambda v: v >= 1, "an integer >= 1 (or null for the whole train set)"),
    "data_seed": (lambda v: v >= 0, "an integer >= 0"),
    "max_seq_length": (lambda v: v >= 8, "an integer >= 8"),
    "batch_size": (lambda v: v >= 1, "an integer >= 1"),
    "eval_batch_size": (lambda v: v >= 1, "an integer >= 1"),
    "max_epochs": (lambda v: v >= 1, "an integer >= 1"),
    "max_steps": (lambda v: v >= 1, "an integer >= 1 (or null for no limit)"),
    "patience": (lambda v: v >= 1, "an integer >= 1"),
    "train_top_k_layers": (lambda v: v >= 1, "an integer >= 1 (or null for full fine-tuning)"),
    "num_threads": (lambda v: v >= 1, "an integer >= 1 (or null for torch's default)"),
    "workers": (lambda v: v >= 1, "an integer >= 1"),
    "lr": (lambda v: 0 < v < math.inf, "a number > 0"),
    "head_lr": (lambda v: 0 < v < math.inf, "a number > 0 (or null to use lr)"),
    "weight_decay": (lambda v: 0 <= v < math.inf, "a number >= 0"),
    "dropout": (lambda v: 0 <= v < 1, "a number in [0, 1)"),
    "adam_eps": (lambda v: 0 < v < math.inf, "a number > 0"),
    "max_grad_norm": (lambda v: 0 <= v < math.inf, "a number >= 0 (0: no clipping)"),
    "warmup_ratio": (lambda v: 0 <= v < 1, "a number in [0, 1)"),
    "val_interval": (lambda v: v >= 1, "an integer >= 1 (or null for one epoch)"),
    "max_vals": (lambda v: v >= 1, "an integer >= 1"),
    "lr_patience": (lambda v: v >= 0, "an integer >= 0"),
    "lr_decay_factor": (lambda v: 0 < v < 1, "a number in (0, 1)"),
    "min_lr": (lambda v: 0 <= v < math.inf, "a number >= 0"),
    "scheduler_threshold": (lambda v: 0 <= v < math.inf, "a number >= 0"),
    "val_data_limit": (lambda v: v >= 1, "an integer >= 1 (or null for the whole validation set)"),
    "bert_adam_max_grad_norm": (lambda v: 0 <= v < math.inf, "a number >= 0 (0: no per-tensor clipping)"),
}
_CHOICES = {"optimizer": OPTIMIZERS, "scheduler": SCHEDULERS, "selection_metric": SELECTION_METRICS,
            "feature_dtype": FEATURE_DTYPES, "precision": PRECISIONS, "executor": EXECUTORS, "recipe": RECIPES}


class _Bad(Exception):
    """One problem found while reading a value: the dotted ``key`` and the ``message``."""

    def __init__(self, key: str, message: str):
        super().__init__(key, message)
        self.key, self.message = key, message


def _show(value: Any) -> str:
    """A value as a user wrote it, for messages (YAML spelling of null and booleans, short numbers)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and math.isfinite(value):
        return f"{value:g}"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _hint(word: Any, choices) -> str:
    """`` (did you mean 'x'?)`` for the closest of ``choices`` (or a known alias), else ``""``."""
    word = str(word)
    alias = _ALIASES.get(word.lower())
    if alias is not None and alias in choices:
        return f" (did you mean {alias!r}?)"
    by_lower = {str(c).lower(): str(c) for c in choices}
    near = difflib.get_close_matches(word.lower(), list(by_lower), n=1)
    return f" (did you mean {by_lower[near[0]]!r}?)" if near else ""


def _check_keys(mapping: dict, known: tuple[str, ...], key: str) -> None:
    for name in mapping:
        if name not in known:
            raise _Bad(f"{key}.{name}", f"unknown key{_hint(name, known)}; expected {', '.join(known)}")


def _integer(value: Any, key: str, optional: bool = False) -> int | None:
    if value is None and optional:
        return None
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return int(value)
    if isinstance(value, str) and _INTEGER.match(value):
        return int(value)
    raise _Bad(key, f"expected an integer, found {repr(value) if isinstance(value, float) else _show(value)}")


def _number(value: Any, key: str, optional: bool = False) -> float | None:
    if value is None and optional:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str) and _FLOAT.match(value.strip()):  # YAML 1.1 reads 5e-5 as a string
        return float(value)
    raise _Bad(key, f"expected a number, found {_show(value)}")


def _boolean(value: Any, key: str, optional: bool = False) -> bool | None:
    if value is None and optional:
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false", "yes", "no", "1", "0"):
        return value.strip().lower() in ("true", "yes", "1")
    raise _Bad(key, f"expected true or false, found {_show(value)}")


def _string(value: Any, key: str, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if isinstance(value, str):
        if not value.strip():
            raise _Bad(key, "expected a non-empty string, found ''")
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    raise _Bad(key, f"expected a string, found {_show(value)}")


_SCALARS = {int: _integer, float: _number, bool: _boolean, str: _string}


@functools.lru_cache(maxsize=1)
def _scalar_fields() -> dict[str, tuple[Any, bool]]:
    """Field -> (reader, optional) for the scalar settings of :class:`SweepConfig`."""
    hints = typing.get_type_hints(SweepConfig)
    out = {}
    for f in dataclasses.fields(SweepConfig):
        hint = hints[f.name]
        args = typing.get_args(hint) if isinstance(hint, types.UnionType) else (hint,)
        scalar = next((a for a in args if a in _SCALARS), None)
        if scalar is not None:
            out[f.name] = (_SCALARS[scalar], type(None) in args)
    return out


def _models(value: Any, key: str) -> list[ModelSpec]:
    out = []
    for i, item in enumerate(_as_list(value)):
        where = f"{key}[{i}]"
        if isinstance(item, ModelSpec):
            out.append(item)
        elif isinstance(item, str):
            out.append(ModelSpec(_string(item, where)))
        elif isinstance(item, dict):
            _check_keys(item, _MODEL_KEYS, where)
            if "name" not in item:
                raise _Bad(f"{where}.name", "expected a model name, found none")
            out.append(ModelSpec(_string(item["name"], f"{where}.name"),
                                 _string(item.get("path"), f"{where}.path", optional=True),
                                 _integer(item.get("pretrain_seed"), f"{where}.pretrain_seed", optional=True)))
        else:
            raise _Bad(where, f"expected a model name or a mapping {{name, path, pretrain_seed}}, found {_show(item)}")
    return out


def _languages(value: Any, key: str) -> list[str]:
    return [_string(item, f"{key}[{i}]") for i, item in enumerate(_as_list(value))]


def _seeds(value: Any, key: str) -> list[int]:
    """Seeds as written: a list of integers, or an inclusive range ``"a-b"``; a bare integer is refused."""
    if isinstance(value, str):
        match = _SEED_RANGE.match(value)
        if match is None:
            raise _Bad(key, f"expected a list of seeds ([0, 1, 2]) or a range (0-2), found {_show(value)}")
        low, high = int(match.group(1)), int(match.group(2))
        if low > high:
            raise _Bad(key, f"expected a range low-high with low <= high, found {value!r}")
        return list(range(low, high + 1))
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        count = f", 0-{value - 1} or [{', '.join(map(str, range(value)))}] for {value} seeds" \
            if 1 < value <= 10 else ""
        raise _Bad(key, f"expected a list of seeds, found the single number {value}; write [{value}] for seed "
                        f"{value} alone{count}")
    if not isinstance(value, (list, tuple, range)):
        raise _Bad(key, f"expected a list of seeds ([0, 1, 2]) or a range (0-2), found {_show(value)}")
    seeds = []
    for i, item in enumerate(value):
        if isinstance(item, bool) or not isinstance(item, numbers.Integral) or item < 0:
            raise _Bad(f"{key}[{i}]", f"expected an integer >= 0, found {_show(item)}")
        seeds.append(int(item))
    return seeds


def _mapping(value: Any, key: str, what: str) -> dict:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _Bad(key, f"expected a mapping {what}, found {_show(value)}")
    return value


def _data(value: Any, key: str) -> dict:
    value = _mapping(value, key, "of language -> {train, validation, diagnostics}")
    out = {}
    for language, entry in value.items():
        where = f"{key}.{language}"
        out[language] = _mapping(entry, where, "{train, validation, diagnostics}")
        _check_keys(out[language], _LANGUAGE_DATA_KEYS, where)
    return out


def _extra_eval(value: Any, key: str) -> dict:
    return _mapping(value, key, "of language -> [dataset, ...]")


def _extra_data(value: Any, key: str) -> ExtraData | None:
    if value is None or isinstance(value, ExtraData):
        return value
    if not isinstance(value, dict):
        raise _Bad(key, f"expected a mapping {{name, size, split, path}} or null, found {_show(value)}")
    _check_keys(value, _EXTRA_KEYS, key)
    defaults = ExtraData()
    return ExtraData(_string(value.get("name", defaults.name), f"{key}.name"),
                     _integer(value.get("size", defaults.size), f"{key}.size"),
                     _string(value.get("split", defaults.split), f"{key}.split", optional=True),
                     _string(value.get("path"), f"{key}.path", optional=True))


def _presence(value: Any, key: str) -> Presence | None:
    if value is None or isinstance(value, Presence):
        return value
    if isinstance(value, (list, tuple)) and len(value) in (2, 3):
        value = dict(zip(_PRESENCE_KEYS, value))
    if not isinstance(value, dict):
        raise _Bad(key, f"expected a mapping {{feature, share, within}} or null, found {_show(value)}")
    _check_keys(value, _PRESENCE_KEYS, key)
    for name in ("feature", "share"):
        if name not in value:
            raise _Bad(f"{key}.{name}", "expected a value, found none")
    return Presence(_string(value["feature"], f"{key}.feature"), _number(value["share"], f"{key}.share"),
                    _string(value.get("within", "train"), f"{key}.within"))


def _fuse(value: Any, key: str) -> int | str:
    """``fuse``: an integer >= 1 or ``auto``."""
    if isinstance(value, str) and value.strip().lower() == "auto":
        return "auto"
    if isinstance(value, str) and _INTEGER.match(value):
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise _Bad(key, f"expected an integer >= 1 or auto, found {_show(value)}")
    return int(value)


_STRUCTURED = {"fuse": _fuse, "models": _models, "languages": _languages, "seeds": _seeds, "data": _data,
               "extra_eval": _extra_eval, "extra_data": _extra_data, "presence": _presence,
               "executor_options": lambda value, key: _mapping(value, key, "of executor options")}


def _normalise(config: SweepConfig) -> None:
    """Convert every field of ``config`` to its type in place; raise :class:`ConfigError` naming each bad one."""
    problems = []
    scalars = _scalar_fields()
    for f in dataclasses.fields(config):
        value = getattr(config, f.name)
        try:
            if f.name in _STRUCTURED:
                value = _STRUCTURED[f.name](value, f.name)
            elif f.name in scalars:
                reader, optional = scalars[f.name]
                value = reader(value, f.name, optional)
        except _Bad as bad:
            problems.append((bad.key, bad.message))
            value = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
        setattr(config, f.name, value)
    if problems:
        bad_fields = {re.split(r"[.\[]", key)[0] for key, _ in problems}
        try:  # the other fields' problems too, so that one round of fixes is enough
            problems += [p for p in _problems(config) if re.split(r"[.\[]", p[0])[0] not in bad_fields]
        except ValueError:
            pass
        raise ConfigError(problems)


def _choice(value: str, choices: tuple[str, ...]) -> str:
    return f"expected one of {', '.join(choices)}, found {value!r}{_hint(value, choices)}"


def _ref_problems(value: Any, key: str) -> list[tuple[str, str]]:
    """Problems of one dataset reference (``"name[:split]"`` or a mapping): structure, registered name, split."""
    from diagnostics.data.registry import REGISTRY

    if isinstance(value, DataRef):
        name, split, path, name_key = value.name, value.split, value.path, key
    elif isinstance(value, str):
        name, _, split = value.partition(":")
        split, path, name_key = split or None, None, key
    elif isinstance(value, dict):
        try:
            _check_keys(value, _REF_KEYS, key)
            name = _string(value.get("name"), f"{key}.name")
            split = _string(value.get("split"), f"{key}.split", optional=True)
            path = _string(value.get("path"), f"{key}.path", optional=True)
            _string(value.get("language"), f"{key}.language", optional=True)
        except _Bad as bad:
            return [(bad.key, bad.message)]
        name_key = f"{key}.name"
    else:
        return [(key, f"expected a dataset 'name[:split]' or a mapping {{name, split, path, language}}, found "
                      f"{_show(value)}")]
    if name not in REGISTRY:
        return [(name_key, f"expected a registered dataset, found {name!r}{_hint(name, REGISTRY)}; "
                           "see `diagnostics data list`")]
    spec = REGISTRY[name]
    if path is None and spec.folder is not None and split is not None and split not in spec.splits:
        return [(key, f"expected a split of {name} ({', '.join(spec.splits)}), found {split!r}"
                      f"{_hint(split, spec.splits)}")]
    return []


def _problems(config: SweepConfig) -> list[tuple[str, str]]:
    """Every out-of-range, unknown or inconsistent setting of a normalised config, as ``(key, message)``."""
    from diagnostics.data.registry import REGISTRY

    problems = []
    for name, (test, expected) in _RANGES.items():
        value = getattr(config, name)
        if value is not None and not test(value):
            problems.append((name, f"expected {expected}, found {_show(value)}"))
    for name, choices in _CHOICES.items():
        if getattr(config, name) not in choices:
            problems.append((name, _choice(getattr(config, name), choices)))
    if not _DEVICE.match(config.device):
        problems.append(("device", _choice(config.device, DEVICES)))
    if config.recipe == "jiant" and config.optimizer in OPTIMIZERS and config.optimizer != "bert_adam":
        problems.append(("optimizer", f"expected bert_adam with recipe: jiant (the optimizer jiant's recipe ran), "
                                      f"found {config.optimizer!r}"))
    if config.recipe == "epoch":
        for name, default in HASHED_WHEN_SET.items():
            if name != "recipe" and getattr(config, name) != default and name not in dict(problems):
                problems.append((name, f"expected it unset with recipe: epoch (it sets the jiant recipe; add "
                                       f"recipe: jiant), found {_show(getattr(config, name))}"))
    if config.recipe == "epoch" and config.optimizer == "bert_adam":
        problems.append(("optimizer", "expected adamw, adam or sgd with recipe: epoch (bert_adam's warm-up is "
                                      "tied to the jiant recipe's step budget; set recipe: jiant), found 'bert_adam'"))
    if not config.experiment.strip() or config.experiment in (".", "..") or re.search(r"[/\\]", config.experiment):
        problems.append(("experiment", f"expected a folder name without '/', found {config.experiment!r}"))
    if not config.models:
        problems.append(("models", "expected at least one model, found none"))
    elif len({m.slug for m in config.models}) != len(config.models):
        problems.append(("models", "expected distinct names, found two models with one name; give each checkpoint "
                                   "its own name"))
    if not config.seeds:
        problems.append(("seeds", "expected at least one seed, found none"))
    repeated = sorted({s for s in config.seeds if config.seeds.count(s) > 1})
    if repeated:
        problems.append(("seeds", f"expected each seed once, found {', '.join(map(str, repeated))} repeated"))
    if not config.languages:
        problems.append(("languages", "expected at least one language, found none"))
    repeated = sorted({x for x in config.languages if config.languages.count(x) > 1})
    if repeated:
        problems.append(("languages", f"expected each language once, found {', '.join(repeated)} repeated"))
    known_languages = [*LANGUAGE_DEFAULTS, *config.data]
    ref_problems = []
    for language, entry in config.data.items():
        for part in ("train", "validation"):
            if entry.get(part) is not None:
                ref_problems += _ref_problems(entry[part], f"data.{language}.{part}")
        for i, ref in enumerate(_as_list(entry.get("diagnostics"))):
            ref_problems += _ref_problems(ref, f"data.{language}.diagnostics[{i}]")
    for language, refs in config.extra_eval.items():
        if language not in known_languages:
            ref_problems.append((f"extra_eval.{language}", f"expected a language ({', '.join(known_languages)}), "
                                                            f"found {language!r}{_hint(language, known_languages)}"))
        for i, ref in enumerate(_as_list(refs)):
            ref_problems += _ref_problems(ref, f"extra_eval.{language}[{i}]")
    problems += ref_problems
    if not ref_problems:
        for language in config.languages:
            refs = config.language_data(language)
            if refs["train"] is not None and refs["validation"] is not None:
                continue
            if language not in known_languages:
                problems.append(("languages", f"unknown language {language!r}{_hint(language, known_languages)}: "
                                              f"expected one of {', '.join(LANGUAGE_DEFAULTS)}, or give its data "
                                              f"as data.{language}.train and data.{language}.validation"))
            else:
                problems.append(("languages", f"language {language!r} has no bundled train/validation data; set "
                                              f"data.{language}.train and data.{language}.validation (e.g. "
                                              f"{{name: rte_format, path: ..., language: {language}}})"))
    extra = config.extra_data
    if extra is not None:
        if extra.size < 0:
            problems.append(("extra_data.size", f"expected an integer >= 0 (0: no extra data), found {extra.size}"))
        if extra.name not in REGISTRY:
            problems.append(("extra_data.name", f"expected a registered dataset, found {extra.name!r}"
                                                f"{_hint(extra.name, REGISTRY)}; see `diagnostics data list`"))
        elif extra.path is None and extra.split is not None and REGISTRY[extra.name].folder is not None \
                and extra.split not in REGISTRY[extra.name].splits:
            splits = REGISTRY[extra.name].splits
            problems.append(("extra_data.split", f"expected a split of {extra.name} ({', '.join(splits)}), found "
                                                 f"{extra.split!r}{_hint(extra.split, splits)}"))
    presence = config.presence
    if presence is not None:
        from diagnostics.taxonomy import UnknownCategoryError, canonical_fine

        try:
            canonical_fine(presence.feature)
        except UnknownCategoryError as err:
            hint = f" (did you mean {' or '.join(map(repr, err.suggestions))}?)" if err.suggestions else ""
            problems.append(("presence.feature", f"expected a diagnostic category, found {presence.feature!r}{hint}"))
        if not 0.0 <= presence.share <= 1.0:
            problems.append(("presence.share", f"expected a number in [0, 1], found {_show(presence.share)}"))
        if presence.within not in PRESENCE_WITHIN:
            problems.append(("presence.within", _choice(presence.within, PRESENCE_WITHIN)))
        elif presence.within == "extra" and (extra is None or extra.size < 1):
            problems.append(("presence.within", "expected extra_data with a size >= 1 for within: extra (the subset "
                                                "it controls), found none"))
    options = config.executor_options
    if options.get("threads_per_worker") is not None:
        threads = options["threads_per_worker"]
        if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
            problems.append(("executor_options.threads_per_worker",
                             f"expected an integer >= 1, found {_show(threads)}"))
    if options.get("cluster") is not None and options["cluster"] not in SUBMITIT_CLUSTERS:
        problems.append(("executor_options.cluster", _choice(str(options["cluster"]), SUBMITIT_CLUSTERS)))
    return problems


def locate_model(model: ModelSpec) -> Path | None:
    """The local folder of a model, checked (``config.json`` and safetensors weights) but not loaded.

    Parameters
    ----------
    model : ModelSpec
        ``model.path`` when given, else ``model.name`` (see :func:`diagnostics.models.resolve_model`).

    Returns
    -------
    Path or None
        The folder; ``None`` for the embedded model not built yet (it is built from the installed package on
        first use).

    Raises
    ------
    FileNotFoundError
        The folder does not exist or is incomplete, or a hub id is neither in the local Hugging Face cache nor
        obtainable from the hub (:class:`~diagnostics.models.resolve.ModelNotAvailableError`).
    """
    from diagnostics.models.resolve import EMBEDDED_ALIASES, ModelNotAvailableError, resolve_model

    target = model.path or model.name
    try:
        return resolve_model(target, prepare=False).path
    except ModelNotAvailableError:
        if target in EMBEDDED_ALIASES:
            return None
        raise


def model_problems(config: SweepConfig, *, availability: bool = True) -> list[tuple[str, str]]:
    """List the models of a config that this machine cannot load, and settings their ``config.json`` does not allow.

    Parameters
    ----------
    config : SweepConfig
        A validated config.
    availability : bool
        Report models that cannot be found locally (default); with ``False`` they are skipped silently (for a
        caller that reports them in its own words).

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
            folder = locate_model(model)
        except FileNotFoundError as err:
            if availability:
                first = " ".join(str(err).split()).split(". ")[0].rstrip(".")
                problems.append((key, f"model {model.name!r} is not available locally: {first}"))
            continue
        if folder is None:
            continue
        try:
            settings = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:
            problems.append((key, f"expected a readable {folder / 'config.json'}, found {err}"))
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
    return problems


def _source_name(ref: DataRef) -> str:
    if ref.path:
        return ref.path
    return f"{ref.name}:{ref.split}" if ref.split else ref.name


def data_problems(config: SweepConfig, cache: dict | None = None) -> list[tuple[str, str]]:
    """Data sources of a config that cannot be read, lack labels or hold fewer labelled pairs than asked.

    Every train, validation, diagnostic, extra evaluation and extra training source is read once (bundled sets
    take milliseconds; a full MNLI copy a few seconds).

    Parameters
    ----------
    config : SweepConfig
        A validated config.
    cache : dict, optional
        Shared between calls (the configs of one study) so each source is read once.

    Returns
    -------
    list of (str, str)
        ``(key, message)``, e.g. ``("train_size", "expected at most 2490 (the labelled pairs of rte:train (en)),
        found 5000")``.
    """
    from diagnostics.errors import one_line

    cache = {} if cache is None else cache
    problems = []

    def labelled(ref: DataRef, key: str) -> tuple[int, int] | None:
        """(labelled pairs, pairs) of a source, or None when it cannot be read (the problem is recorded)."""
        from diagnostics.data.registry import REGISTRY

        spec = REGISTRY.get(ref.name)
        if spec is not None and spec.folder is None and not ref.path and not spec.files:
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


def input_problems(config: SweepConfig, cache: dict | None = None) -> list[tuple[str, str]]:
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
