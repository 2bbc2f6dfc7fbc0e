"""The three scales of the main job and the sweeps (experiments) each analysis needs.

* ``tiny``: a 2-layer random BERT, a few dozen training pairs, 2 seeds: exercises every code path in seconds
  (used by the tests; its numbers are noise by construction).
* ``demo``: the embedded multilingual-e5-small with the cheap CPU recipe of ``configs/demo.yaml``, 3 seeds,
  en + ru: the README's main command, about 20 minutes on 2 CPU cores.
* ``paper``: the study's design from ``configs/paper.yaml`` (mBERT, seeds 0-5, full fine-tuning; every language
  with training data; MNLI at the study's eight sizes for English and Russian (Fig. 4) and RTE + 374k MNLI for
  every language (Table 4, Fig. 3); feature presence in a 10k MNLI subset, English and Russian): for a GPU.

A scale's plan is shaped by its :class:`ScaleSpec` and by the pipeline's inputs (:mod:`diagnostics.pipeline._inputs`):
data files (``--data KEY=PATH``) and ``--set`` overrides, stored in the run store so that the notebooks see the
same plan as the command that trained it. The settings are read and checked by the one settings system
(:mod:`diagnostics.settings`), as the sweep config's: a wrong one is a one-line
:class:`~diagnostics.settings.ConfigError` naming the ``--set`` override or the config file's line, before anything runs.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from pathlib import Path

from diagnostics.data._refs import DataRef
from diagnostics.errors import UserInputError
from diagnostics.finetune import SweepConfig
from diagnostics.finetune._config import LANGUAGE_DEFAULTS, PRESENCE_WITHIN
from diagnostics.models._precision import PRECISIONS
from diagnostics.resources import configs_dir
from diagnostics.settings import (ConfigError, ConfigSource, convert_fields, field_problems, hint, read_mapping,
                                  setting, show, unknown_keys)
from diagnostics.settings_input import apply_overrides, config_source, override_key, read_config_file
from diagnostics.stats._study import presence_experiment
from diagnostics.taxonomy import canonical_fine

from ._inputs import PipelineInputs, load_inputs

SCALES = ("tiny", "demo", "paper")
STUDY_EXTRA_SIZES = (1000, 5000, 10000, 50000, 100000, 200000, 250000, 374000)
STUDY_PRESENCE_FEATURES = ("Conjunction", "Anaphora/Coreference", "Negation", "Disjunction")
#: What a language without a diagnostic set does: ``problem`` (the plan refuses: it would train and never be
#: scored), ``skip`` (left out, with a notice) or ``train`` (trained anyway, with a notice).
SCORE_MISSING = ("problem", "skip", "train")


@dataclass(frozen=True)
class ScaleSpec:
    """What one scale runs. Every field can be overridden with ``diagnostics pipeline --set FIELD=VALUE``.

    Parameters
    ----------
    name : str
        ``tiny``, ``demo`` or ``paper``.
    config : str
        YAML file under ``configs/`` holding the base sweep (``None`` for the generated tiny config).
    study_languages : tuple of str
        Languages the scale trains besides the config's ``languages`` when their data is given (``--data``); the
        others are skipped with a notice. Languages named in ``--data`` train too. A ``--set languages=[...]``
        override replaces all of this.
    extra_source : str
        Extra English NLI data of the §5.3 and §5.4 experiments: ``mnli`` (the study's; a user file given with
        ``--data mnli=PATH``) or ``sick`` (the bundled stand-in, 4439 training pairs, never drawn past that).
    extra_sizes : tuple of int
        Pairs of extra data of the §5.3 experiments ``extra-<n>`` (0 = the language's data alone) for the
        ``extra_languages``. A size equal to the base mixture's own extra data reuses the ``base`` experiment.
    extra_languages : tuple of str, optional
        Languages trained at every ``extra_sizes``; ``None`` = every language that trains.
    extra_other_sizes : tuple of int, optional
        Sizes for the languages that train but are not among ``extra_languages``: ``()`` none, ``None`` the
        largest of ``extra_sizes`` (the study's: RTE + 374k MNLI for every language, the eight sizes for English
        and Russian only). ``--set extra_other_sizes=[10000,374000]`` adds sizes for them; ``--set
        extra_languages=null`` trains every size in every language.
    presence_features : tuple of str
        Features of the §5.4 experiments ``presence-<feature>-<share>``.
    presence_shares : tuple of float
        Shares of controlled pairs carrying the feature.
    presence_languages : tuple of str
        Languages of the presence experiments (those that do not train are dropped).
    presence_within : str
        ``extra`` (the study's: the language's train set plus a ``presence_extra_size`` subset of the extra data
        in which the share is set) or ``train`` (the share is set within the language's own training subset of
        ``presence_train_size`` pairs; the demo's cheaper design).
    presence_train_size : int, optional
        Language pairs in every presence mixture (``None`` = the whole train set).
    presence_extra_size : int, optional
        Extra-data pairs in every presence mixture; with ``presence_within: train``, ``None`` keeps the base
        mixture's extra data.
    probe_max_train : int
        Pairs per probing training set (the rest of the pipeline's probes use the whole diagnostic set to test).
    probe_finetuned_seeds : int
        How many fine-tuned seeds are probed besides the pretrained model.
    probe_selection : str
        Where the probes' L2 strength is chosen: ``test`` (the study's protocol: on the language's annotated
        RTE-style test split) or ``holdout`` (20 % held out of train + validation).
    probe_class_weight : str, optional
        ``None`` (the study's: no class weighting) or ``balanced``.
    n_boot : int
        Multi-Bootstrap samples.
    inference_precision : str
        Compute precision of probing extraction and behavioural-test inference (``bf16``: bf16 autocast where the
        CPU supports it natively, see :mod:`diagnostics.models._precision`); the sweeps take theirs from the config.
    notebook_lanes : int
        Notebooks executed at once by the main job (see :func:`diagnostics.pipeline._runner.execute_notebooks`).
    annotate_limit : int, optional
        Pairs per dataset the notebooks' annotator tables (Table 7) annotate (``None``: all; the tiny scale keeps
        it short).
    train_pairs_per_s : float, optional
        Training throughput used to turn the plan's pair-epochs into hours (``None``: no hours in the estimate;
        measure it with ``benchmarks/bench_paper_recipe.py`` on the target GPU).
    score_missing : str
        A language that trains but has no diagnostic set (fr or de without ``--data <lang>.diagnostics``):
        ``problem`` (the plan refuses to start: its runs would never be scored), ``skip`` (left out, with a
        notice) or ``train`` (trained anyway, with a notice).
    overrides : dict
        Sweep-config values set on the base sweep on top of its config file (before ``--set`` sweep keys).
    """

    name: str
    config: str | None
    study_languages: tuple[str, ...] = ()
    extra_source: str = setting("sick", choices=("mnli", "sick"))
    extra_sizes: tuple[int, ...] = setting((0,), check=(lambda v: v >= 0, "an integer >= 0 (0: the language's data "
                                                                         "alone)"))
    extra_languages: tuple[str, ...] | None = None
    extra_other_sizes: tuple[int, ...] | None = setting((), check=(lambda v: v >= 0, "an integer >= 0"))
    presence_features: tuple[str, ...] = ("Negation",)
    presence_shares: tuple[float, ...] = setting((), check=(lambda v: 0 <= v <= 1, "a number in [0, 1]"))
    presence_languages: tuple[str, ...] = ("en",)
    presence_within: str = setting("train", choices=PRESENCE_WITHIN)
    presence_train_size: int | None = setting(560, check=(lambda v: v >= 1, "an integer >= 1 (or null for the "
                                                                            "whole train set)"))
    presence_extra_size: int | None = setting(None, check=(lambda v: v >= 0, "an integer >= 0"))
    probe_max_train: int = setting(400, check=(lambda v: v >= 1, "an integer >= 1"))
    probe_finetuned_seeds: int = setting(2, check=(lambda v: v >= 0, "an integer >= 0"))
    probe_selection: str = setting("test", choices=("test", "holdout"))
    probe_class_weight: str | None = None
    n_boot: int = setting(1000, check=(lambda v: v >= 1, "an integer >= 1"))
    inference_precision: str = setting("fp32", choices=PRECISIONS)
    notebook_lanes: int = setting(1, check=(lambda v: v >= 1, "an integer >= 1"))
    annotate_limit: int | None = setting(None, check=(lambda v: v >= 1, "an integer >= 1 (or null for all pairs)"))
    train_pairs_per_s: float | None = setting(None, check=(lambda v: 0 < v < math.inf, "a number > 0 (or null for "
                                                                                         "no hours)"))
    score_missing: str = setting("problem", choices=SCORE_MISSING)
    overrides: dict = setting(factory=dict, reader=lambda value, key: dict(read_mapping(value, key,
                                                                                        "of sweep keys")))

    def with_overrides(self, values: dict, source: ConfigSource | None = None) -> ScaleSpec:
        """Copy the settings with fields replaced, each read and checked as a sweep config's values are.

        Parameters
        ----------
        values : dict
            Field -> new value, as parsed from YAML (``name`` and ``config`` cannot change).
        source : ConfigSource, optional
            Where the values were given (``--set extra_sizes=...`` or ``configs/paper.yaml:9``), named in errors.

        Returns
        -------
        ScaleSpec
            The validated copy.

        Raises
        ------
        ConfigError
            One line naming every unknown field, value of the wrong type and inconsistent setting.
        """
        known = [f.name for f in dataclasses.fields(self) if f.name not in ("name", "config")]
        problems = unknown_keys(values, known, "scale setting")
        spec = dataclasses.replace(self, **{key: value for key, value in values.items() if key in known})
        problems += convert_fields(spec)
        bad_keys = {key.split("[")[0] for key, _ in problems}
        problems += [p for p in spec.problems() if p[0].split("[")[0].split(".")[0] not in bad_keys]
        if problems:
            raise ConfigError(problems, source)
        return spec

    def problems(self) -> list[tuple[str, str]]:
        """List every out-of-range, unknown or inconsistent setting.

        Returns
        -------
        list of (str, str)
            ``(key, message)`` per problem, as :class:`~diagnostics.finetune.ConfigError` takes them.
        """
        from diagnostics.taxonomy import UnknownCategoryError

        problems = field_problems(self)
        if self.probe_class_weight not in (None, "balanced"):
            problems.append(("probe_class_weight", f"expected null or 'balanced', found {self.probe_class_weight!r}"
                                                   f"{hint(self.probe_class_weight, ('balanced',))}"))
        known = known_languages()
        for key in ("study_languages", "extra_languages", "presence_languages"):
            for i, language in enumerate(getattr(self, key) or ()):
                if language not in known:
                    problems.append((f"{key}[{i}]", f"expected a language code ({', '.join(known)}), found "
                                                    f"{language!r}{hint(language, known)}"))
        for i, feature in enumerate(self.presence_features):
            try:
                canonical_fine(feature)
            except UnknownCategoryError as err:
                near = f" (did you mean {' or '.join(map(repr, err.suggestions))}?)" if err.suggestions else ""
                problems.append((f"presence_features[{i}]", f"expected a diagnostic category, found {feature!r}{near}"))
        if self.presence_within == "extra" and self.presence_shares and not self.presence_extra_size:
            problems.append(("presence_extra_size", "expected an integer >= 1 with presence_within: extra (the "
                                                    f"subset it controls), found {show(self.presence_extra_size)}"))
        return problems

    def validate(self) -> None:
        """Raise :class:`~diagnostics.finetune.ConfigError` naming every inconsistent setting."""
        problems = self.problems()
        if problems:
            raise ConfigError(problems)


def known_languages() -> list[str]:
    """List the language codes a scale may name (those with bundled data or accepted user files), without repeats."""
    from diagnostics.data import USER_LANGUAGES

    return list(dict.fromkeys([*LANGUAGE_DEFAULTS, *USER_LANGUAGES]))


SPECS = {
    "tiny": ScaleSpec("tiny", None, extra_sizes=(32,), extra_languages=("en",), presence_shares=(0.25, 0.75),
                      presence_train_size=40, annotate_limit=100,
                      probe_max_train=80, n_boot=200, inference_precision="bf16"),
    # the demo's base mixture already holds 3000 SICK pairs (the embedded model barely learns without them, and
    # mixtures of 1000-2000 pairs often end on one class): the presence mixtures keep them and set the share within
    # 560 RTE pairs, and, to stay inside 20 minutes, the demo runs the two extreme shares of one feature
    "demo": ScaleSpec("demo", "demo.yaml", extra_sizes=(0, 1000), extra_languages=("en",), extra_other_sizes=(),
                      presence_shares=(0.25, 0.75), probe_max_train=400, n_boot=1000, inference_precision="bf16",
                      notebook_lanes=2),
    # the study: MNLI at its eight sizes for English and Russian (Fig. 4), RTE + 374k MNLI for every language that
    # trains (Table 4, Fig. 3); presence of four features in a 10k MNLI subset added to the whole RTE / TERRa train
    # set, English and Russian
    "paper": ScaleSpec("paper", "paper.yaml", study_languages=("en", "ru", "fr", "de", "sv"), extra_source="mnli",
                       extra_sizes=STUDY_EXTRA_SIZES, extra_languages=("en", "ru"), extra_other_sizes=None,
                       presence_features=STUDY_PRESENCE_FEATURES, presence_shares=(0.25, 0.5, 0.75),
                       presence_languages=("en", "ru"), presence_within="extra", presence_train_size=None,
                       presence_extra_size=10000, probe_max_train=5000, probe_finetuned_seeds=6, n_boot=1000),
}


def scale_spec(scale: str, runs_dir: str | Path | None = None, inputs: PipelineInputs | None = None) -> ScaleSpec:
    """The :class:`ScaleSpec` of a scale, with the pipeline's ``--set`` overrides of its fields applied.

    Parameters
    ----------
    scale : str
        ``tiny``, ``demo`` or ``paper``.
    runs_dir : str or Path, optional
        Run store whose recorded inputs (``pipeline.json``) apply, when ``inputs`` is not given.
    inputs : PipelineInputs, optional
        Data files and overrides to apply.

    Returns
    -------
    ScaleSpec
        The scale's settings with the overrides applied.

    Raises
    ------
    UserInputError
        For an unknown scale or invalid overrides.
    """
    if scale not in SPECS:
        raise UserInputError(f"unknown scale {scale!r}; choose one of {', '.join(SCALES)}")
    inputs = _inputs(scale, runs_dir, inputs)
    spec = SPECS[scale]
    settings = [f.name for f in dataclasses.fields(spec) if f.name not in ("name", "config")]
    sweep_keys = [f.name for f in dataclasses.fields(SweepConfig)]
    source = ConfigSource(overrides=tuple((override_key(o), inputs.where(o)) for o in inputs.overrides))
    unknown = [(key, f"unknown setting{hint(key, [*settings, *sweep_keys])}; expected a scale setting "
                     f"({', '.join(settings)}) or a sweep-config key")
               for key in dict.fromkeys(map(override_key, inputs.overrides))
               if key.split(".")[0] not in settings and key.split(".")[0] not in sweep_keys]
    if unknown:
        raise ConfigError(unknown, source)
    return spec.with_overrides(inputs.spec_overrides(spec), source)


def scale_inputs(scale: str) -> PipelineInputs:
    """Read the inputs a scale's own config declares under its ``pipeline:`` key (``data`` and ``set``).

    ``scale`` is ``tiny``, ``demo`` or ``paper``. The inputs are empty when the config declares none (or the
    scale has no config file).
    """
    spec = SPECS[scale]
    if spec.config is None:
        return PipelineInputs()
    path = configs_dir() / spec.config
    section = read_config_file(path).get("pipeline") or {}
    where = config_source(path)
    keys = section.get("set") or []
    keys = list(keys) if isinstance(keys, dict) else [override_key(str(o)) for o in keys]
    origins = {key: where.where(f"pipeline.set.{key}") or str(path) for key in keys}
    return PipelineInputs.from_mapping(section, source=str(path), origins=origins)


def _inputs(scale: str, runs_dir, inputs: PipelineInputs | None) -> PipelineInputs:
    if inputs is not None:
        return inputs
    stored = load_inputs(runs_dir) if runs_dir is not None else None
    return stored if stored is not None else scale_inputs(scale)


def _tiny_config(runs_dir: Path) -> SweepConfig:
    from diagnostics.models import tiny_random_model
    from diagnostics.models._folders import has_model_config

    model_dir = runs_dir / "models" / "tiny-bert"
    if not has_model_config(model_dir):
        tiny_random_model(model_dir, seed=0)
    return SweepConfig(experiment="base", output_dir=str(runs_dir), models=[{"name": "tiny", "path": str(model_dir)}],
                       languages=["en", "ru"], seeds=[0, 1], train_size=48, max_epochs=1, max_seq_length=64,
                       batch_size=16, lr=1e-3, train_top_k_layers=1, progress=False, num_threads=2,
                       save_checkpoint=True)


def _language_data(inputs: PipelineInputs, language: str) -> dict:
    """``data.<language>`` entries of the sweep config for the language's user files."""
    from diagnostics.data import user_dataset

    files = inputs.language_files(language)
    entry = {}
    for split in ("train", "validation"):
        if split in files:
            entry[split] = {"name": user_dataset(language, "rte"), "split": split, "path": files[split],
                            "language": language}
    if "diagnostics" in files:
        entry["diagnostics"] = [{"name": user_dataset(language, "diagnostic"), "split": "test",
                                 "path": files["diagnostics"], "language": language}]
    return entry


def _base_values(scale: str, runs_dir: Path, inputs: PipelineInputs) -> dict:
    """The base sweep's config as a mapping, before languages without training data are dropped."""
    spec = scale_spec(scale, runs_dir, inputs)
    if spec.config is None:
        values = _tiny_config(runs_dir).to_dict()
    else:
        values = read_config_file(configs_dir() / spec.config)
        values.pop("pipeline", None)
        values |= {"experiment": "base", "output_dir": str(runs_dir), "presence": None, "save_checkpoint": True,
                   **spec.overrides}
    overrides = inputs.sweep_overrides(spec)
    values = apply_overrides(values, overrides)
    if not any(override_key(o) == "languages" for o in overrides):
        values["languages"] = list(dict.fromkeys([*values.get("languages", []), *spec.study_languages,
                                                  *inputs.languages()]))
    data = dict(values.get("data") or {})
    for language in inputs.languages():
        data[language] = {**data.get(language, {}), **_language_data(inputs, language)}
    values["data"] = data
    return values


def _trains(values: dict, language: str) -> bool:
    defaults = LANGUAGE_DEFAULTS.get(language, {})
    given = (values.get("data") or {}).get(language, {})
    return all(given.get(key, defaults.get(key)) is not None for key in ("train", "validation"))


def _scored(values: dict, language: str) -> bool:
    defaults = LANGUAGE_DEFAULTS.get(language, {})
    given = (values.get("data") or {}).get(language, {})
    return bool(given.get("diagnostics", defaults.get("diagnostics")))


def base_config(scale: str, runs_dir: str | Path, inputs: PipelineInputs | None = None) -> SweepConfig:
    """Build the base sweep of a scale (language train data only), writing under ``runs_dir``.

    Languages without train and validation data are left out (see :func:`skipped_languages`); user files given
    as inputs replace or add a language's data under the names ``rte_<lang>`` / ``diagnostic_<lang>``; the
    statistics find them through :func:`plan_datasets` (the files travel as values: nothing is registered).
    ``scale`` is ``tiny``, ``demo`` or ``paper``; ``runs_dir`` is the root of the run store (the sweep's
    ``output_dir``); ``inputs`` default to those recorded in ``runs_dir``, else the scale config's own. The sweep's
    experiment is ``base``.
    """
    inputs = _inputs(scale, runs_dir, inputs)
    values = _base_values(scale, Path(runs_dir), inputs)
    spec = scale_spec(scale, runs_dir, inputs)
    values["languages"] = [lang for lang in values.get("languages", []) if _trains(values, lang)
                           and (spec.score_missing != "skip" or _scored(values, lang))]
    source = None if spec.config is None else config_source(configs_dir() / spec.config, inputs.sweep_overrides(spec))
    return SweepConfig.from_dict(values, source)


def skipped_languages(scale: str, runs_dir: str | Path, inputs: PipelineInputs | None = None) -> list[str]:
    """List the languages a scale's config names that do not train, for lack of train / validation data.

    Arguments as for :func:`base_config`; the codes come in the config's order.
    """
    inputs = _inputs(scale, runs_dir, inputs)
    values = _base_values(scale, Path(runs_dir), inputs)
    return [lang for lang in values.get("languages", []) if not _trains(values, lang)]


def unscored_languages(scale: str, runs_dir: str | Path, inputs: PipelineInputs | None = None) -> list[str]:
    """List the languages with training data but no diagnostic set to score them on.

    What happens to them is the scale setting ``score_missing``: a problem that stops the plan (default), left
    out (``skip``) or trained anyway (``train``). Arguments as for :func:`base_config`; the codes come in the
    config's order, whether or not ``score_missing`` leaves them out.
    """
    inputs = _inputs(scale, runs_dir, inputs)
    values = _base_values(scale, Path(runs_dir), inputs)
    return [lang for lang in values.get("languages", []) if _trains(values, lang) and not _scored(values, lang)]


def check_settings(scale: str, runs_dir: str | Path, inputs: PipelineInputs | None = None) -> ScaleSpec:
    """Read and check every setting of a scale (its own and the sweep's) before any work.

    Arguments as for :func:`base_config`. Raises ``ConfigError``, one line naming each wrong setting with the
    ``--set`` override or the config file's line.
    """
    spec = scale_spec(scale, runs_dir, inputs)
    base_config(scale, runs_dir, inputs)
    return spec


def plan_datasets(scale: str, runs_dir: str | Path, inputs: PipelineInputs | None = None) -> dict[str, DataRef]:
    """Name the user files of a scale's plan, for the statistics' ``dataset=`` (``diagnostic_fr`` -> its file).

    Parameters
    ----------
    scale : str
        ``tiny``, ``demo`` or ``paper``.
    runs_dir : str or Path
        Root of the run store (its recorded inputs apply).
    inputs : PipelineInputs, optional
        Data files and overrides, as for :func:`base_config`.

    Returns
    -------
    dict of str to DataRef
        Dataset name -> reference carrying its user file; empty when the plan reads only bundled data (then the
        statistics load every set by name).
    """
    config = base_config(scale, runs_dir, inputs)
    refs = {}
    for language in config.languages:
        found = config.language_data(language)
        for ref in [*found["diagnostics"], *found["extra_eval"]]:  # the sets a predictions table names
            if ref.path is not None:
                refs.setdefault(ref.name, ref)
    return refs


def probe_frames(config: SweepConfig, language: str, *, max_train: int | None = None, seed: int = 0,
                 cache_dir: str | Path | None = None) -> dict:
    """Build ``train`` / ``test`` frames for :func:`diagnostics.probe.probe_models` from a language's user files.

    Only where a language's data are the user's files rather than the bundled sets the probes default to.
    ``train``: the language's train + validation, subsampled to ``max_train`` (seeded) and annotated by the rule
    annotator; ``test``: its first diagnostic set with gold tags.

    Parameters
    ----------
    config : SweepConfig
        The sweep whose data references are read.
    language : str
        The language.
    max_train : int, optional
        Subset size of the training frame.
    seed : int
        Seed of the subset.
    cache_dir : str or Path, optional
        Annotation cache.

    Returns
    -------
    dict of str to pandas.DataFrame
        ``train`` and / or ``test`` where the data are the user's; empty for bundled data.
    """
    import pandas as pd

    from diagnostics.probe._tasks import DIAGNOSTIC_SETS, TRAIN_SETS, annotate_frame, subsample

    refs = config.language_data(language)
    frames = {}
    if refs["train"].name != TRAIN_SETS.get(language) or refs["train"].path is not None:
        both = pd.concat([refs["train"].load(), refs["validation"].load()], ignore_index=True)
        frames["train"] = annotate_frame(subsample(both, max_train, seed), language, cache_dir=cache_dir)
    diagnostics = refs["diagnostics"]
    if diagnostics and (diagnostics[0].name != DIAGNOSTIC_SETS.get(language) or diagnostics[0].path is not None):
        frames["test"] = diagnostics[0].load()
    return frames


def extra_size(config: SweepConfig) -> int:
    """Count the pairs of extra English NLI data in a sweep's training mixture.

    Parameters
    ----------
    config : SweepConfig
        The sweep.

    Returns
    -------
    int
        ``extra_data.size``, 0 without extra data.
    """
    return config.extra_data.size if config.extra_data is not None else 0


def extra_data(spec: ScaleSpec, inputs: PipelineInputs, size: int) -> dict | None:
    """Build the ``extra_data`` entry of a sweep drawing ``size`` pairs of the scale's extra source.

    The source is ``spec.extra_source``; for ``mnli``, the ``mnli`` file of ``inputs``. Returns
    ``{"name", "size", "split"[, "path"]}``; ``None`` for size 0.
    """
    if not size:
        return None
    if spec.extra_source == "mnli":
        return {"name": "mnli", "size": size, "split": None, "path": inputs.data.get("mnli")}
    return {"name": "sick", "size": size, "split": "train"}


def extra_plan(spec: ScaleSpec, languages: list[str]) -> dict[int, list[str]]:
    """Decide which languages train at which size of extra data (the §5.3 experiments).

    ``spec`` gives ``extra_sizes`` for the ``extra_languages``, ``extra_other_sizes`` for the other languages;
    ``languages`` are those that train, in order. Returns size -> languages, sizes in the order of
    ``extra_sizes`` then the other sizes; a size no language trains at is left out.
    """
    chosen = [lang for lang in languages if spec.extra_languages is None or lang in spec.extra_languages]
    others = [lang for lang in languages if lang not in chosen]
    other_sizes = spec.extra_other_sizes
    if other_sizes is None:  # the study's: only the largest size (RTE + 374k MNLI) for the other languages
        other_sizes = (max(spec.extra_sizes),) if spec.extra_sizes else ()
    plan: dict[int, list[str]] = {}
    for size in dict.fromkeys([*spec.extra_sizes, *other_sizes]):
        members = [lang for lang in languages if lang in chosen and size in spec.extra_sizes
                   or lang in others and size in other_sizes]
        if members:
            plan[size] = members
    return plan


def pretrained_models(scale: str, runs_dir: str | Path) -> dict[str, Path]:
    """Locate the pretrained model(s) a scale fine-tunes (built on demand).

    Parameters
    ----------
    scale : str
        ``tiny``, ``demo`` or ``paper``.
    runs_dir : str or Path
        Root of the run store (its recorded inputs apply).

    Returns
    -------
    dict of str to Path
        Model name -> local folder.
    """
    from diagnostics.finetune._train import resolve_model_path

    return {m.name: resolve_model_path(m) for m in base_config(scale, runs_dir).models}


def experiment_configs(scale: str, runs_dir: str | Path, only: tuple[str, ...] | None = None,
                       inputs: PipelineInputs | None = None) -> dict[str, SweepConfig]:
    """Every sweep a scale runs, by experiment name.

    ``base`` is the language-wise setting (notebooks 01, 02, 05, 06, 08); ``extra-<n>`` trains on the language's
    data plus ``n`` pairs of extra English NLI data (03); ``presence-<feature>-<share>`` controls the share of
    training pairs with a feature (04).

    Parameters
    ----------
    scale : str
        ``tiny``, ``demo`` or ``paper``.
    runs_dir : str or Path
        Root of the run store for this scale; the inputs recorded there (``pipeline.json``) apply.
    only : tuple of str, optional
        Experiment families to keep (``("base", "extra")``).
    inputs : PipelineInputs, optional
        Data files and overrides (default: those recorded in ``runs_dir``, else the scale config's own).

    Returns
    -------
    dict of str to SweepConfig
        Experiment name -> sweep, ``base`` first.
    """
    inputs = _inputs(scale, runs_dir, inputs)
    spec = scale_spec(scale, runs_dir, inputs)
    base = base_config(scale, runs_dir, inputs)
    configs = {"base": base}
    # only the base runs are probed, so only they keep a checkpoint
    for size, extra_languages in extra_plan(spec, base.languages).items():
        if size != extra_size(base) and extra_languages:
            configs[f"extra-{size}"] = base.with_overrides({
                "experiment": f"extra-{size}", "languages": extra_languages,
                "extra_data": extra_data(spec, inputs, size), "save_checkpoint": False})
    presence_languages = [lang for lang in spec.presence_languages if lang in base.languages]
    if spec.presence_within == "extra":
        presence_extra = extra_data(spec, inputs, spec.presence_extra_size or 0)
    elif spec.presence_extra_size is not None:
        presence_extra = extra_data(spec, inputs, spec.presence_extra_size)
    else:
        presence_extra = dataclasses.asdict(base.extra_data) if base.extra_data is not None else None
    for feature in spec.presence_features if presence_languages else ():
        for share in spec.presence_shares:
            name = presence_experiment(feature, share)
            configs[name] = base.with_overrides({
                "experiment": name, "languages": presence_languages, "save_checkpoint": False,
                "presence": {"feature": canonical_fine(feature), "share": share, "within": spec.presence_within},
                "train_size": spec.presence_train_size if spec.presence_within == "extra"
                else spec.presence_train_size or base.train_size,
                "extra_data": presence_extra})
    if only is not None:
        configs = {name: cfg for name, cfg in configs.items() if name.split("-")[0] in only}
    return configs
