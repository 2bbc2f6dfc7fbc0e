"""How every view of the instability explorer names and shows a value: seed labels, MCC colours and legend, rounding.

The notebook widget, the static tables, the figure and the report's ``explorer.html`` all go through these, so the
same number shows the same digits and colour everywhere.
"""

from __future__ import annotations

import numpy as np

#: Examples listed at first (and added by each "show more") in the widget and on the report's page.
ROW_LIMIT = 25
#: Outcomes of an example when two systems are compared (A's seeds against B's), in listing order (the interesting
#: ones first), with the words every view shows (:mod:`diagnostics.explorer._compare` defines them).
OUTCOMES = {"fixed": "fixed by B", "broken": "broken by B", "unstable": "unstable in either",
            "wrong_both": "stable-wrong in both", "correct_both": "stable-correct in both"}
#: Filters of the two-system listing: an outcome, or the side whose seeds flip (``flips_a``: A's seeds disagree).
OUTCOME_FILTERS = {"fixed": "fixed by B", "broken": "broken by B", "unstable": "unstable in either",
                   "flips_a": "unstable in A", "flips_b": "unstable in B", "correct_both": "stable-correct in both",
                   "wrong_both": "stable-wrong in both"}


def run_label(run) -> str:
    """Name one seed of a setting: ``"3"``, or ``"1/3"`` for (pretrain_seed, seed) in nested designs.

    Parameters
    ----------
    run : int or tuple of int
        A seed, or a (pretrain_seed, seed) pair.

    Returns
    -------
    str
        The label used in column names (``prediction_<label>``) and headers.
    """
    return "/".join(str(int(x)) for x in run) if isinstance(run, tuple) else str(int(run))


def mcc_color(value: float | None) -> str:
    """Map an MCC in [-1, 1] to a diverging colour (blue below 0, white at 0, red above; grey when missing).

    Parameters
    ----------
    value : float or None

    Returns
    -------
    str
        A ``#rrggbb`` colour (the same scale as the report page's).
    """
    if value is None or not np.isfinite(value):
        return "#dddddd"
    v = float(np.clip(value, -1.0, 1.0))
    low, mid, high = np.array([33, 102, 172]), np.array([247, 247, 247]), np.array([178, 24, 43])
    rgb = mid + (high - mid) * v if v >= 0 else mid + (low - mid) * (-v)
    return "#" + "".join(f"{int(round(c)):02x}" for c in rgb)


def legend_html() -> str:
    """The heat map's colour legend: MCC from -1 (blue) through 0 (white) to +1 (red), blank when undefined.

    Returns
    -------
    str
        An HTML fragment (the widget, the static tables and the report's ``explorer.html`` show the same).
    """
    stops = ", ".join(f"{mcc_color(v)} {round((v + 1) * 50)}%" for v in (-1.0, -0.5, 0.0, 0.5, 1.0))
    return ("<div class='dx-legend' style='display:flex;align-items:center;gap:.4em;font-size:12px;"
            "margin:.3em 0'><span>per-seed MCC:</span><span>−1</span><span style='display:inline-block;"
            f"width:12em;height:.8em;border:1px solid #bbb;background:linear-gradient(to right, {stops})'></span>"
            "<span>+1</span><span style='color:#666'>(white: 0; blank: undefined, e.g. one class predicted)"
            "</span></div>")


def display_round(value, digits: int):
    """Round once, the way every view of the explorer shows a number (``f"{value:.{digits}f}"``).

    Parameters
    ----------
    value : float
        The number.
    digits : int
        Decimals shown.

    Returns
    -------
    float or None
        Python's correctly rounded ``round(value, digits)``; None for NaN or a missing value. The report's page
        stores these values and prints them with as many decimals, so it shows the notebook's digits.
    """
    try:
        value = float(value)
    except (TypeError, ValueError):
        return None
    return round(value, digits) if np.isfinite(value) else None


def two_decimals(value: float) -> str:
    """Write a per-seed MCC as the heat maps show it: ``0.12``, blank for NaN, never ``-0.00``.

    Parameters
    ----------
    value : float

    Returns
    -------
    str
        The label of a heat-map cell.
    """
    if not np.isfinite(value):
        return ""
    text = f"{value:.2f}"
    return text[1:] if text == "-0.00" else text
