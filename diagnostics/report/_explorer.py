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
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping
from pathlib import Path

from ..errors import UserInputError
from ..explorer._format import ROW_LIMIT, legend_html
from ..explorer._payload import PAYLOAD_NAME, read_payload
from ..io_utils import write_text_atomic

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
#cmp-filters{position:sticky;top:0;background:#fff;padding:.5em 0;z-index:3;border-bottom:1px solid #eee}
#cmp-filters label{margin-right:1.2em} #cmp-table{overflow:auto;max-height:70vh} #cmp-detail{scroll-margin-top:4em}
#cmp-table thead th{position:sticky;top:0;z-index:2} #cmp-table th.cat{text-align:left;white-space:nowrap}
tr.cmp-row{cursor:pointer} tr.cmp-row:hover td,tr.cmp-row:hover th{background:#f0f3f6}
tr.cmp-row.sel th.cat{outline:3px solid #000;outline-offset:-2px} svg.dx-strip{display:block}
td.pred.ok{background:#d9f0d3} td.pred.bad{background:#f6d0d0} th.a,td.a-first{border-left:2px solid #5e3c99}
th.b,td.b-first{border-left:2px solid #e66101} .sections a{margin-right:1em}
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

  // ---- two systems side by side: A's seeds against B's on one diagnostic set ----
  var OUTCOMES = [["fixed", "fixed by B"], ["broken", "broken by B"], ["unstable", "unstable in either"],
                  ["wrong_both", "stable-wrong in both"], ["correct_both", "stable-correct in both"]];
  var OUTCOME_WORDS = {};
  OUTCOMES.forEach(function (o) { OUTCOME_WORDS[o[0]] = o[1]; });
  var OUTCOME_FILTERS = [["", "all examples"], ["fixed", "fixed by B"], ["broken", "broken by B"],
                         ["unstable", "unstable in either"], ["flips_a", "unstable in A"], ["flips_b", "unstable in B"],
                         ["correct_both", "stable-correct in both"], ["wrong_both", "stable-wrong in both"]];
  var SIDE = ["#5e3c99", "#e66101"], STRIP_W = 200, STRIP_H = 30, PAD = 5;
  var cmp = {a: null, b: null, outcome: "", sel: null, limit: ROWS, data: null};

  function defaultPair() {
    if (D.pair) { return [D.pair.a, D.pair.b]; }
    var a = 0;
    D.settings.forEach(function (s, i) {
      if (a === 0 && i > 0 && s.experiment === D.leadExperiment && D.settings[0].experiment !== D.leadExperiment) {
        a = i;
      }
    });
    var A = D.settings[a], b = null, best = -1;
    D.settings.forEach(function (s, i) {  // B: another setting on A's dataset, most keys in common
      if (i === a || s.dataset !== A.dataset) { return; }
      var same = KEYS.filter(function (k) { return s[k] === A[k]; }).length;
      if (same > best) { best = same; b = i; }
    });
    return [a, b];
  }
  function sideNames(a, b) {
    if (D.pair && D.pair.a === a && D.pair.b === b && D.pair.names) { return D.pair.names; }
    var A = D.settings[a], B = D.settings[b];
    var differ = D.keys.filter(function (k) { return A[k] !== B[k]; });
    if (!differ.length) { return ["A", "B"]; }
    return [A, B].map(function (s) { return differ.map(function (k) { return String(s[k]); }).join(" · "); });
  }
  function sideCounts(S, r, gold) {  // seeds predicting row r, and how many of them are right
    var k = S.seeds.length, codes = S.pred.substr(r * k, k), n = 0, right = 0;
    for (var j = 0; j < k; j++) {
      var code = codes.charAt(j);
      if (code !== ".") { n++; if (code === gold) { right++; } }
    }
    return {n: n, right: right};
  }
  function pairData(a, b) {  // per dataset row: the outcome (null when a side has no prediction)
    var A = D.settings[a], B = D.settings[b], ds = D.datasets[A.dataset], rows = [], oneSide = 0, totals = {};
    OUTCOMES.forEach(function (o) { totals[o[0]] = 0; });
    for (var r = 0; r < ds.ids.length; r++) {
      var gold = ds.label.charAt(r), x = sideCounts(A, r, gold), y = sideCounts(B, r, gold);
      if (!x.n || !y.n) { if (x.n || y.n) { oneSide++; } rows.push(null); continue; }
      var flipsA = x.right > 0 && x.right < x.n, flipsB = y.right > 0 && y.right < y.n;
      var rightA = x.right === x.n, rightB = y.right === y.n;
      var outcome = flipsA || flipsB ? "unstable" : rightA && rightB ? "correct_both" : rightB ? "fixed" :
        rightA ? "broken" : "wrong_both";
      totals[outcome]++;
      rows.push({row: r, na: x.n, ca: x.right, nb: y.n, cb: y.right, outcome: outcome,
                 flips: flipsA && flipsB ? "A and B" : flipsA ? "A" : flipsB ? "B" : ""});
    }
    var cats = [];
    D.categories.forEach(function (name, c) {
      if (A.mcc[c] !== null && B.mcc[c] !== null) { cats.push(c); }
    });
    return {a: a, b: b, A: A, B: B, ds: ds, rows: rows, oneSide: oneSide, totals: totals, cats: cats,
            names: sideNames(a, b)};
  }
  function categoryRows(P, c) {
    return (P.ds.members[c] || []).map(function (r) { return P.rows[r]; }).filter(function (e) { return e; });
  }
  function keep(e, outcome) {
    if (!outcome) { return true; }
    if (outcome === "flips_a") { return e.flips === "A" || e.flips === "A and B"; }
    if (outcome === "flips_b") { return e.flips === "B" || e.flips === "A and B"; }
    return e.outcome === outcome;
  }
  function signed(v) {
    if (v === null || v === undefined) { return "–"; }
    var text = v.toFixed(3);
    return /^-?0\.000$/.test(text) ? "0.000" : (v > 0 ? "+" : "") + text;
  }
  function stripX(v) {
    return Math.round((PAD + (Math.max(-1, Math.min(1, v)) + 1) / 2 * (STRIP_W - 2 * PAD)) * 10) / 10;
  }
  function strip(P, c) {
    var parts = ["<svg class='dx-strip' width='" + STRIP_W + "' height='" + STRIP_H + "' viewBox='0 0 " + STRIP_W +
                 " " + STRIP_H + "' role='img'>"];
    [[-1, "#ddd"], [0, "#999"], [1, "#ddd"]].forEach(function (t) {
      var x = stripX(t[0]);
      parts.push("<line x1='" + x + "' x2='" + x + "' y1='1' y2='" + (STRIP_H - 1) + "' stroke='" + t[1] +
                 "' stroke-width='1'/>");
    });
    [["a", P.A, 9, SIDE[0]], ["b", P.B, 21, SIDE[1]]].forEach(function (side) {
      var S = side[1], y = side[2], mean = S.mean[c];
      if (mean !== null) {
        var x = stripX(mean);
        parts.push("<line class='mean " + side[0] + "' x1='" + x + "' x2='" + x + "' y1='" + (y - 7) + "' y2='" +
                   (y + 7) + "' stroke='" + side[3] + "' stroke-width='2'/>");
      }
      S.mcc[c].forEach(function (v, j) {
        if (v === null) { return; }
        parts.push("<circle class='pt " + side[0] + "' cx='" + stripX(v) + "' cy='" + (y + (j % 3 - 1) * 2) +
                   "' r='3.5' fill='" + side[3] + "' fill-opacity='0.7' data-seed='" + esc(S.seeds[j]) +
                   "' data-mcc='" + fmt(v, 2) + "'><title>" + side[0].toUpperCase() + " seed " + esc(S.seeds[j]) +
                   ": " + fmt(v, 2) + "</title></circle>");
      });
    });
    parts.push("</svg>");
    return parts.join("");
  }
  function counts(list) {
    var out = {};
    OUTCOMES.forEach(function (o) { out[o[0]] = 0; });
    list.forEach(function (e) { out[e.outcome]++; });
    return out;
  }
  function cmpSummary(P, c) {
    var n = counts(categoryRows(P, c));
    return "n = " + categoryRows(P, c).length + "; A " + fmt(P.A.mean[c], 3) + " ± " + fmt(P.A.sigma[c], 3) +
      ", B " + fmt(P.B.mean[c], 3) + " ± " + fmt(P.B.sigma[c], 3) + ", Δ " + delta(P, c) + "; " +
      OUTCOMES.map(function (o) { return o[1] + " " + n[o[0]]; }).join(", ");
  }
  function delta(P, c) {
    var a = P.A.mean[c], b = P.B.mean[c];
    return a === null || b === null ? "–" : signed(b - a);
  }

  function renderCompareFilters() {
    ["cmp-a", "cmp-b"].forEach(function (id, side) {
      var chosen = side === 0 ? cmp.a : cmp.b;
      $(id).innerHTML = (chosen === null ? "<option value=''>–</option>" : "") + D.settings.map(function (s, i) {
        return "<option value='" + i + "'" + (i === chosen ? " selected" : "") + ">" + esc(name(i)) + "</option>";
      }).join("");
    });
    $("cmp-outcome").innerHTML = OUTCOME_FILTERS.map(function (o) {
      return "<option value='" + o[0] + "'" + (o[0] === cmp.outcome ? " selected" : "") + ">" + esc(o[1]) +
        "</option>";
    }).join("");
  }

  function renderCompare() {
    var box = $("cmp-table"), legend = $("cmp-legend");
    cmp.data = null;
    if (cmp.a === null || cmp.b === null || cmp.a === cmp.b ||
        D.settings[cmp.a].dataset !== D.settings[cmp.b].dataset) {
      legend.innerHTML = "";
      box.innerHTML = "<p class='empty'>" + (D.settings.length < 2 ? "The data holds one setting: nothing to " +
        "compare it with." : "Choose two different settings of one diagnostic set as A and B.") + "</p>";
      cmp.sel = null; renderCompareDetail(); return;
    }
    var P = cmp.data = pairData(cmp.a, cmp.b), shared = 0;
    OUTCOMES.forEach(function (o) { shared += P.totals[o[0]]; });
    legend.innerHTML = "<p class='meta'>" + [["A", P.A, P.a, 0], ["B", P.B, P.b, 1]].map(function (s) {
      var full = name(s[2]), own = P.names[s[3]];
      return "<span class='side' style='color:" + SIDE[s[3]] + "'>●</span> " + s[0] + ": " + esc(own) +
        (full !== own ? " (" + esc(full) + ")" : "") + ", " + s[1].seeds.length + " seed" +
        (s[1].seeds.length === 1 ? "" : "s");
    }).join(" · ") + "<br><span id='cmp-totals' data-shared='" + shared + "'>" + shared + " shared examples: " +
      OUTCOMES.map(function (o) {
        return "<span data-outcome='" + o[0] + "'>" + o[1] + " " + P.totals[o[0]] + "</span>";
      }).join(", ") + (P.oneSide ? "; " + P.oneSide + " examples predicted by one side only are left out" : "") +
      ".</span> Points: per-seed MCC (−1 to +1, grey line at 0); bars: the means.</p>";
    var head = "<tr><th>category</th><th>n</th><th>per-seed MCC (A above, B below)</th><th class='a'>A mean ± σ" +
      "</th><th class='b'>B mean ± σ</th><th>Δ mean</th>" +
      OUTCOMES.map(function (o) { return "<th>" + o[1] + "</th>"; }).join("") + "</tr>";
    var body = P.cats.map(function (c) {
      var list = categoryRows(P, c), n = counts(list);
      return "<tr class='cmp-row" + (cmp.sel === c ? " sel" : "") + "' data-c='" + c + "' data-category='" +
        esc(D.categories[c]) + "'><th class='cat'>" + esc(D.categories[c]) + "</th><td class='n'>" + list.length +
        "</td><td>" + strip(P, c) + "</td><td class='n a-first'>" + fmt(P.A.mean[c], 3) + " ± " +
        fmt(P.A.sigma[c], 3) + "</td><td class='n b-first'>" + fmt(P.B.mean[c], 3) + " ± " + fmt(P.B.sigma[c], 3) +
        "</td><td class='n'>" + delta(P, c) + "</td>" + OUTCOMES.map(function (o) {
          return "<td class='n' data-outcome='" + o[0] + "'>" + n[o[0]] + "</td>";
        }).join("") + "</tr>";
    }).join("");
    box.innerHTML = P.cats.length ? "<table class='cmp'><thead>" + head + "</thead><tbody>" + body +
      "</tbody></table>" : "<p class='empty'>A and B share no category.</p>";
    if (cmp.sel !== null && P.cats.indexOf(cmp.sel) < 0) { cmp.sel = null; }
    renderCompareDetail();
  }

  function predCells(S, r, side, gold) {
    var k = S.seeds.length, cells = [];
    for (var j = 0; j < k; j++) {
      var code = S.pred.charAt(r * k + j), p = S.prob ? S.prob[r * k + j] : -1;
      var label = code === "1" ? "E" : code === "0" ? "N" : "–";
      var cls = "pred " + (code === "." ? "X" : code === gold ? "ok" : "bad") + (j === 0 ? " " + side + "-first" : "");
      cells.push("<td class='" + cls + "' data-side='" + side + "' data-seed='" + esc(S.seeds[j]) + "' data-pred='" +
                 (code === "." ? "" : code) + "' data-prob='" + (p >= 0 ? (p / 1000).toFixed(3) : "") + "'>" + label +
                 (p >= 0 ? " " + (p / 1000).toFixed(3) : "") + "</td>");
    }
    return cells.join("");
  }

  function compareList(P, c, outcome) {
    var rank = {};
    OUTCOMES.forEach(function (o, j) { rank[o[0]] = j; });
    var list = categoryRows(P, c).filter(function (e) { return keep(e, outcome); });
    list.sort(function (x, y) {
      return (rank[x.outcome] - rank[y.outcome]) ||
        (Math.abs(y.cb / y.nb - y.ca / y.na) - Math.abs(x.cb / x.nb - x.ca / x.na)) || (x.row - y.row);
    });
    return list;
  }

  function renderCompareDetail() {
    var box = $("cmp-detail"), P = cmp.data, c = cmp.sel;
    if (!P || c === null) {
      box.removeAttribute("data-category"); box.removeAttribute("data-total");
      box.innerHTML = P ? "<p class='empty'>Click a category to list its examples, A's seeds beside B's.</p>" : "";
      return;
    }
    var list = compareList(P, c, cmp.outcome), shown = list.slice(0, cmp.limit), ds = P.ds;
    box.setAttribute("data-category", D.categories[c]); box.setAttribute("data-total", list.length);
    box.setAttribute("data-outcome", cmp.outcome);
    var head = "<tr><th>id</th><th>premise</th><th>hypothesis</th><th>gold</th>" +
      P.A.seeds.map(function (s, j) { return "<th" + (j ? "" : " class='a'") + ">A seed " + esc(s) + "</th>"; })
        .join("") +
      P.B.seeds.map(function (s, j) { return "<th" + (j ? "" : " class='b'") + ">B seed " + esc(s) + "</th>"; })
        .join("") +
      "<th>A right</th><th>B right</th><th>outcome</th><th>features (gold)</th><th>features (annotator)</th></tr>";
    var rows = shown.map(function (e) {
      var r = e.row, gold = ds.label.charAt(r);
      return "<tr data-id='" + esc(ds.ids[r]) + "' data-outcome='" + e.outcome + "'><td>" + esc(ds.ids[r]) +
        "</td><td class='t'>" + esc(ds.texts[ds.premise[r]]) + "</td><td class='t'>" + esc(ds.texts[ds.hypothesis[r]]) +
        "</td><td class='gold'>" + (gold === "1" ? "E" : "N") + "</td>" + predCells(P.A, r, "a", gold) +
        predCells(P.B, r, "b", gold) + "<td class='n'>" + e.ca + "/" + e.na + "</td><td class='n'>" + e.cb + "/" +
        e.nb + "</td><td>" + esc(OUTCOME_WORDS[e.outcome] + (e.flips ? " (flips in " + e.flips + ")" : "")) +
        "</td><td class='t'>" + esc(featureNames(ds.gold[r])) + "</td><td class='t'>" +
        esc(ds.auto ? featureNames(ds.auto[r]) : "–") + "</td></tr>";
    });
    var rest = list.length - shown.length;
    var which = cmp.outcome ? " · " + OUTCOME_FILTERS.filter(function (o) { return o[0] === cmp.outcome; })[0][1] : "";
    box.innerHTML = "<h3>" + esc(D.categories[c]) + " · " + esc(P.names[0]) + " (A) vs " + esc(P.names[1]) + " (B)" +
      esc(which) + "</h3><p class='meta'>" + esc(cmpSummary(P, c)) + "</p>" + (list.length ?
      "<div class='wide'><table class='examples cmp-examples'><thead>" + head + "</thead><tbody>" + rows.join("") +
      "</tbody></table></div>" + (rest ? "<p><button class='more' id='cmp-more'>show " + Math.min(rest, ROWS) +
      " more (of " + rest + " not shown)</button></p>" : "") : "<p class='empty'>no examples</p>");
  }

  function onCompareChoice() {
    var a = $("cmp-a").value, b = $("cmp-b").value;
    cmp.a = a === "" ? null : +a; cmp.b = b === "" ? null : +b;
    cmp.limit = ROWS;
    renderCompareFilters(); renderCompare();
  }
  $("cmp-a").addEventListener("change", onCompareChoice);
  $("cmp-b").addEventListener("change", onCompareChoice);
  $("cmp-outcome").addEventListener("change", function () {
    cmp.outcome = $("cmp-outcome").value; cmp.limit = ROWS; renderCompareDetail();
  });
  $("cmp-table").addEventListener("click", function (event) {
    var tr = event.target.closest("tr.cmp-row");
    if (!tr) { return; }
    cmp.sel = +tr.getAttribute("data-c"); cmp.limit = ROWS;
    Array.prototype.forEach.call($("cmp-table").querySelectorAll("tr.cmp-row.sel"), function (row) {
      row.classList.remove("sel");
    });
    tr.classList.add("sel");
    renderCompareDetail();
    var top = $("cmp-detail").getBoundingClientRect().top;
    if (top < 0 || top > window.innerHeight - 80) { $("cmp-detail").scrollIntoView({block: "start"}); }
  });
  $("cmp-detail").addEventListener("click", function (event) {
    if (event.target.closest("button.more")) { cmp.limit += ROWS; renderCompareDetail(); }
  });
  (function () { var pair = defaultPair(); cmp.a = pair[0]; cmp.b = pair[1]; })();

  renderLead(); renderFilters(); renderHeatmap(); renderDetail(); renderCompareFilters(); renderCompare();
  document.body.setAttribute("data-ready", "1");
})();
"""


_COMPARE_SECTION = (
    "<section id='compare'><h2>Two systems side by side</h2><p class='meta'>Choose two settings of one diagnostic "
    "set: A (the baseline) and B. Per category both sides' per-seed MCC (points; bars: the means) with the "
    "outcome of its examples; click a category to list them, A's seeds beside B's (green: right, red: wrong). "
    "<b>Fixed by B</b>: every seed of A wrong, every seed of B right; <b>broken by B</b>: the reverse; <b>unstable in "
    "either</b>: the seeds of A, or of B, disagree; <b>stable-correct</b> / <b>stable-wrong in both</b>: every seed "
    "of both sides right / wrong.</p><div id='cmp-filters'><label>A <select id='cmp-a'></select></label>"
    "<label>B <select id='cmp-b'></select></label><label>examples <select id='cmp-outcome'></select></label></div>"
    "<div id='cmp-legend'></div><div id='cmp-table'></div><div id='cmp-detail'></div></section>")


def embed_json(payload: dict) -> str:
    """Serialise the payload for a ``<script type="application/json">`` element.

    Compact JSON in which ``</`` is written ``<\\/`` (still the same JSON), so no text can close the element.
    """
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.replace("</", "<\\/").replace("<!--", "<\\u0021--")


def resolve_pair(payload: dict, select_a: Mapping, select_b: Mapping, names: tuple[str, str] | None = None) -> dict:
    """Find the two settings of the explorer's data that the selections name, as the page's ``pair``.

    ``select_a`` and ``select_b`` map setting keys (``experiment``, ``language``, ``model``, ``dataset``) to values,
    compared as text; each must name exactly one setting, both on one dataset. Returns ``{"a", "b", "names"}``;
    raises :class:`~diagnostics.errors.UserInputError` (one line) otherwise.
    """
    from ..explorer._compare import side_names

    keys = [*payload.get("keys", []), "dataset"]
    settings = [{**{k: s.get(k) for k in payload.get("keys", [])},
                 "dataset": payload["datasets"][s["dataset"]]["name"]} for s in payload.get("settings", [])]
    chosen = []
    for side, selection in (("A", select_a), ("B", select_b)):
        unknown = sorted(set(selection) - set(keys))
        if unknown:
            raise UserInputError(f"--compare-{side.lower()} {unknown[0]}=...: the explorer's settings have no key "
                                 f"{unknown[0]!r}; expected one of {', '.join(keys)}")
        found = [i for i, s in enumerate(settings)
                 if all(str(s.get(k)) == str(v) for k, v in selection.items())]
        if len(found) != 1:
            listed = "; ".join(", ".join(f"{k}={s[k]}" for k in keys) for s in
                               ([settings[i] for i in found] if found else settings)[:4])
            raise UserInputError(f"--compare-{side.lower()} {_selection_text(selection)}: "
                                 f"{'no setting matches' if not found else f'{len(found)} settings match'}; "
                                 f"{'they are' if found else 'the settings are'}: {listed}"
                                 + (" ..." if len(found or settings) > 4 else ""))
        chosen.append(found[0])
    a, b = chosen
    if a == b:
        raise UserInputError(f"--compare-a and --compare-b name the same setting ({_selection_text(select_a)}); "
                             "choose two different settings")
    if settings[a]["dataset"] != settings[b]["dataset"]:
        raise UserInputError(f"--compare-a is on {settings[a]['dataset']} and --compare-b on "
                             f"{settings[b]['dataset']}: compare two settings of one diagnostic set")
    own = side_names({k: settings[a][k] for k in keys}, {k: settings[b][k] for k in keys})
    return {"a": a, "b": b, "names": [str(x) for x in (names or own)]}


def _selection_text(selection: Mapping) -> str:
    return ",".join(f"{k}={v}" for k, v in selection.items()) or "(nothing)"


def render_explorer(payload: dict | str | Path, out: str | Path, title: str | None = None,
                    back: str | None = "index.html", pair: dict | None = None) -> Path:
    """Write the self-contained ``explorer.html`` page to ``out`` and return its path.

    ``payload`` is :func:`diagnostics.explorer.build_payload` (or a comparison's payload, which carries its pair),
    or the JSON file it was saved to. ``back`` is the (relative) link back to the report's index; None for no link.
    ``pair`` (:func:`resolve_pair`) makes the page open with those two settings side by side, in its first section.
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
    sections = [lead, explorer, _COMPARE_SECTION]
    if payload.get("pair"):  # the page was written for a pair: it leads with the two systems
        sections = [_COMPARE_SECTION, lead, explorer]
    jump = ("<p class='meta sections'>Sections: <a href='#lead'>least stable categories</a>"
            "<a href='#explorer'>per-seed MCC per category</a><a href='#compare'>two systems side by side</a></p>")
    page = (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head><body>"
        f"<h1>{html.escape(title)}</h1>{intro}{jump}{''.join(sections)}"
        f"<script type='application/json' id='explorer-data'>{embed_json(payload)}</script>"
        f"<script>{_SCRIPT}</script></body></html>")
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


__all__ = ["embed_json", "render_explorer", "render_report_explorer", "resolve_pair"]
