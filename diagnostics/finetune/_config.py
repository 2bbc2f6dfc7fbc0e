"""``SweepConfig``: one typed description of a seed sweep, read from YAML/TOML with ``key=value`` overrides.

The defaults are the reference study's stated settings (Tikhonova et al., 2022: mBERT, seeds 0-5, batch 4, lr 1e-5,
dropout 0.1, full fine-tuning) trained by the ``epoch`` recipe (AdamW, clipping 1.0, linear warm-up and decay, one
validation per epoch, early stopping after ``patience`` epochs). The study trained under jiant v1's SuperGLUE recipe;
``recipe: jiant`` reproduces that (``configs/paper.yaml``; sources in ``docs/finetune.md``).

Every value is checked when a config is built (from a file, overrides or code) by the settings system
(:class:`diagnostics.settings.Settings`): each field converts and checks itself, :meth:`SweepConfig.problems` checks
the settings that contradict one another. What this machine must hold (models, data files) is :mod:`._preflight`'s.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from pathlib import Path
from typing import Any

from diagnostics.data import DataRef
from diagnostics.settings import (ConfigError, ConfigSource, Expected, Settings, as_list, fields_declaring, hint,
                                  read_settings, setting, show, unset_values)

from ._config_values import (LANGUAGE_DATA_KEYS, ExtraData, ModelSpec, Presence, data_problems,
                             executor_options_problems, extra_eval_problems, listed_once, models_problems,
                             read_executor_options, read_extra_eval, read_fuse, read_language_data, read_seeds)
from ._jiant import CUSTOM_SCHEDULE, VAL_SCHEDULES, schedule_name
from ._recipes import RECIPE_NAMES, get_recipe

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
RECIPES = RECIPE_NAMES
SCHEDULERS = ("linear", "constant")
SELECTION_METRICS = ("accuracy", "mcc")
FEATURE_DTYPES = ("float16", "bfloat16", "float32")
PRECISIONS = ("auto", "fp32", "tf32", "bf16", "fp16")
DEVICES = ("auto", "cpu", "cuda", "cuda:<n>", "mps")
#: The executors' names; :data:`diagnostics.finetune._executors.EXECUTORS` maps each to the function that runs jobs.
EXECUTOR_NAMES = ("inprocess", "pool", "submitit")
CLASSIFIER_HEADS = ("transformers", "jiant")
#: Orders of a training mixture's file (``mixture_order``; what each trains on: :mod:`._exposure`).
MIXTURE_ORDERS = ("train_first", "shuffled")
TRUNCATIONS = ("pair", "per_sentence")

_DEVICE = re.compile(r"^(auto|cpu|cuda(:\d+)?|mps)$")
_FOLDER_NAME = Expected(lambda v: bool(v.strip()) and v not in (".", "..") and not re.search(r"[/\\]", v),
                        "a folder name without '/'")


class SweepConfig(Settings):
    """Everything that defines a seed sweep. Defaults: the study's batch, lr, dropout and seeds, ``epoch`` recipe.

    Every field is also a config-file key and a ``--set key=value`` override. A field that is not a plain setting
    says so (:func:`~diagnostics.settings.setting`): out of the run hash, hashed only when set, derived from
    others, kept per run of a fused group, an option of one recipe.
    """

    _what = "config key"

    experiment: str = setting("default", check=_FOLDER_NAME, in_run_hash=False, per_run=True, help=(
        "Name of the experiment: runs go to ``<output_dir>/<experiment>/<language>/<model>/seed=<k>/``."))
    output_dir: str = setting("runs", in_run_hash=False, help="Root of the run store.")
    models: list[ModelSpec] = setting(factory=lambda: [ModelSpec("bert-base-multilingual-cased")],
                                      check=models_problems, in_run_hash=False, per_run=True, help=(
        "The pretrained models of the grid: names, or mappings ``{name, path, pretrain_seed}`` "
        "(:class:`ModelSpec`)."))
    languages: list[str] = setting(factory=lambda: ["en", "ru"], check=listed_once("language"),
                                   in_run_hash=False, per_run=True, help="The languages of the grid.")
    seeds: list[int] = setting(factory=lambda: [0, 1, 2, 3, 4, 5], reader=read_seeds, check=listed_once("seed"),
                               in_run_hash=False, per_run=True,
                               help="The fine-tuning seeds of the grid (distinct): a list, or a range ``0-5``.")
    data: dict[str, dict[str, Any]] = setting(factory=dict, reader=read_language_data, check=data_problems,
                                              per_run=True, help=(
        "Language -> overrides of its ``train`` / ``validation`` / ``diagnostics`` references (see "
        ":data:`LANGUAGE_DEFAULTS`; required for sv/fr/de training data)."))
    extra_eval: dict[str, list[Any]] = setting(factory=dict, reader=read_extra_eval, check=extra_eval_problems,
                                               per_run=True,
                                               help="Language -> further evaluation sets (dataset references).")
    train_size: int | None = setting(None, check=(lambda v: v >= 1, "an integer >= 1 (or null for the whole train "
                                                                    "set)"), per_run=True, help=(
        "Train on a subset of this many examples of the language's train set (``None``: all of it)."))
    data_seed: int = setting(0, check=(lambda v: v >= 0, "an integer >= 0"), per_run=True, help=(
        "Seed of every data draw (subsets, extra data, presence), the same for every run seed."))
    extra_data: ExtraData | None = setting(None, per_run=True, help=(
        "Extra English NLI examples added to the training mixture: a mapping ``{name, size, split, path}`` "
        "(:class:`ExtraData`)."))
    mixture_order: str = setting("train_first", choices=MIXTURE_ORDERS, hashed_when_set=True, per_run=True,
                                 recipe="jiant", help=(
        "``jiant`` recipe: the order of the training mixture's file, which its reader takes in input order in chunks "
        "of 10,000 (so a run shorter than an epoch sees the mixture's first pairs). ``train_first``: the language's "
        "train set, then the extra data; ``shuffled``: the whole mixture in one random order drawn with "
        "``data_seed`` (the same for every run seed). ``diagnostics pipeline --dry-run`` shows what each order "
        "trains on; ``docs/finetune.md`` says which one fits the study."))
    presence: Presence | None = setting(None, per_run=True, help=(
        "A controlled share of training examples carrying a diagnostic feature: a mapping ``{feature, share, "
        "within}`` (:class:`Presence`)."))
    max_seq_length: int = setting(256, check=(lambda v: v >= 8, "an integer >= 8"), help=(
        "Maximum tokens per pair (longer pairs are truncated, longest side first)."))
    batch_size: int = setting(4, check=(lambda v: v >= 1, "an integer >= 1"), help="Training examples per batch.")
    eval_batch_size: int = setting(64, check=(lambda v: v >= 1, "an integer >= 1"),
                                   help="Examples per batch when evaluating.")
    lr: float = setting(1e-5, check=(lambda v: 0 < v < math.inf, "a number > 0"), help="Peak learning rate.")
    head_lr: float | None = setting(None, check=(lambda v: 0 < v < math.inf, "a number > 0 (or null to use lr)"),
                                    help="Learning rate of the pooler and classifier (``None``: ``lr``).")
    weight_decay: float = setting(0.01, check=(lambda v: 0 <= v < math.inf, "a number >= 0"), help=(
        "Weight decay (``epoch`` recipe: not applied to biases and LayerNorm weights; ``jiant`` recipe: applied to "
        "every parameter, as jiant v1 gave its optimizer one group)."))
    dropout: float = setting(0.1, check=(lambda v: 0 <= v < 1, "a number in [0, 1)"),
                             help="Hidden, attention and classifier dropout.")
    optimizer: str = setting("adamw", choices=OPTIMIZERS, help=(
        "The optimiser. ``adamw`` (with ``recipe: epoch``) is ``torch.optim.AdamW``'s update. ``bert_adam`` (with "
        "``recipe: jiant`` only) is the BertAdam that jiant v1 ran: Adam without bias correction, weight decay added "
        "to the update, its own warm-up schedule and a per-tensor gradient clip "
        "(:class:`diagnostics.finetune._stacked_optim.StackedBertAdam`)."))
    adam_eps: float = setting(1e-8, check=(lambda v: 0 < v < math.inf, "a number > 0"), help=(
        "Epsilon of AdamW / BertAdam (BertAdam's own default, used by jiant, is 1e-6)."))
    max_grad_norm: float = setting(1.0, check=(lambda v: 0 <= v < math.inf, "a number >= 0 (0: no clipping)"),
                                   help="Gradient clipping norm over all trainable parameters together (0: none).")
    scheduler: str = setting("linear", choices=SCHEDULERS, help=(
        "Learning-rate schedule after the warm-up: linear decay to zero, or constant."))
    warmup_ratio: float = setting(0.1, check=(lambda v: 0 <= v < 1, "a number in [0, 1)"), help=(
        "Share of the training steps spent warming the learning rate up linearly (``jiant`` recipe: BertAdam's "
        "``warmup``, a share of its ``t_total``)."))
    max_epochs: int = setting(10, check=(lambda v: v >= 1, "an integer >= 1"), per_run=True,
                              help="Most epochs trained.")
    max_steps: int | None = setting(None, check=(lambda v: v >= 1, "an integer >= 1 (or null for no limit)"),
                                    per_run=True,
                                    help="Most optimisation steps (``None``: no limit besides ``max_epochs``).")
    patience: int = setting(3, check=(lambda v: v >= 1, "an integer >= 1"), per_run=True, help=(
        "Early stopping. ``epoch`` recipe: stop after this many epochs without a better validation "
        "``selection_metric``. ``jiant`` recipe: counted in validation checks, stop when the best check is "
        "``patience + 1`` checks old. The best epoch / check is kept."))
    selection_metric: str = setting("accuracy", choices=SELECTION_METRICS, per_run=True,
                                    help="The validation score that selects the epoch.")
    train_top_k_layers: int | None = setting(
        None, check=(lambda v: v >= 1, "an integer >= 1 (or null for full fine-tuning)"), help=(
            "``None`` = full fine-tuning (the study's). ``k`` = only the top ``k`` encoder layers, pooler and "
            "classifier train; the frozen lower layers run once per sweep in eval mode (dropout off) and their "
            "outputs are cached (``feature_dtype``) and shared by every seed. Much cheaper (a CPU demo needs it), but "
            "the lower layers keep their pretrained weights: seed variance then only comes from the head, the top "
            "layers and the data order, so it underestimates the instability of full fine-tuning."))
    freeze_embeddings: bool = setting(False, help="Keep the embeddings frozen.")
    feature_dtype: str = setting("float16", choices=FEATURE_DTYPES, help=(
        "Storage type of the cached lower-layer outputs (with ``train_top_k_layers``)."))
    length_bucketing: bool = setting(False, help=(
        "Inputs are padded per batch to the longest member (dynamic padding); with this, batches group examples of "
        "similar length (fewer pad tokens, still a seeded random order)."))
    pad_to_max_length: bool = setting(False, help=(
        "Pad every batch to ``max_seq_length`` instead (the static baseline of the padding benchmark)."))
    skip_padding: bool = setting(True, help=(
        "Run the token-wise parts of each encoder layer (query/key/value and output projections, feed-forward) on "
        "the real tokens only (:mod:`diagnostics.finetune._unpadding`): the same values for every real token and the "
        "same logits, less work on padded batches. Dropout masks are then drawn for real tokens only, so a seed's "
        "run differs (equally randomly) from one with ``skip_padding: false``. It pays on a CPU (1.33x on random "
        "RTE batches); on a GPU the gathers and scatters cost more than they save (0.42x at batch 4 on an H100), so "
        "``configs/paper.yaml`` turns it off."))
    deterministic: bool = setting(True, help=(
        "Request ``torch.use_deterministic_algorithms`` (warn-only) during the run."))
    device: str = setting("auto", check=Expected(lambda v: bool(_DEVICE.match(v)), f"one of {', '.join(DEVICES)}",
                                                 lambda v: hint(v, DEVICES)),
                          help="``\"auto\"`` uses CUDA when available; else a torch device name.")
    precision: str = setting("auto", choices=PRECISIONS, help=(
        "``\"auto\"`` is bf16 (or fp16) autocast on CUDA and fp32 on CPU. ``\"bf16\"`` on CPU is bf16 autocast where "
        "the CPU has native bf16 (AVX512-BF16 / AMX; about 2x faster for this model here) and fp32 elsewhere; "
        "``metrics.json`` records which one ran. ``\"fp32\"`` turns autocast off; ``\"tf32\"`` too, with the matrix "
        "products and convolutions of CUDA in TF32 (``torch.backends.cuda.matmul.allow_tf32``; fp32 on CPU; "
        "``versions.json`` records ``tf32``); ``\"fp16\"`` is fp16 autocast on CUDA (fp32 on CPU)."))
    num_threads: int | None = setting(None, check=(lambda v: v >= 1, "an integer >= 1 (or null for torch's default)"),
                                      in_run_hash=False, help="Torch's intra-op threads (``None``: torch's default).")
    save_checkpoint: bool = setting(False, per_run=True, help=(
        "Also write the best model (safetensors, a full Hugging Face folder) under ``seed=<k>/checkpoint/``."))
    executor: str = setting("inprocess", choices=EXECUTOR_NAMES, in_run_hash=False, help=(
        "Where runs execute: here one after another, local processes, or SLURM (set ``executor_options.cluster`` "
        "to ``local`` or ``debug`` for submitit's local executors)."))
    workers: int = setting(1, check=(lambda v: v >= 1, "an integer >= 1"), in_run_hash=False,
                           help="Processes of the ``pool`` executor.")
    executor_options: dict[str, Any] = setting(factory=dict, reader=read_executor_options,
                                               check=executor_options_problems, in_run_hash=False, help=(
        "Options of the executor: ``threads_per_worker``; for ``submitit`` also ``cluster``, ``poll_s``, "
        "``lost_job_grace_s``, ``requeue`` and submitit parameters such as ``timeout_min``, ``slurm_partition``, "
        "``slurm_array_parallelism`` (``docs/slurm.md``)."))
    progress: bool = setting(True, in_run_hash=False, per_run=True, help="Show progress bars.")
    fuse: int | str = setting(1, reader=read_fuse, in_run_hash=False, help=(
        "Slots: runs trained together as one computation (:mod:`diagnostics.finetune._fused`). ``1`` trains each "
        "run alone; ``K`` queues the runs that share a model and step shapes (any experiment, language, size or "
        "seed: :func:`diagnostics.finetune.training_key`) into jobs of K slots whose runs share every forward, "
        "backward and optimizer pass (each keeps its own initialisation, data, data order, optimizer state, "
        "schedule, clipping, validations and stopping); a run that stops hands its slot to the next run of the "
        "queue. ``auto``: as many slots as fit the device's memory with a margin "
        "(:func:`diagnostics.finetune._grouping.auto_group_size`). Where and how runs execute, not what they are: "
        "not in the run hash; each run records its job in ``metrics.json``. Fused jobs never skip padding."))
    recipe: str = setting("epoch", choices=RECIPES, hashed_when_set=True, help=(
        "The training loop. ``epoch``: validation after every epoch, the schedule of ``scheduler`` / "
        "``warmup_ratio``, early stopping after ``patience`` epochs. ``jiant``: jiant v1's trainer as the study ran "
        "it (validation every ``val_interval`` steps, learning rate multiplied by ``lr_decay_factor`` on a plateau, "
        "stop at ``min_lr`` / ``patience`` / ``max_vals`` / ``max_epochs``; length-bucketed batches, biggest first; "
        "needs ``optimizer: bert_adam``). See :mod:`diagnostics.finetune._jiant`. ``trainer``: Hugging Face "
        "``Trainer``'s defaults (linear decay without warm-up, an evaluation per epoch, no early stopping, the last "
        "epoch's model). Each recipe is a module of its own (:mod:`diagnostics.finetune._recipes`)."))
    val_interval: int | None = setting(None, check=(lambda v: v >= 1, "an integer >= 1 (or null for one epoch)"),
                                       hashed_when_set=True, per_run=True, recipe="jiant", help=(
        "``jiant`` recipe: optimizer steps between validation checks; ``None``: one epoch of the run's training "
        "mixture (``ceil(pairs / batch_size)`` steps)."))
    max_vals: int = setting(10, check=(lambda v: v >= 1, "an integer >= 1"), hashed_when_set=True, per_run=True,
                            recipe="jiant", help=(
        "``jiant`` recipe: most validation checks; training stops at the last."))
    lr_patience: int = setting(4, check=(lambda v: v >= 0, "an integer >= 0"), hashed_when_set=True, per_run=True,
                               recipe="jiant", help=(
        "``jiant`` recipe: the learning rate is decayed after ``lr_patience + 1`` checks without an improvement "
        "larger than ``scheduler_threshold``."))
    lr_decay_factor: float = setting(0.5, check=(lambda v: 0 < v < 1, "a number in (0, 1)"),
                                     hashed_when_set=True, per_run=True, recipe="jiant",
                                     help="``jiant`` recipe: factor of that decay.")
    min_lr: float = setting(1e-7, check=(lambda v: 0 <= v < math.inf, "a number >= 0"), hashed_when_set=True,
                            per_run=True, recipe="jiant", help=(
        "``jiant`` recipe: training stops when a decay takes the learning rate below this."))
    scheduler_threshold: float = setting(1e-4, check=(lambda v: 0 <= v < math.inf, "a number >= 0"),
                                         hashed_when_set=True, per_run=True, recipe="jiant", help=(
        "``jiant`` recipe: smallest absolute improvement of the selection metric that resets the plateau count."))
    val_data_limit: int | None = setting(
        5000, check=(lambda v: v >= 1, "an integer >= 1 (or null for the whole validation set)"),
        hashed_when_set=True, per_run=True, recipe="jiant", help=(
            "``jiant`` recipe: validation checks score the first this many validation pairs (``None``: all)."))
    bert_adam_max_grad_norm: float = setting(
        1.0, check=(lambda v: 0 <= v < math.inf, "a number >= 0 (0: no per-tensor clipping)"),
        hashed_when_set=True, recipe="jiant", help=(
            "``optimizer: bert_adam``: each parameter tensor's gradient is clipped to this norm inside the optimizer, "
            "after the global ``max_grad_norm`` clip (0: none)."))
    val_schedule: str | None = setting(None, choices=(*VAL_SCHEDULES, CUSTOM_SCHEDULE), hashed_when_set=True,
                                       derived_from=("val_interval", "max_vals", "recipe"), per_run=True,
                                       recipe="jiant", help=(
        "``jiant`` recipe: the reading of the study's validation schedule, which sets ``val_interval`` and "
        "``max_vals``: ``russiansuperglue`` (625 steps, 10 checks: the authors' group's jiant fork and TERRa script; "
        "every run ends by 6,250 steps), ``jiant_superglue`` (625 steps, 10,000 checks: nyu-mll's conf and RTE "
        "script; runs end by ``max_epochs``, ``patience`` or ``min_lr``), ``per_epoch`` (one check per epoch of the "
        "run's own mixture, 10 checks), ``custom`` (``val_interval`` and ``max_vals`` as set). Unset: the name of "
        "whichever reading ``val_interval`` and ``max_vals`` are. Sources: "
        ":data:`diagnostics.finetune.VAL_SCHEDULES`."))
    classifier_head: str | None = setting(None, choices=CLASSIFIER_HEADS, hashed_when_set=True,
                                          unset_value="transformers", derived_from=("recipe",), recipe="jiant",
                                          help=(
        "``transformers``: ``AutoModelForSequenceClassification``'s head (BERT: the pretrained NSP pooler, dense + "
        "tanh, then dropout and a linear layer). ``jiant``: jiant v1's ``log_reg`` pair classifier for a BERT input "
        "module under fine-tuning: dropout on the top layer's states, the first token's state (no projection, no "
        "pooler), one linear layer initialised as torch's ``nn.Linear``. Unset: ``jiant`` with ``recipe: jiant``, "
        "``transformers`` with ``recipe: epoch``."))
    truncation: str | None = setting(None, choices=TRUNCATIONS, hashed_when_set=True, unset_value="pair",
                                     derived_from=("recipe",), recipe="jiant", help=(
        "``pair``: the joined pair is cut to ``max_seq_length`` tokens, longest side first (transformers' "
        "``longest_first``). ``per_sentence``: as jiant v1's ``tokenize_and_truncate``, premise and hypothesis are "
        "each cut to ``max_seq_length - 2`` tokens before they are joined, so a pair may be longer than "
        "``max_seq_length``. Unset: ``per_sentence`` with ``recipe: jiant``, ``pair`` with ``recipe: epoch``."))

    def problems(self) -> list[tuple[str, str]]:
        """List the settings that contradict one another: recipe and optimizer, data a language lacks, ...

        Returns
        -------
        list of (str, str)
            ``(key, message)`` per problem.
        """
        unset = unset_values(SweepConfig, RECIPE_OPTIONS)
        problems = [(name, f"expected it unset with recipe: {self.recipe} (it sets the {recipe} recipe; add recipe: "
                           f"{recipe}), found {show(getattr(self, name))}")
                    for name, recipe in RECIPE_OPTIONS.items()
                    if recipe != self.recipe and getattr(self, name) != unset[name]]
        problems += _optimizer_problems(self.recipe, self.optimizer)
        if self.classifier_head == "jiant" and self.train_top_k_layers is not None:
            problems.append(("classifier_head", "expected transformers with train_top_k_layers (jiant's head belongs "
                                                "to full fine-tuning, as jiant ran it), found 'jiant'"))
        known_languages = [*LANGUAGE_DEFAULTS, *self.data]
        unknown = [(f"extra_eval.{language}", f"expected a language ({', '.join(known_languages)}), found "
                                              f"{language!r}{hint(language, known_languages)}")
                   for language in self.extra_eval if language not in known_languages]
        problems += unknown
        if not (unknown or data_problems(self.data, "data") or extra_eval_problems(self.extra_eval, "extra_eval")):
            problems += self._language_problems(known_languages)
        if self.presence is not None and self.presence.within == "extra" and \
                (self.extra_data is None or self.extra_data.size < 1):
            problems.append(("presence.within", "expected extra_data with a size >= 1 for within: extra (the subset "
                                                "it controls), found none"))
        return problems

    def _language_problems(self, known_languages: list[str]) -> list[tuple[str, str]]:
        """A language of the grid without train and validation data: unknown, or one whose data must be given."""
        problems = []
        for language in self.languages:
            refs = self.language_data(language)
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
        return problems

    def _derive(self) -> list[tuple[str, str]]:
        """Fill the recipe's own defaults of ``classifier_head``, ``truncation`` and (``jiant``) ``val_schedule``.

        A named schedule sets ``val_interval`` and ``max_vals`` (left at their defaults) to its reading's values;
        other values of theirs contradict it and are returned as problems.
        """
        jiant = self.recipe == "jiant"
        if self.classifier_head is None:
            self.classifier_head = "jiant" if jiant else "transformers"
        if self.truncation is None:
            self.truncation = "per_sentence" if jiant else "pair"
        if not jiant:
            return []
        if self.val_schedule is None:
            self.val_schedule = schedule_name(self.val_interval, self.max_vals)
            return []
        reading = VAL_SCHEDULES.get(self.val_schedule)
        if reading is None:
            return []
        problems = []
        for key in ("val_interval", "max_vals"):
            wanted, found = getattr(reading, key), getattr(self, key)
            if found == HASHED_WHEN_SET[key]:
                setattr(self, key, wanted)
            elif found != wanted:
                problems.append((key, f"expected {show(wanted)} under val_schedule: {reading.name} (or set "
                                      f"val_schedule: custom), found {show(found)}"))
        return problems

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
NOT_IN_RUN_HASH = frozenset(fields_declaring(SweepConfig, "in_run_hash"))
#: Settings added after runs were stored, with their unset values: at those they stay out of the run hash, so the
#: hash of every run made before they existed is unchanged.
HASHED_WHEN_SET = unset_values(SweepConfig, fields_declaring(SweepConfig, "hashed_when_set"))
#: Settings whose unset value is derived from others (:meth:`SweepConfig._derive`): an override of one of those
#: others derives them again, unless it sets them too.
DERIVED_SETTINGS = fields_declaring(SweepConfig, "derived_from")
#: The options of one recipe, with its name: under another recipe each must keep its unset value.
RECIPE_OPTIONS = fields_declaring(SweepConfig, "recipe")


def _optimizer_problems(recipe: str, optimizer: str) -> list[tuple[str, str]]:
    """Check that the optimizer is the one the recipe runs (:attr:`~._recipes.Recipe.optimizer`).

    Parameters
    ----------
    recipe : str
        The ``recipe`` setting (one that names no recipe has no problem here: its own is named).
    optimizer : str
        The ``optimizer`` setting.

    Returns
    -------
    list of (str, str)
        ``("optimizer", message)`` when it is not the recipe's, else nothing.
    """
    if recipe not in RECIPES or optimizer not in OPTIMIZERS:
        return []
    wanted = get_recipe(recipe).optimizer
    if optimizer == wanted:
        return []
    owners = [name for name in RECIPES if get_recipe(name).optimizer == optimizer]
    if optimizer == "bert_adam" and owners:  # its own warm-up schedule runs over the budget its recipe computes
        return [("optimizer", f"expected {wanted} with recipe: {recipe} (bert_adam's warm-up is tied to the "
                              f"{owners[0]} recipe's step budget; set recipe: {owners[0]}), found 'bert_adam'")]
    return [("optimizer", f"expected {wanted} with recipe: {recipe} (the optimizer {recipe}'s recipe ran), "
                          f"found {optimizer!r}")]


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
