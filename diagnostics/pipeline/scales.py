"""The three scales of the main job and the sweeps (experiments) each analysis needs.

* ``tiny``: a 2-layer random BERT, a few dozen training pairs, 2 seeds: exercises every code path in seconds
  (used by the tests; its numbers are noise by construction).
* ``demo``: the embedded multilingual-e5-small with the cheap CPU recipe of ``configs/demo.yaml``, 3 seeds,
  en + ru: the README's main command, about 20 minutes on 2 CPU cores.
* ``paper``: the study's setup from ``configs/paper.yaml`` (mBERT by hub name, seeds 0-5, full data, full
  fine-tuning): for a GPU.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path

from diagnostics.finetune import SweepConfig, load_config

SCALES = ("tiny", "demo", "paper")
CONFIGS = Path(__file__).resolve().parents[2] / "configs"


@dataclass(frozen=True)
class ScaleSpec:
    """What one scale runs.

    Attributes
    ----------
    name : str
        ``tiny``, ``demo`` or ``paper``.
    config : str
        YAML file under ``configs/`` holding the base sweep (``None`` for the generated tiny config).
    extra_sizes : tuple of int
        Sizes of extra English NLI data (SICK) for the §5.3 experiments ``extra-<n>`` (0 = the language's data
        alone). The base mixture's own size (``configs/<scale>.yaml``) is reused as the ``base`` experiment.
    extra_languages : tuple of str
        Languages of the extra-data experiments.
    presence_feature, presence_shares, presence_language
        The feature-presence experiment (§5.4): training mixtures where ``share`` of examples carry the feature.
    presence_train_size : int, optional
        Language pairs in every presence mixture (one size for all shares, so only the share varies). RTE train
        has 430 pairs with Negation (rule annotator, either side), so 75 % allows at most 573 pairs.
    presence_extra_size : int, optional
        SICK pairs added to every presence mixture (identical across shares); ``None`` keeps the base mixture's.
    probe_max_train : int
        Pairs per probing training set (the rest of the pipeline's probes use the whole diagnostic set to test).
    probe_finetuned_seeds : int
        How many fine-tuned seeds are probed besides the pretrained model.
    n_boot : int
        Multi-Bootstrap samples.
    notebook_lanes : int
        Notebooks executed at once by the main job (see :func:`diagnostics.pipeline.runner.execute_notebooks`).
    precision : str
        Compute precision of probing extraction and behavioural-test inference (``bf16``: bf16 autocast where the
        CPU supports it natively, see :mod:`diagnostics.models.precision`); the sweeps take theirs from the config.
    """

    name: str
    config: str | None
    extra_sizes: tuple[int, ...] = (0,)
    extra_languages: tuple[str, ...] = ("en",)
    presence_feature: str = "Negation"
    presence_shares: tuple[float, ...] = ()
    presence_language: str = "en"
    presence_train_size: int | None = 560
    presence_extra_size: int | None = None
    probe_max_train: int = 400
    probe_finetuned_seeds: int = 2
    n_boot: int = 1000
    precision: str = "fp32"
    notebook_lanes: int = 1
    overrides: dict = field(default_factory=dict)


SPECS = {
    "tiny": ScaleSpec("tiny", None, extra_sizes=(32,), presence_shares=(0.25, 0.75), presence_train_size=40,
                      probe_max_train=80, n_boot=200, precision="bf16"),
    # the demo's base mixture already holds 3000 SICK pairs (the embedded model barely learns without them, and
    # mixtures of 1000-2000 pairs often end on one class): the presence mixtures keep them, and, to stay inside
    # 20 minutes, the demo runs the two extreme shares
    "demo": ScaleSpec("demo", "demo.yaml", extra_sizes=(0, 1000), presence_shares=(0.25, 0.75),
                      probe_max_train=400, n_boot=1000, precision="bf16", notebook_lanes=2),
    "paper": ScaleSpec("paper", "paper.yaml", extra_sizes=(1000, 5000, 20000), extra_languages=("en", "ru"),
                       presence_shares=(0.25, 0.5, 0.75), probe_max_train=5000, probe_finetuned_seeds=6, n_boot=1000),
}


def scale_spec(scale: str) -> ScaleSpec:
    """The :class:`ScaleSpec` of a scale name (``tiny``, ``demo``, ``paper``)."""
    if scale not in SPECS:
        raise ValueError(f"unknown scale {scale!r}; choose one of {', '.join(SCALES)}")
    return SPECS[scale]


def _tiny_config(runs_dir: Path) -> SweepConfig:
    from diagnostics.models import tiny_random_model

    model_dir = runs_dir / "models" / "tiny-bert"
    if not (model_dir / "config.json").exists():
        tiny_random_model(model_dir, seed=0)
    return SweepConfig(experiment="base", output_dir=str(runs_dir), models=[{"name": "tiny", "path": str(model_dir)}],
                       languages=["en", "ru"], seeds=[0, 1], train_size=48, max_epochs=1, max_seq_length=64,
                       batch_size=16, lr=1e-3, train_top_k_layers=1, progress=False, num_threads=2,
                       save_checkpoint=True)


def base_config(scale: str, runs_dir: str | Path) -> SweepConfig:
    """The base sweep of a scale (language train data only), writing under ``runs_dir``."""
    spec = scale_spec(scale)
    runs_dir = Path(runs_dir)
    if spec.config is None:
        return _tiny_config(runs_dir)
    return load_config(CONFIGS / spec.config).with_overrides(
        {"experiment": "base", "output_dir": str(runs_dir), "presence": None, "save_checkpoint": True,
         **spec.overrides})


def extra_size(config: SweepConfig) -> int:
    """Pairs of extra English NLI data in a sweep's training mixture (0 without)."""
    return config.extra_data.size if config.extra_data is not None else 0


def pretrained_models(scale: str, runs_dir: str | Path) -> dict[str, Path]:
    """Model name -> local folder of the pretrained model(s) a scale fine-tunes (built on demand)."""
    from diagnostics.finetune.train import resolve_model_path

    return {m.name: resolve_model_path(m) for m in base_config(scale, runs_dir).models}


def experiment_configs(scale: str, runs_dir: str | Path, only: tuple[str, ...] | None = None) -> dict[str, SweepConfig]:
    """Every sweep a scale runs, by experiment name.

    ``base`` is the language-wise setting (notebooks 01, 02, 05, 06, 08); ``extra-<n>`` trains on the language's
    data plus ``n`` SICK pairs (03);
    ``presence-<share>`` controls the share of training pairs with the presence feature (04).

    Parameters
    ----------
    scale : str
    runs_dir : str or Path
        Root of the run store for this scale.
    only : tuple of str, optional
        Experiment-name prefixes to keep (``("base", "extra")``).
    """
    spec = scale_spec(scale)
    base = base_config(scale, runs_dir)
    configs = {"base": base}
    presence_extra = asdict(base.extra_data) if base.extra_data is not None else None
    if spec.presence_extra_size is not None:
        presence_extra = {"name": "sick", "size": spec.presence_extra_size} if spec.presence_extra_size else None
    # only the base runs are probed, so only they keep a checkpoint
    for size in spec.extra_sizes:
        if size != extra_size(base):
            configs[f"extra-{size}"] = base.with_overrides({
                "experiment": f"extra-{size}", "languages": list(spec.extra_languages),
                "extra_data": {"name": "sick", "size": size} if size else None, "save_checkpoint": False})
    for share in spec.presence_shares:
        configs[f"presence-{share:g}"] = base.with_overrides({
            "experiment": f"presence-{share:g}", "languages": [spec.presence_language],
            "presence": {"feature": spec.presence_feature, "share": share}, "save_checkpoint": False,
            "train_size": spec.presence_train_size or base.train_size, "extra_data": presence_extra})
    if only is not None:
        configs = {name: cfg for name, cfg in configs.items() if name.split("-")[0] in only}
    return configs
