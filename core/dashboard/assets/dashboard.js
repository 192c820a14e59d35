// The sluice dashboard: polls api/snapshot every second and renders it.
// Every name comes from users: it is only ever set with textContent or as
// an attribute value, never parsed as HTML.
"use strict";
(function () {
  const history = Math.max(2, parseInt(document.body.dataset.history, 10) || 600);
  // The series of each resource and rule, oldest first, the newest point
  // the second ending at `end`: the first snapshot brings the history the
  // Guard keeps, each later one the points after `at` (its historyAt).
  const series = { resources: new Map(), rules: new Map() };
  let at = null, end = 0;
  // The SVG elements the charts are made of, cloned from the page's
  // template (the HTML parser gives them their namespace).
  const protos = {};
  for (const e of document.getElementById("chart").content.querySelectorAll("*")) protos[e.localName] = e;

  function el(tag, cls) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    return e;
  }

  // row returns the row of table keyed by key, made by make when missing.
  function row(table, key, make) {
    const body = table.tBodies[0];
    for (const tr of body.rows) {
      if (tr.dataset.key === key) return tr;
    }
    const tr = el("tr");
    tr.dataset.key = key;
    make(tr);
    body.appendChild(tr);
    return tr;
  }

  // chartRow returns the row of table keyed by key, made by make when
  // missing, and the row of its charts below it.
  function chartRow(table, key, make) {
    const body = table.tBodies[0];
    for (const tr of body.rows) {
      if (tr.dataset.key === key && !tr.classList.contains("charts")) return [tr, tr.nextElementSibling];
    }
    const tr = el("tr");
    tr.dataset.key = key;
    make(tr);
    const charts = el("tr", "charts");
    charts.dataset.key = key;
    const td = el("td");
    td.colSpan = tr.cells.length;
    charts.appendChild(td);
    body.appendChild(tr);
    body.appendChild(charts);
    return [tr, charts];
  }

  // cells adds to tr one cell per [field, class] of fields, each with the
  // attributes data-ATTR=name and data-field=field.
  function cells(tr, attr, name, fields) {
    for (const [field, cls] of fields) {
      const td = el("td", cls);
      td.setAttribute("data-" + attr, name);
      td.dataset.field = field;
      tr.appendChild(td);
    }
    tr.cells[0].textContent = name;
  }

  function get(tr, field) {
    return tr.querySelector('[data-field="' + field + '"]');
  }

  // set shows text in the cell of field; zero greys it.
  function set(tr, field, text, zero) {
    const td = get(tr, field);
    if (td.textContent !== text) td.textContent = text;
    if (zero !== undefined) td.classList.toggle("zero", zero);
  }

  function ms(v) {
    if (v >= 1000) return (v / 1000).toFixed(2) + " s";
    if (v >= 10) return v.toFixed(0) + " ms";
    return v.toFixed(1) + " ms";
  }

  // prune removes the rows whose key is not in keep.
  function prune(table, keep) {
    for (const tr of Array.from(table.tBodies[0].rows)) {
      if (!keep.has(tr.dataset.key)) tr.remove();
    }
  }

  function svg(tag, attrs, parent) {
    const e = protos[tag].cloneNode(false);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
    if (parent) parent.appendChild(e);
    return e;
  }

  // append adds the points of h (a snapshot's history of one resource or
  // rule) to the series kept in map under name, and keeps the last
  // `history` of each.
  function append(map, name, h) {
    let s = map.get(name);
    if (!s) map.set(name, (s = {}));
    if (!h) return s;
    for (const [k, vals] of Object.entries(h)) {
      if (!Array.isArray(vals)) continue;
      const old = s[k] || [];
      s[k] = old.concat(vals).slice(-history);
    }
    return s;
  }

  // nice returns a round number at or above v.
  function nice(v) {
    if (!(v > 0)) return 1;
    const p = Math.pow(10, Math.floor(Math.log10(v)));
    for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p;
    return 10 * p;
  }

  function num(v) {
    if (v >= 1e6) return Number((v / 1e6).toPrecision(3)) + "M";
    if (v >= 1e3) return Number((v / 1e3).toPrecision(3)) + "k";
    return String(Number(v.toPrecision(3)));
  }

  function clockTime(ms, seconds) {
    const d = new Date(ms);
    const p = (n) => String(n).padStart(2, "0");
    return p(d.getHours()) + ":" + p(d.getMinutes()) + (seconds ? ":" + p(d.getSeconds()) : "");
  }

  // plot draws in the chart box (made once in td, keyed by id) the lines
  // of lines ({cls, label, values, limit}), each ending at the second
  // ending at `end`, over the last `history` seconds: time on the x axis,
  // value on the y axis, labelled; a limit line is dashed. The box's
  // data-points counts the points drawn of the first line.
  function plot(td, id, title, unit, lines) {
    const W = 540, H = 150, L = 46, R = 10, T = 10, B = 22;
    let box = null;
    for (const c of td.children) if (c.dataset.chart === id) box = c;
    if (!box) {
      box = el("div", "chart");
      box.dataset.chart = id;
      const head = el("div", "chart-head");
      const t = el("span", "chart-title");
      t.textContent = title;
      head.appendChild(t);
      box.appendChild(head);
      const s = svg("svg", { width: W, height: H, viewBox: "0 0 " + W + " " + H, role: "img" });
      svg("g", { class: "grid" }, s);
      svg("g", { class: "lines" }, s);
      box.appendChild(s);
      td.appendChild(box);
    }
    const head = box.firstElementChild;
    const keys = lines.map((l) => l.cls + "|" + l.label).join("\n");
    if (head.dataset.keys !== keys) {
      head.dataset.keys = keys;
      while (head.children.length > 1) head.lastChild.remove();
      for (const l of lines) {
        const k = el("span", "key " + l.cls + (l.limit ? " limit" : ""));
        k.textContent = l.label;
        head.appendChild(k);
      }
    }
    const s = box.querySelector("svg");
    const [grid, group] = s.children;
    let top = 0;
    for (const l of lines) for (const v of l.values) if (v !== null && v > top) top = v;
    top = nice(top * 1.05);
    const pw = W - L - R, ph = H - T - B;
    const x = (slot) => L + (slot / (history - 1)) * pw;
    const y = (v) => T + ph - (v / top) * ph;
    grid.replaceChildren();
    for (const f of [0, 0.5, 1]) {
      const yy = y(top * f);
      svg("line", { class: f === 0 ? "axis" : "tick", x1: L, x2: W - R, y1: yy, y2: yy }, grid);
      const t = svg("text", { class: "ylabel", x: L - 5, y: yy + 3.5, "text-anchor": "end" }, grid);
      t.textContent = num(top * f) + (f === 1 ? unit : "");
    }
    svg("line", { class: "axis", x1: L, x2: L, y1: T, y2: T + ph }, grid);
    // Time ticks on round wall-clock times, about five of them.
    const span = history * 1000;
    const steps = [5e3, 10e3, 15e3, 30e3, 60e3, 120e3, 300e3, 600e3, 900e3, 1800e3];
    const every = steps.find((st) => span / st <= 6) || 1800e3;
    const first = end - (history - 1) * 1000;
    for (let tm = Math.ceil(first / every) * every; tm <= end; tm += every) {
      const xx = x((tm - first) / 1000);
      svg("line", { class: "tick", x1: xx, x2: xx, y1: T + ph, y2: T + ph + 4 }, grid);
      const t = svg("text", { class: "xlabel", x: xx, y: H - 6, "text-anchor": "middle" }, grid);
      t.textContent = clockTime(tm, every < 60e3);
    }
    group.replaceChildren();
    let drawn = 0;
    // Blocked requests are drawn first, limits last: a busy blocked line
    // does not hide the others.
    const z = (l) => (l.limit ? 2 : l.cls === "block" ? 0 : 1);
    const order = lines.map((l, i) => [l, i]).sort((a, b) => z(a[0]) - z(b[0]) || a[1] - b[1]);
    order.forEach(([l, i]) => {
      const vals = l.values;
      // A point between two gaps is drawn as a dot: a step of 0.5.
      let d = "", run = 0;
      const dot = () => { if (run === 1) d += "h0.5"; run = 0; };
      vals.forEach((v, j) => {
        const slot = history - vals.length + j;
        if (v === null || slot < 0) { dot(); return; }
        d += (run ? "L" : "M") + x(slot).toFixed(1) + "," + y(v).toFixed(1);
        run++;
        if (i === 0) drawn++;
      });
      dot();
      const p = svg("path", { class: "line " + l.cls + (l.limit ? " limit" : ""), d: d || "M0,0" }, group);
      p.dataset.series = l.cls;
      if (l.limit) p.dataset.limit = l.label;
    });
    box.dataset.points = String(drawn);
    box.dataset.top = String(top);
  }

  // resourceCharts draws the charts of resource name: its requests per
  // second with the limits per second of the flow rules on it, and its
  // response times.
  function resourceCharts(td, name, s, rules) {
    const lines = [
      { cls: "pass", label: "passed", values: s.pass || [] },
      { cls: "block", label: "blocked", values: s.block || [] },
      { cls: "error", label: "errors", values: s.error || [] },
    ];
    for (const r of rules) {
      if (r.kind !== "flow" || r.resource !== name || !(r.windowMs > 0)) continue;
      const rs = series.rules.get(r.name);
      if (!rs || !rs.limit) continue;
      const per = r.windowMs / 1000;
      lines.push({ cls: "limit", label: "limit " + r.name + (per === 1 ? "" : " (per second)"), limit: true,
        values: rs.limit.map((v) => (v === null ? null : v / per)) });
    }
    plot(td, "requests", "requests per second", "/s", lines);
    const rt = [];
    for (const [k, label, cls] of [["avgRtMs", "average", "rt"], ["p50RtMs", "p50", "p50"], ["p90RtMs", "p90", "p90"], ["p99RtMs", "p99", "p99"]]) {
      if (s[k]) rt.push({ cls: cls, label: label, values: s[k] });
    }
    if (rt.length) plot(td, "rt", "response time", " ms", rt);
  }

  // ruleCharts draws the charts of rule r: the requests it evaluated and
  // blocked per second (with its limit per second, for a flow rule), and
  // its use against its limit when it has one.
  function ruleCharts(td, r, s) {
    const lines = [
      { cls: "evaluated", label: "evaluated", values: s.evaluated || [] },
      { cls: "block", label: r.shadow ? "blocked in shadow" : "blocked", values: s.blocked || [] },
    ];
    if (r.kind === "flow" && r.windowMs > 0 && s.limit) {
      const per = r.windowMs / 1000;
      lines.push({ cls: "limit", label: "limit" + (per === 1 ? "" : " (per second)"), limit: true,
        values: s.limit.map((v) => (v === null ? null : v / per)) });
    }
    plot(td, "requests", "requests per second", "/s", lines);
    if (r.topBlocked) topBlocked(td, r.topBlocked);
    if (s.use && s.use.some((v) => v !== null)) {
      plot(td, "use", "in flight", "", [
        { cls: "use", label: "in flight", values: s.use },
        { cls: "limit", label: r.kind === "adaptive" ? "limit found" : "limit", limit: true, values: s.limit || [] },
      ]);
    }
  }

  // topBlocked lists in td the values a hotspot rule blocked most, as
  // text (they are request values: anyone's).
  function topBlocked(td, list) {
    let box = null;
    for (const c of td.children) if (c.dataset.chart === "top") box = c;
    if (!box) {
      box = el("div", "chart top");
      box.dataset.chart = "top";
      const head = el("div", "chart-head");
      const t = el("span", "chart-title");
      t.textContent = "values blocked most";
      head.appendChild(t);
      box.appendChild(head);
      box.appendChild(el("table", "top"));
      td.appendChild(box);
    }
    const table = box.querySelector("table");
    table.replaceChildren();
    for (const b of list) {
      const tr = el("tr");
      const v = el("td", "name value");
      v.textContent = b.value === "" ? "(none)" : b.value;
      const n = el("td", "num block");
      n.textContent = String(b.blocked);
      if (b.error > 0) n.title = "at most " + b.error + " fewer";
      tr.appendChild(v);
      tr.appendChild(n);
      table.appendChild(tr);
    }
    box.dataset.points = String(list.length);
  }

  const resourceFields = [["name", "name"], ["pass", "num pass"], ["block", "num block"],
    ["inFlight", "num"], ["error", "num err"], ["avgRt", "num"], ["minRt", "num"],
    ["totalPass", "num"], ["totalBlock", "num"], ["totalError", "num"]];

  function resources(list, rules) {
    const table = document.getElementById("resources");
    const keep = new Set();
    for (const r of list) {
      keep.add(r.name);
      const s = append(series.resources, r.name, r.history);
      const [tr, charts] = chartRow(table, r.name, (tr) => cells(tr, "resource", r.name, resourceFields));
      charts.cells[0].dataset.resource = r.name;
      charts.cells[0].dataset.field = "charts";
      resourceCharts(charts.cells[0], r.name, s, rules);
      set(tr, "pass", String(r.pass), r.pass === 0);
      set(tr, "block", String(r.block), r.block === 0);
      set(tr, "inFlight", String(r.inFlight), r.inFlight === 0);
      set(tr, "error", String(r.error), r.error === 0);
      set(tr, "avgRt", r.complete ? ms(r.avgRtMs) : "–");
      set(tr, "minRt", r.complete ? ms(r.minRtMs) : "–");
      set(tr, "totalPass", String(r.total.pass));
      set(tr, "totalBlock", String(r.total.block));
      set(tr, "totalError", String(r.total.error));
      const reasons = Object.entries(r.total.blockedBy || {}).map(([k, v]) => k + " " + v).join(", ");
      get(tr, "totalBlock").title = reasons ? "blocked by " + reasons : "";
    }
    prune(table, keep);
    for (const k of Array.from(series.resources.keys())) if (!keep.has(k)) series.resources.delete(k);
    document.getElementById("no-resources").classList.toggle("hidden", list.length > 0);
    table.classList.toggle("hidden", list.length === 0);
  }

  // badge shows text as a coloured badge of class cls in td, and as its
  // data-value.
  function badge(td, text, cls) {
    let b = td.firstElementChild;
    if (!b) { b = el("span"); td.appendChild(b); }
    b.className = "badge " + cls;
    if (b.textContent !== text) b.textContent = text;
    td.dataset.value = text;
  }

  const ruleFields = [["name", "name"], ["kind", "text"], ["resource", "name res"], ["summary", "name summary"],
    ["blocked", "num block"], ["blockedTotal", "num"], ["evaluated", "num"], ["applies", "name applies"],
    ["state", "text"], ["trips", "num"],
    ["inFlight", "num"], ["fallbacks", "num"]];

  function rules(list) {
    const table = document.getElementById("rules");
    const keep = new Set();
    for (const r of list) {
      keep.add(r.name);
      const s = append(series.rules, r.name, r.history);
      const [tr, charts] = chartRow(table, r.name, (tr) => cells(tr, "rule", r.name, ruleFields));
      charts.cells[0].dataset.rule = r.name;
      charts.cells[0].dataset.field = "charts";
      ruleCharts(charts.cells[0], r, s);
      kind(get(tr, "kind"), r);
      set(tr, "resource", r.resource);
      set(tr, "summary", r.summary);
      set(tr, "blocked", String(r.blocked), r.blocked === 0);
      set(tr, "blockedTotal", String(r.blockedTotal));
      set(tr, "evaluated", String(r.evaluated), r.evaluated === 0);
      applies(get(tr, "applies"), r);
      set(tr, "inFlight", r.kind === "concurrency" ? String(r.inFlight) : "");
      set(tr, "fallbacks", String(r.fallbacks), r.fallbacks === 0);
      const st = get(tr, "state");
      if (r.breaker) {
        const b = r.breaker;
        badge(st, b.state, b.state);
        let tip = b.bad + " bad of " + b.requests + " requests in the window";
        if (b.state !== "closed" && b.retryAfterMs > 0) tip += "; probes in " + ms(b.retryAfterMs);
        st.title = tip;
        set(tr, "trips", String(b.trips), b.trips === 0);
      } else {
        if (st.firstChild) st.textContent = "";
        delete st.dataset.value;
        set(tr, "trips", "");
      }
    }
    prune(table, keep);
    for (const k of Array.from(series.rules.keys())) if (!keep.has(k)) series.rules.delete(k);
    document.getElementById("no-rules").classList.toggle("hidden", list.length > 0);
    table.classList.toggle("hidden", list.length === 0);
  }

  // kind shows the kind of rule r in td, and a "shadow" badge when it is
  // in shadow mode (evaluated and counted, never enforced).
  function kind(td, r) {
    const text = r.kind + (r.shadow ? " shadow" : "");
    if (td.dataset.text === text) return;
    td.dataset.text = text;
    td.textContent = r.kind;
    td.classList.toggle("shadow", !!r.shadow);
    if (r.shadow) {
      const b = el("span", "badge shadow");
      b.textContent = "shadow";
      b.title = "in shadow mode: evaluated and counted, never enforced";
      td.appendChild(document.createTextNode(" "));
      td.appendChild(b);
    }
  }

  // applies shows in td the resources rule r applied to, the first of them
  // and how many more, or an "unmatched" badge when it applied to none for
  // a while.
  function applies(td, r) {
    let text = r.resources.join(", ");
    if (r.resourceCount > r.resources.length) text += " and " + (r.resourceCount - r.resources.length) + " more";
    if (r.unmatched) {
      if (!td.firstElementChild) td.textContent = "";
      badge(td, "unmatched", "unmatched");
      td.title = "no request matched this rule since it was set: check its resource against the resources above";
      return;
    }
    if (td.firstElementChild) td.textContent = "";
    delete td.dataset.value;
    td.title = r.resources.join("\n");
    td.classList.toggle("zero", r.resourceCount === 0);
    if (td.textContent !== (text || "none yet")) td.textContent = text || "none yet";
  }

  const storeFields = [["name", "name"], ["health", "text"], ["errors", "num"], ["fallbacks", "num"]];

  function stores(list) {
    const table = document.getElementById("stores");
    const keep = new Set();
    for (const s of list) {
      keep.add(s.name);
      const tr = row(table, s.name, (tr) => cells(tr, "store", s.name, storeFields));
      badge(get(tr, "health"), s.healthy ? "healthy" : "down", s.healthy ? "healthy" : "down");
      set(tr, "errors", String(s.errors), s.errors === 0);
      set(tr, "fallbacks", String(s.fallbacks), s.fallbacks === 0);
    }
    prune(table, keep);
    document.getElementById("no-stores").classList.toggle("hidden", list.length > 0);
    table.classList.toggle("hidden", list.length === 0);
  }

  // summary fills the tiles: sums over the resources, counts of the rest.
  function summary(s) {
    const sum = (f) => s.resources.reduce((a, r) => a + r[f], 0);
    const tile = (id, v, warn) => {
      const e = document.getElementById(id);
      const text = String(v);
      if (e.textContent !== text) e.textContent = text;
      if (warn !== undefined) e.classList.toggle("warn", warn);
    };
    tile("sum-pass", sum("pass"));
    tile("sum-block", sum("block"));
    tile("sum-inflight", sum("inFlight"));
    const errors = sum("error");
    tile("sum-error", errors, errors > 0);
    const breakers = s.rules.filter((r) => r.breaker && r.breaker.state !== "closed").length;
    tile("sum-breakers", breakers, breakers > 0);
    const unmatched = s.rules.filter((r) => r.unmatched).length;
    tile("sum-unmatched", unmatched, unmatched > 0);
    tile("sum-shadow", s.rules.filter((r) => r.shadow).length);
    const down = s.stores.filter((st) => !st.healthy).length;
    tile("sum-stores", down, down > 0);
    tile("sum-dropped", s.droppedEvents, s.droppedEvents > 0);
  }

  const status = document.getElementById("status");
  const updated = document.getElementById("updated");
  let polls = 0;

  // poll fetches and shows one snapshot, then schedules the next a second
  // after this one started (or at once if it took longer): polls never
  // overlap.
  async function poll() {
    const started = Date.now();
    try {
      const url = at === null ? "api/snapshot" : "api/snapshot?after=" + encodeURIComponent(at);
      const res = await fetch(url, { cache: "no-store", headers: { Accept: "application/json" } });
      if (!res.ok) throw new Error("HTTP " + res.status);
      const s = await res.json();
      at = s.historyAt;
      end = Date.parse(s.historyEnd);
      rules(s.rules); // first: the resources' charts draw the rules' limits
      resources(s.resources, s.rules);
      stores(s.stores);
      summary(s);
      polls++;
      status.textContent = "live";
      status.className = "status ok";
      updated.textContent = "updated " + new Date(s.time).toLocaleTimeString();
      updated.dataset.polls = String(polls);
    } catch (e) {
      status.textContent = "no data: " + e.message;
      status.className = "status err";
    }
    setTimeout(poll, Math.max(0, 1000 - (Date.now() - started)));
  }

  poll();
})();
