// The sluice dashboard: polls api/snapshot every second and renders it.
// Every name comes from users: it is set with textContent, never as HTML.
"use strict";
(function () {
  const history = Math.max(2, parseInt(document.body.dataset.history, 10) || 60);
  const series = new Map(); // resource -> {pass: [], block: []}
  const svgNS = "http://www.w3.org/2000/svg";

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

  // cell adds a cell for field of the item named name (data-NAMEATTR).
  function cell(tr, attr, name, field, cls) {
    const td = el("td", cls);
    td.setAttribute("data-" + attr, name);
    td.dataset.field = field;
    tr.appendChild(td);
    return td;
  }

  function set(tr, field, text, cls) {
    const td = tr.querySelector('[data-field="' + field + '"]');
    if (td.textContent !== text) td.textContent = text;
    if (cls !== undefined) td.classList.toggle("zero", cls);
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

  function chart(td, s) {
    const w = 180, h = 34;
    let svg = td.querySelector("svg");
    if (!svg) {
      svg = document.createElementNS(svgNS, "svg");
      svg.setAttribute("width", w);
      svg.setAttribute("height", h);
      svg.setAttribute("viewBox", "0 0 " + w + " " + h);
      for (const [name, color] of [["block", "#c62828"], ["pass", "#2e7d32"]]) {
        const p = document.createElementNS(svgNS, "polyline");
        p.setAttribute("fill", "none");
        p.setAttribute("stroke", color);
        p.setAttribute("stroke-width", "1.5");
        p.dataset.series = name;
        svg.appendChild(p);
      }
      td.appendChild(svg);
    }
    const top = Math.max(1, ...s.pass, ...s.block);
    for (const p of svg.querySelectorAll("polyline")) {
      const vals = s[p.dataset.series];
      const pts = vals.map((v, i) => {
        const x = w - (vals.length - 1 - i) * (w / (history - 1));
        const y = h - 2 - (v / top) * (h - 4);
        return x.toFixed(1) + "," + y.toFixed(1);
      });
      p.setAttribute("points", pts.join(" "));
    }
  }

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
      const tr = row(table, r.name, (tr) => {
        cell(tr, "resource", r.name, "name", "name").textContent = r.name;
        for (const f of ["pass", "block", "chart", "inFlight", "error", "avgRt", "minRt", "totalPass", "totalBlock"]) {
          cell(tr, "resource", r.name, f, f === "pass" ? "pass" : f === "block" ? "block" : f === "chart" ? "chart" : "");
        }
      });
      set(tr, "pass", String(r.pass), r.pass === 0);
      set(tr, "block", String(r.block), r.block === 0);
      set(tr, "inFlight", String(r.inFlight));
      set(tr, "error", String(r.error));
      set(tr, "avgRt", r.complete ? ms(r.avgRtMs) : "–");
      set(tr, "minRt", r.complete ? ms(r.minRtMs) : "–");
      set(tr, "totalPass", String(r.total.pass));
      set(tr, "totalBlock", String(r.total.block));
      chart(tr.querySelector('[data-field="chart"]'), s);
    }
    prune(table, keep);
    for (const k of Array.from(series.keys())) if (!keep.has(k)) series.delete(k);
    document.getElementById("no-resources").classList.toggle("hidden", list.length > 0);
  }

  function badge(td, text, cls) {
    let b = td.firstElementChild;
    if (!b) { b = el("span"); td.appendChild(b); }
    b.className = "badge " + cls;
    if (b.textContent !== text) b.textContent = text;
    td.dataset.value = text;
  }

  function rules(list) {
    const table = document.getElementById("rules");
    const keep = new Set();
    for (const r of list) {
      keep.add(r.name);
      const tr = row(table, r.name, (tr) => {
        cell(tr, "rule", r.name, "name", "name").textContent = r.name;
        cell(tr, "rule", r.name, "kind", "kind");
        cell(tr, "rule", r.name, "resource", "name");
        cell(tr, "rule", r.name, "summary", "name");
        cell(tr, "rule", r.name, "blocked", "block");
        cell(tr, "rule", r.name, "blockedTotal", "");
        cell(tr, "rule", r.name, "state", "");
        cell(tr, "rule", r.name, "inFlight", "");
        cell(tr, "rule", r.name, "fallbacks", "");
      });
      set(tr, "kind", r.kind);
      set(tr, "resource", r.resource);
      set(tr, "summary", r.summary);
      set(tr, "blocked", String(r.blocked), r.blocked === 0);
      set(tr, "blockedTotal", String(r.blockedTotal));
      set(tr, "inFlight", r.kind === "concurrency" ? String(r.inFlight) : "");
      set(tr, "fallbacks", r.fallbacks ? String(r.fallbacks) : "");
      const st = tr.querySelector('[data-field="state"]');
      if (r.breaker) {
        badge(st, r.breaker.state, r.breaker.state);
        st.title = r.breaker.trips + " trips; " + r.breaker.bad + " bad of " + r.breaker.requests + " in the window";
      } else if (st.firstChild) {
        st.textContent = "";
      }
    }
    prune(table, keep);
    document.getElementById("no-rules").classList.toggle("hidden", list.length > 0);
  }

  function stores(list) {
    const table = document.getElementById("stores");
    const keep = new Set();
    for (const s of list) {
      keep.add(s.name);
      const tr = row(table, s.name, (tr) => {
        cell(tr, "store", s.name, "name", "name").textContent = s.name;
        cell(tr, "store", s.name, "health", "");
        cell(tr, "store", s.name, "errors", "");
        cell(tr, "store", s.name, "fallbacks", "");
      });
      badge(tr.querySelector('[data-field="health"]'), s.healthy ? "healthy" : "down", s.healthy ? "healthy" : "down");
      set(tr, "errors", String(s.errors));
      set(tr, "fallbacks", String(s.fallbacks));
    }
    prune(table, keep);
    document.getElementById("no-stores").classList.toggle("hidden", list.length > 0);
    table.classList.toggle("hidden", list.length === 0);
  }

  const status = document.getElementById("status");
  const updated = document.getElementById("updated");
  let polls = 0;

  async function poll() {
    try {
      const res = await fetch("api/snapshot", { cache: "no-store" });
      if (!res.ok) throw new Error("HTTP " + res.status);
      const s = await res.json();
      resources(s.resources);
      rules(s.rules);
      stores(s.stores);
      polls++;
      status.textContent = "live";
      status.className = "status ok";
      updated.textContent = "updated " + new Date(s.time).toLocaleTimeString();
      updated.dataset.polls = String(polls);
    } catch (e) {
      status.textContent = "no data: " + e.message;
      status.className = "status err";
    }
  }

  poll();
  setInterval(poll, 1000);
})();
