"""Probing tasks: does a sentence pair show a diagnostic category (coarse, or fine on request)?

Labels come from a list column of category names: the rule annotator's ``auto_coarse`` / ``auto_features``
for training and for choosing the L2 strength (RTE-style data has no gold tags) and the gold ``coarse`` /
``features`` of the diagnostic set for evaluation (the study's protocol). Any frame with such a list column
works, so gold-labelled frames can be probed directly.

How the annotator labels a pair (:data:`PROBE_LABELS`):

* ``"presence"`` (default, the study's): a pair shows a coarse category when either sentence shows one of its
  features among the study's 15 annotation features (:data:`STUDY_FEATURES`: the twelve its §5.4 names and the
  three most frequent features the rules read off morphosyntactic tags);
* ``"differs"``: the rules' pair reading over every feature the rules detect (19): a feature counts where its
  evidence differs between the two sentences (``pair: differ`` / ``swap`` in ``annotators/<lang>.yaml``), the
  reading that matches the minimal pairs of the diagnostic sets.

:func:`feature_list_name` names the list behind a reading (:data:`STUDY_FEATURES_NAME` for the study's), as the
probe results record it in their ``feature_list`` column.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from diagnostics.core.taxonomy import COARSE, COARSE_OF, UnknownCategoryError, canonical_coarse, canonical_fine, slug

#: RTE-style data (train + validation to train probes, test to choose their L2 strength) and diagnostic set of
#: each language (see CONTRIBUTING.md).
TRAIN_SETS = {"en": "rte", "ru": "terra"}
DIAGNOSTIC_SETS = {"en": "axb", "ru": "lidirus", "sv": "swediagnostics"}
DEFAULT_TASKS = ("logic", "lexical_semantics", "predicate_argument_structure")
#: How the rule annotator labels a pair for the probes (see the module docstring).
PROBE_LABELS = ("presence", "differs")
#: The study's 15 annotation features (§5.4; its Table 7 prints them only as an image). Twelve are named in the text
#: of §5.4: quantifiers, negation morphemes (Morphological negation), factivity verbs and proper nouns (Named
#: entities) for Lexical Semantics; temporal indicators, negation and conditionals for Logic; pronouns
#: (Anaphora/Coreference) and syntactic tags "(e.g., Relative clauses, Datives)" for Predicate-Argument Structure;
#: Conjunction and Disjunction in the presence experiment. The other three are the features the rules read off
#: morphosyntactic tags (§5.4: "morphosyntactic and NER annotation") that are most frequent in RTE and TERRa under
#: this reading: Genitives/Partitives (case, possessives), Intervals/Numbers (numerals) and Active/Passive (voice).
#: Table of reasons: docs/annotation.md. Pass ``features=`` to use another list.
STUDY_FEATURES = ("Quantifiers", "Morphological negation", "Factivity", "Named entities",
                  "Temporal", "Negation", "Conditionals", "Conjunction", "Disjunction",
                  "Anaphora/Coreference", "Relative clauses", "Datives",
                  "Genitives/Partitives", "Intervals/Numbers", "Active/Passive")
#: The name of :data:`STUDY_FEATURES` in the ``feature_list`` column of probe results (with ``"differs"`` for the
#: rules' pair reading and ``"custom"`` for a list a caller passes).
STUDY_FEATURES_NAME = "study-text"
#: The ``feature_list`` value of the pair reading and of a caller's own feature list.
DIFFERS_FEATURE_LIST, CUSTOM_FEATURE_LIST = "differs", "custom"


def feature_list_name(labels: str, features=None) -> str:
    """Name the feature list that labels probing pairs (the ``feature_list`` column of probe results).

    Parameters
    ----------
    labels : {"presence", "differs"}
        The annotator's reading (see :func:`annotate_frame`).
    features : sequence of str, optional
        The features of ``"presence"`` (default :data:`STUDY_FEATURES`); aliases accepted.

    Returns
    -------
    str
        :data:`STUDY_FEATURES_NAME` for ``"presence"`` over the study's list (in any order or spelling),
        ``"differs"`` for the pair reading (which uses every feature the rules detect), ``"custom"`` for
        ``"presence"`` over another list.

    Raises
    ------
    ValueError
        For an unknown reading or feature name.
    """
    if labels not in PROBE_LABELS:
        raise ValueError(f"labels must be one of {', '.join(PROBE_LABELS)}, found {labels!r}")
    if labels == "differs":
        return DIFFERS_FEATURE_LIST
    if features is None:
        return STUDY_FEATURES_NAME
    try:
        chosen = {canonical_fine(str(f)) for f in features}
    except UnknownCategoryError as err:
        raise ValueError(f"unknown feature in the probing feature list: {err}") from None
    return STUDY_FEATURES_NAME if chosen == set(STUDY_FEATURES) else CUSTOM_FEATURE_LIST


@dataclass(frozen=True)
class ProbingTask:
    """One binary probing task.

    Parameters
    ----------
    name : str
        Slug used in tables and file names (``"logic"``, ``"negation"``).
    category : str
        Canonical taxonomy name (``"Logic"``, ``"Negation"``).
    level : {"coarse", "fine"}
        Taxonomy level of the category.
    """

    name: str
    category: str
    level: str

    def columns(self, gold: bool) -> str:
        """Name the list column holding this task's categories (gold or annotator output).

        Parameters
        ----------
        gold : bool
            The diagnostic set's gold tags (True) or the rule annotator's output (False).

        Returns
        -------
        str
            ``coarse`` / ``features`` (gold) or ``auto_coarse`` / ``auto_features`` (annotator), by level.
        """
        if self.level == "coarse":
            return "coarse" if gold else "auto_coarse"
        return "features" if gold else "auto_features"


def resolve_task(name: str) -> ProbingTask:
    """Turn a task name (slug or category name, coarse or fine) into a :class:`ProbingTask`.

    Parameters
    ----------
    name : str
        ``"logic"``, ``"Lexical Semantics"``, ``"predicate_argument_structure"``, ``"negation"``,
        ``"Active/Passive"`` ...

    Returns
    -------
    ProbingTask
        The task (coarse when the name is both a coarse slug and a fine category).

    Raises
    ------
    ValueError
        When the name is neither a coarse nor a fine category (with near-miss suggestions).
    """
    by_slug = {slug(c): c for c in COARSE}
    if slug(name) in by_slug:
        coarse = by_slug[slug(name)]
        return ProbingTask(slug(coarse), coarse, "coarse")
    try:
        coarse = canonical_coarse(name)
        return ProbingTask(slug(coarse), coarse, "coarse")
    except UnknownCategoryError:
        pass
    try:
        fine = canonical_fine(name)
    except UnknownCategoryError as err:
        raise ValueError(f"unknown probing task {name!r}: not a coarse or fine diagnostic category ({err})") from None
    return ProbingTask(slug(fine), fine, "fine")


def parse_tasks(tasks: str | list[str] | tuple[str, ...]) -> list[ProbingTask]:
    """Resolve a comma-separated string or a list of task names (duplicates dropped, order kept).

    Parameters
    ----------
    tasks : str or list of str or tuple of str
        ``"logic,negation"`` or ``["logic", "negation"]``.

    Returns
    -------
    list of ProbingTask
        The resolved tasks.

    Raises
    ------
    ValueError
        For an unknown name, or when no task is given.
    """
    names = [t.strip() for t in tasks.split(",")] if isinstance(tasks, str) else list(tasks)
    resolved = [resolve_task(n) for n in names if n]
    if not resolved:
        raise ValueError("no probing task given")
    return list(dict.fromkeys(resolved))


def task_labels(frame: pd.DataFrame, task: ProbingTask | str, column: str) -> np.ndarray:
    """1 where the pair's ``column`` list contains the task's category, else 0.

    Parameters
    ----------
    frame : pandas.DataFrame
        The pairs.
    task : ProbingTask or str
        The task, or a name :func:`resolve_task` accepts.
    column : str
        A column whose cells are lists (or arrays) of category names; missing cells count as empty.

    Returns
    -------
    numpy.ndarray
        int64, one entry per row.
    """
    task = resolve_task(task) if isinstance(task, str) else task
    if column not in frame.columns:
        raise KeyError(f"column {column!r} not in frame (found {', '.join(map(str, frame.columns))}); "
                       f"training frames need the annotator's output, see diagnostics.annotate.annotate")
    normalise = canonical_coarse if task.level == "coarse" else canonical_fine

    def has(cell) -> int:
        if cell is None or (isinstance(cell, float) and np.isnan(cell)):
            return 0
        if isinstance(cell, str):
            raise TypeError(f"column {column!r} must hold lists of category names, found a string {cell!r}")
        return int(any(normalise(str(c)) == task.category for c in cell))

    return np.fromiter((has(c) for c in frame[column]), dtype=np.int64, count=len(frame))


def subsample(frame: pd.DataFrame, n: int | None, seed: int) -> pd.DataFrame:
    """Draw at most ``n`` rows without replacement by ``seed`` (row order kept); all rows when ``n`` is None.

    Parameters
    ----------
    frame : pandas.DataFrame
    n : int or None
    seed : int
        Seed of ``numpy.random.default_rng``.

    Returns
    -------
    pandas.DataFrame
        The subset, with a fresh index.

    Raises
    ------
    ValueError
        When ``n`` < 1.
    """
    if n is None or n >= len(frame):
        return frame.reset_index(drop=True)
    if n < 1:
        raise ValueError(f"subset size must be >= 1, found {n}")
    rows = np.sort(np.random.default_rng(seed).choice(len(frame), size=n, replace=False))
    return frame.iloc[rows].reset_index(drop=True)


def annotated_training_frame(lang: str, *, max_train: int | None = None, seed: int = 0,
                             cache_dir: str | Path | None = None, progress: bool = False,
                             labels: str = "presence", features=None) -> pd.DataFrame:
    """The language's RTE-style train + validation, subsampled, with the annotator's ``auto_coarse`` /
    ``auto_features`` columns (cached in ``cache_dir`` by text hash and the rules file's sha256).

    Parameters
    ----------
    lang : str
        ``en`` (RTE) or ``ru`` (TERRa).
    max_train : int, optional
        Subset size (seeded); all pairs when None.
    seed : int
    cache_dir : str or Path, optional
    progress : bool
    labels : {"presence", "differs"}
        The annotator's reading (see :func:`annotate_frame`).
    features : sequence of str, optional
        Features kept with ``labels="presence"`` (default :data:`STUDY_FEATURES`).

    Returns
    -------
    pandas.DataFrame

    Raises
    ------
    ValueError
        When the language has no RTE-style training set.
    ImportError
        When the annotator stage (``diagnostics.annotate``) is not available.
    """
    return _annotated_splits(lang, ("train", "validation"), max_train, seed, cache_dir, progress, labels, features)


def annotated_selection_frame(lang: str, *, max_selection: int | None = None, seed: int = 0,
                              cache_dir: str | Path | None = None, progress: bool = False,
                              labels: str = "presence", features=None) -> pd.DataFrame:
    """The language's RTE-style *test* split (RTE ``test`` for en, TERRa ``test`` for ru) as
    :func:`annotated_training_frame` reads the training pairs: where the study chooses the probes' L2 strength.

    The split has no entailment labels, which the probes do not need: their labels come from the annotator.

    Parameters
    ----------
    lang : str
    max_selection : int, optional
    seed : int
    cache_dir : str or Path, optional
    progress : bool
    labels : {"presence", "differs"}
    features : sequence of str, optional

    Returns
    -------
    pandas.DataFrame

    Raises
    ------
    ValueError
        When the language has no bundled RTE-style test split.
    ImportError
        When the annotator stage (``diagnostics.annotate``) is not available.
    """
    return _annotated_splits(lang, ("test",), max_selection, seed, cache_dir, progress, labels, features)


def _annotated_splits(lang: str, splits: tuple[str, ...], max_pairs: int | None, seed: int,
                      cache_dir: str | Path | None, progress: bool, labels: str, features) -> pd.DataFrame:
    from diagnostics.data import load

    if lang not in TRAIN_SETS:
        raise ValueError(f"no RTE-style data set for language {lang!r} (have {', '.join(TRAIN_SETS)}); "
                         f"pass a frame with an annotated list column instead")
    frame = pd.concat([load(TRAIN_SETS[lang], split) for split in splits], ignore_index=True)
    return annotate_frame(subsample(frame, max_pairs, seed), lang, cache_dir=cache_dir, progress=progress,
                          labels=labels, features=features)


def annotate_frame(frame: pd.DataFrame, lang: str, *, cache_dir: str | Path | None = None,
                   progress: bool = False, labels: str = "presence", features=None) -> pd.DataFrame:
    """``frame`` with the rule annotator's ``auto_coarse`` / ``auto_features`` (cached by text hash and rules).

    Parameters
    ----------
    frame : pandas.DataFrame
        ``premise`` and ``hypothesis`` columns.
    lang : str
        Language of the rules (``en``, ``ru``, ``sv``, ``fr``, ``de``).
    cache_dir : str or Path, optional
    progress : bool
    labels : {"presence", "differs"}
        ``"presence"`` (the study's): a feature counts when either sentence shows it, and only ``features`` are
        kept (``auto_coarse`` then names the coarse categories of those). ``"differs"``: the rules' pair reading
        (a feature counts where its evidence differs between the sentences) over every feature they detect.
    features : sequence of str, optional
        Fine categories kept with ``"presence"``; default :data:`STUDY_FEATURES`. Ignored with ``"differs"``.

    Returns
    -------
    pandas.DataFrame

    Raises
    ------
    ValueError
        For an unknown ``labels`` reading or feature name.
    ImportError
        When the annotator stage (``diagnostics.annotate``) is not available.
    """
    if labels not in PROBE_LABELS:
        raise ValueError(f"labels must be one of {', '.join(PROBE_LABELS)}, found {labels!r}")
    try:
        from diagnostics.annotate import annotate_cached
    except ImportError as err:
        raise ImportError(f"probing labels come from the rule annotator, which could not be imported ({err})") from err
    if labels == "differs":
        return annotate_cached(frame, lang, cache_dir, progress=progress)
    return restrict_features(annotate_cached(frame, lang, cache_dir, presence=True, progress=progress),
                             STUDY_FEATURES if features is None else features)


def restrict_features(frame: pd.DataFrame, features) -> pd.DataFrame:
    """Keep only ``features`` in an annotated frame's ``auto_features`` and recompute ``auto_coarse`` from them.

    Parameters
    ----------
    frame : pandas.DataFrame
        With ``auto_features`` (lists of fine category names), as the annotator writes it.
    features : sequence of str
        Fine category names (aliases accepted).

    Returns
    -------
    pandas.DataFrame
        A copy; ``auto_coarse`` lists the coarse categories of the kept features, in taxonomy order.

    Raises
    ------
    ValueError
        For a name that is not a fine category.
    """
    try:
        keep = {canonical_fine(f) for f in features}
    except UnknownCategoryError as err:
        raise ValueError(f"unknown feature in the probing feature list: {err}") from None
    kept = [[f for f in found if f in keep] for found in frame["auto_features"]]
    coarse = [[c for c in COARSE if any(COARSE_OF[f] == c for f in found)] for found in kept]
    return frame.assign(auto_features=kept, auto_coarse=coarse)


def feature_groups(distribution: pd.DataFrame, features=STUDY_FEATURES) -> pd.DataFrame:
    """A feature table (e.g. the Table 7 distribution) with the study's features first and the others apart.

    Parameters
    ----------
    distribution : pandas.DataFrame
        Indexed by fine category name (:func:`diagnostics.annotate.feature_distribution`).
    features : sequence of str
        The study's features (default :data:`STUDY_FEATURES`).

    Returns
    -------
    pandas.DataFrame
        The same rows under a first index level ``features``: ``"study (15)"`` for the study's, in their table
        order, then ``"extra"`` for the rest; ``attrs`` kept.
    """
    study = [f for f in distribution.index if f in set(features)]
    extra = [f for f in distribution.index if f not in set(features)]
    table = pd.concat({f"study ({len(study)})": distribution.loc[study], "extra": distribution.loc[extra]},
                      names=["features"])
    table.attrs = dict(distribution.attrs)
    return table


def diagnostic_frame(lang: str, *, max_test: int | None = None, seed: int = 0) -> pd.DataFrame:
    """Load the language's diagnostic set with gold ``coarse`` / ``features``, optionally subsampled (seeded).

    Parameters
    ----------
    lang : str
        ``en``, ``ru`` or ``sv`` (see :data:`DIAGNOSTIC_SETS`).
    max_test : int, optional
        Subset size (all pairs when None).
    seed : int
        Seed of the subset.

    Returns
    -------
    pandas.DataFrame
        The diagnostic set as :func:`diagnostics.data.load` returns it.

    Raises
    ------
    ValueError
        For a language without a bundled diagnostic set.
    """
    from diagnostics.data import load

    if lang not in DIAGNOSTIC_SETS:
        raise ValueError(f"no bundled diagnostic set for language {lang!r} (have {', '.join(DIAGNOSTIC_SETS)}); "
                         f"pass a frame loaded with diagnostics.data.load('diagnostic_format', path=...)")
    return subsample(load(DIAGNOSTIC_SETS[lang]), max_test, seed)
