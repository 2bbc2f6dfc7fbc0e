"""A scale resolved once: its settings with the pipeline's overrides, its inputs and every sweep it runs.

:meth:`ScalePlan.resolve` reads a scale's settings (:class:`~diagnostics.pipeline.ScaleSpec`), the pipeline's inputs
(data files and ``--set`` overrides: the scale config's ``pipeline:`` section, those given, or those recorded in the
run store), the scale's sweep config, and builds the sweep of every experiment. The result is passed whole to what
plans, trains and reads the runs (:func:`~diagnostics.pipeline._plan.check_plan`,
:func:`~diagnostics.pipeline.ensure_runs`, :func:`experiment_configs`, :func:`plan_datasets` ...): nothing reads the
inputs or derives a sweep from the scale's name again. A wrong setting is a one-line
:class:`~diagnostics.settings.ConfigError` raised by :meth:`~ScalePlan.resolve`, before anything runs.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from diagnostics.core.errors import UserInputError
from diagnostics.core.resources import configs_dir, default_runs_dir
from diagnostics.core.taxonomy import canonical_fine
from diagnostics.data import DataRef
from diagnostics.finetune import SweepConfig
from diagnostics.finetune import LANGUAGE_DEFAULTS
from diagnostics.settings import (ConfigError, ConfigSource, apply_overrides, hint, override_items, override_key,
                                  read_settings)
from diagnostics.stats import presence_experiment

from ._inputs import PipelineInputs, load_inputs
from ._scales import SCALE_CONFIGS, SCALES, SPECS, ScaleSpec


@dataclass(frozen=True)
class ScalePlan:
    """A scale resolved once against its inputs: its settings, its run store and the sweep of every experiment.

    Made by :meth:`resolve`; ``base`` is the language-wise setting (notebooks 01, 02, 05, 06, 08), ``extra-<n>``
    trains on the language's data plus ``n`` pairs of extra English NLI data (03), ``presence-<feature>-<share>``
    controls the share of training pairs with a feature (04).

    Parameters
    ----------
    scale : str
        ``tiny``, ``demo`` or ``paper``.
    runs_dir : Path
        Root of the run store (every sweep's ``output_dir``).
    inputs : PipelineInputs
        The data files and overrides the plan was resolved with (data paths absolute).
    spec : ScaleSpec
        The scale's settings with the overrides of its fields.
    experiments : dict of str to SweepConfig
        Experiment name -> sweep, ``base`` first.
    skipped : tuple of str
        Languages the scale's config names that do not train, for lack of train / validation data.
    unscored : tuple of str
        Languages with training data but no diagnostic set to score them on (what happens to them is the setting
        ``score_missing``; listed whether or not it leaves them out).
    """

    scale: str
    runs_dir: Path
    inputs: PipelineInputs
    spec: ScaleSpec
    experiments: dict[str, SweepConfig]
    skipped: tuple[str, ...] = ()
    unscored: tuple[str, ...] = ()

    @property
    def base(self) -> SweepConfig:
        """The base sweep: the language-wise setting (language train data only)."""
        return self.experiments["base"]

    @classmethod
    def resolve(cls, scale: str, runs_dir: str | Path | None = None,
                inputs: PipelineInputs | None = None) -> ScalePlan:
        """Resolve a scale against its inputs: settings, base sweep and every experiment's sweep, all checked.

        The inputs are the scale config's ``pipeline`` section updated by ``inputs`` (command-line ``--data`` /
        ``--set``); with nothing given, those recorded in the run store by the last run (else the config's). Keys
        of ``--set`` that name a :class:`ScaleSpec` field reshape the plan; the others are sweep-config keys
        applied to every experiment. Languages without train and validation data are left out; user files replace
        or add a language's data under the names ``rte_<lang>`` / ``diagnostic_<lang>`` (the files travel as values:
        nothing is registered).

        Parameters
        ----------
        scale : str
            ``tiny``, ``demo`` or ``paper``.
        runs_dir : str or Path, optional
            Root of the run store; default ``<project root>/runs/<scale>``.
        inputs : PipelineInputs, optional
            Data files and overrides given (see above).

        Returns
        -------
        ScalePlan
            The resolved plan (the tiny scale's random model is built under ``runs_dir`` on first use).

        Raises
        ------
        UserInputError
            For an unknown scale; a :class:`~diagnostics.settings.ConfigError` naming every wrong setting with its
            ``--set`` override or the config file's line.
        """
        if scale not in SPECS:
            raise UserInputError(f"unknown scale {scale!r}; choose one of {', '.join(SCALES)}")
        runs_dir = Path(runs_dir) if runs_dir is not None else default_runs_dir(scale)
        inputs = _effective_inputs(scale, runs_dir, inputs)
        spec = _scale_settings(scale, inputs)
        values, source = _base_values(scale, runs_dir, inputs, spec)
        languages = values.get("languages", [])
        skipped = tuple(lang for lang in languages if not _trains(values, lang))
        unscored = tuple(lang for lang in languages if _trains(values, lang) and not _scored(values, lang))
        values["languages"] = [lang for lang in languages if lang not in skipped
                               and (spec.score_missing != "skip" or lang not in unscored)]
        base = SweepConfig.from_dict(values, source)
        return cls(scale, runs_dir, inputs, spec, _experiments(spec, inputs, base), skipped, unscored)


def scale_inputs(scale: str) -> PipelineInputs:
    """Read the inputs a scale's own config declares under its ``pipeline:`` key (``data`` and ``set``).

    ``scale`` is ``tiny``, ``demo`` or ``paper``. The inputs are empty when the config declares none (or the
    scale has no config file).
    """
    if SCALE_CONFIGS[scale] is None:
        return PipelineInputs()
    path = configs_dir() / SCALE_CONFIGS[scale]
    values, where = read_settings(path)
    section = values.get("pipeline") or {}
    keys = section.get("set") or []
    keys = list(keys) if isinstance(keys, dict) else [override_key(str(o)) for o in keys]
    origins = {key: where.where(f"pipeline.set.{key}") or str(path) for key in keys}
    return PipelineInputs.from_mapping(section, source=str(path), origins=origins)


def _effective_inputs(scale: str, runs_dir: Path, given: PipelineInputs | None) -> PipelineInputs:
    """The scale config's inputs updated by ``given``; with nothing given, the run store's record (else the config's).
    Data paths absolute."""
    if given is not None and (given.data or given.overrides):
        return scale_inputs(scale).merged(given).resolved()
    stored = load_inputs(runs_dir)
    return stored if stored is not None else scale_inputs(scale).resolved()


def _scale_settings(scale: str, inputs: PipelineInputs) -> ScaleSpec:
    """The scale's settings with the overrides of its fields; an override that names no setting is refused."""
    settings = [f.name for f in dataclasses.fields(ScaleSpec)]
    sweep_keys = [f.name for f in dataclasses.fields(SweepConfig)]
    source = ConfigSource(overrides=tuple((override_key(o), inputs.where(o)) for o in inputs.overrides))
    unknown = [(key, f"unknown setting{hint(key, [*settings, *sweep_keys])}; expected a scale setting "
                     f"({', '.join(settings)}) or a sweep-config key")
               for key in dict.fromkeys(map(override_key, inputs.overrides))
               if key.split(".")[0] not in settings and key.split(".")[0] not in sweep_keys]
    if unknown:
        raise ConfigError(unknown, source)
    return SPECS[scale].with_overrides(inputs.spec_overrides(SPECS[scale]), source)


def _tiny_values(runs_dir: Path) -> dict:
    """The tiny scale's sweep (made in code), its random model built under ``runs_dir`` on first use."""
    from diagnostics.models import tiny_random_model
    from diagnostics.models import has_model_config

    model_dir = runs_dir / "models" / "tiny-bert"
    if not has_model_config(model_dir):
        tiny_random_model(model_dir, seed=0)
    return SweepConfig(experiment="base", output_dir=str(runs_dir), models=[{"name": "tiny", "path": str(model_dir)}],
                       languages=["en", "ru"], seeds=[0, 1], train_size=48, max_epochs=1, max_seq_length=64,
                       batch_size=16, lr=1e-3, train_top_k_layers=1, progress=False, num_threads=2,
                       save_checkpoint=True).to_dict()


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


def _base_values(scale: str, runs_dir: Path, inputs: PipelineInputs,
                 spec: ScaleSpec) -> tuple[dict, ConfigSource | None]:
    """The base sweep's config as a mapping, before languages without training data are dropped, and where its
    values came from (the config file's lines, the ``--set`` sweep keys)."""
    items = override_items(inputs.sweep_overrides(spec))
    if SCALE_CONFIGS[scale] is None:
        values, source = _tiny_values(runs_dir), None
    else:
        values, source = read_settings(configs_dir() / SCALE_CONFIGS[scale], ignore=("pipeline",))
        values |= {"experiment": "base", "output_dir": str(runs_dir), "presence": None, "save_checkpoint": True,
                   **spec.overrides}
        source = source.with_overrides([(key, label) for key, _, label in items])
    values = apply_overrides(values, [(key, value) for key, value, _ in items])
    if not any(key == "languages" for key, _, _ in items):
        values["languages"] = list(dict.fromkeys([*values.get("languages", []), *spec.study_languages,
                                                  *inputs.languages()]))
    data = dict(values.get("data") or {})
    for language in inputs.languages():
        data[language] = {**data.get(language, {}), **_language_data(inputs, language)}
    values["data"] = data
    return values, source


def _trains(values: dict, language: str) -> bool:
    defaults = LANGUAGE_DEFAULTS.get(language, {})
    given = (values.get("data") or {}).get(language, {})
    return all(given.get(key, defaults.get(key)) is not None for key in ("train", "validation"))


def _scored(values: dict, language: str) -> bool:
    defaults = LANGUAGE_DEFAULTS.get(language, {})
    given = (values.get("data") or {}).get(language, {})
    return bool(given.get("diagnostics", defaults.get("diagnostics")))


def _experiments(spec: ScaleSpec, inputs: PipelineInputs, base: SweepConfig) -> dict[str, SweepConfig]:
    """Every sweep of the plan by experiment name, ``base`` first; only the base runs keep a checkpoint (only they
    are probed)."""
    configs = {"base": base}
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
        presence_extra = base.extra_data.to_dict() if base.extra_data is not None else None
    for feature in spec.presence_features if presence_languages else ():
        for share in spec.presence_shares:
            name = presence_experiment(feature, share)
            configs[name] = base.with_overrides({
                "experiment": name, "languages": presence_languages, "save_checkpoint": False,
                "presence": {"feature": canonical_fine(feature), "share": share, "within": spec.presence_within},
                "train_size": spec.presence_train_size if spec.presence_within == "extra"
                else spec.presence_train_size or base.train_size,
                "extra_data": presence_extra})
    return configs


def experiment_configs(plan: ScalePlan, only: tuple[str, ...] | None = None) -> dict[str, SweepConfig]:
    """Every sweep of a plan, by experiment name, or those of some experiment families.

    Parameters
    ----------
    plan : ScalePlan
        The resolved scale.
    only : tuple of str, optional
        Experiment families to keep (``("base", "extra")``); all by default.

    Returns
    -------
    dict of str to SweepConfig
        Experiment name -> sweep, ``base`` first.
    """
    return {name: cfg for name, cfg in plan.experiments.items() if only is None or name.split("-")[0] in only}


def plan_datasets(plan: ScalePlan) -> dict[str, DataRef]:
    """Name the user files of a plan, for the statistics' ``dataset=`` (``diagnostic_fr`` -> its file).

    Parameters
    ----------
    plan : ScalePlan
        The resolved scale.

    Returns
    -------
    dict of str to DataRef
        Dataset name -> reference carrying its user file; empty when the plan reads only bundled data (then the
        statistics load every set by name).
    """
    refs = {}
    for language in plan.base.languages:
        found = plan.base.language_data(language)
        for ref in [*found["diagnostics"], *found["extra_eval"]]:  # the sets a predictions table names
            if ref.path is not None:
                refs.setdefault(ref.name, ref)
    return refs


def pretrained_models(plan: ScalePlan) -> dict[str, Path]:
    """Locate the pretrained model(s) a plan fine-tunes (built on demand).

    Parameters
    ----------
    plan : ScalePlan
        The resolved scale.

    Returns
    -------
    dict of str to Path
        Model name -> local folder.
    """
    from diagnostics.finetune import resolve_model_path

    return {m.name: resolve_model_path(m) for m in plan.base.models}


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
