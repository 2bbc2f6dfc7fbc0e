"""``SweepConfig``: one typed description of a seed sweep, read from YAML/TOML with ``key=value`` overrides.

The defaults are the reference study's (Tikhonova et al., 2022): mBERT, seeds 0-5, batch 4, lr 1e-5, dropout 0.1,
AdamW, gradient clipping 1.0, at most 10 epochs with early stopping on validation, full fine-tuning.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: RTE-style train / validation data and the diagnostic sets of each language (contract of the data stage).
LANGUAGE_DEFAULTS: dict[str, dict[str, Any]] = {
    "en": {"train": "rte:train", "validation": "rte:validation", "diagnostics": ["axb"]},
    "ru": {"train": "terra:train", "validation": "terra:validation", "diagnostics": ["lidirus"]},
    "sv": {"train": None, "validation": None, "diagnostics": ["swediagnostics"]},
    "fr": {"train": None, "validation": None, "diagnostics": []},
    "de": {"train": None, "validation": None, "diagnostics": []},
}


@dataclass(frozen=True)
class DataRef:
    """A dataset reference: a registered name, a split, and optionally a user file (``path``) in its format.

    Written in config files either as ``"rte:train"`` or as a mapping ``{name, split, path, language}``.
    """

    name: str
    split: str | None = None
    path: str | None = None
    language: str | None = None

    @classmethod
    def parse(cls, value: Any) -> DataRef:
        """Build from ``"name[:split]"``, a mapping, or an existing ``DataRef``."""
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
        """The referenced table, via :func:`diagnostics.data.load`."""
        from diagnostics import data

        return data.load(self.name, self.split, self.path, language=self.language)

    @property
    def key(self) -> str:
        """Short name used in the predictions table's ``dataset`` column."""
        return self.name


@dataclass(frozen=True)
class ModelSpec:
    """One pretrained model of the sweep.

    Attributes
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
        """Build from a name string, a mapping or an existing ``ModelSpec``."""
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
    """

    feature: str
    share: float
    within: str = "train"


@dataclass
class SweepConfig:
    """Everything that defines a seed sweep. Defaults reproduce the reference study's fine-tuning.

    Attributes (grouped)
    --------------------
    experiment, output_dir
        Runs go to ``<output_dir>/<experiment>/<language>/<model>/seed=<k>/``.
    models, languages, seeds
        The sweep's grid. ``data`` overrides a language's ``train`` / ``validation`` / ``diagnostics`` references
        (required for sv/fr/de training data); ``extra_eval`` adds evaluation sets per language.
    train_size, data_seed, extra_data, presence
        The training mixture: a subset of ``train_size`` examples of the language's train set (drawn with
        ``data_seed``, the same for every seed), plus ``extra_data``, optionally with a feature ``presence``.
    batch_size, lr, head_lr, weight_decay, dropout, optimizer, adam_eps, max_grad_norm, scheduler, warmup_ratio,
    max_epochs, max_steps, patience, selection_metric
        Optimisation. Early stopping keeps the epoch with the best validation ``selection_metric`` and stops after
        ``patience`` epochs without improvement.
    train_top_k_layers, freeze_embeddings, feature_dtype
        Which parameters train. ``None`` = full fine-tuning (the study's). ``k`` = only the top ``k`` encoder
        layers, pooler and classifier train; the frozen lower layers run once per sweep in eval mode (dropout off)
        and their outputs are cached (``feature_dtype``) and shared by every seed. Much cheaper (a CPU demo needs
        it), but the lower layers keep their pretrained weights: seed variance then only comes from the head,
        the top layers and the data order, so it underestimates the instability of full fine-tuning.
    max_seq_length, length_bucketing, eval_batch_size
        Inputs are padded per batch to the longest member (dynamic padding); with ``length_bucketing``, batches
        group examples of similar length (fewer pad tokens, still a seeded random order).
        ``pad_to_max_length`` pads every batch to ``max_seq_length`` instead (the static baseline of the padding
        benchmark).
    skip_padding
        Run the token-wise parts of each encoder layer (query/key/value and output projections, feed-forward) on
        the real tokens only (:mod:`diagnostics.finetune.unpadding`): the same values for every real token and the
        same logits, less work on padded batches. Dropout masks are then drawn for real tokens only, so a seed's
        run differs (equally randomly) from one with ``skip_padding: false``.
    deterministic
        Request ``torch.use_deterministic_algorithms`` (warn-only) during the run.
    device, precision, num_threads
        ``device="auto"`` uses CUDA when available; ``precision="auto"`` is bf16 (or fp16) autocast on CUDA and
        fp32 on CPU. ``precision="bf16"`` on CPU is bf16 autocast where the CPU has native bf16 (AVX512-BF16 /
        AMX; about 2x faster for this model here) and fp32 elsewhere; ``metrics.json`` records which one ran.
        ``num_threads`` sets torch's intra-op threads.
    save_checkpoint
        Also write the best model (safetensors, a full Hugging Face folder) under ``seed=<k>/checkpoint/``.
    executor, workers, executor_options
        Where runs execute: ``inprocess`` (default), ``pool`` (local processes), ``submitit`` (SLURM; set
        ``executor_options.cluster`` to ``local`` or ``debug`` for submitit's local executors) or ``ray``.
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

    def __post_init__(self) -> None:
        self.models = [ModelSpec.parse(m) for m in _as_list(self.models)]
        self.languages = [str(x) for x in _as_list(self.languages)]
        self.seeds = [int(s) for s in _as_list(self.seeds)]
        if isinstance(self.extra_data, dict):
            self.extra_data = ExtraData(**self.extra_data)
        if isinstance(self.presence, dict):
            self.presence = Presence(**self.presence)
        elif isinstance(self.presence, (list, tuple)):
            self.presence = Presence(*self.presence)
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            setattr(self, f.name, _coerce(value, f.type, f.name))
        self.validate()

    def validate(self) -> None:
        """Raise ``ValueError`` with a readable message for inconsistent settings."""
        problems = []
        if not self.models:
            problems.append("models: at least one model is needed")
        if not self.seeds:
            problems.append("seeds: at least one seed is needed")
        if len(set(self.seeds)) != len(self.seeds):
            problems.append(f"seeds: duplicates in {self.seeds}")
        if len({m.slug for m in self.models}) != len(self.models):
            problems.append("models: two models share a name; give each checkpoint its own name")
        for lang in self.languages:
            spec = self.language_data(lang)
            if spec["train"] is None or spec["validation"] is None:
                problems.append(f"language {lang!r}: no bundled train/validation data; set data.{lang}.train and "
                                f"data.{lang}.validation (e.g. {{name: rte_format, path: ..., language: {lang}}})")
        if self.selection_metric not in ("accuracy", "mcc"):
            problems.append("selection_metric must be 'accuracy' or 'mcc'")
        if self.optimizer not in ("adamw", "adam", "sgd"):
            problems.append("optimizer must be adamw, adam or sgd")
        if self.scheduler not in ("linear", "constant"):
            problems.append("scheduler must be 'linear' or 'constant'")
        if self.train_top_k_layers is not None and self.train_top_k_layers < 1:
            problems.append("train_top_k_layers must be >= 1 (or null for full fine-tuning)")
        if self.feature_dtype not in ("float16", "bfloat16", "float32"):
            problems.append("feature_dtype must be float16, bfloat16 or float32")
        if self.presence is not None and not 0.0 <= self.presence.share <= 1.0:
            problems.append("presence.share must be within [0, 1]")
        if self.presence is not None and self.presence.within not in ("train", "extra"):
            problems.append(f"presence.within must be 'train' or 'extra', found {self.presence.within!r}")
        if self.presence is not None and self.presence.within == "extra" and \
                (self.extra_data is None or self.extra_data.size < 1):
            problems.append("presence.within: extra needs extra_data with a size >= 1 (the subset it controls)")
        if self.executor not in ("inprocess", "pool", "submitit", "ray"):
            problems.append("executor must be inprocess, pool, submitit or ray")
        for name in ("batch_size", "eval_batch_size", "max_epochs", "max_seq_length", "workers"):
            if getattr(self, name) < 1:
                problems.append(f"{name} must be >= 1")
        if problems:
            raise ValueError("invalid sweep config:\n  " + "\n  ".join(problems))

    def language_data(self, language: str) -> dict[str, Any]:
        """``{"train": DataRef|None, "validation": DataRef|None, "diagnostics": [DataRef], "extra_eval": [...]}``."""
        base = dict(LANGUAGE_DEFAULTS.get(language, {"train": None, "validation": None, "diagnostics": []}))
        base.update(self.data.get(language, {}))
        unknown = set(base) - {"train", "validation", "diagnostics"}
        if unknown:
            raise ValueError(f"data.{language}: unknown keys {sorted(unknown)} (use train, validation, diagnostics)")
        return {
            "train": None if base["train"] is None else DataRef.parse(base["train"]),
            "validation": None if base["validation"] is None else DataRef.parse(base["validation"]),
            "diagnostics": [DataRef.parse(d) for d in _as_list(base["diagnostics"])],
            "extra_eval": [DataRef.parse(d) for d in _as_list(self.extra_eval.get(language, []))],
        }

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-serialisable dict (round-trips through :meth:`from_dict`)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> SweepConfig:
        """Build from a mapping, rejecting unknown keys with a suggestion."""
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = set(values) - known
        if unknown:
            import difflib

            hints = []
            for key in sorted(unknown):
                near = difflib.get_close_matches(key, known, n=1)
                hints.append(f"{key!r}" + (f" (did you mean {near[0]!r}?)" if near else ""))
            raise ValueError(f"unknown config keys: {', '.join(hints)}")
        return cls(**values)

    def with_overrides(self, overrides: list[str] | dict[str, Any]) -> SweepConfig:
        """A copy with ``key=value`` overrides applied (dotted keys reach nested mappings: ``extra_data.size=500``).

        Values are parsed as YAML scalars/flow collections: ``seeds=[0,1]``, ``lr=5e-5``, ``extra_data=null``.
        """
        return SweepConfig.from_dict(apply_overrides(self.to_dict(), overrides))

    def run_hash(self) -> str:
        """Hash of the settings that change a run's result (not executor, progress, output place or the grid)."""
        payload = {k: v for k, v in self.to_dict().items() if k not in NOT_IN_RUN_HASH}
        return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()[:16]


#: Settings that do not change a run's result: where and how it runs, and the grid it belongs to.
NOT_IN_RUN_HASH = frozenset({"experiment", "output_dir", "models", "languages", "seeds", "executor", "workers",
                             "executor_options", "progress", "num_threads"})


def apply_overrides(values: dict[str, Any], overrides: list[str] | dict[str, Any]) -> dict[str, Any]:
    """``values`` (a config mapping) with ``key=value`` overrides applied; dotted keys reach nested mappings.

    Parameters
    ----------
    values : dict
        A config as a plain mapping (left unchanged; nested mappings on an overridden path are copied).
    overrides : list of str or dict
        ``["lr=5e-5", "extra_data.size=500"]`` (values parsed as YAML) or ``{"lr": 5e-5}``.

    Returns
    -------
    dict
    """
    values = dict(values)
    items = overrides.items() if isinstance(overrides, dict) else (_split_override(o) for o in overrides)
    for key, value in items:
        parts = key.split(".")
        target = values
        for part in parts[:-1]:
            inner = target.get(part)
            if inner is None:
                inner = {}
            if not isinstance(inner, dict):
                raise ValueError(f"override {key!r}: {part!r} is not a mapping")
            target[part] = dict(inner)
            target = target[part]
        target[parts[-1]] = value
    return values


def split_override(text: str) -> tuple[str, Any]:
    """``"key=value"`` -> ``(key, value parsed as YAML)``; raises ``ValueError`` for text without ``=``."""
    return _split_override(text)


def _split_override(text: str) -> tuple[str, Any]:
    import yaml

    key, sep, raw = text.partition("=")
    if not sep or not key.strip():
        raise ValueError(f"override {text!r} is not of the form key=value")
    return key.strip(), yaml.safe_load(raw) if raw.strip() else None


def _as_list(value: Any) -> list:
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return list(value)
    return [value]


_FLOAT = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")


def _coerce(value: Any, annotation: Any, name: str) -> Any:
    """Convert YAML-ish values to the field's scalar type (YAML 1.1 reads ``5e-5`` as a string)."""
    if value is None or isinstance(annotation, str) and annotation.startswith(("list", "dict", "ModelSpec")):
        return value
    hint = typing.get_type_hints(SweepConfig).get(name)
    args = typing.get_args(hint) if isinstance(hint, types.UnionType) else (hint,)
    scalar = next((a for a in args if a in (int, float, bool, str)), None)
    if scalar is None:
        return value
    if scalar is bool:
        if isinstance(value, str) and value.lower() in ("true", "false", "yes", "no", "1", "0"):
            return value.lower() in ("true", "yes", "1")
        if not isinstance(value, bool):
            raise ValueError(f"{name}: expected true/false, got {value!r}")
        return value
    if scalar is float:
        if isinstance(value, str) and _FLOAT.match(value.strip()):
            return float(value)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        raise ValueError(f"{name}: expected a number, got {value!r}")
    if scalar is int:
        if isinstance(value, bool) or not (isinstance(value, int) or isinstance(value, str) and value.isdigit()):
            raise ValueError(f"{name}: expected an integer, got {value!r}")
        return int(value)
    return str(value)


def read_config_file(path: str | Path) -> dict[str, Any]:
    """The top-level mapping of a YAML (``.yaml``/``.yml``) or TOML (``.toml``) config file.

    Raises
    ------
    FileNotFoundError
        When the file does not exist.
    ValueError
        When its top level is not a mapping.
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"sweep config {path} does not exist")
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".toml":
        import tomllib

        values = tomllib.loads(text)
    else:
        import yaml

        values = yaml.safe_load(text) or {}
    if not isinstance(values, dict):
        raise ValueError(f"{path}: expected a mapping of config keys at the top level")
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
    """
    values = read_config_file(path)
    values.pop("pipeline", None)  # read by ``diagnostics pipeline`` only (its data files and plan settings)
    config = SweepConfig.from_dict(values)
    return config.with_overrides(overrides) if overrides else config
