"""Training mixtures: a language's train set, its subset, extra English NLI data and controlled feature presence.

Every draw uses the sweep's ``data_seed``, never the run seed: the runs of a sweep see the same examples and
differ only in initialisation, dropout and data order — the study's design.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from diagnostics.core.schema import CLASS_LABELS as LABELS  # class index -> label: class 1 is entailment

from diagnostics.core.errors import UserInputError

from ._config import ConfigError, DataRef, SweepConfig


def subset(frame: pd.DataFrame, size: int | None, seed: int) -> pd.DataFrame:
    """Draw ``size`` rows without replacement with ``seed`` (all rows, in order, when ``size`` is None/too big).

    Parameters
    ----------
    frame : pandas.DataFrame
        The rows to draw from.
    size : int or None
        Number of rows wanted.
    seed : int
        Seed of ``numpy.random.default_rng``.

    Returns
    -------
    pandas.DataFrame
        The drawn rows in their original order, with a fresh index.
    """
    if size is None or size >= len(frame):
        return frame.reset_index(drop=True)
    rng = np.random.default_rng(seed)
    index = np.sort(rng.choice(len(frame), size=size, replace=False))
    return frame.iloc[index].reset_index(drop=True)


def with_presence(frame: pd.DataFrame, has_feature: np.ndarray, share: float, size: int | None,
                  seed: int) -> pd.DataFrame:
    """A subset in which a fraction ``share`` (in [0, 1]) of rows carries a feature.

    ``has_feature`` flags the rows of ``frame`` that carry it; ``seed`` seeds the draw. ``size`` ``None`` takes the
    largest subset the available rows allow at that share. The subset keeps the original order and gains a boolean
    ``has_feature`` column. ``UserInputError`` when the rows cannot reach ``size`` at ``share`` (too few with or
    without the feature).
    """
    has_feature = np.asarray(has_feature, dtype=bool)
    if len(has_feature) != len(frame):
        raise ValueError("has_feature must have one entry per row")
    with_idx, without_idx = np.flatnonzero(has_feature), np.flatnonzero(~has_feature)
    if size is None:
        limits = []
        if share > 0:
            limits.append(len(with_idx) / share)
        if share < 1:
            limits.append(len(without_idx) / (1 - share))
        size = int(np.floor(min(limits)))
    n_with = int(round(share * size))
    n_without = size - n_with
    if n_with > len(with_idx) or n_without > len(without_idx):
        raise UserInputError(f"cannot draw {size} examples with {share:.0%} carrying the feature: only "
                         f"{len(with_idx)} carry it and {len(without_idx)} do not; lower train_size or the share")
    rng = np.random.default_rng(seed)
    chosen = np.concatenate([rng.choice(with_idx, n_with, replace=False),
                             rng.choice(without_idx, n_without, replace=False)])
    out = frame.iloc[np.sort(chosen)].reset_index(drop=True)
    return out.assign(has_feature=has_feature[np.sort(chosen)])


_ANNOTATED: dict[tuple, pd.Series] = {}


def _annotate(frame: pd.DataFrame, language: str, feature: str, cache_dir: Path | None = None) -> pd.Series:
    """Whether each row shows ``feature`` (presence reading: either sentence shows it), as its ``auto_features``;
    memoised per process and cached in ``cache_dir`` (sweep workers in other processes reuse it). Only that feature
    is annotated: where its rule reads word forms alone, the tokenizer is all that runs."""
    key = (language, feature, tuple(frame["id"]), tuple(frame["premise"].str.len()))
    if key in _ANNOTATED:
        return _ANNOTATED[key]
    try:
        from diagnostics.annotate import annotate_cached
    except ImportError as err:
        raise ImportError("presence=(feature, share) needs the rule annotators (diagnostics.annotate), which could "
                          f"not be imported: {err}") from err
    annotated = annotate_cached(frame, language, cache_dir, presence=True, features=(feature,))
    _ANNOTATED[key] = annotated["auto_features"].reset_index(drop=True)
    return _ANNOTATED[key]


def labelled(ref: DataRef) -> pd.DataFrame:
    """Load the labelled rows of a referenced dataset (unlabelled test rows dropped).

    Parameters
    ----------
    ref : DataRef
        The dataset reference.

    Returns
    -------
    pandas.DataFrame
        The rows whose ``label`` is set, with a fresh index.
    """
    frame = ref.load()
    return frame[frame["label"].notna()].reset_index(drop=True)


def extra_ref(config: SweepConfig) -> DataRef | None:
    """Reference the sweep's extra English NLI data.

    Parameters
    ----------
    config : SweepConfig
        The sweep.

    Returns
    -------
    DataRef or None
        The extra data's reference (its ``path`` when set, else its ``split``); ``None`` without extra data or
        with ``extra_data.size`` <= 0.
    """
    extra = config.extra_data
    if extra is None or extra.size <= 0:
        return None
    return DataRef(extra.name, extra.split if extra.path is None else None, extra.path)


def _describe(ref: DataRef) -> str:
    if ref.path:
        return ref.path
    return f"{ref.name}:{ref.split}" if ref.split else ref.name


def _presence_subset(frame: pd.DataFrame, language: str, config: SweepConfig, size: int | None,
                     seed: int) -> pd.DataFrame:
    from diagnostics.core.taxonomy import canonical_fine

    feature = canonical_fine(config.presence.feature)
    features = _annotate(frame, language, feature, Path(config.output_dir) / ".cache" / "annotations")
    has = features.map(lambda feats: feature in set(feats or ())).to_numpy()
    return with_presence(frame, has, config.presence.share, size, seed)


def training_mixture(config: SweepConfig, language: str) -> pd.DataFrame:
    """Build the training table of one language: train (subset / presence-controlled) + extra English data.

    The rows come in ``config.mixture_order``: the train set's, then the extra data's, or one seeded shuffle of all.

    Parameters
    ----------
    config : SweepConfig
        The sweep (its data references, ``train_size``, ``data_seed``, ``extra_data``, ``presence`` and
        ``mixture_order``).
    language : str
        The language.

    Returns
    -------
    DataFrame
        ``id, premise, hypothesis, label, dataset`` (+ ``has_feature`` with presence), labels binary.

    Raises
    ------
    ConfigError
        When the train set has no labelled pairs, or a source holds fewer labelled pairs than asked
        (``train_size``, ``extra_data.size``), naming the key, the source, the size asked and the size found.
    UserInputError
        When a presence share cannot be drawn, or a label is not binary.
    """
    refs = config.language_data(language)
    train = labelled(refs["train"])
    if train.empty:
        raise ConfigError([(f"data.{language}.train", f"expected a labelled training set, found no labelled pairs "
                                                      f"in {_describe(refs['train'])} ({language})")], config._source)
    presence = config.presence
    if config.train_size is not None and config.train_size > len(train):
        raise ConfigError([("train_size", f"expected at most {len(train)} (the labelled pairs of "
                                          f"{_describe(refs['train'])} ({language})), found {config.train_size}")],
                          config._source)
    if presence is not None and presence.within == "train":
        train = _presence_subset(train, language, config, config.train_size, config.data_seed)
    else:
        train = subset(train, config.train_size, config.data_seed)
    parts = [train]
    ref = extra_ref(config)
    if ref is not None:
        extra = labelled(ref)
        size = config.extra_data.size
        if size > len(extra):
            raise ConfigError([("extra_data.size", f"expected at most {len(extra)} (the labelled pairs of "
                                                   f"{_describe(ref)}), found {size}")], config._source)
        if presence is not None and presence.within == "extra":
            extra = _presence_subset(extra, "en", config, size, config.data_seed + 1)
        else:
            extra = subset(extra, size, config.data_seed + 1)
        parts.append(extra)
    columns = ["id", "premise", "hypothesis", "label", "dataset"] + (["has_feature"] if presence else [])
    mixture = pd.concat([p.reindex(columns=columns) for p in parts], ignore_index=True)
    if config.mixture_order == "shuffled":  # one order for every run seed: a draw of the data, not of the run
        order = np.random.default_rng(config.data_seed + 2).permutation(len(mixture))
        mixture = mixture.iloc[order].reset_index(drop=True)
    if presence is not None:
        mixture["has_feature"] = mixture["has_feature"].astype("boolean")
    bad = set(mixture["label"]) - set(LABELS)
    if bad:
        raise UserInputError(f"training labels must be {', '.join(LABELS)}; found {sorted(map(str, bad))}")
    return mixture


def evaluation_sets(config: SweepConfig, language: str) -> dict[str, pd.DataFrame]:
    """Load the validation table and every diagnostic / extra evaluation table of ``language``.

    Keyed ``"validation"`` and by each diagnostic's and extra set's dataset name.
    """
    refs = config.language_data(language)
    sets = {"validation": refs["validation"].load()}
    for ref in refs["diagnostics"] + refs["extra_eval"]:
        sets[ref.key] = ref.load()
    return sets
