"""The report's ``explorer.html``: the instability explorer as one self-contained page.

The data (:func:`diagnostics.explorer.build_payload`, written by the notebook
``10_instability_explorer`` as ``figures/explorer.json``) is embedded as JSON in a ``<script
type="application/json">`` element and drawn by plain JavaScript in the page: no library, no server, nothing
fetched at view time, so the file can be mailed or archived alone like ``index.html``.

The page leads with the five least stable categories per language and their flipping examples, then the
category x seed heat map of per-seed MCC with filters (language, experiment, model, flipping only); clicking a
cell lists the category's examples with every seed's prediction and P(entailment), the flip rate, Δσ and the
gold and annotator features. Elements carry ``data-*`` attributes (``td.cell[data-setting][data-category]
[data-seed]``, ``tr[data-id]``, ``td.pred[data-seed][data-pred]``) that the browser test reads.

A last section puts two settings of one diagnostic set side by side (:mod:`diagnostics.report._explorer_compare`);
when the data carries a ``pair`` (a comparison's payload, or ``diagnostics report --compare-a/--compare-b``) the
page opens on that pair and leads with the section.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping
from pathlib import Path

from ..core.io_utils import write_text_atomic
from ..explorer import ROW_LIMIT, legend_html
from ..explorer import PAYLOAD_NAME, read_payload
from ._explorer_compare import COMPARE_SCRIPT, COMPARE_SECTION, COMPARE_STYLE, resolve_pair

#: The explorer's page in a report folder.
EXPLORER_PAGE = "explorer.html"

_STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:1.5em auto;padding:0 1em;color:#222;
max-width:1500px}
h1{margin-bottom:.2em} .meta{color:#666;font-size:.85em} section{border-top:2px solid #ddd;margin-top:1.5em}
table{border-collapse:collapse;font-size:12px;margin:.4em 0} td,th{border:1px solid #ddd;padding:2px 5px}
th{background:#f4f6f8;font-weight:600} td.t{text-align:left;max-width:34em} td.n{text-align:right}
#filters{position:sticky;top:0;background:#fff;padding:.5em 0;z-index:3;border-bottom:1px solid #eee}
#filters label{margin-right:1.2em} select{font-size:13px}
#heatmap{overflow:auto;max-height:70vh} #heatmap table{font-size:11px}
#heatmap thead th{position:sticky;top:0;z-index:2} #heatmap th.cat{text-align:left;white-space:nowrap}
td.cell{cursor:pointer;text-align:center;min-width:3.2em} td.cell:hover{outline:2px solid #555}
td.cell.sel{outline:3px solid #000;outline-offset:-2px;font-weight:700} td.sig{text-align:right;color:#333}
td.pred{text-align:center;white-space:nowrap} td.E{background:#cfe3f7} td.N{background:#fbe0c8} td.X{background:#eee}
td.pred.chosen{outline:2px solid #000;outline-offset:-2px} tr.flip td.fr{font-weight:700}
.lead-cat{margin:.8em 0 .3em} button.go{font-size:11px;cursor:pointer} .empty{color:#777;font-style:italic}
.wide{overflow-x:auto;max-width:100%} #detail{scroll-margin-top:4em} button.more{font-size:12px;cursor:pointer}
.sections a{margin-right:1em}
"""

_SCRIPT = r"""
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("explorer-data").textContent);
  var ENT = D.labels[0];
  var KEYS = D.keys.filter(function (k) { return k === "language" || k === "experiment" || k === "model"; });
  var ROWS = D.rows || 25;  // examples listed at first and added by each "show more"
  var state = {flipping: false, sel: null, limit: ROWS};
  KEYS.forEach(function (k) { state[k] = null; });
  if (KEYS.indexOf("language") >= 0) { state.language = D.settings[0].language; }
  if (KEYS.indexOf("experiment") >= 0) { state.experiment = D.leadExperiment; }
  var $ = function (id) { return document.getElementById(id); };

  function esc(text) {
    return String(text).replace(/[&<>"']/g, function (c) {
      return {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}[c];
    });
  }
  function colour(v) {
    if (v === null || v === undefined) { return "#dddddd"; }
    v = Math.max(-1, Math.min(1, v));
    var mid = [247, 247, 247], end = v >= 0 ? [178, 24, 43] : [33, 102, 172], a = Math.abs(v);
    return "rgb(" + mid.map(function (m, i) { return Math.round(m + (end[i] - m) * a); }).join(",") + ")";
  }
  function fmt(v, d) {
    if (v === null || v === undefined) { return "–"; }
    var text = v.toFixed(d);
    return /^-0\.0*$/.test(text) ? text.slice(1) : text;
  }
  function manyModels() {
    var seen = {}; D.settings.forEach(function (s) { seen[s.model] = 1; }); return Object.keys(seen).length > 1;
  }
  function name(i) {
    var s = D.settings[i], parts = [s.language, s.experiment];
    if (manyModels()) { parts.push(s.model); }
    return parts.filter(function (p) { return p !== undefined && p !== null; }).join(" · ");
  }
  function visible() {
    var out = [];
    D.settings.forEach(function (s, i) {
      if (KEYS.every(function (k) { return state[k] === null || s[k] === state[k]; })) { out.push(i); }
    });
    return out;
  }
  function featureNames(list) {
    return list === null || list === undefined ? "–" : list.map(function (j) { return D.features[j]; }).join(", ");
  }

  // one category's examples in one setting: [{row, flip, dsig}], flipping first (flip rate, then Δσ)
  function examples(s, c, flippingOnly) {
    var S = D.settings[s], ds = D.datasets[S.dataset], members = ds.members[c] || [], out = [];
    var dsig = S.dsig[c] || [], k = S.seeds.length;
    members.forEach(function (row, j) {
      var codes = S.pred.substr(row * k, k);
      if (codes.replace(/\./g, "") === "") { return; }
      var flip = S.flip[row];
      if (flippingOnly && !(flip > 0)) { return; }
      out.push({row: row, flip: flip, dsig: dsig[j] === undefined ? null : dsig[j]});
    });
    out.sort(function (a, b) {
      return ((b.flip || 0) - (a.flip || 0)) || ((b.dsig === null ? -9 : b.dsig) - (a.dsig === null ? -9 : a.dsig));
    });
    return out;
  }

  function examplesTable(s, c, flippingOnly, limit, chosenSeed, moreButton) {
    var S = D.settings[s], ds = D.datasets[S.dataset], k = S.seeds.length, list = examples(s, c, flippingOnly);
    var head = "<tr><th>id</th><th>premise</th><th>hypothesis</th><th>gold</th>" + S.seeds.map(function (seed) {
      return "<th" + (seed === chosenSeed ? " class='chosen'" : "") + ">seed " + esc(seed) + "</th>";
    }).join("") + "<th>flip rate</th><th>Δσ</th><th>features (gold)</th><th>features (annotator)</th></tr>";
    var shown = limit ? list.slice(0, limit) : list, rows = [];
    shown.forEach(function (e) {
      var r = e.row, cells = [];
      for (var j = 0; j < k; j++) {
        var code = S.pred.charAt(r * k + j), p = S.prob ? S.prob[r * k + j] : -1;
        var label = code === "1" ? "E" : code === "0" ? "N" : "–";
        var cls = "pred " + (code === "1" ? "E" : code === "0" ? "N" : "X") +
                  (S.seeds[j] === chosenSeed ? " chosen" : "");
        cells.push("<td class='" + cls + "' data-seed='" + esc(S.seeds[j]) + "' data-pred='" +
                   (code === "." ? "" : code) + "' data-prob='" + (p >= 0 ? (p / 1000).toFixed(3) : "") + "'>" +
                   label + (p >= 0 ? " " + (p / 1000).toFixed(3) : "") + "</td>");
      }
      var gold = ds.label.charAt(r) === "1" ? "E" : "N";
      rows.push("<tr data-id='" + esc(ds.ids[r]) + "' class='" + (e.flip > 0 ? "flip" : "") + "'><td>" +
                esc(ds.ids[r]) + "</td><td class='t'>" + esc(ds.texts[ds.premise[r]]) + "</td><td class='t'>" +
                esc(ds.texts[ds.hypothesis[r]]) + "</td><td class='gold'>" + gold + "</td>" + cells.join("") +
                "<td class='n fr'>" + fmt(e.flip, 2) + "</td><td class='n'>" +
                (e.dsig === null ? "–" : (e.dsig >= 0 ? "+" : "") + e.dsig.toFixed(3)) + "</td><td class='t'>" +
                esc(featureNames(ds.gold[r])) + "</td><td class='t'>" +
                esc(ds.auto ? featureNames(ds.auto[r]) : "–") + "</td></tr>");
    });
    var rest = list.length - shown.length, more = !rest ? "" : moreButton ?
      "<p><button class='more' id='more'>show " + Math.min(rest, ROWS) + " more (of " + rest +
      " not shown)</button></p>"
      : "<p class='empty'>… and " + rest + " more</p>";
    if (!list.length) { return "<p class='empty'>no " + (flippingOnly ? "flipping " : "") + "examples</p>"; }
    return "<div class='wide'><table class='examples'><thead>" + head + "</thead><tbody>" + rows.join("") +
      "</tbody></table></div>" + more;
  }

  function summary(s, c) {
    var S = D.settings[s];
    return "n = " + S.n[c] + ", mean MCC " + fmt(S.mean[c], 3) + ", σ over seeds " + fmt(S.sigma[c], 3) +
      ", flipping share " + (S.flipShare[c] === null ? "–" : Math.round(S.flipShare[c] * 100) + " %") +
      "; per-seed MCC " + S.mcc[c].map(function (v) { return fmt(v, 2); }).join(", ");
  }

  function renderLead() {
    var parts = [], bySetting = {}, order = [];
    D.lead.forEach(function (pair) {
      if (!(pair[0] in bySetting)) { bySetting[pair[0]] = []; order.push(pair[0]); }
      bySetting[pair[0]].push(pair[1]);
    });
    order.forEach(function (s) {
      var S = D.settings[s];
      parts.push("<h3>" + esc(name(s)) + "</h3><div class='wide'><table class='lead-table'><thead><tr>" +
                 "<th>category</th><th>n</th>" +
                 "<th>mean MCC</th><th>σ</th><th>flipping</th><th></th></tr></thead><tbody>" +
                 bySetting[s].map(function (c) {
                   return "<tr><td class='t'>" + esc(D.categories[c]) + "</td><td class='n'>" + S.n[c] +
                     "</td><td class='n'>" + fmt(S.mean[c], 3) + "</td><td class='n'>" + fmt(S.sigma[c], 3) +
                     "</td><td class='n'>" + Math.round((S.flipShare[c] || 0) * S.n[c]) + "</td><td>" +
                     "<button class='go' data-setting='" + s + "' data-c='" + c + "'>explore</button></td></tr>";
                 }).join("") + "</tbody></table></div>");
      bySetting[s].forEach(function (c) {
        parts.push("<div class='lead-cat' data-setting='" + s + "' data-category='" + esc(D.categories[c]) +
                   "'><b>" + esc(D.categories[c]) + "</b> <small>" + esc(summary(s, c)) + "</small>" +
                   examplesTable(s, c, true, 20, null) + "</div>");
      });
    });
    $("lead-body").innerHTML = parts.join("") || "<p class='empty'>no categories</p>";
  }

  function renderFilters() {
    KEYS.forEach(function (k) {
      var values = [];
      D.settings.forEach(function (s) { if (values.indexOf(s[k]) < 0) { values.push(s[k]); } });
      var select = $("f-" + k);
      select.innerHTML = "<option value=''>all</option>" + values.map(function (v) {
        return "<option value='" + esc(v) + "'" + (v === state[k] ? " selected" : "") + ">" + esc(v) + "</option>";
      }).join("");
      if (k === "model" && values.length < 2) { select.parentNode.style.display = "none"; }
    });
    ["language", "experiment", "model"].forEach(function (k) {
      if (KEYS.indexOf(k) < 0) { $("f-" + k).parentNode.style.display = "none"; }
    });
    $("f-flipping").checked = state.flipping;
  }

  function renderHeatmap() {
    var vis = visible(), cats = [];
    D.categories.forEach(function (c, j) {
      if (vis.some(function (s) { return D.settings[s].mcc[j] !== null; })) { cats.push(j); }
    });
    var top = "<tr><th rowspan='2'>category</th>" + vis.map(function (s) {
      return "<th colspan='" + (D.settings[s].seeds.length + 1) + "'>" + esc(name(s)) + "</th>";
    }).join("") + "</tr>";
    var second = "<tr>" + vis.map(function (s) {
      return D.settings[s].seeds.map(function (seed) { return "<th>seed " + esc(seed) + "</th>"; }).join("") +
        "<th>σ</th>";
    }).join("") + "</tr>";
    var sel = state.sel, body = cats.map(function (c) {
      return "<tr><th class='cat'>" + esc(D.categories[c]) + "</th>" + vis.map(function (s) {
        var S = D.settings[s], values = S.mcc[c];
        if (values === null) { return S.seeds.map(function () { return "<td></td>"; }).join("") + "<td></td>"; }
        return S.seeds.map(function (seed, j) {
          var chosen = sel && sel.s === s && sel.c === c && sel.seed === seed;
          return "<td class='cell" + (chosen ? " sel" : "") + "' data-setting='" + s + "' data-category='" +
                 esc(D.categories[c]) + "' data-c='" + c + "' data-seed='" + esc(seed) + "' style='background:" +
                 colour(values[j]) + "' title='" + esc(D.categories[c] + " · " + name(s) + " · seed " + seed) + "'>" +
                 fmt(values[j], 2) + "</td>";
        }).join("") + "<td class='sig'>" + fmt(S.sigma[c], 3) + "</td>";
      }).join("") + "</tr>";
    }).join("");
    $("heatmap").innerHTML = vis.length ?
      "<table><thead>" + top + second + "</thead><tbody>" + body + "</tbody></table>"
      : "<p class='empty'>no setting matches the filters</p>";
  }

  function renderDetail() {
    var box = $("detail"), sel = state.sel;
    if (!sel) {
      box.removeAttribute("data-setting"); box.removeAttribute("data-category"); box.removeAttribute("data-total");
      box.innerHTML = "<p class='empty'>Click a cell of the heat map to list that category's examples.</p>";
      return;
    }
    box.setAttribute("data-setting", sel.s); box.setAttribute("data-category", D.categories[sel.c]);
    box.setAttribute("data-seed", sel.seed === null ? "" : sel.seed);
    box.setAttribute("data-total", examples(sel.s, sel.c, state.flipping).length);
    box.innerHTML = "<h3>" + esc(D.categories[sel.c]) + " · " + esc(name(sel.s)) +
      (sel.seed === null ? "" : " · seed " + esc(sel.seed)) + "</h3><p class='meta'>" + esc(summary(sel.s, sel.c)) +
      "</p>" + examplesTable(sel.s, sel.c, state.flipping, state.limit, sel.seed, true);
  }

  function reveal() {  // the listing of a clicked cell comes into view unless its start is already visible
    var top = $("detail").getBoundingClientRect().top;
    if (top < 0 || top > window.innerHeight - 80) { $("detail").scrollIntoView({block: "start"}); }
  }

  function select(s, c, seed) {
    var widened = false;
    KEYS.forEach(function (k) {  // widen the filters that would hide the chosen setting
      if (state[k] !== null && state[k] !== D.settings[s][k]) { state[k] = D.settings[s][k]; widened = true; }
    });
    state.sel = {s: s, c: c, seed: seed};
    state.limit = ROWS;
    if (widened) {
      renderFilters(); renderHeatmap();
    } else {  // same heat map: move the highlight only (thousands of cells at paper scale)
      Array.prototype.forEach.call($("heatmap").querySelectorAll("td.cell.sel"), function (td) {
        td.classList.remove("sel");
      });
      var chosen = $("heatmap").querySelector("td.cell[data-setting='" + s + "'][data-c='" + c + "'][data-seed='" +
                                             String(seed).replace(/'/g, "") + "']");
      if (chosen) { chosen.classList.add("sel"); }
    }
    renderDetail();
  }

  function onFilter() {
    KEYS.forEach(function (k) { var v = $("f-" + k).value; state[k] = v === "" ? null : v; });
    state.flipping = $("f-flipping").checked;
    state.limit = ROWS;
    if (state.sel && visible().indexOf(state.sel.s) < 0) { state.sel = null; }
    renderHeatmap(); renderDetail();
  }

  $("heatmap").addEventListener("click", function (event) {
    var td = event.target.closest("td.cell");
    if (td) {
      select(+td.getAttribute("data-setting"), +td.getAttribute("data-c"), td.getAttribute("data-seed"));
      reveal();
    }
  });
  $("detail").addEventListener("click", function (event) {
    if (event.target.closest("button.more")) { state.limit += ROWS; renderDetail(); }
  });
  $("lead-body").addEventListener("click", function (event) {
    var button = event.target.closest("button.go");
    if (button) {
      select(+button.getAttribute("data-setting"), +button.getAttribute("data-c"), null);
      $("detail").scrollIntoView({block: "start"});
    }
  });
  ["language", "experiment", "model"].forEach(function (k) { $("f-" + k).addEventListener("change", onFilter); });
  $("f-flipping").addEventListener("change", onFilter);

  /* the two-system section (COMPARE_SCRIPT) is inserted here */
  renderLead(); renderFilters(); renderHeatmap(); renderDetail(); renderCompareFilters(); renderCompare();
  document.body.setAttribute("data-ready", "1");
})();
"""


def _page_script() -> str:
    """The page's script with the two-system section's inserted before the first render."""
    marker = "  /* the two-system section (COMPARE_SCRIPT) is inserted here */\n"
    return _SCRIPT.replace(marker, COMPARE_SCRIPT.strip("\n") + "\n\n")


def embed_json(payload: dict) -> str:
    """Serialise the payload for a ``<script type="application/json">`` element.

    Compact JSON in which ``</`` is written ``<\\/`` (still the same JSON), so no text can close the element.
    """
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.replace("</", "<\\/").replace("<!--", "<\\u0021--")


def render_explorer(payload: dict | str | Path, out: str | Path, title: str | None = None,
                    back: str | None = "index.html", pair: dict | None = None) -> Path:
    """Write the self-contained ``explorer.html`` page (data embedded, nothing fetched at view time).

    Parameters
    ----------
    payload : dict, str or Path
        :func:`diagnostics.explorer.build_payload`, or :meth:`diagnostics.explorer.ComparisonModel.payload` (which
        carries its pair), or the JSON file either was saved to.
    out : str or Path
        The page to write.
    title : str, optional
        Page title (default: "Instability explorer").
    back : str or None
        The (relative) link back to the report's index; None for no link (a page of its own).
    pair : dict, optional
        ``{"a", "b", "names"}`` (see :func:`diagnostics.report._explorer_compare.resolve_pair`): the page opens with
        those two settings side by side, in its first section.

    Returns
    -------
    Path
        The written page.
    """
    if not isinstance(payload, dict):
        payload = read_payload(payload)
    payload = {**payload, "rows": payload.get("rows", ROW_LIMIT)}
    if pair is not None:
        payload["pair"] = pair
    title = title or "Instability explorer"
    n_lead = len({s for s, _ in payload.get("lead", [])})
    link = f"<a href='{html.escape(back)}'>back to the report</a> · " if back else ""
    intro = (f"<p class='meta'>{link}Which examples flip between seeds, and what do they share? "
             "<b>Flip rate</b>: share of seed pairs whose predictions differ (0 = all seeds agree). "
             "<b>Δσ</b>: σ of the "
             "category's per-seed MCC minus σ without the example (positive: the example raises σ). E = entailment, "
             "N = not entailment; numbers next to them: P(entailment).</p>")
    lead = (f"<section id='lead'><h2>The five least stable categories per language</h2>"
            f"<p class='meta'>Largest σ of per-seed MCC in the {html.escape(str(payload.get('leadExperiment')))} "
            f"experiment ({n_lead} settings), each with its flipping examples.</p><div id='lead-body'></div>"
            "</section>")
    explorer = ("<section id='explorer'><h2>Explore: per-seed MCC per category</h2>"
                "<div id='filters'><label>language <select id='f-language'></select></label>"
                "<label>experiment <select id='f-experiment'></select></label>"
                "<label>model <select id='f-model'></select></label>"
                "<label><input type='checkbox' id='f-flipping'> flipping only</label></div>"
                f"{legend_html()}<div id='heatmap'></div><div id='detail'></div></section>")
    sections = [lead, explorer, COMPARE_SECTION]
    if payload.get("pair"):  # the page was written for a pair: it leads with the two systems
        sections = [COMPARE_SECTION, lead, explorer]
    jump = ("<p class='meta sections'>Sections: <a href='#lead'>least stable categories</a>"
            "<a href='#explorer'>per-seed MCC per category</a><a href='#compare'>two systems side by side</a></p>")
    page = (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{html.escape(title)}</title><style>{_STYLE}{COMPARE_STYLE}</style></head><body>"
        f"<h1>{html.escape(title)}</h1>{intro}{jump}{''.join(sections)}"
        f"<script type='application/json' id='explorer-data'>{embed_json(payload)}</script>"
        f"<script>{_page_script()}</script></body></html>")
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(out, page)
    return out


def render_report_explorer(run_dir: str | Path, title: str | None = None,
                           out: str | Path | None = None, compare: tuple[Mapping, Mapping] | None = None
                           ) -> Path | None:
    """Write ``<run_dir>/explorer.html`` when the notebooks left the explorer's data in ``<run_dir>/figures``.

    ``run_dir`` is a report folder (see :func:`diagnostics.report.render_report`); ``out`` is where to write the page
    instead (the report's staging folder); ``compare`` (two selections, A's and B's, see :func:`resolve_pair`)
    opens the page with those two settings side by side. Returns the written page; None when there is no data (the
    notebook did not run).
    """
    source = Path(run_dir) / "figures" / PAYLOAD_NAME
    if not source.is_file():
        return None
    payload = read_payload(source)
    pair = resolve_pair(payload, *compare) if compare is not None else None
    return render_explorer(payload, Path(run_dir) / EXPLORER_PAGE if out is None else out, title, pair=pair)


__all__ = ["embed_json", "render_explorer", "render_report_explorer"]
