"""``SweepConfig``: one typed description of a seed sweep, read from YAML/TOML with ``key=value`` overrides.

The defaults are the reference study's stated settings (Tikhonova et al., 2022: mBERT, seeds 0-5, batch 4, lr 1e-5,
dropout 0.1, full fine-tuning) trained by the ``epoch`` recipe (AdamW, clipping 1.0, linear warm-up and decay, one
validation per epoch, early stopping after ``patience`` epochs). The study trained under jiant v1's SuperGLUE recipe;
``recipe: jiant`` reproduces that (``configs/paper.yaml``; sources in ``docs/finetune.md``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from diagnostics.data._refs import DataRef
from diagnostics.settings import (Bad, ConfigError, ConfigSource, as_list, check_keys, choice, convert_fields,
                                  field_problems, hint, read_string, setting, show, unknown_keys)
from diagnostics.settings_input import apply_overrides, override_items, read_settings

from ._jiant import CUSTOM_SCHEDULE, VAL_SCHEDULES, schedule_name
from ._config_values import (LANGUAGE_DATA_KEYS, ExtraData, ModelSpec, Presence, read_executor_options,
                            read_extra_data, read_extra_eval, read_fuse, read_language_data, read_languages,
                            read_models, read_presence, read_seeds)

__all__ = ["ConfigError", "ConfigSource", "DataRef", "ExtraData", "ModelSpec", "Presence", "SweepConfig",
           "load_config"]

#: RTE-style train / validation data and the diagnostic sets of each language (contract of the data stage).
LANGUAGE_DEFAULTS: dict[str, dict[str, Any]] = {
    "en": {"train": "rte:train", "validation": "rte:validation", "diagnostics": ["axb"]},
    "ru": {"train": "terra:train", "validation": "terra:validation", "diagnostics": ["lidirus"]},
    "sv": {"train": None, "validation": None, "diagnostics": ["swediagnostics"]},
    "fr": {"train": None, "validation": None, "diagnostics": []},
    "de": {"train": None, "validation": None, "diagnostics": []},
}


OPTIMIZERS = ("adamw", "bert_adam")
RECIPES = ("epoch", "jiant")
SCHEDULERS = ("linear", "constant")
SELECTION_METRICS = ("accuracy", "mcc")
FEATURE_DTYPES = ("float16", "bfloat16", "float32")
PRECISIONS = ("auto", "fp32", "tf32", "bf16", "fp16")
DEVICES = ("auto", "cpu", "cuda", "cuda:<n>", "mps")
#: The executors' names; :data:`diagnostics.finetune._executors.EXECUTORS` maps each to the function that runs jobs.
EXECUTOR_NAMES = ("inprocess", "pool", "submitit")
PRESENCE_WITHIN = ("train", "extra")
CLASSIFIER_HEADS = ("transformers", "jiant")
TRUNCATIONS = ("pair", "per_sentence")
SUBMITIT_CLUSTERS = ("slurm", "local", "debug")
_REF_KEYS = ("name", "split", "path", "language")
_DEVICE = re.compile(r"^(auto|cpu|cuda(:\d+)?|mps)$")


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
    optimizer : {"adamw", "bert_adam"}
        The optimiser. ``adamw`` (with ``recipe: epoch``) is ``torch.optim.AdamW``'s update. ``bert_adam`` (with
        ``recipe: jiant`` only) is the BertAdam that jiant v1 ran: Adam without bias correction, weight decay added to
        the update, its own warm-up schedule and a per-tensor gradient clip
        (:class:`diagnostics.finetune._stacked_optim.StackedBertAdam`).
    adam_eps : float
        Epsilon of AdamW / BertAdam (BertAdam's own default, used by jiant, is 1e-6).
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
        the real tokens only (:mod:`diagnostics.finetune._unpadding`): the same values for every real token and the
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
        ``metrics.json`` records which one ran. ``"fp32"`` turns autocast off; ``"tf32"`` too, with the
        matrix products and convolutions of CUDA in TF32 (``torch.backends.cuda.matmul.allow_tf32``; fp32 on
        CPU; ``versions.json`` records ``tf32``); ``"fp16"`` is fp16 autocast on CUDA (fp32 on CPU).
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
        Options of the executor: ``threads_per_worker``; for ``submitit`` also ``cluster``, ``poll_s``,
        ``lost_job_grace_s``, ``requeue`` and submitit parameters such as ``timeout_min``, ``slurm_partition``,
        ``slurm_array_parallelism`` (``docs/slurm.md``).
    progress : bool
        Show progress bars.
    fuse : int or "auto"
        Runs trained together as one computation (:mod:`diagnostics.finetune._fused`): ``1`` trains each run alone;
        ``K`` groups up to K seeds of one experiment, language and model into one job whose runs share every
        forward, backward and optimizer pass (each keeps its own initialisation, data order, optimizer state,
        schedule, clipping, validations and stopping); ``auto`` as many as fit the device's memory with a margin
        (:func:`diagnostics.finetune._grouping.auto_group_size`). Where and how runs execute, not what they are: not
        in the run hash; each run records its group in ``metrics.json``. Fused groups never skip padding.
    recipe : {"epoch", "jiant"}
        The training loop. ``epoch``: validation after every epoch, the schedule of ``scheduler`` /
        ``warmup_ratio``, early stopping after ``patience`` epochs. ``jiant``: jiant v1's trainer as the study ran
        it (validation every ``val_interval`` steps, learning rate multiplied by ``lr_decay_factor`` on a plateau,
        stop at ``min_lr`` / ``patience`` / ``max_vals`` / ``max_epochs``; length-bucketed batches, biggest
        first; needs ``optimizer: bert_adam``). See :mod:`diagnostics.finetune._jiant`.
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
    val_schedule : {"russiansuperglue", "jiant_superglue", "per_epoch", "custom"}, optional
        ``jiant`` recipe: the reading of the study's validation schedule, which sets ``val_interval`` and
        ``max_vals``: ``russiansuperglue`` (625 steps, 10 checks: the authors' group's jiant fork and TERRa script;
        every run ends by 6,250 steps), ``jiant_superglue`` (625 steps, 10,000 checks: nyu-mll's conf and RTE
        script; runs end by ``max_epochs``, ``patience`` or ``min_lr``), ``per_epoch`` (one check per epoch of the
        run's own mixture, 10 checks), ``custom`` (``val_interval`` and ``max_vals`` as set). Unset: the name of
        whichever reading ``val_interval`` and ``max_vals`` are. Sources: :data:`diagnostics.finetune.VAL_SCHEDULES`.
    classifier_head : {"transformers", "jiant"}, optional
        ``transformers``: ``AutoModelForSequenceClassification``'s head (BERT: the pretrained NSP pooler, dense +
        tanh, then dropout and a linear layer). ``jiant``: jiant v1's ``log_reg`` pair classifier for a BERT input
        module under fine-tuning: dropout on the top layer's states, the first token's state (no projection, no
        pooler), one linear layer initialised as torch's ``nn.Linear``. Unset: ``jiant`` with ``recipe: jiant``,
        ``transformers`` with ``recipe: epoch``.
    truncation : {"pair", "per_sentence"}, optional
        ``pair``: the joined pair is cut to ``max_seq_length`` tokens, longest side first (transformers'
        ``longest_first``). ``per_sentence``: as jiant v1's ``tokenize_and_truncate``, premise and hypothesis are
        each cut to ``max_seq_length - 2`` tokens before they are joined, so a pair may be longer than
        ``max_seq_length``. Unset: ``per_sentence`` with ``recipe: jiant``, ``pair`` with ``recipe: epoch``.
    """

    experiment: str = "default"
    output_dir: str = "runs"
    models: list[ModelSpec] = setting(factory=lambda: [ModelSpec("bert-base-multilingual-cased")], reader=read_models)
    languages: list[str] = setting(factory=lambda: ["en", "ru"], reader=read_languages)
    seeds: list[int] = setting(factory=lambda: [0, 1, 2, 3, 4, 5], reader=read_seeds)
    data: dict[str, dict[str, Any]] = setting(factory=dict, reader=read_language_data)
    extra_eval: dict[str, list[Any]] = setting(factory=dict, reader=read_extra_eval)
    train_size: int | None = setting(None,
                                     check=(lambda v: v >= 1, "an integer >= 1 (or null for the whole train set)"))
    data_seed: int = setting(0, check=(lambda v: v >= 0, "an integer >= 0"))
    extra_data: ExtraData | None = setting(None, reader=read_extra_data)
    presence: Presence | None = setting(None, reader=read_presence)
    max_seq_length: int = setting(256, check=(lambda v: v >= 8, "an integer >= 8"))
    batch_size: int = setting(4, check=(lambda v: v >= 1, "an integer >= 1"))
    eval_batch_size: int = setting(64, check=(lambda v: v >= 1, "an integer >= 1"))
    lr: float = setting(1e-5, check=(lambda v: 0 < v < math.inf, "a number > 0"))
    head_lr: float | None = setting(None, check=(lambda v: 0 < v < math.inf, "a number > 0 (or null to use lr)"))
    weight_decay: float = setting(0.01, check=(lambda v: 0 <= v < math.inf, "a number >= 0"))
    dropout: float = setting(0.1, check=(lambda v: 0 <= v < 1, "a number in [0, 1)"))
    optimizer: str = setting("adamw", choices=OPTIMIZERS)
    adam_eps: float = setting(1e-8, check=(lambda v: 0 < v < math.inf, "a number > 0"))
    max_grad_norm: float = setting(1.0, check=(lambda v: 0 <= v < math.inf, "a number >= 0 (0: no clipping)"))
    scheduler: str = setting("linear", choices=SCHEDULERS)
    warmup_ratio: float = setting(0.1, check=(lambda v: 0 <= v < 1, "a number in [0, 1)"))
    max_epochs: int = setting(10, check=(lambda v: v >= 1, "an integer >= 1"))
    max_steps: int | None = setting(None, check=(lambda v: v >= 1, "an integer >= 1 (or null for no limit)"))
    patience: int = setting(3, check=(lambda v: v >= 1, "an integer >= 1"))
    selection_metric: str = setting("accuracy", choices=SELECTION_METRICS)
    train_top_k_layers: int | None = setting(
        None, check=(lambda v: v >= 1, "an integer >= 1 (or null for full fine-tuning)"))
    freeze_embeddings: bool = False
    feature_dtype: str = setting("float16", choices=FEATURE_DTYPES)
    length_bucketing: bool = False
    pad_to_max_length: bool = False
    skip_padding: bool = True
    deterministic: bool = True
    device: str = "auto"
    precision: str = setting("auto", choices=PRECISIONS)
    num_threads: int | None = setting(
        None, check=(lambda v: v >= 1, "an integer >= 1 (or null for torch's default)"))
    save_checkpoint: bool = False
    executor: str = setting("inprocess", choices=EXECUTOR_NAMES)
    workers: int = setting(1, check=(lambda v: v >= 1, "an integer >= 1"))
    executor_options: dict[str, Any] = setting(factory=dict, reader=read_executor_options)
    progress: bool = True
    fuse: int | str = setting(1, reader=read_fuse)
    recipe: str = setting("epoch", choices=RECIPES)
    val_interval: int | None = setting(None, check=(lambda v: v >= 1, "an integer >= 1 (or null for one epoch)"))
    max_vals: int = setting(10, check=(lambda v: v >= 1, "an integer >= 1"))
    lr_patience: int = setting(4, check=(lambda v: v >= 0, "an integer >= 0"))
    lr_decay_factor: float = setting(0.5, check=(lambda v: 0 < v < 1, "a number in (0, 1)"))
    min_lr: float = setting(1e-7, check=(lambda v: 0 <= v < math.inf, "a number >= 0"))
    scheduler_threshold: float = setting(1e-4, check=(lambda v: 0 <= v < math.inf, "a number >= 0"))
    val_data_limit: int | None = setting(
        5000, check=(lambda v: v >= 1, "an integer >= 1 (or null for the whole validation set)"))
    bert_adam_max_grad_norm: float = setting(
        1.0, check=(lambda v: 0 <= v < math.inf, "a number >= 0 (0: no per-tensor clipping)"))
    val_schedule: str | None = setting(None, choices=(*VAL_SCHEDULES, CUSTOM_SCHEDULE))
    classifier_head: str | None = setting(None, choices=CLASSIFIER_HEADS)
    truncation: str | None = setting(None, choices=TRUNCATIONS)


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
            Shared between configs so that each data source is read once (see
            :func:`diagnostics.finetune._preflight.data_problems`).

        Raises
        ------
        ConfigError
            A model not available locally, a ``train_top_k_layers`` or ``max_seq_length`` the model does not
            allow, a data source missing, unreadable, unlabelled or smaller than ``train_size`` /
            ``extra_data.size``.
        """
        from ._preflight import check_inputs

        check_inputs(self, cache)

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
        unknown = sorted(set(base) - set(LANGUAGE_DATA_KEYS))
        if unknown:
            message = f"unknown key{hint(unknown[0], LANGUAGE_DATA_KEYS)}; expected {', '.join(LANGUAGE_DATA_KEYS)}"
            raise ConfigError([(f"data.{language}.{unknown[0]}", message)], self._source)
        return {
            "train": None if base["train"] is None else DataRef.parse(base["train"]),
            "validation": None if base["validation"] is None else DataRef.parse(base["validation"]),
            "diagnostics": [DataRef.parse(d) for d in as_list(base["diagnostics"])],
            "extra_eval": [DataRef.parse(d) for d in as_list(self.extra_eval.get(language, []))],
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
            raise ConfigError([("", f"expected a mapping of config keys, found {show(values)}")], source)
        unknown = unknown_keys(values, [f.name for f in dataclasses.fields(cls)], "config key")
        if unknown:
            raise ConfigError(unknown, source)
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
        items = override_items(overrides, self._source)
        source = (self._source or ConfigSource()).with_overrides([(key, label) for key, _, label in items])
        values = self.to_dict()
        overridden = {re.split(r"[.\[]", key)[0] for key, _, _ in items}
        for derived, sources in DERIVED_SETTINGS.items():  # derived again from what they derive from
            if derived not in overridden and overridden & sources:
                values[derived] = None
        try:
            values = apply_overrides(values, [(key, value) for key, value, _ in items])
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
                   "bert_adam_max_grad_norm": 1.0, "val_schedule": None, "classifier_head": "transformers",
                   "truncation": "pair"}


#: Settings whose unset value is derived from others (:func:`_resolve_recipe_settings`): an override of one of
#: those others derives them again, unless it sets them too.
DERIVED_SETTINGS = {"val_schedule": frozenset({"val_interval", "max_vals", "recipe"}),
                    "classifier_head": frozenset({"recipe"}), "truncation": frozenset({"recipe"})}


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
    # a top-level ``pipeline`` section is read by ``diagnostics pipeline`` only (its data files and plan settings)
    values, source = read_settings(path, overrides or [], ignore=("pipeline",))
    return SweepConfig.from_dict(values, source)


# Validation. Every value is checked when a config is built (from a file, overrides or code): ``_normalise``
# converts each field by its setting (types and structure), ``_problems`` checks ranges, choices, registered
# names and consistency. What this machine must hold (models, data files) is :mod:`.preflight`'s.

def _normalise(config: SweepConfig) -> None:
    """Convert every field of ``config`` to its type in place; raise :class:`ConfigError` naming each bad one."""
    problems = convert_fields(config)
    try:
        problems += _resolve_recipe_settings(config)
    except (TypeError, ValueError):  # a setting it reads did not convert: that problem is named already
        pass
    if problems:
        bad_fields = {re.split(r"[.\[]", key)[0] for key, _ in problems}
        try:  # the other fields' problems too, so that one round of fixes is enough
            problems += [p for p in _problems(config) if re.split(r"[.\[]", p[0])[0] not in bad_fields]
        except ValueError:
            pass
        raise ConfigError(problems)


def _resolve_recipe_settings(config: SweepConfig) -> list[tuple[str, str]]:
    """Fill the recipe's own defaults of ``classifier_head``, ``truncation`` and (``jiant``) ``val_schedule``.

    A named schedule sets ``val_interval`` and ``max_vals`` (left at their defaults) to its reading's values; other
    values of theirs contradict it and are returned as problems.
    """
    jiant = config.recipe == "jiant"
    if config.classifier_head is None:
        config.classifier_head = "jiant" if jiant else "transformers"
    if config.truncation is None:
        config.truncation = "per_sentence" if jiant else "pair"
    if not jiant:
        return []
    if config.val_schedule is None:
        config.val_schedule = schedule_name(config.val_interval, config.max_vals)
        return []
    reading = VAL_SCHEDULES.get(config.val_schedule)
    if reading is None:
        return []
    problems = []
    for key, default in (("val_interval", HASHED_WHEN_SET["val_interval"]), ("max_vals", HASHED_WHEN_SET["max_vals"])):
        wanted, found = getattr(reading, key), getattr(config, key)
        if found == default:
            setattr(config, key, wanted)
        elif found != wanted:
            problems.append((key, f"expected {show(wanted)} under val_schedule: {reading.name} (or set "
                                  f"val_schedule: custom), found {show(found)}"))
    return problems


def _ref_problems(value: Any, key: str) -> list[tuple[str, str]]:
    """Problems of one dataset reference (``"name[:split]"`` or a mapping): structure, registered name, split."""
    from diagnostics.data._registry import REGISTRY

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
        return [(name_key, f"expected a registered dataset, found {name!r}{hint(name, REGISTRY)}; "
                           "see `diagnostics data list`")]
    spec = REGISTRY[name]
    if path is None and spec.folder is not None and split is not None and split not in spec.splits:
        return [(key, f"expected a split of {name} ({', '.join(spec.splits)}), found {split!r}"
                      f"{hint(split, spec.splits)}")]
    return []


def _problems(config: SweepConfig) -> list[tuple[str, str]]:
    """Every out-of-range, unknown or inconsistent setting of a normalised config, as ``(key, message)``."""
    from diagnostics.data._registry import REGISTRY

    problems = field_problems(config)
    if not _DEVICE.match(config.device):
        problems.append(("device", choice(config.device, DEVICES)))
    if config.recipe == "jiant" and config.optimizer in OPTIMIZERS and config.optimizer != "bert_adam":
        problems.append(("optimizer", f"expected bert_adam with recipe: jiant (the optimizer jiant's recipe ran), "
                                      f"found {config.optimizer!r}"))
    if config.recipe == "epoch":
        for name, default in HASHED_WHEN_SET.items():
            if name != "recipe" and getattr(config, name) != default and name not in dict(problems):
                problems.append((name, f"expected it unset with recipe: epoch (it sets the jiant recipe; add "
                                       f"recipe: jiant), found {show(getattr(config, name))}"))
    if config.classifier_head == "jiant" and config.train_top_k_layers is not None:
        problems.append(("classifier_head", "expected transformers with train_top_k_layers (jiant's head belongs "
                                            "to full fine-tuning, as jiant ran it), found 'jiant'"))
    if config.recipe == "epoch" and config.optimizer == "bert_adam":
        problems.append(("optimizer", "expected adamw with recipe: epoch (bert_adam's warm-up is "
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
        for i, ref in enumerate(as_list(entry.get("diagnostics"))):
            ref_problems += _ref_problems(ref, f"data.{language}.diagnostics[{i}]")
    for language, refs in config.extra_eval.items():
        if language not in known_languages:
            ref_problems.append((f"extra_eval.{language}", f"expected a language ({', '.join(known_languages)}), "
                                                            f"found {language!r}{hint(language, known_languages)}"))
        for i, ref in enumerate(as_list(refs)):
            ref_problems += _ref_problems(ref, f"extra_eval.{language}[{i}]")
    problems += ref_problems
    if not ref_problems:
        for language in config.languages:
            refs = config.language_data(language)
            if refs["train"] is not None and refs["validation"] is not None:
                continue
            if language not in known_languages:
                problems.append(("languages", f"unknown language {language!r}{hint(language, known_languages)}: "
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
                                                f"{hint(extra.name, REGISTRY)}; see `diagnostics data list`"))
        elif extra.path is None and extra.split is not None and REGISTRY[extra.name].folder is not None \
                and extra.split not in REGISTRY[extra.name].splits:
            splits = REGISTRY[extra.name].splits
            problems.append(("extra_data.split", f"expected a split of {extra.name} ({', '.join(splits)}), found "
                                                 f"{extra.split!r}{hint(extra.split, splits)}"))
    presence = config.presence
    if presence is not None:
        from diagnostics.taxonomy import UnknownCategoryError, canonical_fine

        try:
            canonical_fine(presence.feature)
        except UnknownCategoryError as err:
            near = f" (did you mean {' or '.join(map(repr, err.suggestions))}?)" if err.suggestions else ""
            problems.append(("presence.feature", f"expected a diagnostic category, found {presence.feature!r}{near}"))
        if not 0.0 <= presence.share <= 1.0:
            problems.append(("presence.share", f"expected a number in [0, 1], found {show(presence.share)}"))
        if presence.within not in PRESENCE_WITHIN:
            problems.append(("presence.within", choice(presence.within, PRESENCE_WITHIN)))
        elif presence.within == "extra" and (extra is None or extra.size < 1):
            problems.append(("presence.within", "expected extra_data with a size >= 1 for within: extra (the subset "
                                                "it controls), found none"))
    options = config.executor_options
    if options.get("threads_per_worker") is not None:
        threads = options["threads_per_worker"]
        if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
            problems.append(("executor_options.threads_per_worker",
                             f"expected an integer >= 1, found {show(threads)}"))
    if options.get("cluster") is not None and options["cluster"] not in SUBMITIT_CLUSTERS:
        problems.append(("executor_options.cluster", choice(str(options["cluster"]), SUBMITIT_CLUSTERS)))
    for key, low in (("poll_s", 0.0), ("lost_job_grace_s", 0.0)):
        value = options.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or value < low
                                  or key == "poll_s" and value == 0):
            problems.append((f"executor_options.{key}", f"expected a number of seconds "
                             f"{'> 0' if key == 'poll_s' else '>= 0'}, found {show(value)}"))
    if options.get("requeue") is not None and not isinstance(options["requeue"], bool):
        problems.append(("executor_options.requeue", f"expected true or false, found {show(options['requeue'])}"))
    return problems
