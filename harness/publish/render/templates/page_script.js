(function () {
  "use strict";
  // Everything drawn from data goes through textContent / setAttribute: never innerHTML.
  var D = JSON.parse(document.getElementById("data").textContent);
  var OUT = D.outcomes;
  // Which outcomes fail and which work is defined once, in Python (harness/outcomes.py), and comes with the data.
  var BAD = {}, GOOD = {};
  D.bad.forEach(function (o) { BAD[o] = 1; });
  D.good.forEach(function (o) { GOOD[o] = 1; });
  var PAGE = 100;
  var cols = D.columns, feats = D.features;
  var NS = "http://www.w3.org/2000/svg";
  var nowMs = Date.now();

  // ---- the test data, in parts (inside the page, or in data/ beside it) -------------------
  var rowsOf = feats.map(function () { return null; });  // feature index -> its rows once loaded
  var pending = {};  // part name -> its promise
  var rowById = {};  // test id -> [row, feature index]
  var allLoaded = false, loadError = null;
  function part(name) {
    if (!pending[name]) {
      pending[name] = D.parts
        ? Promise.resolve(D.parts[name])
        : fetch(D.data_dir + "/" + name + ".json").then(function (r) {
            if (!r.ok) throw new Error("HTTP " + r.status);
            return r.json();
          });
      pending[name].catch(function (e) { failed(name, e); });
    }
    return pending[name];
  }
  function failed(name, e) {
    if (loadError) return;
    loadError = name;
    var where = location.protocol === "file:"
      ? " This page reads its tests from " + D.data_dir + "/ beside it, which a browser does not allow a page opened from disk: serve the folder (python3 -m http.server) or make a one-file page with `harness report MATRIX --format html`."
      : "";
    document.getElementById("warnings").appendChild(el("p", "warn bad load-error", "Could not load " + D.data_dir + "/" + name + ".json (" + (e && e.message || e) + ")." + where));
  }
  function loadFeature(fi) {
    if (rowsOf[fi]) return Promise.resolve(rowsOf[fi]);
    return Promise.all(feats[fi].parts.map(part)).then(function (chunks) {
      if (!rowsOf[fi]) {
        rowsOf[fi] = [].concat.apply([], chunks);
        rowsOf[fi].forEach(function (row) { rowById[row[0]] = [row, fi]; });
      }
      return rowsOf[fi];
    });
  }
  function loadAll() {
    return Promise.all(feats.map(function (f, fi) { return loadFeature(fi); })).then(function () { allLoaded = true; });
  }
  var redraw = null;
  function later(promise) {
    // Draw again once `promise` has brought what the last draw was missing (once, however many ask).
    promise.then(function () {
      if (redraw) return;
      redraw = setTimeout(function () { redraw = null; render(); }, 0);
    }, function () {});
  }

  cols.forEach(function (c) {
    var when = c.when ? Date.parse(c.when) : NaN;
    c.ageHours = isNaN(when) ? null : (nowMs - when) / 3600000;
    c.shipped = c.state !== "not-shipped";  // upstream builds this variant for this release
    c.hasData = c.state !== "no-data" && c.shipped;
    c.stale = c.hasData && c.ageHours !== null && c.ageHours > D.stale_after_hours;
  });

  var S = {};
  var shown = {};  // feature id -> how many test rows are drawn

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  // Who vouches for a column (a matrix merged with a trust file): a tag, its reason or signer as the title.
  function vouchTag(p) {
    var tag = el("span", "tag vouch-" + p.state, p.state === "verified" ? "VERIFIED" : p.state.toUpperCase());
    tag.title = p.state === "verified" ? "verified by " + p.by + (p.signer ? " (" + p.signer + ")" : "") : p.reason || "";
    return tag;
  }
  function shellQuote(s) { return /^[\w@%+=:,.\/-]+$/.test(s) ? s : "'" + s.replace(/'/g, "'\"'\"'") + "'"; }
  function safeUrl(url) { return typeof url === "string" && /^https?:\/\//i.test(url) ? url : null; }
  function stateWord(state) { return state === "no-data" ? "NO DATA" : state === "not-shipped" ? "not shipped" : state === "not-in-release" ? "not in this release" : state; }
  function stateLabel(state) { return (D.states[state] ? D.states[state].symbol + " " : "") + stateWord(state); }
  function outcomeLabel(o) { return (D.outcome_symbols[o] || "") + " " + o; }
  function fmtAge(h) { return h < 48 ? Math.round(h) + " h" : Math.round(h / 24) + " days"; }
  function fmtSeconds(s) { return s === null || s === undefined ? "?" : s === 0 ? "<1 ms" : s < 1 ? Math.round(s * 1000) + " ms" : s.toFixed(1) + " s"; }

  // ---- URL state ---------------------------------------------------------------------
  function readState() {
    var p = new URLSearchParams(location.hash.replace(/^#/, ""));
    S = {
      outcome: p.get("outcome") || "", backend: p.get("backend") || "", feature: p.get("feature") || "",
      q: p.get("q") || "", differs: p.get("differs") === "1", only: p.get("only") || "",
      open: (p.get("open") || "").split(",").filter(Boolean), test: p.get("test") || "", col: p.get("col") || "",
      release: p.get("release") || ""
    };
  }
  function writeState() {
    var p = new URLSearchParams();
    ["outcome", "backend", "feature", "q", "only", "test", "col", "release"].forEach(function (k) { if (S[k]) p.set(k, S[k]); });
    if (S.differs) p.set("differs", "1");
    if (S.open.length) p.set("open", S.open.join(","));
    var hash = p.toString();
    if (hash !== location.hash.replace(/^#/, "")) history.replaceState(null, "", hash ? "#" + hash : location.pathname + location.search);
  }

  // ---- filtering ---------------------------------------------------------------------
  function visibleCols() {
    var out = [];
    cols.forEach(function (c, i) { if (!S.backend || c.id === S.backend || c.backend === S.backend) out.push(i); });
    return out;
  }
  function testFilterActive() { return !!(S.outcome || S.q || S.differs || S.only); }
  function isBad(r) { return !!r && BAD[OUT[r[0]]] === 1; }
  function makeMatcher(vis) {
    var q = S.q.toLowerCase();
    var onlyIdx = S.only ? cols.findIndex(function (c) { return c.id === S.only; }) : -1;
    var dataCols = [];
    cols.forEach(function (c, i) { if (c.hasData) dataCols.push(i); });
    return function (t) {
      var rs = t[1], i;
      if (q && t[0].toLowerCase().indexOf(q) < 0) return false;
      if (S.outcome) {
        var hit = false;
        for (i = 0; i < vis.length && !hit; i++) {
          var r = rs[vis[i]];
          if (r) hit = S.outcome === "problems" ? isBad(r) : OUT[r[0]] === S.outcome;
        }
        if (!hit) return false;
      }
      if (S.differs) {
        var first = null, differs = false;
        for (i = 0; i < dataCols.length; i++) {
          var v = rs[dataCols[i]] ? rs[dataCols[i]][0] : -1;
          if (first === null) first = v; else if (v !== first) { differs = true; break; }
        }
        if (!differs) return false;
      }
      if (S.only) {
        if (onlyIdx < 0 || !isBad(rs[onlyIdx])) return false;
        for (i = 0; i < dataCols.length; i++) if (dataCols[i] !== onlyIdx && isBad(rs[dataCols[i]])) return false;
      }
      return true;
    };
  }

  // ---- header ------------------------------------------------------------------------
  function spark(values, title) {
    // values: numbers or null (a gap); drawn against the largest.
    var w = 90, h = 22, svg = document.createElementNS(NS, "svg");
    svg.setAttribute("class", "spark"); svg.setAttribute("width", w); svg.setAttribute("height", h);
    svg.setAttribute("role", "img");
    var top = 0;
    values.forEach(function (v) { if (v !== null && v > top) top = v; });
    var n = values.length, segs = [], cur = [];
    values.forEach(function (v, i) {
      if (v === null) { if (cur.length) segs.push(cur); cur = []; return; }
      var x = n === 1 ? w / 2 : 2 + (i * (w - 4)) / (n - 1);
      var y = h - 2 - (top ? v / top : 0) * (h - 4);
      cur.push(x.toFixed(1) + "," + y.toFixed(1));
    });
    if (cur.length) segs.push(cur);
    segs.forEach(function (seg) {
      var line = document.createElementNS(NS, seg.length > 1 ? "polyline" : "circle");
      if (seg.length > 1) { line.setAttribute("points", seg.join(" ")); line.setAttribute("fill", "none"); }
      else { var xy = seg[0].split(","); line.setAttribute("cx", xy[0]); line.setAttribute("cy", xy[1]); line.setAttribute("r", "2"); }
      line.setAttribute("stroke", "#0969da"); line.setAttribute("stroke-width", "1.5");
      svg.appendChild(line);
    });
    var t = document.createElementNS(NS, "title");
    t.textContent = title;
    svg.appendChild(t);
    svg.setAttribute("aria-label", title);
    return svg;
  }
  function trendSpark(points) {
    var last = null;
    var values = points.map(function (p) { if (p[1] === null || !p[2]) return null; last = p; return p[1] / p[2]; });
    var title = "trend over " + points.length + " run(s)" + (last ? "; latest " + last[1] + "/" + last[2] + " features supported, " + last[4] + " failing tests" : "");
    return spark(values, title);
  }
  function columnHeader(c) {
    var th = el("th", "col" + (c.stale ? " stale" : "") + (c.hasData ? "" : c.shipped ? " no-data" : " not-shipped"));
    th.setAttribute("scope", "col");
    th.setAttribute("data-col", c.id);
    th.appendChild(el("div", "colname", c.name));
    th.appendChild(el("div", "colid", c.id));
    if (c.torch || !c.shipped) th.appendChild(el("div", "coltorch", "torch " + (c.torch || c.release)));
    if (c.python) th.appendChild(el("div", "colpython", c.python)).title = c.interpreter || "";
    if (c.variant) th.appendChild(el("span", "tag variant", c.variant.toUpperCase())).title = (c.variant_reason || c.variant) + "; kept apart from the backend's own columns and never its verdict";
    if (!c.shipped) th.appendChild(el("span", "tag not-shipped", "NOT SHIPPED")).title = c.error || "";
    else if (!c.hasData) th.appendChild(el("span", "tag no-data", "NO DATA"));
    if (c.stale) th.appendChild(el("span", "tag stale", "STALE")).title = "results are " + fmtAge(c.ageHours) + " old (limit " + D.stale_after_hours + " h)";
    if (c.state === "partial-run") th.appendChild(el("span", "tag partial-run", "PARTIAL RUN")).title = "cell status: " + c.status;
    if (c.provenance) th.appendChild(vouchTag(c.provenance));
    if (c.runs && c.runs.length > 1) th.appendChild(el("span", "tag composite", "COMPOSITE OF " + c.runs.length + " RUNS")).title = c.runs.map(function (r) { return r.run_id + " (" + (r.started_at || "?") + "): " + r.tests + " test(s)" + (r.selection ? ", a partial run" : ", the complete base run"); }).join("\n");
    if (c.partial) th.appendChild(el("span", "tag partial-sel", "PARTIAL: A SELECTION")).title = "a run of some tests only, with no complete run of this cell id to build on";
    var why = c.error || "no test results";
    var score = c.score ? c.score.supported + "/" + c.score.judged + " features supported" : (why.length > 90 ? why.slice(0, 89) + "…" : why);
    th.appendChild(el("div", "score", score)).title = c.score ? "" : why;
    var trend = D.trend[c.id];
    if (trend && trend.length) th.appendChild(trendSpark(trend));
    var details = el("details", "env");
    details.appendChild(el("summary", null, "environment"));
    var dl = el("dl");
    var tip = [];
    c.env.forEach(function (kv) { dl.appendChild(el("dt", null, kv[0])); dl.appendChild(el("dd", null, kv[1])); tip.push(kv[0] + ": " + kv[1]); });
    dl.appendChild(el("dt", null, "cell status")); dl.appendChild(el("dd", null, c.status || "unknown"));
    if (c.error) { dl.appendChild(el("dt", null, "error")); dl.appendChild(el("dd", null, c.error)); }
    if (c.variant_reason) { dl.appendChild(el("dt", null, "kept apart")); dl.appendChild(el("dd", null, c.variant_reason + "; not this backend's verdict")); }
    if (c.reproduce) { dl.appendChild(el("dt", null, "rerun")); var code = el("dd"); code.appendChild(el("code", "rerun", c.reproduce)); dl.appendChild(code); }
    c.errors.forEach(function (e) { dl.appendChild(el("dt", null, "problem")); dl.appendChild(el("dd", null, e)); });
    var run = safeUrl(c.run_url);
    if (run) { dl.appendChild(el("dt", null, "run")); var dd = el("dd"); var a = el("a", null, "job log"); a.href = run; a.rel = "noopener noreferrer"; dd.appendChild(a); dl.appendChild(dd); }
    details.appendChild(dl);
    th.appendChild(details);
    th.title = tip.join("\n");
    return th;
  }

  // ---- body --------------------------------------------------------------------------
  function countsText(cell) {
    // Skips are told apart by reason class; host-side tests are shown but do not decide the state.
    var counts = cell.counts, skips = cell.skips || {};
    var text = OUT.filter(function (o) { return counts[o]; }).map(function (o) {
      var part = counts[o] + " " + o;
      if (o === "skipped") {
        var classes = Object.keys(skips).sort().map(function (k) { return skips[k] + " " + k; });
        if (classes.length) part += " (" + classes.join(", ") + ")";
      }
      return part;
    }).join(" · ");
    if (cell.measurements) text += (text ? " · " : "") + cell.measurements + " measured (figures, not passes)";
    if (cell.host_tests) text += " · judged without " + cell.host_tests + " host-side tests";
    if (cell.reason) text = cell.reason + (text ? " · ran: " + text : "");
    if (cell.early) text += " · " + cell.early + " passed before the feature's release";
    if (cell.overlay) text += " · " + cell.overlay + " from a later rerun";
    if (cell.later) text += " · " + cell.later + " of a part from a later release, not judged";
    if (cell.evidence) text += " · ran " + evidenceText(cell.evidence);
    return text;
  }
  function evidenceText(ev) {
    // What the profiler saw run (the suites' evidence): kernels of the claimed ops, device, graph replays.
    var names = (ev.kernels || []).map(function (k) { return k[0]; });
    var text = names.length ? names.join(", ") + " on " + ev.device : "no device work seen on " + ev.device;
    if (ev.replayed) text += " · " + ev.replayed + " graph replays";
    return text;
  }
  function featureRow(fi, f, vis, open, nMatch, nTotal) {
    var tr = el("tr", "feature");
    tr.setAttribute("data-feature", f.id);
    var th = el("th");
    th.setAttribute("scope", "row");
    var btn = el("button", "toggle", (open ? "▾ " : "▸ ") + f.title);
    btn.type = "button";
    btn.setAttribute("aria-expanded", open ? "true" : "false");
    btn.addEventListener("click", function () { toggleFeature(f.id); });
    th.appendChild(btn);
    th.appendChild(el("span", "fid colid", " " + f.id));
    if (f.since) th.appendChild(el("div", "since", "since " + f.since));
    if (f.scope === "host") th.appendChild(el("span", "tag host", "backend-independent: not scored")).title = "this feature does not depend on the backend; it is shown but never counts in a column's score";
    th.appendChild(el("div", "fcount", testFilterActive() ? nMatch + " of " + nTotal + " tests match" : nTotal + " tests"));
    if (f.claim) th.title = f.claim;
    tr.appendChild(th);
    vis.forEach(function (ci) {
      var c = cols[ci], cell = f.cells[ci];
      var state = !c.shipped ? "not-shipped" : !c.hasData || !cell ? "no-data" : cell.state;
      var td = el("td", "state st-" + state, stateLabel(state));
      td.setAttribute("data-col", c.id);
      td.setAttribute("data-state", state);
      if (cell && c.hasData && state !== "no-data") td.appendChild(el("span", "counts", countsText(cell)));
      td.title = (D.states[state] || {}).meaning || "";
      tr.appendChild(td);
    });
    return tr;
  }
  function testRow(t, vis) {
    var tr = el("tr", "test");
    tr.setAttribute("data-test", t[0]);
    var th = el("th", "tid", t[0]);
    th.setAttribute("scope", "row");
    tr.appendChild(th);
    vis.forEach(function (ci) {
      var c = cols[ci], r = t[1][ci];
      var td = el("td");
      td.setAttribute("data-col", c.id);
      var outcome = r ? OUT[r[0]] : (c.hasData ? "absent" : c.shipped ? "no-data" : "not-shipped");
      td.setAttribute("data-outcome", outcome);
      if (!r) { td.appendChild(el("span", "oc-absent", c.hasData ? "— not collected" : c.shipped ? "NO DATA" : "not shipped")); tr.appendChild(td); return; }
      var b = el("button", "oc-" + outcome, outcomeLabel(outcome));
      b.type = "button";
      if (S.test === t[0] && S.col === c.id) b.classList.add("selected");
      b.addEventListener("click", function () { S.test = t[0]; S.col = c.id; writeState(); showDetail(); markSelected(); });
      td.appendChild(b);
      tr.appendChild(td);
    });
    return tr;
  }
  function noteRow(vis, cls, text) {
    var tr = el("tr", cls), td = el("td", null, text);
    td.colSpan = vis.length + 1;
    tr.appendChild(td);
    return tr;
  }
  function figuresRow(rows, vis) {
    // The feature's measured figures per column, with units, shapes and the release note's claim.
    var tr = el("tr", "figures"), td = el("td");
    td.colSpan = vis.length + 1;
    var table = el("table", "figures"), head = el("tr");
    ["Figure", "Column", "Value", "Shape", "dtype", "Claim"].forEach(function (h) { head.appendChild(el("th", null, h)); });
    table.appendChild(head);
    rows.forEach(function (r) {
      if (r[1] >= 0 && vis.indexOf(r[1]) < 0) return;
      var row = el("tr");
      row.title = r[6];
      [r[0], r[1] >= 0 ? cols[r[1]].label + " (" + cols[r[1]].id + ")" : "", r[2], r[3], r[4], r[5]].forEach(function (v, i) {
        row.appendChild(el("td", i === 2 ? "figure-value" : null, v));
      });
      table.appendChild(row);
    });
    var cap = el("caption", null, "Measured figures");
    table.insertBefore(cap, table.firstChild);
    td.appendChild(table); tr.appendChild(td);
    return tr;
  }
  function markSelected() {
    document.querySelectorAll("tr.test td button.selected").forEach(function (b) { b.classList.remove("selected"); });
    document.querySelectorAll("tr.test").forEach(function (tr) {
      if (tr.getAttribute("data-test") !== S.test) return;
      tr.querySelectorAll("td").forEach(function (td) { if (td.getAttribute("data-col") === S.col && td.firstChild.tagName === "BUTTON") td.firstChild.classList.add("selected"); });
    });
  }
  function toggleFeature(fid) {
    // Without a test filter a feature is closed until opened; with one, open until closed ("!id").
    var key = testFilterActive() ? "!" + fid : fid;
    var i = S.open.indexOf(key);
    if (i >= 0) S.open.splice(i, 1); else S.open.push(key);
    writeState(); render();
  }

  function render() {
    var t0 = performance.now();
    var vis = visibleCols();
    var thead = document.querySelector("#matrix thead"), tbody = document.querySelector("#matrix tbody");
    var hr = el("tr");
    var corner = el("th", null, "Feature / test");
    corner.setAttribute("scope", "col");
    hr.appendChild(corner);
    vis.forEach(function (ci) { hr.appendChild(columnHeader(cols[ci])); });
    thead.replaceChildren(hr);
    var match = makeMatcher(vis), active = testFilterActive(), frag = document.createDocumentFragment(), total = 0;
    // A filter looks at every test: until all are here, the features are drawn without their counts.
    var waiting = active && !allLoaded;
    if (waiting && !loadError) later(loadAll());
    feats.forEach(function (f, fi) {
      if (S.feature && f.id !== S.feature) return;
      var rows = rowsOf[fi], hits = rows;
      if (active && rows) { hits = rows.filter(match); if (!hits.length && !waiting) return; }
      total += hits ? hits.length : 0;
      var open = active ? S.open.indexOf("!" + f.id) < 0 : S.open.indexOf(f.id) >= 0;
      frag.appendChild(featureRow(fi, f, vis, open, hits ? hits.length : "…", f.tests));
      if (!open) return;
      if (!rows) {
        if (!loadError) later(loadFeature(fi));
        frag.appendChild(noteRow(vis, "loading", loadError ? "tests not available (see the warning above)" : "loading " + f.tests + " tests…"));
        return;
      }
      if (D.figures[fi]) frag.appendChild(figuresRow(D.figures[fi], vis));
      var n = Math.min(hits.length, shown[f.id] || PAGE);
      for (var k = 0; k < n; k++) frag.appendChild(testRow(hits[k], vis));
      if (n < hits.length) {
        var more = el("tr", "more"), td = el("td");
        td.colSpan = vis.length + 1;
        var b = el("button", null, "Show " + Math.min(PAGE, hits.length - n) + " more (" + (hits.length - n) + " not shown)");
        b.type = "button";
        b.addEventListener("click", function () { shown[f.id] = n + PAGE; render(); });
        td.appendChild(b); more.appendChild(td); frag.appendChild(more);
      }
    });
    tbody.replaceChildren(frag);
    document.getElementById("match-count").textContent = !active
      ? D.test_count + " tests, " + feats.length + " features, " + cols.length + " columns"
      : waiting ? "loading " + D.test_count + " tests to filter…" : total + " of " + D.test_count + " tests match";
    document.body.setAttribute("data-render-ms", String(Math.round(performance.now() - t0)));
    renderReleases();
    showDetail();
  }

  // ---- release over release ---------------------------------------------------------
  function renderReleases() {
    // Rows features, columns the torch builds of one backend (oldest first); between two builds,
    // how many of the feature's tests newly fail or newly pass.
    var box = document.getElementById("releases");
    var rel = (D.releases || [])[S.release === "" ? -1 : Number(S.release)];
    if (!rel) { box.hidden = true; box.replaceChildren(); return; }
    var table = el("table", "releases"), head = el("tr");
    table.appendChild(el("caption", null, "Release over release: " + rel.name));
    head.appendChild(el("th", null, "Feature"));
    rel.cols.forEach(function (ci, k) {
      if (k > 0) head.appendChild(el("th", "step", "→"));
      var th = el("th", "col", "torch " + (cols[ci].torch || cols[ci].release || "?"));
      th.setAttribute("data-col", cols[ci].id);
      if (cols[ci].python) th.appendChild(el("div", "colpython", cols[ci].python));
      th.appendChild(el("div", "colid", cols[ci].id));
      if (cols[ci].provenance) th.appendChild(vouchTag(cols[ci].provenance));
      head.appendChild(th);
    });
    table.appendChild(head);
    function stepInto(ci) { return rel.steps.filter(function (s) { return s.b === ci; })[0]; }
    feats.forEach(function (f, fi) {
      var tr = el("tr");
      tr.setAttribute("data-feature", f.id);
      tr.appendChild(el("th", null, f.title));
      rel.cols.forEach(function (ci, k) {
        var step = stepInto(ci);
        if (k > 0) {
          var ch = step && step.features[fi];
          var parts = [];
          if (ch && ch[0]) parts.push(ch[0] + " newly failing");
          if (ch && ch[1]) parts.push(ch[1] + " newly passing");
          tr.appendChild(el("td", "step" + (ch && ch[0] ? " worse" : ""), parts.join(", ")));
        }
        var cell = f.cells[ci], state = !cols[ci].shipped ? "not-shipped" : cell ? cell.state : "no-data";
        var td = el("td", "state st-" + state, stateLabel(state));
        td.setAttribute("data-col", cols[ci].id);
        td.setAttribute("data-state", state);
        if (step && step.new.indexOf(fi) >= 0) {
          td.appendChild(el("span", "tag new-in", "NEW IN " + (cols[ci].release || ""))).title = "this row arrived with torch " + cols[ci].release;
          td.setAttribute("data-new", "1");
        }
        var prev = k > 0 ? f.cells[rel.cols[k - 1]] : null;
        if (prev && prev.state === "not-in-release" && state !== "not-in-release" && state !== "not-shipped") {
          // not fixed: the older build could not have it
          td.appendChild(el("span", "tag arrived", "ARRIVED" + (f.since ? " IN " + f.since : ""))).title = "the older build could not have this feature (" + (prev.reason || "") + ")";
          td.setAttribute("data-arrived", "1");
        }
        tr.appendChild(td);
      });
      table.appendChild(tr);
    });
    // The device API of each build against the previous one, and how much of what is new the suites exercise.
    var apiRow = el("tr", "device-api");
    apiRow.appendChild(el("th", null, "Device API"));
    rel.cols.forEach(function (ci, k) {
      var step = stepInto(ci);
      if (k > 0) apiRow.appendChild(el("td", "step"));
      var td = el("td", "api", step && step.api ? step.api : "");
      td.setAttribute("data-col", cols[ci].id);
      if (step && step.api_new.length) td.title = "new: " + step.api_new.join(", ") + (step.api_tested.length ? "\ntested: " + step.api_tested.join(", ") : "");
      apiRow.appendChild(td);
    });
    table.appendChild(apiRow);
    box.replaceChildren(table);
    box.hidden = false;
  }

  // ---- a test's history --------------------------------------------------------------
  function codeLabel(code) { return D.history.codes[code] || code; }
  function codeSymbol(code) {
    if (code === "K") return "⚑";
    if (code === "-") return "·";
    if (code === "?") return " ";
    return D.outcome_symbols[D.history.codes[code]] || code;
  }
  function runText(i, c) {
    var run = D.history.runs[i], build = (D.history.builds[c.id] || [])[i];
    return "run " + run[0] + ", " + (build ? "torch " + build : "torch unknown") + ", " + run[1];
  }
  function strip(codes, c, cls) {
    var box = el("span", cls);
    for (var i = 0; i < codes.length; i++) {
      var mark = el("span", "tl-run oc-" + codeLabel(codes.charAt(i)).replace(/ /g, "-"), codeSymbol(codes.charAt(i)));
      mark.title = runText(i, c) + ": " + codeLabel(codes.charAt(i));
      mark.setAttribute("data-code", codes.charAt(i));
      box.appendChild(mark);
    }
    return box;
  }
  function timelineNodes(c, codes, durs, v) {
    // codes, durs: one character per run in D.history.runs (oldest first); v: the verdict, if any.
    v = v || {};
    var box = el("div", "timeline");
    box.setAttribute("data-col", c.id);
    box.appendChild(strip(codes, c, "tl-strip"));
    var dl = el("dl");
    function row(cls, k, text, i) {
      dl.appendChild(el("dt", null, k));
      var dd = el("dd", cls, text);
      var url = i !== undefined ? safeUrl(D.history.runs[i][2]) : null;
      if (url) { dd.appendChild(document.createTextNode(" ")); var a = el("a", null, "run log"); a.href = url; a.rel = "noopener noreferrer"; dd.appendChild(a); }
      dl.appendChild(dd);
    }
    if (v.first_bad !== undefined) {
      row("tl-first-bad", "first bad", runText(v.first_bad, c), v.first_bad);
      row("tl-last-good", "last good", v.last_good !== undefined ? runText(v.last_good, c) : "none in the runs shown (bad since the first)", v.last_good);
      if (v.fixed !== undefined) row("tl-fixed", "fixed in", runText(v.fixed, c), v.fixed);
    } else {
      row("tl-never", "failures", "none in the " + codes.length + " runs shown");
    }
    (v.flips || []).forEach(function (f) {
      row("tl-flips", f[1] >= 2 ? "flaky across runs" : "changed once", f[1] + " flip(s) between good and bad within torch " + (f[0] || "unknown"));
    });
    if (v.reruns) row("tl-reruns", "passed on a rerun", "in " + v.reruns + " run(s)");
    var seconds = [];
    for (var i = 0; i < durs.length; i++) { var s = D.history.durations[durs.charAt(i)]; seconds.push(s === undefined ? null : s); }
    var known = seconds.filter(function (s) { return s !== null; });
    if (known.length) {
      var sorted = known.slice().sort(function (a, b) { return a - b; });
      row("tl-duration", "duration", fmtSeconds(known[0]) + " → " + fmtSeconds(known[known.length - 1]) + " (min " + fmtSeconds(sorted[0]) + ", max " + fmtSeconds(sorted[sorted.length - 1]) + ")");
      dl.lastChild.appendChild(spark(seconds, "duration over " + seconds.length + " run(s)"));
    }
    box.appendChild(dl);
    return box;
  }
  function historySection(t, c, body) {
    // Loaded when the test is opened: the one part of the history holding it (and its neighbours).
    if (!D.history || t[3] < 0) return;
    var size = D.history.shard, runs = D.history.runs.length, pos = t[3] % size;
    var title = "History (last " + runs + " published runs)";
    var section = el("section", "history");
    section.appendChild(el("h3", null, title));
    section.appendChild(el("p", "loading", "loading…"));
    body.appendChild(section);
    part("h" + Math.floor(t[3] / size)).then(function (shard) {
      function codesOf(col, which) { var all = shard[which][col]; return all ? all.substr(pos * runs, runs) : null; }
      var nodes = [el("h3", null, title)];
      var mine = codesOf(c.id, "o");
      if (mine) {
        nodes.push(el("h4", null, "on " + c.label + " (" + c.id + ")"));
        nodes.push(timelineNodes(c, mine, codesOf(c.id, "d"), (shard.v[c.id] || {})[pos]));
        var reruns = (D.history.reruns || {})[c.id] || [];
        reruns.forEach(function (byTest, i) {
          if (byTest[t[0]]) nodes.push(el("p", "tl-rerun", "published run " + D.history.runs[i][1] + ": the result came from a later partial " + byTest[t[0]]));
        });
      } else nodes.push(el("p", null, "no recorded results on " + c.id));
      cols.forEach(function (other) {
        var codes = other.id === c.id ? null : codesOf(other.id, "o");
        if (!codes || /^[-?]*$/.test(codes)) return;  // no result of this test there in any run shown
        var line = el("p", "tl-other");
        line.setAttribute("data-col", other.id);
        line.appendChild(el("span", "colid", other.id + " "));
        line.appendChild(strip(codes, other));
        nodes.push(line);
      });
      section.replaceChildren.apply(section, nodes);
    }, function () { section.replaceChildren(el("p", "warn", "history not available")); });
  }

  // ---- cell detail -------------------------------------------------------------------
  var detailShown = "";
  function showDetail() {
    var aside = document.getElementById("detail"), body = document.getElementById("detail-body");
    var ci = cols.findIndex(function (c) { return c.id === S.col; });
    if (!S.test || ci < 0) { aside.hidden = true; body.replaceChildren(); detailShown = ""; return; }
    var found = rowById[S.test];
    if (!found) {
      if (!allLoaded && !loadError) loadAll().then(function () { if (rowById[S.test]) showDetail(); });
      else { aside.hidden = true; body.replaceChildren(); detailShown = ""; }
      return;
    }
    var t = found[0], r = t[1][ci];
    if (!r) { aside.hidden = true; body.replaceChildren(); detailShown = ""; return; }
    var key = S.test + "\n" + S.col;
    if (key === detailShown && !aside.hidden) return;  // already drawn (a redraw of the table must not reload it)
    detailShown = key;
    var c = cols[ci], outcome = OUT[r[0]];
    body.replaceChildren(el("h2", "tid", t[0]), el("p", null, "on " + c.label + " (" + c.id + ")"), el("p", "oc-" + outcome + " outcome", outcomeLabel(outcome)));
    aside.hidden = false;
    var detailPart = t[2] >= 0 ? part("d" + t[2]) : Promise.resolve({});
    detailPart.then(function (chunk) {
      if (detailShown !== key) return;
      var d = ((chunk[t[0]] || [])[ci]) || {};
      var nodes = [];
      var dl = el("dl");
      function row(k, v) { dl.appendChild(el("dt", null, k)); var dd = el("dd"); if (v instanceof Node) dd.appendChild(v); else dd.textContent = String(v); dl.appendChild(dd); }
      var fi = found[1];
      if (feats[fi]) row("feature", feats[fi].title + " (" + feats[fi].id + ")");
      if (d.c) row(outcome === "skipped" || outcome === "xfailed" ? "reason class" : "class", d.c);
      if (d.l) { var url = safeUrl(d.l); if (url) { var a = el("a", null, d.l); a.href = url; a.rel = "noopener noreferrer"; row("known issue", a); } else row("known issue", d.l); }
      if (r[1] !== null && r[1] !== undefined) row("duration", r[1] + " s");
      if (d.a) row("attempts", d.a);
      if (d.s !== undefined) row("strict", d.s ? "yes" : "no");
      if (d.g) row("signal", d.g);
      if (d.r) row("result from", "run " + d.r + (d.w ? " started " + d.w : "") + " (a later partial run of this column)");
      else if (c.runs && c.runs.length > 1) row("result from", "run " + c.runs[0].run_id + (c.runs[0].started_at ? " started " + c.runs[0].started_at : "") + " (the column's complete base run)");
      if (d.h) row("scope", d.h === "host" ? "host-side check (does not decide the state)" : "measurement (a figure, not a pass)");
      if (d.p) Object.keys(d.p).forEach(function (k) { row(k, typeof d.p[k] === "object" ? JSON.stringify(d.p[k]) : d.p[k]); });
      if (c.reproduce) row("rerun this test", el("code", "rerun", c.reproduce + " --test " + shellQuote(t[0])));
      nodes.push(dl);
      if (d.m) { nodes.push(el("h3", null, outcome === "skipped" || outcome === "xfailed" ? "Reason" : "Message")); nodes.push(el("pre", "message", d.m)); }
      if (d.t) { nodes.push(el("h3", null, "Trace (trimmed)")); nodes.push(el("pre", "trace", d.t)); }
      if (d.o) { nodes.push(el("h3", null, "Captured output (trimmed)")); nodes.push(el("pre", "output", d.o)); }
      (d.x || []).forEach(function (m) { nodes.push(el("h3", null, "Also reported")); nodes.push(el("pre", null, m)); });
      nodes.forEach(function (n) { body.appendChild(n); });
      historySection(t, c, body);
      body.setAttribute("data-ready", key);
    });
  }

  // ---- filters and page chrome -------------------------------------------------------
  function option(sel, value, text) { var o = el("option", null, text); o.value = value; sel.appendChild(o); }
  function setupFilters() {
    var fo = document.getElementById("f-outcome"), fb = document.getElementById("f-backend");
    var ff = document.getElementById("f-feature"), fonly = document.getElementById("f-only");
    option(fo, "", "any"); option(fo, "problems", "✘ any failure (" + D.bad.join(", ") + ")");
    OUT.forEach(function (o) { option(fo, o, outcomeLabel(o)); });
    option(fb, "", "all columns");
    cols.forEach(function (c) { option(fb, c.id, c.name + " (" + c.id + ")"); });
    option(ff, "", "all features");
    feats.forEach(function (f) { option(ff, f.id, f.title); });
    var frel = document.getElementById("f-release");
    option(frel, "", "—");
    (D.releases || []).forEach(function (r, i) { option(frel, String(i), r.name + " (" + r.cols.length + " builds)"); });
    frel.addEventListener("change", function () { S.release = frel.value; writeState(); renderReleases(); });
    option(fonly, "", "—");
    cols.forEach(function (c) { if (c.hasData) option(fonly, c.id, c.name + " (" + c.id + ")"); });
    var timer = null;
    function changed() {
      S.outcome = fo.value; S.backend = fb.value; S.feature = ff.value; S.only = fonly.value;
      S.differs = document.getElementById("f-differs").checked; S.q = document.getElementById("f-q").value;
      shown = {}; writeState(); render();
    }
    [fo, fb, ff, fonly, document.getElementById("f-differs")].forEach(function (x) { x.addEventListener("change", changed); });
    document.getElementById("f-q").addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(changed, 150); });
    document.getElementById("filters").addEventListener("submit", function (e) { e.preventDefault(); changed(); });
    document.getElementById("f-reset").addEventListener("click", function () {
      S = { outcome: "", backend: "", feature: "", q: "", differs: false, only: "", open: [], test: "", col: "", release: "" };
      syncForm(); shown = {}; writeState(); render();
    });
    document.getElementById("detail-close").addEventListener("click", function () { S.test = ""; S.col = ""; writeState(); showDetail(); markSelected(); });
    window.addEventListener("hashchange", function () { readState(); syncForm(); render(); });
  }
  function syncForm() {
    document.getElementById("f-outcome").value = S.outcome;
    document.getElementById("f-backend").value = S.backend;
    document.getElementById("f-feature").value = S.feature;
    document.getElementById("f-only").value = S.only;
    document.getElementById("f-q").value = S.q;
    document.getElementById("f-differs").checked = S.differs;
    document.getElementById("f-release").value = S.release || "";
  }
  function chrome() {
    var warn = document.getElementById("warnings");
    if (!D.alignment.aligned) warn.appendChild(el("p", "warn", "⚠ Columns ran different suite versions (" + D.alignment.suite_shas.join(", ") + "); compare with care."));
    var stale = cols.filter(function (c) { return c.stale; }), empty = cols.filter(function (c) { return !c.hasData && c.shipped; });
    if (stale.length) warn.appendChild(el("p", "warn", "⚠ STALE: " + stale.map(function (c) { return c.name + " (" + fmtAge(c.ageHours) + " old)"; }).join(", ") + "; older than " + D.stale_after_hours + " h."));
    if (empty.length) warn.appendChild(el("p", "warn", "NO DATA: " + empty.map(function (c) { return c.name + " (" + (c.error || "no test results") + ")"; }).join(", ") + ". These columns are left out of every score."));
    D.input_errors.forEach(function (e) { warn.appendChild(el("p", "warn bad", "Input not read: " + e)); });
    var withData = cols.filter(function (c) { return c.hasData; }).length;
    document.getElementById("summary").textContent = D.test_count + " tests · " + feats.length + " features · " + withData + " of " + cols.length + " columns with data.";
    var legend = document.getElementById("legend");
    legend.appendChild(el("strong", null, "Legend: "));
    Object.keys(D.states).forEach(function (s) { legend.appendChild(el("span", "st-" + s, stateLabel(s) + ": " + D.states[s].meaning)); });
    legend.appendChild(el("br"));
    legend.appendChild(el("strong", null, "Test outcomes: "));
    OUT.forEach(function (o) { legend.appendChild(el("span", "oc-" + o, outcomeLabel(o))); });
    legend.appendChild(el("br"));
    D.legend_notes.forEach(function (n) { legend.appendChild(el("span", "legend-note", n)); });
  }

  readState();
  setupFilters();
  syncForm();
  chrome();
  render();
  // When the first draw is done, by the page's own clock (from navigation start): the benchmark reads it.
  document.body.setAttribute("data-ready-ms", String(Math.round(performance.now())));
  document.body.setAttribute("data-ready", "1");
})();
