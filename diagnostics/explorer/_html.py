"""The instability explorer as static HTML: the tables shown where no widget front end runs.

Papermill runs, nbconvert, the HTML report and GitHub show these: the least stable categories per language with
their flipping examples, then the heat map of per-seed MCC. The notebook widget draws its listing with
:func:`examples_html` too, so both show the same table.
"""

from __future__ import annotations

import html

import numpy as np

from ..core.schema import ENTAILMENT
from ._format import legend_html, mcc_color, run_label, two_decimals

#: Compact tables in every front end (JupyterLab's and the classic Notebook's widget styles set a tall line height).
TABLE_STYLE = ("<style>.dx-explorer table{border-collapse:collapse;font-size:12px;line-height:1.35}"
               ".dx-explorer td,.dx-explorer th{border:1px solid #ddd;padding:2px 5px;vertical-align:top}"
               ".dx-explorer td{max-width:30em}</style>")


def examples_html(model, setting: int | None = None, category: str | None = None,
                  flipping_only: bool | None = None, limit: int | None = None) -> str:
    """Render the model's ``examples`` as an HTML table (predictions coloured, the chosen seed highlighted).

    ``model`` is the explorer's state (:mod:`diagnostics.explorer._model`). ``setting`` (an index into the model's
    settings) and ``category`` default to the selection's, ``flipping_only`` to the filter; ``limit`` caps the rows
    shown (a line counts the rest). Returns an HTML fragment.
    """
    if (setting is None or category is None) and model.selection is None:
        return "<p><i>Choose a cell of the heat map.</i></p>"
    setting = model.selection[0] if setting is None else setting
    category = model.selection[1] if category is None else category
    chosen = model.selection[2] if model.selection is not None and model.selection[:2] == (setting, category) \
        else None
    frame = model.examples(setting, category, flipping_only)
    labels = [run_label(r) for r in model.runs[setting]]
    stats = model.category_table(setting)
    line = ""
    if category in stats.index:
        row = stats.loc[category]
        line = (f"n = {int(row['n'])}, σ = {row['sigma']:.3f}, mean MCC = {row['mean']:.3f}, "
                f"flipping {int(row['n_flipping'])} ({row['flip_share']:.0%})")
    outline = " style='outline:2px solid #000'"
    head = "".join(f"<th{outline if lab == chosen else ''}>seed {html.escape(lab)}</th>" for lab in labels)
    body = []
    shown = frame if limit is None else frame.head(limit)
    for r in shown.itertuples(index=False):
        r = r._asdict()
        cells = []
        for lab in labels:
            pred = r.get(f"prediction_{lab}")
            prob = r.get(f"probability_{lab}")
            text = "–" if pred is None else ("E" if pred == ENTAILMENT else "N")
            if prob is not None and np.isfinite(prob):
                text += f" {prob:.3f}"
            colour = "#eee" if pred is None else ("#cfe3f7" if pred == ENTAILMENT else "#fbe0c8")
            code = "" if pred is None else ("1" if pred == ENTAILMENT else "0")
            cells.append(f"<td class='pred' data-seed='{html.escape(lab)}' data-pred='{code}' "
                         f"style='background:{colour};white-space:nowrap'>{text}</td>")
        auto = r["auto_features"]
        body.append(
            f"<tr data-id='{html.escape(str(r['example_id']))}'><td>{html.escape(str(r['example_id']))}</td>"
            "<td style='text-align:left'>"
            f"{html.escape(r['premise'])}</td><td style='text-align:left'>{html.escape(r['hypothesis'])}</td>"
            f"<td>{'E' if r['label'] == ENTAILMENT else 'N'}</td>{''.join(cells)}"
            f"<td>{r['flip_rate']:.2f}</td><td>{r['delta_sigma']:+.3f}</td>"
            f"<td style='text-align:left'>{html.escape(', '.join(r['features']))}</td>"
            f"<td style='text-align:left'>{html.escape(', '.join(auto)) if auto is not None else '–'}</td>"
            "</tr>")
    more = f"<p>… and {len(frame) - len(shown)} more</p>" if len(shown) < len(frame) else ""
    title = (f"<b>{html.escape(category)}</b> · {html.escape(model.setting_name(setting))}"
             + (f" · seed {html.escape(chosen)}" if chosen is not None else ""))
    if not len(frame):
        return (f"{TABLE_STYLE}<div class='dx-explorer dx-listing' data-total='0'><p>{title}<br><small>{line}"
                f"</small></p><p><i>No {'flipping ' if flipping_only or model.flipping_only else ''}examples."
                "</i></p></div>")
    return (f"{TABLE_STYLE}<div class='dx-explorer dx-listing' data-total='{len(frame)}' "
            f"data-shown='{len(shown)}'><p>{title}<br><small>{line}</small></p>"
            "<table><thead><tr><th>id</th><th>premise</th><th>hypothesis</th><th>gold</th>"
            f"{head}<th>flip rate</th><th>Δσ</th><th>features (gold)</th><th>features (annotator)</th></tr>"
            f"</thead><tbody>{''.join(body)}</tbody></table>{more}</div>")


def heatmap_html(model) -> str:
    """Render the model's heat map (the current filters) as a coloured HTML table (a fragment).

    ``model`` is the explorer's state (:mod:`diagnostics.explorer._model`).
    """
    frame = model.heatmap()
    columns = model.columns()
    head = "".join(f"<th>{html.escape(model.setting_name(i))}<br>seed {html.escape(lab)}</th>"
                   for i, lab in columns)
    rows = []
    for category, values in frame.iterrows():
        cells = "".join(f"<td style='background:{mcc_color(v)}'>{two_decimals(v)}</td>"
                        for v in values.to_numpy(dtype=float))
        rows.append(f"<tr><th style='text-align:left'>{html.escape(category)}</th>{cells}</tr>")
    return (f"{TABLE_STYLE}<div class='dx-explorer'>{legend_html()}<table><thead><tr><th></th>{head}</tr>"
            f"</thead><tbody>{''.join(rows)}</tbody></table></div>")


def static_html(model, n: int = 5, limit: int = 20) -> str:
    """Render the static explorer: the ``n`` least stable categories per language with their flipping examples,
    then the heat map of the current filters.

    ``model`` is the explorer's state (:mod:`diagnostics.explorer._model`); ``limit`` caps the flipping examples per
    category. The HTML fragment is what papermill runs, the HTML report and front ends without widgets show.
    """
    parts = [f"<h3>The {n} least stable categories per language ({html.escape(str(model.lead_experiment))})</h3>"]
    lead = model.least_stable(n)
    for setting, group in lead.groupby("setting", sort=False):
        parts.append(f"<h4>{html.escape(model.setting_name(setting))}</h4>")
        for row in group.itertuples(index=False):
            parts.append(examples_html(model, setting, row.category, flipping_only=True, limit=limit))
    parts.append("<h3>Per-seed MCC</h3>" + heatmap_html(model))
    return "\n".join(parts)
