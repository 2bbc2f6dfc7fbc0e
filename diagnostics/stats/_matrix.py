"""One setting of the predictions table as an examples x runs matrix, and the one way to select a setting.

A setting is one (experiment, language, model, dataset); its runs are the seeds, or the (pretrain_seed, seed)
pairs of a nested design. :class:`SettingMatrix` holds its gold labels, predictions and probabilities as arrays;
:func:`setting_matrices` splits a whole table, :func:`select_setting` picks the one setting a selection names,
and :func:`setting_arrays` adds the diagnostic categories in the dataset's example order, as Multi-Bootstrap
takes them. Every refusal is a :class:`~diagnostics.core.errors.UserInputError` (an unknown column also a
``KeyError``) naming the selection and what was found.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from ..core.errors import UnknownNameError, UserInputError
from ..core.schema import ENTAILMENT
from ._categories import category_matrix, dataset_for, dataset_frame
from ._table import SETTING_KEYS, validate_predictions


@dataclass(frozen=True)
class SettingMatrix:
    """The predictions of one setting as examples x runs arrays.

    Parameters
    ----------
    setting : dict
        The setting's keys (``experiment, language, model, dataset``) and their values.
    runs : list
        The runs in column order, sorted: seeds (ints), or ``(pretrain_seed, seed)`` tuples in nested designs.
    ids : numpy.ndarray of str
        Example ids in row order (first appearance in the table; the dataset's order after
        :func:`setting_arrays`).
    gold : numpy.ndarray of int8
        1 = entailment, 0 = not_entailment, per example.
    pred : numpy.ndarray of int8, shape (n_examples, n_runs)
        1 = entailment, 0 = not_entailment, -1 where the run has no prediction for the example.
    probability : numpy.ndarray of float, shape (n_examples, n_runs), optional
        P(entailment); NaN where missing. None when the table has no ``probability`` column.
    categories : numpy.ndarray of bool, shape (n_examples, n_categories), optional
        Category membership of each example (:func:`setting_arrays`); None before categories are attached.
    category_names : list of str
        Names of the ``categories`` columns.
    """

    setting: dict
    runs: list
    ids: np.ndarray
    gold: np.ndarray
    pred: np.ndarray
    probability: np.ndarray | None = None
    categories: np.ndarray | None = None
    category_names: list = field(default_factory=list)

    @property
    def valid(self) -> np.ndarray:
        """Where a run has a prediction for an example.

        Returns
        -------
        numpy.ndarray of bool, shape (n_examples, n_runs)
        """
        return self.pred >= 0

    @property
    def nested(self) -> bool:
        """Whether the runs are (pretrain_seed, seed) pairs.

        Returns
        -------
        bool
        """
        return bool(self.runs) and isinstance(self.runs[0], tuple)

    @property
    def seeds(self) -> list:
        """The seeds along axis 1 of :attr:`predictions`: the pretraining seeds in a nested design.

        Returns
        -------
        list
        """
        return sorted({r[0] for r in self.runs}) if self.nested else list(self.runs)

    @property
    def inner_seeds(self) -> list:
        """The fine-tuning seeds along axis 2 of :attr:`predictions` in a nested design, else empty.

        Returns
        -------
        list
        """
        return sorted({r[1] for r in self.runs}) if self.nested else []

    @property
    def example_ids(self) -> np.ndarray:
        """The example ids (the same as :attr:`ids`).

        Returns
        -------
        numpy.ndarray of str
        """
        return self.ids

    @property
    def labels(self) -> np.ndarray:
        """The gold labels (the same as :attr:`gold`), 1 = entailment.

        Returns
        -------
        numpy.ndarray of int8
        """
        return self.gold

    @property
    def predictions(self) -> np.ndarray:
        """The predictions as :func:`~diagnostics.stats.multibootstrap` takes them.

        Returns
        -------
        numpy.ndarray of int8
            (n_examples, n_seeds), or (n_examples, n_pretrain_seeds, n_seeds) in a nested design.

        Raises
        ------
        UserInputError
            A run without a prediction for some example, or a nested design without every fine-tuning seed under
            every pretraining seed.
        """
        short = [run for run, complete in zip(self.runs, self.valid.all(axis=0)) if not complete]
        if short:
            raise UserInputError(f"setting {self.setting}: runs {short} lack predictions for some examples; "
                                 "Multi-Bootstrap needs every run on the same examples")
        if not self.nested:
            return self.pred
        outer, inner = self.seeds, self.inner_seeds
        if len(self.runs) != len(outer) * len(inner):
            raise UserInputError(f"setting {self.setting}: a nested design needs every fine-tuning seed {inner} "
                                 f"under every pretraining seed {outer}")
        return self.pred.reshape(len(self.ids), len(outer), len(inner))  # runs are sorted: outer-major


def _matrix(setting: dict, group: pd.DataFrame, nested: bool) -> SettingMatrix:
    if nested:
        run_of = list(zip(group["pretrain_seed"].astype(int), group["seed"].astype(int)))
    else:
        run_of = group["seed"].astype(int).tolist()
    runs = sorted(set(run_of))
    lookup = {r: j for j, r in enumerate(runs)}
    col = np.fromiter((lookup[r] for r in run_of), dtype=np.int64, count=len(run_of))
    ids = pd.unique(group["example_id"].astype(str).to_numpy())
    row = pd.Index(ids).get_indexer(group["example_id"].astype(str).to_numpy())
    gold_rows = (group["label"].to_numpy() == ENTAILMENT).astype(np.int8)
    gold = np.full(len(ids), -1, dtype=np.int8)
    gold[row] = gold_rows
    conflict = np.zeros(len(ids), dtype=bool)
    np.logical_or.at(conflict, row, gold_rows != gold[row])
    if conflict.any():
        raise UserInputError(f"setting {setting}: example(s) with different gold labels in different runs: "
                             f"{ids[conflict][:5].tolist()}")
    pred = np.full((len(ids), len(runs)), -1, dtype=np.int8)
    pred[row, col] = group["prediction"].to_numpy() == ENTAILMENT
    probability = None
    if "probability" in group.columns:
        probability = np.full((len(ids), len(runs)), np.nan)
        probability[row, col] = group["probability"].to_numpy(dtype=float)
    return SettingMatrix(setting, runs, ids, gold, pred, probability)


def _plain(value):
    return value.item() if isinstance(value, np.generic) else value


def setting_matrices(predictions: pd.DataFrame, *, validate: bool = True) -> list[SettingMatrix]:
    """Split a predictions table into one examples x runs matrix per setting.

    Parameters
    ----------
    predictions : pandas.DataFrame
        The predictions table (see :mod:`diagnostics.stats._table`).
    validate : bool
        Validate the table first (format only: ids are not checked against the dataset here).

    Returns
    -------
    list of SettingMatrix
        In order of first appearance of the settings; runs sorted.

    Raises
    ------
    UserInputError
        When one example has different gold labels in different runs of a setting.
    """
    if validate:
        predictions = validate_predictions(predictions, check_ids=False)
    keys = [k for k in SETTING_KEYS if k in predictions.columns]
    nested = "pretrain_seed" in predictions.columns
    out = []
    for values, group in predictions.groupby(keys, sort=False):
        values = values if isinstance(values, tuple) else (values,)
        out.append(_matrix(dict(zip(keys, map(_plain, values))), group, nested))
    return out


def select_rows(predictions: pd.DataFrame, selection: Mapping | None, what: str = "setting",
                hint: str = "") -> pd.DataFrame:
    """The rows of the one setting a selection names.

    Parameters
    ----------
    predictions : pandas.DataFrame
        A predictions table.
    selection : mapping, optional
        Column -> value (compared as text); empty or None for a table holding one setting.
    what : str
        How the selection is called in messages (``setting``, ``A`` ...).
    hint : str
        How to select, appended to a refusal of several settings (e.g. a command-line option).

    Returns
    -------
    pandas.DataFrame
        The selected rows.

    Raises
    ------
    UnknownNameError
        A column the table lacks (a ``UserInputError`` and a ``KeyError``).
    UserInputError
        No row, or rows of several settings (the message lists a few).
    """
    selection = dict(selection or {})
    what = f"{what} {selection}" if selection else what
    unknown = [k for k in selection if k not in predictions.columns]
    if unknown:
        raise UnknownNameError(f"{what}: no column {unknown[0]!r} "
                               f"(columns: {', '.join(map(str, predictions.columns))})")
    mask = np.ones(len(predictions), dtype=bool)
    for key, value in selection.items():
        mask &= (predictions[key].astype(str) == str(value)).to_numpy()
    rows = predictions[mask]
    if rows.empty:
        raise UserInputError(f"{what}: no row")
    found = rows[list(SETTING_KEYS)].drop_duplicates()
    if len(found) != 1:
        shown = "; ".join(", ".join(f"{k}={v}" for k, v in r.items()) for r in found.head(4).to_dict("records"))
        raise UserInputError(f"{what}: {len(found)} settings ({shown}{' ...' if len(found) > 4 else ''}); select "
                             f"exactly one{f' ({hint})' if hint else ''}")
    return rows


def select_setting(predictions: pd.DataFrame, selection: Mapping | None, what: str = "setting",
                   hint: str = "") -> SettingMatrix:
    """The one setting a selection names, as a :class:`SettingMatrix` (examples in table order).

    Parameters
    ----------
    predictions : pandas.DataFrame
        A validated predictions table.
    selection : mapping, optional
        Column -> value selecting exactly one (experiment, language, model, dataset).
    what : str
        How the selection is called in messages.
    hint : str
        How to select, as in :func:`select_rows`.

    Returns
    -------
    SettingMatrix

    Raises
    ------
    UserInputError
        As :func:`select_rows`, or examples with different gold labels in different runs.
    """
    rows = select_rows(predictions, selection, what, hint)
    setting = {k: _plain(rows[k].iat[0]) for k in SETTING_KEYS}
    return _matrix(setting, rows, "pretrain_seed" in rows.columns)


def setting_arrays(predictions: pd.DataFrame, setting: Mapping | None, dataset=None, by: str = "category", *,
                   what: str = "setting", hint: str = "") -> SettingMatrix:
    """Select one setting with its categories, examples in the dataset's order, as Multi-Bootstrap takes it.

    Parameters
    ----------
    predictions : pandas.DataFrame
        A validated predictions table.
    setting : mapping
        Column -> value selecting exactly one (experiment, language, model, dataset), e.g.
        ``{"experiment": "rte", "language": "en"}``.
    dataset : str, DataRef, DataFrame or mapping, optional
        Category source, or dataset name -> source (see :func:`~diagnostics.stats.dataset_for`;
        default: ``diagnostics.data.load`` of the setting's dataset).
    by : {"category", "coarse"}
        Fine or coarse categories.
    what : str
        How the selection is called in messages.
    hint : str
        How to select, as in :func:`select_rows`.

    Returns
    -------
    SettingMatrix
        With ``categories`` and ``category_names``; :attr:`SettingMatrix.predictions` is the complete array.

    Raises
    ------
    UserInputError
        No or several settings selected, runs that do not all cover the same examples, or an unbalanced nested
        design.
    """
    m = select_setting(predictions, setting, what, hint)
    frame = dataset_frame(dataset_for(dataset, m.setting["dataset"]))
    position = pd.Index(m.ids)
    order = position.get_indexer([i for i in pd.unique(frame["id"].astype(str)) if i in position])
    ids = m.ids[order]
    names, cats = category_matrix(frame, "fine" if by == "category" else "coarse", ids=ids)
    m = replace(m, ids=ids, gold=m.gold[order], pred=m.pred[order],
                probability=None if m.probability is None else m.probability[order],
                categories=cats, category_names=list(names))
    m.predictions  # noqa: B018 - refuse an incomplete setting here, as the callers expect
    return m


__all__ = ["SettingMatrix", "select_rows", "select_setting", "setting_arrays", "setting_matrices"]
