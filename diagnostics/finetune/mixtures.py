"""Training mixtures: a language's train set, its subset, extra English NLI data and controlled feature presence.

Every draw uses the sweep's ``data_seed``, never the run seed: the runs of a sweep see the same examples and
differ only in initialisation, dropout and data order — the study's design.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from diagnostics.schema import CLASS_LABELS as LABELS  # class index -> label: class 1 is entailment

from .config import DataRef, SweepConfig


def subset(frame: pd.DataFrame, size: int | None, seed: int) -> pd.DataFrame:
    """``size`` rows drawn without replacement with ``seed`` (all rows, in order, when ``size`` is None/too big)."""
    if size is None or size >= len(frame):
        return frame.reset_index(drop=True)
    rng = np.random.default_rng(seed)
    index = np.sort(rng.choice(len(frame), size=size, replace=False))
    return frame.iloc[index].reset_index(drop=True)


def with_presence(frame: pd.DataFrame, has_feature: np.ndarray, share: float, size: int | None,
                  seed: int) -> pd.DataFrame:
    """A subset in which a fraction ``share`` of rows carries a feature.

    Parameters
    ----------
    frame : DataFrame
        Candidate training examples.
    has_feature : array of bool
        Per row of ``frame``: does the example carry the feature?
    share : float
        Wanted fraction of rows with the feature, in [0, 1].
    size : int, optional
        Wanted subset size; ``None`` takes the largest subset the available rows allow at that share.
    seed : int
        Seed of the draw.

    Returns
    -------
    DataFrame
        The subset (original order kept) with a boolean ``has_feature`` column.

    Raises
    ------
    ValueError
        When the rows cannot reach ``size`` at ``share`` (too few with or without the feature).
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
        raise ValueError(f"cannot draw {size} examples with {share:.0%} carrying the feature: only "
                         f"{len(with_idx)} carry it and {len(without_idx)} do not; lower train_size or the share")
    rng = np.random.default_rng(seed)
    chosen = np.concatenate([rng.choice(with_idx, n_with, replace=False),
                             rng.choice(without_idx, n_without, replace=False)])
    out = frame.iloc[np.sort(chosen)].reset_index(drop=True)
    return out.assign(has_feature=has_feature[np.sort(chosen)])


_ANNOTATED: dict[tuple, pd.Series] = {}


def _annotate(frame: pd.DataFrame, language: str, cache_dir: Path | None = None) -> pd.Series:
    """``auto_features`` per row (presence reading: either sentence shows the feature), memoised per process and
    cached in ``cache_dir`` (sweep workers in other processes reuse it)."""
    key = (language, tuple(frame["id"]), tuple(frame["premise"].str.len()))
    if key in _ANNOTATED:
        return _ANNOTATED[key]
    try:
        from diagnostics.annotate.cache import annotate_cached
    except ImportError as err:
        raise ImportError("presence=(feature, share) needs the rule annotators (diagnostics.annotate), which could "
                          f"not be imported: {err}") from err
    annotated = annotate_cached(frame, language, cache_dir, presence=True)
    _ANNOTATED[key] = annotated["auto_features"].reset_index(drop=True)
    return _ANNOTATED[key]


def labelled(ref: DataRef) -> pd.DataFrame:
    """The labelled rows of a referenced dataset (unlabelled test rows dropped)."""
    frame = ref.load()
    return frame[frame["label"].notna()].reset_index(drop=True)


def extra_ref(config: SweepConfig) -> DataRef | None:
    """Reference of the sweep's extra English NLI data (``None`` without extra data)."""
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
    from diagnostics.taxonomy import canonical_fine

    feature = canonical_fine(config.presence.feature)
    features = _annotate(frame, language, Path(config.output_dir) / ".cache" / "annotations")
    has = features.map(lambda feats: feature in set(feats or ())).to_numpy()
    return with_presence(frame, has, config.presence.share, size, seed)


def training_mixture(config: SweepConfig, language: str) -> pd.DataFrame:
    """The training table of one language: train (subset / presence-controlled) + extra English data.

    Returns
    -------
    DataFrame
        ``id, premise, hypothesis, label, dataset`` (+ ``has_feature`` with presence), labels binary.

    Raises
    ------
    ValueError
        When a source holds fewer labelled pairs than asked (``train_size``, ``extra_data.size``), naming the
        source, the size asked and the size found.
    """
    refs = config.language_data(language)
    train = labelled(refs["train"])
    presence = config.presence
    if presence is not None and presence.within == "train":
        train = _presence_subset(train, language, config, config.train_size, config.data_seed)
    else:
        if config.train_size is not None and config.train_size > len(train):
            raise ValueError(f"train_size={config.train_size} but {_describe(refs['train'])} ({language}) has only "
                             f"{len(train)} labelled pairs")
        train = subset(train, config.train_size, config.data_seed)
    parts = [train]
    ref = extra_ref(config)
    if ref is not None:
        extra = labelled(ref)
        size = config.extra_data.size
        if size > len(extra):
            raise ValueError(f"extra_data.size={size} but {_describe(ref)} has only {len(extra)} labelled pairs")
        if presence is not None and presence.within == "extra":
            extra = _presence_subset(extra, "en", config, size, config.data_seed + 1)
        else:
            extra = subset(extra, size, config.data_seed + 1)
        parts.append(extra)
    columns = ["id", "premise", "hypothesis", "label", "dataset"] + (["has_feature"] if presence else [])
    mixture = pd.concat([p.reindex(columns=columns) for p in parts], ignore_index=True)
    if presence is not None:
        mixture["has_feature"] = mixture["has_feature"].astype("boolean")
    bad = set(mixture["label"]) - set(LABELS)
    if bad:
        raise ValueError(f"training labels must be {LABELS}; found {sorted(bad)}")
    return mixture


def evaluation_sets(config: SweepConfig, language: str) -> dict[str, pd.DataFrame]:
    """Validation table and every diagnostic / extra evaluation table of ``language`` (``{"validation": ...,
    "<dataset>": ...}``)."""
    refs = config.language_data(language)
    sets = {"validation": refs["validation"].load()}
    for ref in refs["diagnostics"] + refs["extra_eval"]:
        sets[ref.key] = ref.load()
    return sets
