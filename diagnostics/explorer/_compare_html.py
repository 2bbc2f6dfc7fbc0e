"""Two systems side by side as HTML: strips of per-seed MCC per category, and the listing of who flips where.

The notebook widget (:mod:`diagnostics.explorer._compare_widget`) draws its strips and listing with these; where no
widget front end runs, :func:`static_html` is the comparison. The report's ``explorer.html`` draws the same strips
and listing in the page's JavaScript (:mod:`diagnostics.report._explorer`), with the same classes and ``data-*``
attributes. Every text from the data is escaped.
"""

from __future__ import annotations

import html

import numpy as np

from ..core.schema import ENTAILMENT
from ._format import OUTCOME_FILTERS, OUTCOMES, two_decimals
from ._html import TABLE_STYLE

#: Colours of the sides' points in the strips and their headers (A, B).
SIDE_COLOURS = ("#5e3c99", "#e66101")
#: Width and height of one strip (pixels).
STRIP_SIZE = (200, 30)
_PAD = 5

#: Extra styles of the comparison's tables.
STYLE = ("<style>.dx-compare td.pred.ok{background:#d9f0d3}.dx-compare td.pred.bad{background:#f6d0d0}"
         ".dx-compare td.pred.X{background:#eee}.dx-compare td.pred{white-space:nowrap;text-align:center}"
         ".dx-compare th.a,.dx-compare td.a-first{border-left:2px solid " + SIDE_COLOURS[0] + "}"
         ".dx-compare th.b,.dx-compare td.b-first{border-left:2px solid " + SIDE_COLOURS[1] + "}"
         ".dx-compare td.num{text-align:right}.dx-compare svg.dx-strip{display:block}</style>")


def strip_x(value: float) -> float:
    """The x of an MCC on a strip (-1 at the left margin, +1 at the right), to 0.1 pixel as the page places it."""
    width = STRIP_SIZE[0]
    return round(_PAD + (float(np.clip(value, -1, 1)) + 1) / 2 * (width - 2 * _PAD), 1)


def strip_svg(values_a, values_b, labels_a, labels_b, mean_a=None, mean_b=None) -> str:
    """Draw both sides' per-seed MCC of one category as two rows of points on one axis from -1 to +1.

    Parameters
    ----------
    values_a, values_b : sequence of float
        Per-seed MCC of A and of B (NaN or None where undefined: not drawn).
    labels_a, labels_b : sequence of str
        The seed labels, in the same order.
    mean_a, mean_b : float, optional
        The means, drawn as a short bar per side.

    Returns
    -------
    str
        An inline ``<svg class='dx-strip'>``; each point is a ``circle.pt.a`` / ``circle.pt.b`` with ``data-seed``
        and ``data-mcc`` (the value as shown, 2 decimals) and a tooltip.
    """
    width, height = STRIP_SIZE
    parts = [f"<svg class='dx-strip' width='{width}' height='{height}' viewBox='0 0 {width} {height}' role='img'>"]
    for v, colour in ((-1, "#ddd"), (0, "#999"), (1, "#ddd")):
        x = strip_x(v)
        parts.append(f"<line x1='{x}' x2='{x}' y1='1' y2='{height - 1}' stroke='{colour}' stroke-width='1'/>")
    for side, values, labels, mean, y, colour in (("a", values_a, labels_a, mean_a, 9, SIDE_COLOURS[0]),
                                                 ("b", values_b, labels_b, mean_b, 21, SIDE_COLOURS[1])):
        if mean is not None and np.isfinite(mean):
            x = strip_x(mean)
            parts.append(f"<line class='mean {side}' x1='{x}' x2='{x}' y1='{y - 7}' y2='{y + 7}' "
                         f"stroke='{colour}' stroke-width='2'/>")
        for j, (value, label) in enumerate(zip(values, labels)):
            if value is None or not np.isfinite(value):
                continue
            shown = two_decimals(value)
            parts.append(f"<circle class='pt {side}' cx='{strip_x(value)}' cy='{y + (j % 3 - 1) * 2}' r='3.5' "
                         f"fill='{colour}' fill-opacity='0.7' data-seed='{html.escape(label)}' data-mcc='{shown}'>"
                         f"<title>{side.upper()} seed {html.escape(label)}: {shown}</title></circle>")
    parts.append("</svg>")
    return "".join(parts)


def shown_number(value, digits: int = 3, sign: bool = False) -> str:
    """Write a number as every view of the comparison does: ``0.123``, ``+0.050`` with ``sign``, ``–`` when missing."""
    if value is None or not np.isfinite(value):
        return "–"
    text = f"{value:+.{digits}f}" if sign else f"{value:.{digits}f}"
    return text[1:] if text.lstrip("+-").strip("0.") == "" and text[0] in "+-" else text


def legend_html(pair) -> str:
    """HTML naming the sides with their colours, the number of shared examples and the outcome counts of all."""
    counts = pair.counts()
    sides = " · ".join(
        f"<span style='color:{colour};font-weight:600'>●</span> {html.escape(pair.side_label(side))}, "
        f"{len(labels)} seed{'s' if len(labels) != 1 else ''}"
        for side, colour, labels in (("A", SIDE_COLOURS[0], pair.labels_a), ("B", SIDE_COLOURS[1], pair.labels_b)))
    total = len(pair.outcomes())
    line = ", ".join(f"{words} {counts[key]}" for key, words in OUTCOMES.items())
    note = (f"; {pair.only_one_side} examples predicted by one side only are left out" if pair.only_one_side
            else "")
    return (f"<div class='dx-compare-legend' style='font-size:12px;margin:.3em 0'>{sides}<br>{total} shared "
            f"examples: {line}{note}. Points: per-seed MCC (−1 to +1, grey line at 0); bars: the means.</div>")


def categories_html(pair) -> str:
    """An HTML table of every category (rows ``tr.dx-cmp-row[data-category]``): both sides' strips, means and σ,
    the difference and the outcome counts."""
    table = pair.category_table()
    mcc = pair.seed_mcc()
    head = ("<tr><th>category</th><th>n</th><th>per-seed MCC (A above, B below)</th><th class='a'>A mean ± σ</th>"
            "<th class='b'>B mean ± σ</th><th>Δ mean</th>"
            + "".join(f"<th>{html.escape(words)}</th>" for words in OUTCOMES.values()) + "</tr>")
    rows = []
    for category, row in table.iterrows():
        mine = mcc[mcc["category"] == category]
        a, b = mine[mine["side"] == "A"], mine[mine["side"] == "B"]
        strip = strip_svg(a["mcc"].to_numpy(), b["mcc"].to_numpy(), list(a["seed"]), list(b["seed"]),
                          row["mean_a"], row["mean_b"])
        rows.append(
            f"<tr class='dx-cmp-row' data-category='{html.escape(category)}'><th style='text-align:left'>"
            f"{html.escape(category)}</th><td class='num'>{int(row['n'])}</td><td>{strip}</td>"
            f"<td class='num a-first'>{shown_number(row['mean_a'])} ± {shown_number(row['sigma_a'])}</td>"
            f"<td class='num b-first'>{shown_number(row['mean_b'])} ± {shown_number(row['sigma_b'])}</td>"
            f"<td class='num'>{shown_number(row['delta'], sign=True)}</td>"
            + "".join(f"<td class='num' data-outcome='{key}'>{int(row[key])}</td>" for key in OUTCOMES) + "</tr>")
    return (f"{TABLE_STYLE}{STYLE}<div class='dx-explorer dx-compare'><table><thead>{head}</thead>"
            f"<tbody>{''.join(rows)}</tbody></table></div>")


def summary_line(pair, category: str) -> str:
    """One line of text on a category: shared examples, mean ± σ of A and B, their difference, outcome counts."""
    row = pair.category_table().loc[category]
    counts = ", ".join(f"{words} {int(row[key])}" for key, words in OUTCOMES.items())
    return (f"n = {int(row['n'])}; A {shown_number(row['mean_a'])} ± {shown_number(row['sigma_a'])}, B "
            f"{shown_number(row['mean_b'])} ± {shown_number(row['sigma_b'])}, "
            f"Δ {shown_number(row['delta'], sign=True)}; {counts}")


def _cells(r: dict, side: str, labels: list[str]) -> str:
    cells = []
    for j, label in enumerate(labels):
        pred = r.get(f"prediction_{side}_{label}")
        prob = r.get(f"probability_{side}_{label}")
        text = "–" if pred is None else ("E" if pred == ENTAILMENT else "N")
        if prob is not None and np.isfinite(prob):
            text += f" {prob:.3f}"
        ok = "X" if pred is None else ("ok" if pred == r["label"] else "bad")
        code = "" if pred is None else ("1" if pred == ENTAILMENT else "0")
        first = f" {side}-first" if j == 0 else ""
        cells.append(f"<td class='pred {ok}{first}' data-side='{side}' data-seed='{html.escape(label)}' "
                     f"data-pred='{code}'>{text}</td>")
    return "".join(cells)


def examples_html(pair, category: str | None, outcome: str | None, limit: int | None = None) -> str:
    """Render a category's examples with A's seeds beside B's (right green, wrong red) and each one's outcome.

    Parameters
    ----------
    pair : ComparisonModel
    category : str or None
        Category (default: the selection).
    outcome : str or None
        Filter (a key of :data:`~diagnostics.explorer.OUTCOME_FILTERS`; None for all).
    limit : int, optional
        Show at most this many rows (a line counts the rest).

    Returns
    -------
    str
        An HTML fragment: ``div.dx-cmp-listing[data-category][data-total]`` holding ``tr[data-id][data-outcome]``.
    """
    category = pair.selection if category is None else category
    if category is None:
        return "<p><i>Choose a category to list its examples, A's seeds beside B's.</i></p>"
    frame = pair.examples(category, outcome)
    shown = frame if limit is None else frame.head(limit)
    head = ("<tr><th>id</th><th>premise</th><th>hypothesis</th><th>gold</th>"
            + "".join(f"<th class='{'a' if j == 0 else ''}'>A seed {html.escape(lab)}</th>"
                      for j, lab in enumerate(pair.labels_a))
            + "".join(f"<th class='{'b' if j == 0 else ''}'>B seed {html.escape(lab)}</th>"
                      for j, lab in enumerate(pair.labels_b))
            + "<th>A right</th><th>B right</th><th>outcome</th><th>features (gold)</th>"
              "<th>features (annotator)</th></tr>")
    body = []
    for r in shown.itertuples(index=False):
        r = r._asdict()
        auto = r["auto_features"]
        words = OUTCOMES[r["outcome"]] + (f" (flips in {r['flips']})" if r["flips"] else "")
        body.append(
            f"<tr data-id='{html.escape(str(r['example_id']))}' data-outcome='{r['outcome']}'>"
            f"<td>{html.escape(str(r['example_id']))}</td>"
            f"<td style='text-align:left;min-width:14em'>{html.escape(r['premise'])}</td>"
            f"<td style='text-align:left;min-width:14em'>{html.escape(r['hypothesis'])}</td>"
            f"<td>{'E' if r['label'] == ENTAILMENT else 'N'}</td>{_cells(r, 'a', pair.labels_a)}"
            f"{_cells(r, 'b', pair.labels_b)}<td>{r['correct_a']}/{r['n_a']}</td><td>{r['correct_b']}/{r['n_b']}</td>"
            f"<td>{html.escape(words)}</td><td style='text-align:left'>{html.escape(', '.join(r['features']))}</td>"
            f"<td style='text-align:left'>{html.escape(', '.join(auto)) if auto is not None else '–'}</td></tr>")
    more = f"<p>… and {len(frame) - len(shown)} more</p>" if len(shown) < len(frame) else ""
    which = "" if outcome is None else f" · {OUTCOME_FILTERS[outcome]}"
    title = (f"<b>{html.escape(category)}</b> · {html.escape(pair.names[0])} (A) vs {html.escape(pair.names[1])} "
             f"(B){html.escape(which)}<br><small>{html.escape(summary_line(pair, category))}</small>")
    attributes = (f"class='dx-explorer dx-compare dx-cmp-listing' data-category='{html.escape(category)}' "
                  f"data-outcome='{outcome or ''}' data-total='{len(frame)}' data-shown='{len(shown)}'")
    if not len(frame):
        return f"{TABLE_STYLE}{STYLE}<div {attributes}><p>{title}</p><p><i>No examples.</i></p></div>"
    return (f"{TABLE_STYLE}{STYLE}<div {attributes}><p>{title}</p><table><thead>{head}</thead>"
            f"<tbody>{''.join(body)}</tbody></table>{more}</div>")


def example_html(pair, example_id: str) -> str:
    """Render one example of the comparison: texts, gold label, outcome, features, and a row per side of seeds.

    Parameters
    ----------
    pair : ComparisonModel
    example_id : str
        A shared example's id.

    Returns
    -------
    str
        An HTML fragment: ``div.dx-cmp-example[data-id]`` with ``td.pred[data-side][data-seed]`` cells.
    """
    ex = pair.example(example_id)
    rows = []
    for side, labels in (("A", pair.labels_a), ("B", pair.labels_b)):
        seeds = ex["seeds"][ex["seeds"]["side"] == side]
        cells = []
        for s in seeds.itertuples(index=False):
            text = "–" if s.prediction is None else ("E" if s.prediction == ENTAILMENT else "N")
            if np.isfinite(s.probability):
                text += f" {s.probability:.3f}"
            ok = "X" if s.correct is None else ("ok" if s.correct else "bad")
            code = "" if s.prediction is None else ("1" if s.prediction == ENTAILMENT else "0")
            cells.append(f"<td class='pred {ok}' data-side='{side.lower()}' data-seed='{html.escape(s.seed)}' "
                         f"data-pred='{code}' title='seed {html.escape(s.seed)}'>{text}</td>")
        name = pair.names[0] if side == "A" else pair.names[1]
        right = int(seeds["correct"].fillna(False).astype(bool).sum())
        rows.append(f"<tr><th style='text-align:left;color:{SIDE_COLOURS[0 if side == 'A' else 1]}'>{side}: "
                    f"{html.escape(name)}</th><td>{right}/{int(seeds['correct'].notna().sum())} right</td>"
                    f"{''.join(cells)}</tr>")
    auto = ex["auto_features"]
    words = OUTCOMES[ex["outcome"]] + (f" (flips in {ex['flips']})" if ex["flips"] else "")
    return (f"{TABLE_STYLE}{STYLE}<div class='dx-explorer dx-compare dx-cmp-example' "
            f"data-id='{html.escape(str(example_id))}' data-outcome='{ex['outcome']}'>"
            f"<p><b>{html.escape(str(example_id))}</b> · gold {'E' if ex['label'] == ENTAILMENT else 'N'} · "
            f"{html.escape(words)}</p><p style='text-align:left'><b>premise</b> {html.escape(ex['premise'])}<br>"
            f"<b>hypothesis</b> {html.escape(ex['hypothesis'])}</p><table><tbody>{''.join(rows)}</tbody></table>"
            f"<p><small>features (gold): {html.escape(', '.join(ex['features'])) or '–'}; features (annotator): "
            f"{html.escape(', '.join(auto)) if auto is not None else '–'}; compared categories: "
            f"{html.escape(', '.join(ex['categories'])) or '–'}</small></p></div>")


def static_html(pair, n: int = 5, limit: int = 20) -> str:
    """Render the static comparison: the sides, every category's strips, then the categories B changes most.

    Parameters
    ----------
    pair : ComparisonModel
    n : int
        Categories listed with their examples (most examples fixed or broken by B first).
    limit : int
        Examples shown per listed category (fixed, broken and unstable ones).

    Returns
    -------
    str
        An HTML fragment.
    """
    parts = [f"<h3>Two systems side by side: {html.escape(pair.names[0])} (A) vs {html.escape(pair.names[1])} "
             f"(B)</h3>", legend_html(pair), categories_html(pair)]
    table = pair.category_table()
    changed = (table["fixed"] + table["broken"]).sort_values(ascending=False, kind="stable")
    changed = changed[changed > 0].head(n)
    if len(changed):
        parts.append(f"<h4>The {len(changed)} categories with most examples fixed or broken by B</h4>")
    for category in changed.index:  # the listing's order puts fixed, broken and unstable examples first
        parts.append(examples_html(pair, category, None, limit=limit))
    return "\n".join(parts)
