// The sluice dashboard: polls api/snapshot every second and renders it.
// Every name comes from users: it is only ever set with textContent or as
// an attribute value, never parsed as HTML.
"use strict";
(function () {
  const history = Math.max(2, parseInt(document.body.dataset.history, 10) || 60);
  const series = new Map(); // resource -> {pass: [], block: []}, the last `history` polls
  const spark = document.getElementById("spark").content.firstElementChild;
  const W = 200, H = 36;

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

  // chart draws the series s in the cell td: the newest at the right edge,
  // one point per poll, scaled to the highest value shown.
  function chart(td, s) {
    let svg = td.firstElementChild;
    if (!svg) {
      svg = spark.cloneNode(true);
      td.appendChild(svg);
    }
    let top = 1;
    for (const v of s.pass) top = Math.max(top, v);
    for (const v of s.block) top = Math.max(top, v);
    const step = W / (history - 1);
    for (const p of svg.querySelectorAll("polyline")) {
      const vals = s[p.dataset.series];
      const pts = vals.map((v, i) => {
        const x = W - (vals.length - 1 - i) * step;
        const y = H - 1.5 - (v / top) * (H - 12);
        return x.toFixed(1) + "," + y.toFixed(1);
      });
      p.setAttribute("points", pts.join(" "));
    }
    svg.querySelector("text").textContent = top + "/s";
    td.dataset.points = String(s.pass.length);
  }

  const resourceFields = [["name", "name"], ["pass", "num pass"], ["block", "num block"], ["chart", "chart"],
    ["inFlight", "num"], ["error", "num err"], ["avgRt", "num"], ["minRt", "num"],
    ["totalPass", "num"], ["totalBlock", "num"], ["totalError", "num"]];

  function resources(list) {
    const table = document.getElementById("resources");
    const keep = new Set();
    for (const r of list) {
      keep.add(r.name);
      let s = series.get(r.name);
      if (!s) series.set(r.name, (s = { pass: [], block: [] }));
      s.pass.push(r.pass);
      s.block.push(r.block);
      if (s.pass.length > history) { s.pass.shift(); s.block.shift(); }
      const tr = row(table, r.name, (tr) => cells(tr, "resource", r.name, resourceFields));
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
      chart(get(tr, "chart"), s);
    }
    prune(table, keep);
    for (const k of Array.from(series.keys())) if (!keep.has(k)) series.delete(k);
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
      const tr = row(table, r.name, (tr) => cells(tr, "rule", r.name, ruleFields));
      set(tr, "kind", r.kind);
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
    document.getElementById("no-rules").classList.toggle("hidden", list.length > 0);
    table.classList.toggle("hidden", list.length === 0);
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
      const res = await fetch("api/snapshot", { cache: "no-store", headers: { Accept: "application/json" } });
      if (!res.ok) throw new Error("HTTP " + res.status);
      const s = await res.json();
      resources(s.resources);
      rules(s.rules);
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
