"""Two systems' prediction tables (or two settings of one table) side by side: :func:`build_comparison`.

Builds one :class:`~diagnostics.explorer.ExplorerModel` over both sides and returns the
:class:`~diagnostics.explorer.ComparisonModel` of its two settings (:mod:`diagnostics.explorer._compare`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from ..core.errors import UserInputError
from ..stats import SETTING_KEYS, select_rows
from ._compare import ComparisonModel
from ._model import build_explorer


def build_comparison(table_a: pd.DataFrame, table_b: pd.DataFrame | None = None,
                     dataset: str | pd.DataFrame | Mapping | None = None, *, select_a: Mapping | None = None,
                     select_b: Mapping | None = None, names: tuple[str, str] | None = None, level: str = "fine",
                     annotations: bool | Mapping = True, cache_dir: str | Path | None = None, validate: bool = True,
                     trust_labels: bool = False) -> ComparisonModel:
    """Put two systems side by side: one setting of ``table_a`` (A, the baseline) and one of ``table_b`` (B).

    The sides can be two prediction tables (two imported systems, :func:`diagnostics.predictions.import_predictions`)
    or two settings of one table (two experiments or models of one run store: pass one table and both selections).
    Both must be on the same diagnostic set. When A and B carry the same setting keys (two imported tables both
    ``experiment=imported, model=imported``), their ``model`` becomes the sides' names.

    Parameters
    ----------
    table_a : pandas.DataFrame
        Predictions table of A.
    table_b : pandas.DataFrame, optional
        Predictions table of B (default: ``table_a``, with another ``select_b``).
    dataset : str, DataFrame or mapping, optional
        Where texts and categories come from, as in :func:`build_explorer`.
    select_a, select_b : mapping, optional
        Column -> value picking each side's setting in a table of several (compared as text), as
        ``diagnostics compare --select-a`` does.
    names : tuple of str, optional
        How the sides are called (default: the setting values that differ, else ``A`` and ``B``).
    level : {"fine", "coarse"}
        Category level.
    annotations : bool or mapping
        As in :func:`build_explorer`.
    cache_dir : str or Path, optional
        Annotation cache folder.
    validate : bool
        Validate both sides against the dataset first.
    trust_labels : bool
        With ``validate``, keep gold labels that differ from the dataset's.

    Returns
    -------
    ComparisonModel
        The comparison; its ``explorer`` holds both settings (and the one-setting views of each).

    Raises
    ------
    UserInputError
        A selection that names no setting or several, sides on different datasets, a nested design on one side
        only, or shared examples with different gold labels.
    """
    one_table = table_b is None or table_b is table_a
    table_b = table_a if table_b is None else table_b
    rows_a = select_rows(table_a, select_a, "A", "select_a={column: value}")
    rows_b = select_rows(table_b, select_b, "B", "select_b={column: value}")
    if ("pretrain_seed" in rows_a.columns) != ("pretrain_seed" in rows_b.columns):
        raise UserInputError("A and B: one side has pretraining seeds and the other not; compare like designs")
    keys = [k for k in SETTING_KEYS if k in rows_a.columns and k in rows_b.columns]
    setting_a = {k: rows_a[k].iat[0] for k in keys}
    setting_b = {k: rows_b[k].iat[0] for k in keys}
    if str(setting_a.get("dataset")) != str(setting_b.get("dataset")):
        raise UserInputError(f"A is on {setting_a.get('dataset')} and B on {setting_b.get('dataset')}: compare two "
                             "systems on one diagnostic set")
    if names is not None and (len(names) != 2 or str(names[0]) == str(names[1])):
        raise UserInputError(f"names: expected two different names, found {names!r}")
    if all(str(setting_a[k]) == str(setting_b[k]) for k in keys):
        if one_table:
            named = ", ".join(f"{k}={v}" for k, v in setting_a.items())
            raise UserInputError(f"A and B name the same setting ({named}): choose two settings with select_a "
                                 "and select_b, or pass a second table")
        if names is None:
            names = ("A", "B")
        rows_a, rows_b = rows_a.assign(model=str(names[0])), rows_b.assign(model=str(names[1]))
        setting_a["model"], setting_b["model"] = str(names[0]), str(names[1])
    combined = pd.concat([rows_a, rows_b], ignore_index=True)
    explorer = build_explorer(combined, dataset, level=level, annotations=annotations, cache_dir=cache_dir,
                              validate=validate, trust_labels=trust_labels)
    a, b = explorer.find_setting(**setting_a), explorer.find_setting(**setting_b)
    try:
        return ComparisonModel(explorer, a, b, names)
    except ValueError as err:
        raise UserInputError(str(err)) from None
