"""The two-system section of the report's ``explorer.html``: two settings of one diagnostic set side by side.

:data:`COMPARE_SCRIPT` runs inside the page's script (:mod:`diagnostics.report._explorer`) and uses its helpers
(``$``, ``esc``, ``fmt``, ``name``, ``featureNames``, the data ``D``). A and B are chosen in the page; the data's
``pair`` (:meth:`diagnostics.explorer.ComparisonModel.payload`, or ``diagnostics report --compare-a/--compare-b``
through :func:`resolve_pair`) preselects them. Per category both settings' per-seed MCC as strips of points
(``tr.cmp-row[data-c]`` holding ``circle.pt.a`` / ``circle.pt.b`` with ``data-mcc``) and the outcome counts; per
example A's seeds beside B's with its outcome (``tr.cmp-ex[data-id][data-outcome]``), filtered by outcome
(``#cmp-outcome``); a click on an example opens it below its row. The outcomes are those of
:mod:`diagnostics.explorer._compare`, computed in the page from the per-seed predictions the data holds anyway.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..core.errors import UserInputError

#: The section's styles (appended to the page's).
COMPARE_STYLE = """
#cmp-filters{position:sticky;top:0;background:#fff;padding:.5em 0;z-index:3;border-bottom:1px solid #eee}
#cmp-filters label{margin-right:1.2em} #cmp-table{overflow:auto;max-height:70vh} #cmp-detail{scroll-margin-top:4em}
#cmp-table thead th{position:sticky;top:0;z-index:2} #cmp-table th.cat{text-align:left;white-space:nowrap}
tr.cmp-row,tr.cmp-ex{cursor:pointer} tr.cmp-ex.open td:not(.pred){background:#f7f9fb}
tr.cmp-open > td{background:#f7f9fb;text-align:left} .cmp-example p{margin:.3em 0}
tr.cmp-row:hover td,tr.cmp-row:hover th{background:#f0f3f6}
tr.cmp-row.sel th.cat{outline:3px solid #000;outline-offset:-2px} svg.dx-strip{display:block}
td.pred.ok{background:#d9f0d3} td.pred.bad{background:#f6d0d0} th.a,td.a-first{border-left:2px solid #5e3c99}
th.b,td.b-first{border-left:2px solid #e66101}
"""

#: The section's HTML: the A / B / outcome menus, the legend, the table of categories and the listing.
COMPARE_SECTION = (
    "<section id='compare'><h2>Two systems side by side</h2><p class='meta'>Choose two settings of one diagnostic "
    "set: A (the baseline) and B. Per category both sides' per-seed MCC (points; bars: the means) with the "
    "outcome of its examples; click a category to list them, A's seeds beside B's (green: right, red: wrong). "
    "<b>Fixed by B</b>: every seed of A wrong, every seed of B right; <b>broken by B</b>: the reverse; <b>unstable in "
    "either</b>: the seeds of A, or of B, disagree; <b>stable-correct</b> / <b>stable-wrong in both</b>: every seed "
    "of both sides right / wrong.</p><div id='cmp-filters'><label>A <select id='cmp-a'></select></label>"
    "<label>B <select id='cmp-b'></select></label><label>examples <select id='cmp-outcome'></select></label></div>"
    "<div id='cmp-legend'></div><div id='cmp-table'></div><div id='cmp-detail'></div></section>")

#: The section's JavaScript (inside the page's script, before its first render).
COMPARE_SCRIPT = r"""
  // ---- two systems side by side: A's seeds against B's on one diagnostic set ----
  var OUTCOMES = [["fixed", "fixed by B"], ["broken", "broken by B"], ["unstable", "unstable in either"],
                  ["wrong_both", "stable-wrong in both"], ["correct_both", "stable-correct in both"]];
  var OUTCOME_WORDS = {};
  OUTCOMES.forEach(function (o) { OUTCOME_WORDS[o[0]] = o[1]; });
  var OUTCOME_FILTERS = [["", "all examples"], ["fixed", "fixed by B"], ["broken", "broken by B"],
                         ["unstable", "unstable in either"], ["flips_a", "unstable in A"], ["flips_b", "unstable in B"],
                         ["correct_both", "stable-correct in both"], ["wrong_both", "stable-wrong in both"]];
  var SIDE = ["#5e3c99", "#e66101"], STRIP_W = 200, STRIP_H = 30, PAD = 5;
  var cmp = {a: null, b: null, outcome: "", sel: null, limit: ROWS, data: null, open: null};

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

  function exampleDetail(P, e) {  // one example opened: full texts, every seed of A and of B, its categories
    var ds = P.ds, r = e.row, gold = ds.label.charAt(r);
    var sides = [["A", P.A, 0, e.ca, e.na], ["B", P.B, 1, e.cb, e.nb]].map(function (s) {
      return "<tr><th style='text-align:left;color:" + SIDE[s[2]] + "'>" + s[0] + ": " + esc(P.names[s[2]]) +
        "</th><td>" + s[3] + "/" + s[4] + " right</td>" + predCells(s[1], r, s[0].toLowerCase(), gold) + "</tr>";
    }).join("");
    var cats = P.cats.filter(function (c) { return (ds.members[c] || []).indexOf(r) >= 0; })
      .map(function (c) { return D.categories[c]; });
    return "<div class='cmp-example' data-id='" + esc(ds.ids[r]) + "' data-outcome='" + e.outcome + "'><p><b>" +
      esc(ds.ids[r]) + "</b> · gold " + (gold === "1" ? "E" : "N") + " · " +
      esc(OUTCOME_WORDS[e.outcome] + (e.flips ? " (flips in " + e.flips + ")" : "")) + "</p><p><b>premise</b> " +
      esc(ds.texts[ds.premise[r]]) + "<br><b>hypothesis</b> " + esc(ds.texts[ds.hypothesis[r]]) + "</p>" +
      "<table class='cmp-seeds'><tbody>" + sides + "</tbody></table><p class='meta'>features (gold): " +
      esc(featureNames(ds.gold[r]) || "–") + "; features (annotator): " +
      esc(ds.auto ? featureNames(ds.auto[r]) : "–") + "; compared categories: " + esc(cats.join(", ") || "–") +
      "</p></div>";
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
    var columns = 9 + P.A.seeds.length + P.B.seeds.length;
    var rows = shown.map(function (e) {
      var r = e.row, gold = ds.label.charAt(r), opened = cmp.open === r;
      return "<tr class='cmp-ex" + (opened ? " open" : "") + "' data-row='" + r + "' data-id='" + esc(ds.ids[r]) +
        "' data-outcome='" + e.outcome + "' title='click: open this example'><td>" + esc(ds.ids[r]) +
        "</td><td class='t'>" + esc(ds.texts[ds.premise[r]]) + "</td><td class='t'>" + esc(ds.texts[ds.hypothesis[r]]) +
        "</td><td class='gold'>" + (gold === "1" ? "E" : "N") + "</td>" + predCells(P.A, r, "a", gold) +
        predCells(P.B, r, "b", gold) + "<td class='n'>" + e.ca + "/" + e.na + "</td><td class='n'>" + e.cb + "/" +
        e.nb + "</td><td>" + esc(OUTCOME_WORDS[e.outcome] + (e.flips ? " (flips in " + e.flips + ")" : "")) +
        "</td><td class='t'>" + esc(featureNames(ds.gold[r])) + "</td><td class='t'>" +
        esc(ds.auto ? featureNames(ds.auto[r]) : "–") + "</td></tr>" + (opened ?
        "<tr class='cmp-open'><td colspan='" + columns + "'>" + exampleDetail(P, e) + "</td></tr>" : "");
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
    cmp.limit = ROWS; cmp.open = null;
    renderCompareFilters(); renderCompare();
  }
  $("cmp-a").addEventListener("change", onCompareChoice);
  $("cmp-b").addEventListener("change", onCompareChoice);
  $("cmp-outcome").addEventListener("change", function () {
    cmp.outcome = $("cmp-outcome").value; cmp.limit = ROWS; cmp.open = null; renderCompareDetail();
  });
  $("cmp-table").addEventListener("click", function (event) {
    var tr = event.target.closest("tr.cmp-row");
    if (!tr) { return; }
    cmp.sel = +tr.getAttribute("data-c"); cmp.limit = ROWS; cmp.open = null;
    Array.prototype.forEach.call($("cmp-table").querySelectorAll("tr.cmp-row.sel"), function (row) {
      row.classList.remove("sel");
    });
    tr.classList.add("sel");
    renderCompareDetail();
    var top = $("cmp-detail").getBoundingClientRect().top;
    if (top < 0 || top > window.innerHeight - 80) { $("cmp-detail").scrollIntoView({block: "start"}); }
  });
  $("cmp-detail").addEventListener("click", function (event) {
    if (event.target.closest("button.more")) { cmp.limit += ROWS; renderCompareDetail(); return; }
    var tr = event.target.closest("tr.cmp-ex");
    if (tr) {  // open the example below its row (a second click closes it)
      var r = +tr.getAttribute("data-row");
      cmp.open = cmp.open === r ? null : r;
      renderCompareDetail();
    }
  });
  (function () { var pair = defaultPair(); cmp.a = pair[0]; cmp.b = pair[1]; })();
"""


def resolve_pair(payload: dict, select_a: Mapping, select_b: Mapping, names: tuple[str, str] | None = None) -> dict:
    """Find the two settings of the explorer's data that the selections name, as the page's ``pair``.

    ``select_a`` and ``select_b`` map setting keys (``experiment``, ``language``, ``model``, ``dataset``) to values,
    compared as text; each must name exactly one setting, both on one dataset. Returns ``{"a", "b", "names"}``;
    raises :class:`~diagnostics.core.errors.UserInputError` (one line) otherwise.

    Parameters
    ----------
    payload : dict
        The explorer's data (:func:`diagnostics.explorer.read_payload`).
    select_a : Mapping
        Setting key -> value naming setting A.
    select_b : Mapping
        Setting key -> value naming setting B.
    names : tuple of (str, str), optional
        The two settings' names on the page (default: from what tells them apart).

    Returns
    -------
    dict
        The page's ``pair``: ``a`` and ``b``, the indices of the two settings, and their ``names``.
    """
    from ..explorer import side_names

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


__all__ = ["COMPARE_SCRIPT", "COMPARE_SECTION", "COMPARE_STYLE", "resolve_pair"]
