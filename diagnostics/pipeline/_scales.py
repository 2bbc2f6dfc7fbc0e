"""The three scales of the main job and the settings (:class:`ScaleSpec`) that shape each one's plan.

* ``tiny``: a 2-layer random BERT, a few dozen training pairs, 2 seeds: exercises every code path in seconds
  (used by the tests; its numbers are noise by construction).
* ``demo``: the embedded multilingual-e5-small with the cheap CPU recipe of ``configs/demo.yaml``, 3 seeds,
  en + ru: the README's main command, about 15 minutes on 2 CPU cores.
* ``paper``: the study's design from ``configs/paper.yaml`` (mBERT, seeds 0-5, full fine-tuning; every language
  with training data; MNLI at the study's eight sizes for English and Russian (Fig. 4) and RTE + 374k MNLI for
  every language (Table 4, Fig. 3); feature presence in a 10k MNLI subset, English and Russian): for a GPU.

The settings are read and checked by the one settings system (:mod:`diagnostics.settings`), as the sweep config's:
a wrong one is a one-line :class:`~diagnostics.settings.ConfigError` naming the ``--set`` override or the config
file's line, before anything runs. A scale resolved against the pipeline's inputs is a
:class:`~diagnostics.pipeline.ScalePlan`.
"""

from __future__ import annotations

import math
from pathlib import Path

from diagnostics.finetune import SweepConfig
from diagnostics.finetune import LANGUAGE_DEFAULTS
from diagnostics.finetune import DIAGNOSTIC_CATEGORY, PRESENCE_WITHIN
from diagnostics.models import PRECISIONS
from diagnostics.settings import Expected, Settings, hint, read_mapping, setting, show

SCALES = ("tiny", "demo", "paper")
STUDY_EXTRA_SIZES = (1000, 5000, 10000, 50000, 100000, 200000, 250000, 374000)
STUDY_PRESENCE_FEATURES = ("Conjunction", "Anaphora/Coreference", "Negation", "Disjunction")
#: What a language without a diagnostic set does: ``problem`` (the plan refuses: it would train and never be
#: scored), ``skip`` (left out, with a notice) or ``train`` (trained anyway, with a notice).
SCORE_MISSING = ("problem", "skip", "train")


def known_languages() -> list[str]:
    """List the language codes a scale may name (those with bundled data or accepted user files), without repeats."""
    from diagnostics.data import USER_LANGUAGES

    return list(dict.fromkeys([*LANGUAGE_DEFAULTS, *USER_LANGUAGES]))


def _language_code(value: str, key: str) -> list[tuple[str, str]]:
    known = known_languages()
    return [] if value in known else [(key, f"expected a language code ({', '.join(known)}), found {value!r}"
                                            f"{hint(value, known)}")]


class ScaleSpec(Settings, frozen=True):
    """What one scale runs. Every field can be overridden with ``diagnostics pipeline --set FIELD=VALUE``."""

    _what = "scale setting"

    study_languages: tuple[str, ...] = setting((), check=_language_code, help=(
        "Languages the scale trains besides the config's ``languages`` when their data is given (``--data``); the "
        "others are skipped with a notice. Languages named in ``--data`` train too. A ``--set languages=[...]`` "
        "override replaces all of this."))
    extra_source: str = setting("sick", choices=("mnli", "sick"), help=(
        "Extra English NLI data of the §5.3 and §5.4 experiments: ``mnli`` (the study's; a user file given with "
        "``--data mnli=PATH``) or ``sick`` (the bundled stand-in, 4439 training pairs, never drawn past that)."))
    extra_sizes: tuple[int, ...] = setting((0,), check=(lambda v: v >= 0, "an integer >= 0 (0: the language's data "
                                                                         "alone)"), help=(
        "Pairs of extra data of the §5.3 experiments ``extra-<n>`` (0 = the language's data alone) for the "
        "``extra_languages``. A size equal to the base mixture's own extra data reuses the ``base`` experiment."))
    extra_languages: tuple[str, ...] | None = setting(None, check=_language_code, help=(
        "Languages trained at every ``extra_sizes``; ``None`` = every language that trains."))
    extra_other_sizes: tuple[int, ...] | None = setting((), check=(lambda v: v >= 0, "an integer >= 0"), help=(
        "Sizes for the languages that train but are not among ``extra_languages``: ``()`` none, ``None`` the "
        "largest of ``extra_sizes`` (the study's: RTE + 374k MNLI for every language, the eight sizes for English "
        "and Russian only). ``--set extra_other_sizes=[10000,374000]`` adds sizes for them; ``--set "
        "extra_languages=null`` trains every size in every language."))
    presence_features: tuple[str, ...] = setting(("Negation",), check=DIAGNOSTIC_CATEGORY, help=(
        "Features of the §5.4 experiments ``presence-<feature>-<share>``."))
    presence_shares: tuple[float, ...] = setting((), check=(lambda v: 0 <= v <= 1, "a number in [0, 1]"),
                                                 help="Shares of controlled pairs carrying the feature.")
    presence_languages: tuple[str, ...] = setting(("en",), check=_language_code, help=(
        "Languages of the presence experiments (those that do not train are dropped)."))
    presence_within: str = setting("train", choices=PRESENCE_WITHIN, help=(
        "``extra`` (the study's: the language's train set plus a ``presence_extra_size`` subset of the extra data "
        "in which the share is set) or ``train`` (the share is set within the language's own training subset of "
        "``presence_train_size`` pairs; the demo's cheaper design)."))
    presence_train_size: int | None = setting(560, check=(lambda v: v >= 1, "an integer >= 1 (or null for the "
                                                                            "whole train set)"), help=(
        "Language pairs in every presence mixture (``None`` = the whole train set)."))
    presence_extra_size: int | None = setting(None, check=(lambda v: v >= 0, "an integer >= 0"), help=(
        "Extra-data pairs in every presence mixture; with ``presence_within: train``, ``None`` keeps the base "
        "mixture's extra data."))
    probe_max_train: int = setting(400, check=(lambda v: v >= 1, "an integer >= 1"), help=(
        "Pairs per probing training set (the rest of the pipeline's probes use the whole diagnostic set to test)."))
    probe_finetuned_seeds: int = setting(2, check=(lambda v: v >= 0, "an integer >= 0"), help=(
        "How many fine-tuned seeds are probed besides the pretrained model."))
    probe_jobs: int = setting(1, check=(lambda v: v >= 1, "an integer >= 1"), help=(
        "Processes fitting the probes of distinct layers at once in the probing notebook (the tables are the same "
        "whatever it is): on 2 cores the demo's 2 let its longest notebook take the core the other lane leaves "
        "idle."))
    probe_selection: str = setting("test", choices=("test", "holdout"), help=(
        "Where the probes' L2 strength is chosen: ``test`` (the study's protocol: on the language's annotated "
        "RTE-style test split) or ``holdout`` (20 % held out of train + validation)."))
    probe_class_weight: str | None = setting(
        None, check=Expected(lambda v: v == "balanced", "null or 'balanced'", lambda v: hint(v, ("balanced",))),
        help="``None`` (the study's: no class weighting) or ``balanced``.")
    n_boot: int = setting(1000, check=(lambda v: v >= 1, "an integer >= 1"), help="Multi-Bootstrap samples.")
    inference_precision: str = setting("fp32", choices=PRECISIONS, help=(
        "Compute precision of probing extraction and behavioural-test inference (``bf16``: bf16 autocast where the "
        "CPU supports it natively, see :mod:`diagnostics.models._precision`); the sweeps take theirs from the "
        "config."))
    notebook_lanes: int = setting(1, check=(lambda v: v >= 1, "an integer >= 1"), help=(
        "Notebooks executed at once by the main job (see :func:`diagnostics.pipeline._runner.execute_notebooks`); "
        "side by side, their kernels run with ``OMP_WAIT_POLICY=PASSIVE`` unless you set it."))
    annotate_limit: int | None = setting(None, check=(lambda v: v >= 1, "an integer >= 1 (or null for all pairs)"),
                                         help=(
        "Pairs per dataset the notebooks' annotator tables (Table 7) annotate (``None``: all; the tiny scale keeps "
        "it short)."))
    train_pairs_per_s: float | None = setting(None, check=(lambda v: 0 < v < math.inf, "a number > 0 (or null for "
                                                                                         "no hours)"), help=(
        "Training throughput used to turn the plan's pair-epochs into hours (``None``: no hours in the estimate; "
        "measure it with ``benchmarks/bench_paper_recipe.py`` on the target GPU)."))
    score_missing: str = setting("problem", choices=SCORE_MISSING, help=(
        "A language that trains but has no diagnostic set (fr or de without ``--data <lang>.diagnostics``): "
        "``problem`` (the plan refuses to start: its runs would never be scored), ``skip`` (left out, with a "
        "notice) or ``train`` (trained anyway, with a notice)."))
    overrides: dict = setting(factory=dict, reader=lambda value, key: dict(read_mapping(value, key, "of sweep keys")),
                              help="Sweep-config values set on the base sweep on top of its config file (before "
                                   "``--set`` sweep keys).")

    def problems(self) -> list[tuple[str, str]]:
        """List the settings that contradict one another: controlled shares without the extra data they control.

        Returns
        -------
        list of (str, str)
            ``(key, message)`` per problem.
        """
        if self.presence_within == "extra" and self.presence_shares and not self.presence_extra_size:
            return [("presence_extra_size", "expected an integer >= 1 with presence_within: extra (the subset it "
                                            f"controls), found {show(self.presence_extra_size)}")]
        return []


#: The sweep config of each scale (a file under ``configs/``; ``None``: the tiny sweep made in code).
SCALE_CONFIGS = {"tiny": None, "demo": "demo.yaml", "paper": "paper.yaml"}

SPECS = {
    "tiny": ScaleSpec(extra_sizes=(32,), extra_languages=("en",), presence_shares=(0.25, 0.75), presence_train_size=40,
                      annotate_limit=100, probe_max_train=80, n_boot=200, inference_precision="bf16"),
    # the demo's base mixture already holds 3000 SICK pairs (the embedded model barely learns without them, and
    # mixtures of 1000-2000 pairs often end on one class): the presence mixtures keep them and set the share within
    # 560 RTE pairs, and, to stay inside 20 minutes, the demo runs the two extreme shares of one feature
    "demo": ScaleSpec(extra_sizes=(0, 1000), extra_languages=("en",), extra_other_sizes=(),
                      presence_shares=(0.25, 0.75), probe_max_train=400, n_boot=1000, inference_precision="bf16",
                      notebook_lanes=2, probe_jobs=2),
    # the study: MNLI at its eight sizes for English and Russian (Fig. 4), RTE + 374k MNLI for every language that
    # trains (Table 4, Fig. 3); presence of four features in a 10k MNLI subset added to the whole RTE / TERRa train
    # set, English and Russian
    "paper": ScaleSpec(study_languages=("en", "ru", "fr", "de", "sv"), extra_source="mnli",
                       extra_sizes=STUDY_EXTRA_SIZES, extra_languages=("en", "ru"), extra_other_sizes=None,
                       presence_features=STUDY_PRESENCE_FEATURES, presence_shares=(0.25, 0.5, 0.75),
                       presence_languages=("en", "ru"), presence_within="extra", presence_train_size=None,
                       presence_extra_size=10000, probe_max_train=5000, probe_finetuned_seeds=6, n_boot=1000),
}


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

    from diagnostics.probe import DIAGNOSTIC_SETS, TRAIN_SETS, annotate_frame, subsample

    refs = config.language_data(language)
    frames = {}
    if refs["train"].name != TRAIN_SETS.get(language) or refs["train"].path is not None:
        both = pd.concat([refs["train"].load(), refs["validation"].load()], ignore_index=True)
        frames["train"] = annotate_frame(subsample(both, max_train, seed), language, cache_dir=cache_dir)
    diagnostics = refs["diagnostics"]
    if diagnostics and (diagnostics[0].name != DIAGNOSTIC_SETS.get(language) or diagnostics[0].path is not None):
        frames["test"] = diagnostics[0].load()
    return frames
