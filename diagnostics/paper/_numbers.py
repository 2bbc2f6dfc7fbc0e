"""The numbers the reference study prints, as package data: ``paper_numbers.csv``, one row per printed number.

Each row names its section, figure or table, experiment, language, category and seed, the statistic it is and its
kind (:data:`NUMBER_KINDS`: a measured ``value``, a checkable ``claim``, or the study's ``design``, ``setting`` or
data ``count``); :func:`paper_numbers` reads them with the tolerance of each printed value.
"""

from __future__ import annotations

import io
from decimal import Decimal
from importlib import resources

import pandas as pd

PAPER_FILE = "paper_numbers.csv"
#: Columns of ``paper_numbers.csv``.
PAPER_COLUMNS = ["section", "source", "experiment", "reference", "language", "category", "seed", "statistic", "kind",
                 "value", "note"]
#: Kinds of the paper's numbers (see the module docstring).
NUMBER_KINDS = ("value", "claim", "design", "setting", "count")


def _half_unit(text: str) -> float:
    """Half a unit of the last printed digit: ``"0.42"`` -> 0.005, ``"10"`` -> 0.5."""
    exponent = Decimal(text).as_tuple().exponent
    return 0.5 * 10.0 ** min(int(exponent), 0)


def paper_numbers() -> pd.DataFrame:
    """Read every number the reference study prints, one row each (package data ``paper_numbers.csv``).

    Returns
    -------
    pandas.DataFrame
        The columns of :data:`PAPER_COLUMNS` plus ``tolerance`` (half a unit of the printed value's last digit).
        ``section`` is ``§4``, ``§5.1`` ... ``§5.4``, ``§5.4 probing`` or ``data``; ``experiment`` is a run store
        experiment (``base``: RTE / TERRa alone, ``extra-<n>``: plus n MNLI pairs, ``presence-<feature>-<share>``)
        or a pattern of them (``extra-*``, ``presence-negation-*``); ``reference`` the experiment a change is
        measured from; ``language`` a code or ``all`` (pooled or averaged over languages); ``category`` a
        canonical fine or coarse category or ``overall``; ``seed`` an integer or missing (seed mean or all seeds).
    """
    text = resources.files("diagnostics.paper").joinpath(PAPER_FILE).read_text(encoding="utf-8")
    frame = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    frame["tolerance"] = frame["value"].map(_half_unit)
    frame["value"] = frame["value"].astype(float)
    frame["seed"] = pd.to_numeric(frame["seed"].replace("", None)).astype("Int64")
    frame["reference"] = frame["reference"].map(lambda text: text or None).astype(object)
    return frame
