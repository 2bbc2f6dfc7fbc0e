"""Slices by feature of any predictions table: the sets annotated once (cached), then scored per feature."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pandas as pd

#: ``source`` of a slice: the rule annotator's features, or a diagnostic set's own (gold) categories.
SOURCES = ("annotator", "gold")


def default_cache() -> Path:
    """The annotations' cache: ``annotations/`` under the toolkit's cache root (:func:`diagnostics.models.cache_root`).

    Returns
    -------
    Path
        The folder (it may not exist yet).
    """
    from diagnostics.models import cache_root

    return cache_root() / "annotations"


def one_split(frame: pd.DataFrame, ids: set[str], name: str, split: str | None = None) -> pd.DataFrame:
    """The rows of a loaded set that a table's examples are: one split where ids repeat across splits.

    A table names a set (``rte``), not its split, and RTE-style sets number each split from 0. The split is
    ``split`` when given, else ``validation`` when it holds every id of the table, else the first labelled split
    that does.

    Parameters
    ----------
    frame : pandas.DataFrame
        The set as loaded (``id``, and ``split`` for several splits).
    ids : set of str
        The table's example ids of this set.
    name : str
        The set's name, for messages.
    split : str, optional
        The split to take.

    Returns
    -------
    pandas.DataFrame
        Rows with unique ids.

    Raises
    ------
    UserInputError
        An unknown split, or no split holding every id.
    """
    from diagnostics.core.errors import UserInputError

    frame = frame.assign(id=frame["id"].astype(str))
    if "split" not in frame.columns or (split is None and frame["id"].is_unique):
        return frame
    present = [str(s) for s in pd.unique(frame["split"])]
    if split is not None:
        if split not in present:
            raise UserInputError(f"--split {name}={split}: {name} has the splits {', '.join(present)}")
        return frame[frame["split"] == split]
    labelled = [s for s in present if frame.loc[frame["split"] == s, "label"].notna().all()]
    ordered = (["validation"] if "validation" in labelled else []) + [s for s in labelled if s != "validation"]
    for candidate in ordered:
        part = frame[frame["split"] == candidate]
        if ids <= set(part["id"]):
            return part
    raise UserInputError(f"{name}: no labelled split holds every example id of the table (splits "
                         f"{', '.join(present)}); name it with --split {name}=SPLIT")


def _cache(cache_dir: str | Path | None | bool) -> Path | None:
    """The annotations' cache folder: ``True`` -> :func:`default_cache`, ``False`` / ``None`` -> none."""
    if cache_dir is True:
        return default_cache()
    return None if cache_dir is False or cache_dir is None else Path(cache_dir)


def _frames(predictions: pd.DataFrame, datasets: Mapping | None,
            splits: Mapping[str, str] | None) -> dict[str, pd.DataFrame]:
    """Every set the table names, loaded, in the split its examples come from (:func:`one_split`)."""
    from diagnostics.stats import dataset_for, dataset_frame

    frames = {}
    for name in (str(n) for n in pd.unique(predictions["dataset"].astype(str))):
        ids = set(predictions.loc[predictions["dataset"].astype(str) == name, "example_id"].astype(str))
        frames[name] = one_split(dataset_frame(dataset_for(datasets, name)), ids, name, (splits or {}).get(name))
    return frames


def feature_categories(predictions: pd.DataFrame, datasets: Mapping | None = None, *,
                       cache_dir: str | Path | None | bool = True, language: str | None = None,
                       splits: Mapping[str, str] | None = None, replace: bool = False,
                       progress: bool = False) -> dict[str, pd.DataFrame]:
    """The sets of a table with the annotator's features as their categories, for the category statistics.

    Pass the result as ``dataset=`` to :func:`diagnostics.stats.category_scores`, :func:`diagnostics.stats.stability`
    inputs, :func:`diagnostics.explorer.build_explorer` or ``stats.write_report``: an NLI set without diagnostic
    categories (RTE, TERRa, a translation) is then scored, and its flips explored, per annotator feature as a
    diagnostic set is per category.

    Parameters
    ----------
    predictions : pandas.DataFrame
        A predictions table.
    datasets : mapping, optional
        Dataset name -> its source, for sets that are not bundled (see :func:`slice_by_feature`).
    cache_dir : str, Path, None or bool
        The annotations' cache (see :func:`slice_by_feature`).
    language : str, optional
        The language of every set (default: each set's own).
    splits : mapping of str to str, optional
        The split of sets whose ids repeat across splits (see :func:`one_split`).
    replace : bool
        Also replace a diagnostic set's own (gold) categories by the annotator's.
    progress : bool
        Show a progress bar while annotating.

    Returns
    -------
    dict of str to pandas.DataFrame
        Dataset name -> its rows, ``features`` holding the annotator's features (gold categories kept for
        diagnostic sets unless ``replace``).
    """
    from diagnostics.annotate import annotate_sets

    frames = _frames(predictions, datasets, splits)
    todo = {name: frame for name, frame in frames.items() if replace or "features" not in frame.columns}
    annotations = annotate_sets(todo, _cache(cache_dir), language=language, progress=progress)
    return {name: frame.assign(features=annotations[name]["auto_features"].to_numpy()) if name in annotations
            else frame for name, frame in frames.items()}


def slice_by_feature(predictions: pd.DataFrame, datasets: Mapping | None = None, *,
                     cache_dir: str | Path | None | bool = True, language: str | None = None,
                     splits: Mapping[str, str] | None = None, gold: bool = True, progress: bool = False):
    """Feature slices of a predictions table: per setting and feature, the seeds' MCC / accuracy with and without it.

    Every set the table names is loaded (a bundled set, or a user file from ``datasets``), its pairs annotated by
    the rule annotator of its language (:func:`diagnostics.annotate.annotate_sets`, cached: each pair once), and
    the table sliced by those features (:func:`diagnostics.stats.feature_slices`). A diagnostic set's own
    categories are sliced beside them (``source`` ``gold``).

    Parameters
    ----------
    predictions : pandas.DataFrame
        A validated predictions table with gold labels.
    datasets : mapping, optional
        Dataset name -> its source (a ``DataRef`` carrying a user file, or a table) for sets that are not bundled.
    cache_dir : str, Path, None or bool
        The annotations' cache; ``True``: :func:`default_cache`; ``None`` or ``False``: not cached.
    language : str, optional
        The language of every set (default: each set's own).
    splits : mapping of str to str, optional
        Dataset name -> the split the table's examples come from, for sets whose ids repeat across splits (RTE,
        TERRa); default: see :func:`one_split`.
    gold : bool
        Also slice diagnostic sets by their own categories.
    progress : bool
        Show a progress bar while annotating.

    Returns
    -------
    FeatureSlices
        Its ``table``, ``per_seed`` and ``flips`` carry a ``source`` column (``annotator`` or ``gold``).
    """
    from diagnostics.annotate import annotate_sets
    from diagnostics.stats import FeatureSlices, feature_slices

    frames = _frames(predictions, datasets, splits)
    annotations = annotate_sets(frames, _cache(cache_dir), language=language, progress=progress)
    parts = [(SOURCES[0], feature_slices(predictions, annotations, validate=False))]
    own = {name: pd.DataFrame({"id": frame["id"].astype(str).to_numpy(), "features": frame["features"].to_numpy()})
           for name, frame in frames.items() if "features" in frame.columns}
    if gold and own:
        rows = predictions[predictions["dataset"].astype(str).isin(own)]
        parts.append((SOURCES[1], feature_slices(rows, own, column="features", validate=False)))

    def joined(field: str) -> pd.DataFrame:
        frames = [getattr(part, field).assign(source=source) for source, part in parts
                  if not getattr(part, field).empty]
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()

    return FeatureSlices(joined("table"), joined("per_seed"), joined("flips"))
