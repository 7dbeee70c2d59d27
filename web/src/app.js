// gpudoctor serve dashboard: one node at a glance, with history, findings
// and charts. Vanilla JS over the documented JSON API of serve
// (docs/serve.md) and its live stream (/api/v1/events, Server-Sent Events).
//
// Everything that comes from the node (process names, command lines, users,
// finding texts) is put into the page as text nodes (textContent), never as
// HTML: a process named <img src=x onerror=alert(1)> shows as that text.
"use strict";

(function () {
  // ---- small helpers -------------------------------------------------------

  // Bidi embeddings, overrides, isolates and marks, and the Unicode line and
  // paragraph separators: in a process's command line they would reorder
  // what the row shows (U+202E before "gpj.exe" shows "exe.jpg"). Every
  // text put into the page shows them as \u202e, as the terminal views do
  // (src/common/terminal_text.cc); the API keeps the bytes as they are.
  const LAYOUT_CONTROLS = /[\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
  function inert(text) {
    return String(text).replace(LAYOUT_CONTROLS, c => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0"));
  }

  // h("div", {class: "x", title: t}, child...): an element; string children
  // become text nodes (with inert()).
  function h(tag, attrs) {
    const el = document.createElement(tag);
    if (attrs) {
      for (const k of Object.keys(attrs)) {
        const v = attrs[k];
        if (v === undefined || v === null || v === false) continue;
        if (k === "class") el.className = v;
        else if (k === "text") el.textContent = inert(v);
        else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
        else if (k === "style") Object.assign(el.style, v);
        else el.setAttribute(k, inert(v));
      }
    }
    for (let i = 2; i < arguments.length; i++) append(el, arguments[i]);
    return el;
  }
  function append(el, c) {
    if (c === undefined || c === null || c === false) return;
    if (Array.isArray(c)) { for (const x of c) append(el, x); return; }
    el.appendChild(typeof c === "object" ? c : document.createTextNode(inert(c)));
  }
  function $(id) { return document.getElementById(id); }
  function clear(el) { while (el.firstChild) el.removeChild(el.firstChild); }
  function known(v) { return v !== undefined && v !== null; }

  const UNITS = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
  function bytes(v) {
    if (!known(v)) return "n/a";
    let i = 0;
    while (Math.abs(v) >= 1024 && i < UNITS.length - 1) { v /= 1024; i++; }
    return (i === 0 ? v.toFixed(0) : v.toFixed(1)) + " " + UNITS[i];
  }
  function rate(v) { return known(v) ? bytes(v) + "/s" : "n/a"; }
  function pct(v) { return known(v) ? v.toFixed(v < 10 && v !== 0 ? 1 : 0) + "%" : "n/a"; }
  function num(v, digits) { return known(v) ? v.toFixed(digits || 0) : "n/a"; }
  function elapsed(s) {
    if (!known(s) || s < 0) return "n/a";
    if (s < 60) return Math.floor(s) + "s";
    if (s < 3600) return Math.floor(s / 60) + "m" + String(Math.floor(s % 60)).padStart(2, "0") + "s";
    if (s < 86400) return Math.floor(s / 3600) + "h" + String(Math.floor((s % 3600) / 60)).padStart(2, "0") + "m";
    return Math.floor(s / 86400) + "d" + Math.floor((s % 86400) / 3600) + "h";
  }
  function clock(t) {
    const d = new Date(t * 1000);
    return d.toLocaleString(undefined, { month: "short", day: "numeric",
      hour: "2-digit", minute: "2-digit", second: "2-digit" });
  }
  function css(name) {
    return getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  }
  // Okabe-Ito and friends: distinguishable, readable on both themes.
  const PALETTE = ["#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9",
    "#d55e00", "#8c6bb1", "#999933", "#b2182b", "#2b8cbe", "#66a61e", "#e7298a"];
  function gpuColor(i) { return PALETTE[i % PALETTE.length]; }

  async function getJSON(url) {
    const r = await fetch(url, { headers: { Accept: "application/json" } });
    const body = await r.json().catch(() => ({}));
    if (!r.ok) throw new Error((body && body.error) || (r.status + " " + r.statusText));
    return body;
  }

  // ---- state ---------------------------------------------------------------

  const RANGES = [["15m", 900], ["1h", 3600], ["6h", 21600], ["24h", 86400], ["7d", 604800]];
  const state = {
    header: null, sample: null, memory: {}, collect: null,
    range: 3600,        // seconds shown while live
    live: true,         // right edge follows now; false after a zoom
    since: 0, until: 0, // the shown range (Unix seconds)
    historyOk: true,
    sort: { key: "mem", asc: false },
    folded: {},         // pid -> workers shown
    procs: [], spark: {},
  };
  const charts = [];

  // ---- theme ---------------------------------------------------------------

  function applyTheme(t) {
    if (t) document.documentElement.setAttribute("data-theme", t);
    else document.documentElement.removeAttribute("data-theme");
  }
  function currentTheme() {
    const t = document.documentElement.getAttribute("data-theme");
    if (t) return t;
    return matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
  }
  try { applyTheme(localStorage.getItem("gd-theme")); } catch (e) { /* private mode */ }
  $("theme").addEventListener("click", () => {
    const next = currentTheme() === "dark" ? "light" : "dark";
    applyTheme(next);
    try { localStorage.setItem("gd-theme", next); } catch (e) { /* ignore */ }
    rebuildCharts();
    if (usage.data) renderUsage(usage.data);
  });

  // ---- overview ------------------------------------------------------------

  function meter(parts) {
    return h("div", { class: "meter" }, parts.map(p =>
      h("span", { class: p.cls || "", style: { width: Math.max(0, Math.min(100, p.pct)) + "%" } })));
  }
  function row(label, value, extra) {
    return h("div", { class: "row" }, h("span", { class: "label" }, label),
      h("div", { class: "value" }, value, extra));
  }
  function gpuInfo(index) {
    return ((state.header && state.header.gpus) || []).find(g => g.index === index) || {};
  }
  function health(index) {
    return ((state.collect && state.collect.gpus) || []).find(g => g.index === index);
  }

  function gpuCard(g) {
    const info = gpuInfo(g.index);
    const card = h("div", { class: "card gpu", "data-gpu": g.index });
    const status = g.lost ? "lost" : g.stale ? "stale" : "ok";
    card.appendChild(h("h3", null,
      h("span", { class: "swatch", style: { background: gpuColor(g.index) } }),
      "GPU " + g.index, h("span", { class: "name", title: info.name || "" }, info.name || ""),
      status !== "ok" ? h("span", { class: "badge " + status }, status) : null));
    if (g.lost || g.stale) {
      card.appendChild(h("p", { class: "muted" }, g.lost
        ? "the GPU has fallen off the bus or stopped answering NVML"
        : "the last read missed its deadline (hung driver call); values are stale"));
      return card;
    }
    card.appendChild(row("util", pct(g.util_pct), meter([{ pct: g.util_pct || 0 }])));

    const total = info.memory_total_bytes;
    const used = g.mem_used_bytes;
    const mem = state.memory[g.index];
    const unowned = mem ? mem.unowned_bytes : null;
    const memText = [bytes(used) + (known(total) ? " / " + bytes(total) : "")];
    if (known(unowned) && unowned > 0)
      memText.push(h("span", { class: "muted" }, " · " + bytes(unowned) + " not owned by a live process"));
    card.appendChild(row("memory", memText, known(total) && known(used) ? meter([
      { pct: 100 * (used - (unowned || 0)) / total },
      { pct: 100 * (unowned || 0) / total, cls: "unowned" }]) : null));

    const slow = info.temp_slowdown_c;
    const margin = known(g.temp_limit_margin_c) ? g.temp_limit_margin_c
      : (known(slow) && known(g.temp_c) ? slow - g.temp_c : null);
    const tcls = known(margin) && margin <= 0 ? "crit" : known(margin) && margin < 5 ? "warn" : "";
    card.appendChild(row("temperature",
      [known(g.temp_c) ? g.temp_c + " °C" : "n/a",
        h("span", { class: "muted" }, known(slow) ? " · slowdown " + slow + " °C" : ""),
        known(margin) ? h("span", { class: "muted" }, " (" + margin + " °C left)") : null],
      known(g.temp_c) && known(slow) ? meter([{ pct: 100 * g.temp_c / slow, cls: tcls }]) : null));

    const limit = info.power_limit_w;
    const pcls = known(limit) && known(g.power_w) && g.power_w >= 0.98 * limit ? "warn" : "";
    card.appendChild(row("power",
      [known(g.power_w) ? num(g.power_w, 0) + " W" : "n/a",
        h("span", { class: "muted" }, known(limit) ? " / " + num(limit, 0) + " W limit" : "")],
      known(limit) && known(g.power_w) ? meter([{ pct: 100 * g.power_w / limit, cls: pcls }]) : null));

    card.appendChild(row("clocks",
      ["SM " + num(g.sm_clock_mhz) + (known(info.sm_clock_max_mhz) ? " / " + info.sm_clock_max_mhz : "") + " MHz",
        h("span", { class: "muted" }, " · mem " + num(g.mem_clock_mhz) + " MHz" +
          (known(g.pstate) ? " · P" + g.pstate : ""))]));

    const reasons = g.clock_event_reasons;
    card.appendChild(row("clock events", !known(reasons) ? "n/a" : reasons.length === 0
      ? h("span", { class: "chip ok" }, "none")
      : reasons.map(r => h("span", { class: "chip " + (/thermal|power_brake|hw_slowdown/.test(r) ? "crit"
        : /idle|app_clocks|sync_boost/.test(r) ? "" : "warn") }, r.replace(/_/g, " ")))));

    const below = known(g.pcie_gen) && known(info.pcie_max_gen) &&
      (g.pcie_gen < info.pcie_max_gen || g.pcie_width < info.pcie_max_width);
    card.appendChild(row("PCIe", [
      known(g.pcie_gen) ? "Gen" + g.pcie_gen + " x" + num(g.pcie_width) : "n/a",
      known(info.pcie_max_gen) ? h("span", { class: "muted" }, " of Gen" + info.pcie_max_gen + " x" + info.pcie_max_width) : null,
      below ? h("span", { class: "chip", title: "a lower generation at idle is normal power saving" }, "below max") : null,
      h("span", { class: "muted" }, " · tx " + rate(g.pcie_tx_bytes_per_s) + " rx " + rate(g.pcie_rx_bytes_per_s))]));

    // Hopper and newer: what the SMs really do (util only says a kernel ran).
    if (known(g.sm_active_pct))
      card.appendChild(row("SM activity", [pct(g.sm_active_pct),
        h("span", { class: "muted" }, " · occupancy " + pct(g.sm_occupancy_pct) + " · tensor " +
          pct(g.tensor_active_pct) + " · DRAM " + pct(g.dram_active_pct))],
        meter([{ pct: g.sm_active_pct }])));
    if (g.nvlinks && g.nvlinks.length) {
      const up = g.nvlinks.filter(l => l.active).length;
      const errors = g.nvlinks.reduce((a, l) =>
        a + (l.crc_errors_total || 0) + (l.replay_total || 0) + (l.recovery_total || 0), 0);
      // A link down while others are up is a fault (nvlink-degraded); all
      // down is a GPU whose links are not in use.
      const down = up > 0 && up < g.nvlinks.length;
      card.appendChild(row("NVLink", [
        h("span", { class: down ? "chip crit" : "" }, up + "/" + g.nvlinks.length + " up"),
        errors > 0 ? h("span", { class: "chip warn", title: "CRC, replay and recovery counters" }, errors + " errors") : null,
        h("span", { class: "muted" }, " · tx " + rate(g.nvlink_tx_bytes_per_s) + " rx " + rate(g.nvlink_rx_bytes_per_s))]));
    }
    if (g.mig_instances && g.mig_instances.length)
      card.appendChild(row("MIG", g.mig_instances.map(m => h("span", { class: "chip",
        title: m.uuid || "" }, "GI" + m.gi_id + " " + m.profile + " " + bytes(m.mem_used_bytes) + " / " +
        bytes(m.mem_total_bytes) + (known(m.sm_active_pct) ? " · SM " + pct(m.sm_active_pct) : "")))));

    const ecc = [];
    ecc.push(info.ecc_enabled === true ? "ECC on" : info.ecc_enabled === false ? "ECC off" : "ECC n/a");
    if (known(g.ecc_sbe_volatile_total)) ecc.push(" · SBE " + g.ecc_sbe_volatile_total);
    if (known(g.ecc_dbe_volatile_total)) ecc.push(h("span", { class: g.ecc_dbe_volatile_total > 0 ? "chip crit" : "" },
      " DBE " + g.ecc_dbe_volatile_total));
    if (g.retired_pages_pending) ecc.push(h("span", { class: "chip warn" }, "retired pages pending"));
    if (g.remapped_rows_pending) ecc.push(h("span", { class: "chip warn" }, "row remap pending (reset)"));
    if (g.remapped_rows_failure) ecc.push(h("span", { class: "chip crit" }, "row remap failed"));
    if (g.recovery_action && g.recovery_action !== "none")
      ecc.push(h("span", { class: "chip crit" }, "recovery: " + g.recovery_action.replace(/_/g, " ")));
    if (known(g.remapped_rows_correctable_total))
      ecc.push(h("span", { class: "muted" }, " · remapped " + g.remapped_rows_correctable_total + "/" +
        g.remapped_rows_uncorrectable_total));
    card.appendChild(row("ECC", ecc));
    if (g.read_errors && g.read_errors.length)
      card.appendChild(row("ERR!", h("span", { class: "chip crit" }, "read failed: " + g.read_errors.join(", "))));
    const n = g.processes ? g.processes.length : null;
    card.appendChild(row("processes", known(n) ? String(n) : "n/a"));
    return card;
  }

  function hostCard(s) {
    const hs = s.host || {};
    const info = (state.header && state.header.host) || {};
    const card = h("div", { class: "card host" });
    card.appendChild(h("h3", null, "Host", h("span", { class: "name" }, (info.hostname || "") +
      (info.cpu_count ? " · " + info.cpu_count + " CPUs" : ""))));
    card.appendChild(row("CPU", [pct(hs.cpu_util_pct),
      h("span", { class: "muted" }, " · iowait " + pct(hs.cpu_iowait_pct) + " · steal " + pct(hs.cpu_steal_pct) +
        " · load1 " + num(hs.load1, 2))], meter([{ pct: hs.cpu_util_pct || 0 }])));
    const mt = info.mem_total_bytes;
    const mu = known(mt) && known(hs.mem_available_bytes) ? mt - hs.mem_available_bytes : null;
    card.appendChild(row("memory", [bytes(mu) + (known(mt) ? " / " + bytes(mt) : ""),
      h("span", { class: "muted" }, " · " + bytes(hs.mem_available_bytes) + " available")],
      known(mu) ? meter([{ pct: 100 * mu / mt }]) : null));
    const st = info.swap_total_bytes;
    card.appendChild(row("swap", [bytes(hs.swap_used_bytes) + (known(st) ? " / " + bytes(st) : ""),
      h("span", { class: (hs.swap_in_pages_per_s > 0 || hs.swap_out_pages_per_s > 0) ? "chip warn" : "muted" },
        " in " + num(hs.swap_in_pages_per_s) + " out " + num(hs.swap_out_pages_per_s) + " pages/s")]));
    card.appendChild(row("disk", ["read " + rate(hs.disk_read_bytes_per_s) + " write " + rate(hs.disk_write_bytes_per_s),
      h("span", { class: "muted" }, " · busiest " + pct(hs.disk_busy_pct))]));
    card.appendChild(row("pressure", h("span", { class: "muted" },
      "cpu " + pct(hs.psi_cpu_some_pct) + " · memory " + pct(hs.psi_mem_some_pct) + " · io " + pct(hs.psi_io_some_pct))));
    return card;
  }

  function renderOverview() {
    const s = state.sample;
    const cards = $("cards");
    clear(cards);
    renderRdma(s);
    if (!s) { cards.appendChild(h("p", { class: "muted" }, "waiting for the first sample…")); return; }
    cards.dataset.t = s.t;
    for (const g of s.gpus || []) cards.appendChild(gpuCard(g));
    cards.appendChild(hostCard(s));
  }

  // ---- RDMA ports ----------------------------------------------------------
  // One row per InfiniBand / RoCE port (sample.host.rdma_ports; the link
  // layer, net device and NUMA node from header.host.rdma_devices), in the
  // words, units and rounding of `gpudoctor status` (rdma_lines in
  // src/views/status_view.cc). A node without ports has no panel at all.

  // status's names of the error counters, in its order; the title's words.
  const RDMA_ERRORS = [
    ["symbol_error_total", "symbol", "symbol errors"],
    ["link_error_recovery_total", "recoveries", "link error recoveries"],
    ["link_downed_total", "downed", "link downed"],
    ["port_rcv_errors_total", "rcv", "port receive errors"],
    ["local_link_integrity_errors_total", "integrity", "local link integrity errors"],
    ["excessive_buffer_overrun_errors_total", "overruns", "excessive buffer overrun errors"],
    ["port_xmit_discards_total", "discards", "transmit discards"]];
  const rdmaSeen = { t: null, prev: {}, grew: {} };
  function rdmaKey(p) { return p.device + "/" + p.port; }
  // How much each port's error counters grew since the previous sample
  // (a counter that went down was cleared: no growth); once per sample, so
  // drawing the same sample again keeps its marks.
  function rdmaGrowth(s, ports) {
    if (rdmaSeen.t === s.t) return rdmaSeen.grew;
    const grew = {}, prev = {};
    for (const p of ports) {
      const k = rdmaKey(p), before = rdmaSeen.prev[k];
      prev[k] = p;
      grew[k] = {};
      if (!before) continue;
      for (const [f] of RDMA_ERRORS)
        if (known(p[f]) && known(before[f]) && p[f] > before[f]) grew[k][f] = p[f] - before[f];
    }
    rdmaSeen.t = s.t; rdmaSeen.prev = prev; rdmaSeen.grew = grew;
    return grew;
  }
  // fmt's "{:g}" (status's rate): 6 significant digits, no trailing zeros.
  function general(v) { return String(Number(v.toPrecision(6))); }
  // status truncates a byte rate to whole bytes before human_bytes().
  function rdmaRate(v) { return known(v) && v >= 0 ? rate(Math.floor(v)) : "n/a"; }
  function rdmaStateClass(p) {
    if (p.state === "ACTIVE" && (!p.phys_state || p.phys_state === "LinkUp")) return "chip ok";
    if (p.state === "DOWN" || p.phys_state === "Disabled") return "chip crit";
    return "chip warn";
  }

  function renderRdma(s) {
    const section = $("rdma-section"), t = $("rdma");
    const ports = s && s.host && Array.isArray(s.host.rdma_ports) ? s.host.rdma_ports : [];
    if (!ports.length) {
      section.hidden = true;
      clear(t);
      return;
    }
    const grew = rdmaGrowth(s, ports);
    const devices = (state.header && state.header.host && state.header.host.rdma_devices) || [];
    const gpus = (state.header && state.header.gpus) || [];
    clear(t);
    t.appendChild(h("thead", null, h("tr", null, ["PORT", "STATE", "RATE", "LINK", "RX", "TX",
      "ERRORS", "NUMA"].map(c => h("th", { class: c === "RX" || c === "TX" ? "num" : "" }, c)))));
    const body = h("tbody");
    for (const p of ports) {
      const key = rdmaKey(p);
      const dev = devices.find(d => d.device === p.device) || {};
      const info = (dev.ports || []).find(i => i.port === p.port) || {};
      const layer = info.link_layer === "Ethernet" ? "RoCE" : info.link_layer;
      const name = String(p.device) + "/" + p.port;
      const link = (layer || "n/a") + (info.netdev ? " (" + info.netdev + ")" : "");
      const st = (p.state || "n/a") + "/" + (p.phys_state || "n/a");
      const below = known(p.rate_gbps) && known(info.max_rate_gbps) && p.rate_gbps !== info.max_rate_gbps;
      const errors = [];
      for (const [f, word, long] of RDMA_ERRORS) {
        if (!known(p[f]) || p[f] <= 0) continue;
        const d = (grew[key] || {})[f];
        errors.push(h("span", { class: d ? "chip crit grew" : "chip", "data-counter": f,
          title: long + ": " + p[f] + (d ? ", +" + d + " since the previous sample" : " (not growing)") },
        word + " " + p[f] + (d ? " (+" + d + ")" : "")));
      }
      let numa = "n/a";
      if (known(dev.numa_node)) {
        const near = gpus.filter(g => g.numa_node === dev.numa_node).map(g => g.index);
        numa = "NUMA " + dev.numa_node + (near.length ? " · GPU " + near.join(",") : "");
      }
      body.appendChild(h("tr", { "data-port": key },
        h("td", { class: "port mono", title: name }, h("span", { class: "rdma-name" }, name)),
        h("td", null, h("span", { class: rdmaStateClass(p) }, st)),
        h("td", null, known(p.rate_gbps) ? general(p.rate_gbps) + " Gb/s" : "n/a",
          below ? h("span", { class: "muted" }, " of " + general(info.max_rate_gbps) + " Gb/s") : null),
        h("td", { class: "link", title: link }, link),
        h("td", { class: "num" }, rdmaRate(p.rx_bytes_per_s)),
        h("td", { class: "num" }, rdmaRate(p.tx_bytes_per_s)),
        h("td", { class: "errors" }, errors.length ? errors : h("span", { class: "muted" }, "none")),
        h("td", { class: "muted" }, numa)));
    }
    t.appendChild(body);
    $("rdma-count").textContent = "(" + ports.length + ")";
    section.hidden = false;
  }

  function renderHeader() {
    const hd = state.header;
    if (!hd) return;
    const d = hd.driver || {};
    const parts = [(hd.host && hd.host.hostname) || "?"];
    if (hd.nvml_status !== "ok") parts.push("NVML: " + hd.nvml_status.replace(/_/g, " "));
    else parts.push("driver " + (d.driver_version || "?") + " · CUDA " + (d.cuda_driver_version || "?"));
    parts.push((hd.gpus || []).length + " GPUs");
    $("node").textContent = inert(parts.join(" · "));
    document.title = "gpudoctor — " + ((hd.host && hd.host.hostname) || "");
  }

  // ---- findings ------------------------------------------------------------

  const SEVERITY = { critical: 0, warning: 1, info: 2 };

  // Whether the "not judged" list inside el (a findings panel, a fleet
  // node's details; may be null) is open: a redraw builds a new, closed
  // list, and one the reader opened stays open.
  function notJudgedOpen(el) {
    return !!(el && (el.querySelector(".not-judged") || {}).open);
  }

  function renderFindings(f) {
    const box = $("findings");
    const wasOpen = notJudgedOpen(box);
    clear(box);
    const list = (f.findings || []).slice().sort((a, b) =>
      (SEVERITY[a.severity] - SEVERITY[b.severity]) || String(a.id).localeCompare(String(b.id)));
    $("findings-count").textContent = list.length ? "(" + list.length + ")" : "";
    // Rules that could not judge the window: "nothing wrong" is said only
    // when every rule judged (docs/findings.md).
    const unjudged = Array.isArray(f.not_judged) ? f.not_judged : [];
    if (!list.length) {
      const span = Math.round((f.window.end - f.window.start) || 60) + " s (evaluated " + clock(f.evaluated_at) + ")";
      box.appendChild(h("p", { class: "muted" }, !f.evaluated_at ? "no evaluation yet"
        : unjudged.length ? "nothing found in the last " + span + ", but " + unjudged.length +
          (unjudged.length === 1 ? " rule" : " rules") + " could not judge it"
        : "nothing wrong in the last " + span));
    }
    for (const x of list) {
      const alert = x.alert || {};
      const gpus = x.gpus && x.gpus.length ? "GPU " + x.gpus.join(",") : "host";
      box.appendChild(h("div", { class: "finding " + x.severity },
        h("div", { class: "head" },
          h("span", { class: "badge " + x.severity }, x.severity),
          h("span", { class: "title" }, x.title),
          h("span", { class: "chip" }, x.id), h("span", { class: "muted" }, gpus),
          h("span", { class: "muted" }, alert.state ? alert.state + " since " + clock(alert.firing_since || alert.since) : "")),
        h("p", null, h("span", { class: "k" }, "evidence: "), x.evidence),
        h("p", null, h("span", { class: "k" }, "action: "), x.action)));
    }
    if (unjudged.length) {
      const items = unjudged.slice(0, 100).map(n =>
        h("li", null, h("span", { class: "chip" }, n.id), " " + n.reason));
      const details = h("details", { class: "not-judged" },
        h("summary", { class: "muted" }, "not judged (" + unjudged.length + ")"), h("ul", null, ...items));
      details.open = wasOpen;
      box.appendChild(details);
    }
  }

  // ---- charts --------------------------------------------------------------

  // Each chart: metrics of the history API; per GPU, a series per metric.
  const CHARTS = [
    { id: "util", title: "GPU utilization", unit: "%", metrics: ["gpu.util_pct"], max: 100 },
    { id: "mem", title: "GPU memory used", unit: "bytes", metrics: ["gpu.mem_used_bytes"] },
    { id: "temp", title: "GPU temperature", unit: "°C", metrics: ["gpu.temp_c"] },
    { id: "power", title: "GPU power", unit: "W", metrics: ["gpu.power_w"] },
    { id: "sm", title: "SM clock", unit: "MHz", metrics: ["gpu.sm_clock_mhz"] },
    { id: "pcie", title: "PCIe tx (solid) / rx (dashed)", unit: "B/s",
      metrics: ["gpu.pcie_tx_bytes_per_s", "gpu.pcie_rx_bytes_per_s"] },
    { id: "cpu", title: "Host CPU / iowait", unit: "%", host: true, max: 100,
      metrics: ["host.cpu_util_pct", "host.cpu_iowait_pct"], labels: ["CPU", "iowait"] },
    { id: "hmem", title: "Host memory used / swap used", unit: "bytes", host: true,
      metrics: ["host.mem_available_bytes", "host.swap_used_bytes"], labels: ["memory used", "swap used"],
      map: [v => known(v) && state.header && state.header.host.mem_total_bytes && v <= state.header.host.mem_total_bytes
        ? state.header.host.mem_total_bytes - v : null, v => v] },
    { id: "swap", title: "Swap in / out", unit: "pages/s", host: true,
      metrics: ["host.swap_in_pages_per_s", "host.swap_out_pages_per_s"], labels: ["in", "out"] },
    { id: "disk", title: "Disk read / write", unit: "B/s", host: true,
      metrics: ["host.disk_read_bytes_per_s", "host.disk_write_bytes_per_s"], labels: ["read", "write"] },
  ];
  const HOST_COLORS = ["#0072b2", "#d55e00", "#009e73", "#cc79a7"];

  function fmtValue(unit, v) {
    if (!known(v)) return "–";
    if (unit === "bytes") return bytes(v);
    if (unit === "B/s") return rate(v);
    if (unit === "%") return v.toFixed(1) + "%";
    return (Math.abs(v) >= 100 ? v.toFixed(0) : v.toFixed(1)) + " " + unit;
  }
  function axisValues(unit) {
    return (u, splits) => {
      if (unit === "bytes" || unit === "B/s") {
        // One unit for the whole axis, the step's: every label a whole
        // number of it (1.25 GiB was written 1.3 GiB).
        const step = splits.length > 1 ? Math.abs(splits[1] - splits[0]) : 1;
        let i = 0;
        while (i < UNITS.length - 1 && 1024 ** (i + 1) <= step) i++;
        return splits.map(v => +(v / 1024 ** i).toFixed(2) + " " + UNITS[i] + (unit === "B/s" ? "/s" : ""));
      }
      if (unit === "%") return splits.map(v => v + "%");
      return splits.map(v => String(v));
    };
  }

  // The value axis as wide as its widest label, with its tick and gap: a
  // fixed width cut "286.1 MiB/s" to "86.1 MiB/s".
  function axisSize(u, values, i, cycle) {
    const axis = u.axes[i];
    if (cycle > 1) return axis._size;
    let widest = 0;
    if (values && values.length) {
      u.ctx.font = axis.font[0];
      for (const v of values) widest = Math.max(widest, u.ctx.measureText(String(v)).width);
    }
    return Math.ceil(axis.ticks.size + axis.gap + widest / devicePixelRatio) + 2;
  }
  // Round ticks in a byte chart's own unit: binary steps (1, 2, 4 ... 512
  // B, KiB, MiB, GiB, ...), as its labels are binary; uPlot's decimal
  // steps gave 286.1 MiB/s.
  const BINARY_STEPS = [];
  for (let e = 0; e < 70; e++) BINARY_STEPS.push(2 ** e);
  function valueAxis(unit, stroke, grid) {
    const axis = { stroke, grid: { stroke: grid }, ticks: { stroke: grid }, size: axisSize,
      values: axisValues(unit) };
    if (unit === "bytes" || unit === "B/s") axis.incrs = BINARY_STEPS;
    return axis;
  }
  // The x range a chart shows: its range, or from its first point when its
  // history is shorter, so a short history fills the chart instead of a
  // sliver at its right edge.
  function xMin(c) {
    const xs = c.data && c.data[0];
    return xs && xs.length > 1 && xs[0] > state.since ? xs[0] : state.since;
  }

  // What a chart has on screen, on its element after each drawing: the x
  // range shown, and the value axis's width, font and labels (the tests
  // check that a short history fills the chart and that no label is cut).
  function markShown(u) {
    const box = u.root.closest(".chart");
    if (!box) return;
    const y = u.axes[1];
    box.dataset.shownMin = u.scales.x.min;
    box.dataset.shownMax = u.scales.x.max;
    box.dataset.yaxisWidth = y._size || "";
    box.dataset.yaxisFont = y.font ? y.font[0] : "";
    box.dataset.yaxisLabels = JSON.stringify(y._values || []);
  }

  // Series keys of a chart: [{metric, gpu, label, color, dash}].
  function seriesKeys(def) {
    if (def.host)
      return def.metrics.map((m, i) => ({ metric: m, gpu: null, label: def.labels[i], color: HOST_COLORS[i], map: def.map && def.map[i] }));
    const keys = [];
    for (const g of (state.header && state.header.gpus) || [])
      def.metrics.forEach((m, i) => keys.push({ metric: m, gpu: g.index,
        label: "GPU " + g.index + (def.metrics.length > 1 ? (i === 0 ? " tx" : " rx") : ""),
        color: gpuColor(g.index), dash: i > 0 ? [5, 4] : null }));
    return keys;
  }

  function chartSize(el) {
    const w = Math.max(260, el.clientWidth - 4);
    return { width: w, height: window.innerWidth < 640 ? 170 : 200 };
  }

  let firstChartMarked = false;
  function makeChart(def) {
    const box = h("div", { class: "chart", "data-chart": def.id },
      h("h3", null, def.title), h("div", { class: "plot" }));
    $("charts").appendChild(box);
    const plot = box.querySelector(".plot");
    const keys = seriesKeys(def);
    const axisStroke = css("--muted"), grid = css("--grid");
    const opts = Object.assign(chartSize(plot), {
      // A drag selects; the page zooms every chart (setSelect below).
      cursor: { sync: { key: "gd" }, drag: { x: true, y: false, setScale: false } },
      legend: { live: true },
      scales: { x: { time: true }, y: def.max ? { range: [0, def.max] } : { range: (u, lo, hi) => [Math.min(0, lo), hi > 0 ? hi * 1.05 : 1] } },
      axes: [
        { stroke: axisStroke, grid: { stroke: grid }, ticks: { stroke: grid } },
        valueAxis(def.unit, axisStroke, grid),
      ],
      series: [{}].concat(keys.map(k => ({ label: k.label, stroke: k.color, width: 1.5,
        dash: k.dash || undefined, spanGaps: false, points: { show: false },
        value: (u, v) => fmtValue(def.unit, v) }))),
      hooks: {
        setSelect: [u => {
          if (u.select.width < 4) return;
          const min = u.posToVal(u.select.left, "x"), max = u.posToVal(u.select.left + u.select.width, "x");
          u.setSelect({ width: 0, height: 0 }, false);
          zoomTo(min, max);
        }],
        draw: [markShown, u => {
          if (!firstChartMarked && u.data[0].length > 1) {
            firstChartMarked = true;
            performance.mark("gd-first-chart");
          }
        }],
      },
    });
    const c = { def, keys, el: plot, u: new uPlot(opts, emptyData(keys), plot), data: null };
    charts.push(c);
    return c;
  }
  function emptyData(keys) { return [[]].concat(keys.map(() => [])); }

  function rebuildCharts() {
    for (const c of charts) c.u.destroy();
    charts.length = 0;
    clear($("charts"));
    for (const def of CHARTS) makeChart(def);
    for (const c of charts) if (c.data) c.u.setData(c.data);
    loadHistory();
  }

  // Puts history results into each chart: one x array (the union of the
  // series' times) and a column per series, null where a series has no
  // point (so a GPU that was stale shows a gap).
  function fillCharts(results, only) {
    const byMetric = {};
    for (const r of results) byMetric[r.metric] = r.series;
    for (const c of only || charts) {
      const cols = c.keys.map(k => {
        const s = (byMetric[k.metric] || []).find(x => (k.gpu === null ? x.gpu === null : x.gpu === k.gpu));
        return s ? s.points : [];
      });
      const times = new Set();
      for (const pts of cols) for (const p of pts) times.add(p[0]);
      const xs = Array.from(times).sort((a, b) => a - b);
      const index = new Map(xs.map((t, i) => [t, i]));
      const data = [xs];
      cols.forEach((pts, i) => {
        const col = new Array(xs.length).fill(null);
        const map = c.keys[i].map;
        for (const p of pts) col[index.get(p[0])] = map ? map(p[1]) : p[1];
        data.push(col);
      });
      c.data = data;
      c.u.setData(data, false);
      c.u.setScale("x", { min: xMin(c), max: state.until });
      markData(c);
    }
  }

  // What a chart holds, on its element (for tests and the benchmark).
  function markData(c) {
    let n = 0;
    for (let i = 1; i < c.data.length; i++) for (const v of c.data[i]) if (v !== null) n++;
    const box = c.el.parentNode;
    box.dataset.points = n;
    box.dataset.xmin = c.data[0].length ? c.data[0][0] : "";
    box.dataset.xmax = c.data[0].length ? c.data[0][c.data[0].length - 1] : "";
  }

  // A live sample: one point more on every chart, the oldest shifted out.
  function appendSample(s) {
    if (!state.live) return;
    state.until = s.t;
    state.since = s.t - state.range;
    for (const c of charts) {
      if (!c.data) continue;
      const data = c.data;
      if (data[0].length && s.t <= data[0][data[0].length - 1]) continue;
      data[0].push(s.t);
      c.keys.forEach((k, i) => {
        let v = null;
        if (k.gpu === null) v = s.host ? s.host[k.metric.slice(5)] : null;
        else {
          const g = (s.gpus || []).find(x => x.index === k.gpu);
          v = g ? g[k.metric.slice(4)] : null;
        }
        if (!known(v)) v = null;
        data[i + 1].push(v !== null && k.map ? k.map(v) : v);
      });
      let drop = 0;
      while (drop < data[0].length && data[0][drop] < state.since) drop++;
      if (drop) for (const col of data) col.splice(0, drop);
      c.u.setData(data, false);
      c.u.setScale("x", { min: xMin(c), max: state.until });
      markData(c);
    }
    renderTimeline();
  }

  let historySeq = 0, lastHistoryAt = 0;
  function historyUrl(only) {
    const metrics = [];
    for (const def of only || CHARTS) for (const m of def.metrics) if (!metrics.includes(m)) metrics.push(m);
    return "/api/v1/history?metric=" + metrics.join(",") + "&since=" + state.since.toFixed(3) +
      "&until=" + state.until.toFixed(3) + "&step=auto";
  }
  // `started`: a request for the current range already on its way (the
  // first one is sent before the page knows the node).
  async function loadHistory(started) {
    const seq = ++historySeq;
    if (state.live && !started) {
      const now = state.sample ? state.sample.t : Date.now() / 1000;
      state.until = now;
      state.since = now - state.range;
    }
    renderRangeText();
    updateDownload();
    try {
      const r = await (started || getJSON(historyUrl()));
      if (seq !== historySeq) return;  // a newer range was asked for
      state.historyOk = true;
      state.step = r.step;
      lastHistoryAt = Date.now();
      // One metric is answered in the single-metric form.
      state.results = r.results || (r.metric ? [{ metric: r.metric, series: r.series }] : []);
      fillCharts(state.results);
      renderRangeText(r);
    } catch (e) {
      state.historyOk = false;
      $("range-text").textContent = "history unavailable: " + e.message;
    }
    loadAlerts();
  }

  function renderRangeText(r) {
    const span = state.until - state.since;
    let text = (state.live ? "last " + elapsed(span) : clock(state.since) + " – " + clock(state.until));
    if (r) text += r.step > 0 ? " · " + elapsed(r.step) + " averages" : " · every sample";
    if (r && r.skipped_blocks) text += " · " + r.skipped_blocks + " corrupt block(s) skipped";
    // serve --no-db: what it holds in memory is all there is.
    if (r && r.kept_in_memory_s) text += " · no database: the last " + elapsed(r.kept_in_memory_s) + " in memory";
    $("range-text").textContent = text;
  }

  function zoomTo(min, max) {
    if (!(max > min)) return;
    state.live = false;
    state.since = min;
    state.until = max;
    renderRanges();
    loadHistory();
  }

  function renderRanges() {
    const box = $("ranges");
    clear(box);
    for (const [label, secs] of RANGES)
      box.appendChild(h("button", { type: "button", class: state.live && state.range === secs ? "active" : "",
        "data-range": label, onclick: () => { state.live = true; state.range = secs; renderRanges(); loadHistory(); } }, label));
    if (!state.live)
      box.appendChild(h("button", { type: "button", class: "", onclick: () => { state.live = true; renderRanges(); loadHistory(); } }, "back to live"));
  }

  function updateDownload() {
    const a = $("download");
    a.href = "/api/v1/export?since=" + Math.floor(state.since) + "&until=" + Math.ceil(state.until) + "&compress=zstd";
    const host = (state.header && state.header.host && state.header.host.hostname) || "node";
    a.setAttribute("download", "gpudoctor-" + host.replace(/[^A-Za-z0-9_.-]/g, "_") + "-" +
      Math.floor(state.since) + ".jsonl.zst");
    a.title = "the stored samples of the shown range as a trace, for `gpudoctor diagnose --from`";
  }

  // ---- findings timeline (alert history) -----------------------------------

  let alerts = [];
  async function loadAlerts() {
    try {
      const r = await getJSON("/api/v1/alerts?since=" + Math.floor(state.since) + "&until=" + Math.ceil(state.until));
      alerts = r.alerts || [];
    } catch (e) {
      alerts = null;
    }
    renderTimeline();
  }
  function renderTimeline() {
    const box = $("timeline");
    clear(box);
    if (alerts === null) { box.appendChild(h("div", { class: "empty muted" }, "alert history unavailable")); return; }
    const span = state.until - state.since;
    const shown = alerts.filter(a => (a.resolved_at || state.until) >= state.since && a.started_at <= state.until);
    if (!shown.length) { box.appendChild(h("div", { class: "empty muted" }, "no findings fired in this range")); return; }
    const lanes = [];
    for (const a of shown.sort((x, y) => x.started_at - y.started_at)) {
      const end = a.resolved_at || state.until;
      let lane = lanes.findIndex(l => l < a.started_at);
      if (lane < 0) { lane = lanes.length; lanes.push(0); }
      lanes[lane] = end;
      const left = Math.max(0, (a.started_at - state.since) / span * 100);
      const right = Math.min(100, (end - state.since) / span * 100);
      const gpus = a.gpus && a.gpus.length ? "GPU " + a.gpus.join(",") : "host";
      box.appendChild(h("div", {
        class: "alert " + a.severity, "data-id": a.id,
        style: { left: left + "%", width: Math.max(0.3, right - left) + "%", top: (3 + lane * 17) + "px" },
        title: a.severity + " " + a.id + " (" + gpus + "): " + a.title + "\n" + clock(a.started_at) + " – " +
          (a.resolved_at ? clock(a.resolved_at) : "still firing") + "\nclick to zoom the charts to it",
        onclick: () => {
          const e = a.resolved_at || Date.now() / 1000;
          const pad = Math.max(60, (e - a.started_at) * 0.2);
          zoomTo(a.started_at - pad, e + pad);
        } }));
    }
    box.style.height = (6 + lanes.length * 17) + "px";
  }

  // ---- processes -----------------------------------------------------------

  const COLUMNS = [
    { key: "gpu", label: "GPU", num: true }, { key: "pid", label: "PID", num: true },
    { key: "user", label: "USER" }, { key: "mem", label: "GPU MEM", num: true },
    { key: "spark", label: "last hour", nosort: true, opt: true },
    { key: "cpu", label: "CPU%", num: true, title: "the process and its workers" },
    { key: "workers", label: "WORKERS", num: true, opt: true }, { key: "rss", label: "RSS", num: true, opt: true },
    { key: "state", label: "STATE", opt: true }, { key: "elapsed", label: "ELAPSED", num: true, opt: true },
    // Shown only while some process runs in a Kubernetes pod, as in `ps`.
    { key: "pod", label: "POD", pods: true, title: "the Kubernetes pod: namespace/pod/container (sort by it)" },
    { key: "cmd", label: "COMMAND" },
  ];
  // A process's pod as `ps`, `who` and `top` name it (src/model/pod_label.cc):
  // "ml/train-0/main", "ml/train-0" while the container is unknown,
  // "pod 1a2b..." when only the cgroup's UID is known, " (deleted)" once the
  // kubelet no longer lists it. The API's "label" when it sends one.
  const DELETED_SUFFIX = " (deleted)";
  function podText(pod) {
    if (!pod) return null;
    const deleted = pod.deleted === true;
    let full = typeof pod.label === "string" ? pod.label : null;
    if (full === null) {
      full = known(pod.name)
        ? (known(pod.namespace) ? pod.namespace : "?") + "/" + pod.name + (known(pod.container) ? "/" + pod.container : "")
        : "pod " + (known(pod.uid) ? pod.uid : "?");
      if (deleted) full += DELETED_SUFFIX;
    }
    const name = deleted && full.endsWith(DELETED_SUFFIX) ? full.slice(0, -DELETED_SUFFIX.length) : full;
    return { full: full, name: name, deleted: deleted };
  }
  // The pod cell: the name ellipsised, the deletion mark always in view,
  // the whole label in the title.
  function podCell(pod) {
    const t = podText(pod);
    if (!t) return "";
    return [h("span", { class: "pod-name" }, t.name),
      t.deleted ? h("span", { class: "pod-deleted" }, DELETED_SUFFIX) : null];
  }
  function sortValue(p, key) {
    switch (key) {
      case "gpu": return p.gpu; case "pid": return p.pid; case "user": return p.user || "";
      case "pod": { const t = podText(p.pod); return t ? t.full : null; }
      case "mem": return p.used_bytes; case "cpu": return p.total_cpu;
      case "workers": return (p.children || []).length; case "rss": return p.rss_bytes;
      case "state": return p.state || ""; case "elapsed": return p.start_time ? -p.start_time : null;
      default: return p.cmdline || p.name || "";
    }
  }
  async function loadProcesses() {
    try {
      const r = await getJSON("/api/v1/processes");
      state.procs = r.processes || [];
      for (const p of state.procs)
        p.total_cpu = (p.cpu_pct || 0) + (p.children || []).reduce((a, c) => a + (c.cpu_pct || 0), 0);
      renderProcesses();
    } catch (e) {
      $("procs-count").textContent = "(unavailable: " + e.message + ")";
    }
  }
  async function loadSparks() {
    try {
      // Minute points: the store answers them from its minute averages.
      const r = await getJSON("/api/v1/history?metric=process.used_bytes&since=1h&step=60s");
      const spark = {};
      for (const s of r.series || []) spark[s.gpu + ":" + s.pid] = s.points;
      state.spark = spark;
      drawSparks();
    } catch (e) { /* history off: no sparklines */ }
  }
  function drawSparks() {
    const now = state.sample ? state.sample.t : Date.now() / 1000;
    for (const cv of document.querySelectorAll("canvas.spark")) {
      const pts = state.spark[cv.dataset.key] || [];
      const dpr = window.devicePixelRatio || 1;
      cv.width = 90 * dpr; cv.height = 20 * dpr;
      const ctx = cv.getContext("2d");
      ctx.clearRect(0, 0, cv.width, cv.height);
      if (pts.length < 2) continue;
      let max = 0;
      for (const p of pts) max = Math.max(max, p[1]);
      const total = gpuInfo(Number(cv.dataset.gpu)).memory_total_bytes || max || 1;
      ctx.strokeStyle = gpuColor(Number(cv.dataset.gpu));
      ctx.lineWidth = 1.5 * dpr;
      ctx.beginPath();
      pts.forEach((p, i) => {
        const x = (1 - (now - p[0]) / 3600) * cv.width;
        const y = cv.height - 1 - (p[1] / Math.max(max, total * 0.05)) * (cv.height - 2);
        if (i === 0) ctx.moveTo(x, y); else ctx.lineTo(x, y);
      });
      ctx.stroke();
      cv.title = "GPU memory over the last hour: " + bytes(pts[0][1]) + " → " + bytes(pts[pts.length - 1][1]) + " (max " + bytes(max) + ")";
    }
  }
  function cellClass(col) {
    return (col.num ? "num" : "") + (col.key === "cmd" ? " cmd" : "") + (col.key === "pod" ? " pod" : "") +
      (col.opt ? " opt" : "");
  }
  function renderProcesses() {
    const t = $("procs");
    clear(t);
    const cols = COLUMNS.filter(c => !c.pods || state.procs.some(p => p.pod));
    if (!cols.some(c => c.key === state.sort.key)) state.sort = { key: "mem", asc: false };
    const head = h("tr");
    for (const col of cols) {
      const sorted = state.sort.key === col.key;
      head.appendChild(h("th", { class: (sorted ? "sorted" + (state.sort.asc ? " asc" : "") : "") + (col.opt ? " opt" : ""),
        title: col.title || (col.nosort ? "" : "sort by " + col.label),
        onclick: col.nosort ? null : () => {
          state.sort = { key: col.key, asc: sorted ? !state.sort.asc : !col.num || col.key === "gpu" || col.key === "pid" };
          renderProcesses();
        } }, col.label));
    }
    t.appendChild(h("thead", null, head));
    const body = h("tbody");
    const rows = state.procs.slice();
    const k = state.sort.key, dir = state.sort.asc ? 1 : -1;
    rows.sort((a, b) => {
      const x = sortValue(a, k), y = sortValue(b, k);
      if (!known(x) && !known(y)) return a.pid - b.pid;
      if (!known(x)) return 1;
      if (!known(y)) return -1;
      return (x < y ? -1 : x > y ? 1 : 0) * dir || a.pid - b.pid;
    });
    // Jobs: ranks that share a launcher (or a common parent) under one
    // heading, in the order of their best-sorted rank.
    const groups = new Map();
    for (const p of rows) {
      const key = p.job && p.job.ranks > 1 ? "j" + p.job.pid : "p" + p.pid + ":" + p.gpu;
      if (!groups.has(key)) groups.set(key, []);
      groups.get(key).push(p);
    }
    const now = state.sample ? state.sample.t : Date.now() / 1000;
    for (const [key, members] of groups) {
      if (key[0] === "j") {
        const j = members[0].job;
        const gpus = Array.from(new Set(members.map(m => m.gpu))).sort((a, b) => a - b);
        const mem = members.reduce((a, m) => a + (m.used_bytes || 0), 0);
        body.appendChild(h("tr", { class: "job" }, h("td", { colspan: cols.length },
          "job " + (j.name || "?") + " (pid " + j.pid + "): " + members.length + " ranks on GPU " + gpus.join(",") +
          ", " + bytes(mem) + " GPU memory")));
      }
      for (const p of members) {
        const dead = p.state === "Z" || p.state === "missing" || p.state === "unknown";
        const kids = p.children || [];
        const open = !!state.folded[p.pid];
        const cells = {
          gpu: String(p.gpu), pid: String(p.pid), user: p.user || "?", mem: bytes(p.used_bytes),
          spark: h("canvas", { class: "spark", "data-key": p.gpu + ":" + p.pid, "data-gpu": p.gpu }),
          cpu: pct(p.total_cpu), workers: kids.length ? h("span", { class: "fold", title: "show / hide the workers",
            onclick: () => { state.folded[p.pid] = !open; renderProcesses(); } }, (open ? "▾ " : "▸ ") + kids.length) : "0",
          rss: bytes(p.rss_bytes), state: p.state || "?",
          elapsed: p.start_time ? elapsed(now - p.start_time) : "n/a",
          pod: podCell(p.pod),
          cmd: p.cmdline || p.name || "",
        };
        const pod = podText(p.pod);
        const titles = { cmd: cells.cmd, pod: pod ? pod.full : null };
        const tr = h("tr", { class: dead ? "dead" : "", "data-pid": p.pid });
        for (const col of cols)
          tr.appendChild(h("td", { class: cellClass(col), title: titles[col.key] }, cells[col.key]));
        body.appendChild(tr);
        if (open)
          for (const c of kids) {
            // A worker: its pid, CPU, state and name under its rank's.
            const kid = { pid: String(c.pid), cpu: pct(c.cpu_pct), state: c.state || "", cmd: "└ " + (c.name || "") };
            body.appendChild(h("tr", { class: "child" }, cols.map(col => h("td", { class: cellClass(col) }, kid[col.key]))));
          }
      }
    }
    if (!rows.length)
      body.appendChild(h("tr", null, h("td", { colspan: cols.length, class: "muted" }, "no GPU processes")));
    t.appendChild(body);
    $("procs-count").textContent = "(" + rows.length + ")";
    drawSparks();
  }

  // ---- live stream ---------------------------------------------------------

  let lastEventAt = 0, sampleCount = 0;
  function onSample(ev) {
    const d = JSON.parse(ev.data);
    state.sample = d.sample;
    state.memory = {};
    for (const m of d.memory || []) state.memory[m.gpu] = m;
    lastEventAt = Date.now();
    setLive(true);
    renderOverview();
    appendSample(d.sample);
    if (++sampleCount % 5 === 0) loadProcesses();
    // Long ranges get averaged history again now and then, so the live
    // tail does not grow the charts for days.
    if (state.live && state.step > 0 && Date.now() - lastHistoryAt > Math.max(60, state.step * 30) * 1000)
      loadHistory();
    if (sampleCount % 60 === 0) loadSparks();
  }
  function setLive(on) {
    $("live").classList.toggle("on", on);
    $("live-text").textContent = on ? "live" : "offline";
  }
  function connect() {
    const es = new EventSource("/api/v1/events");
    es.addEventListener("sample", onSample);
    es.addEventListener("findings", ev => renderFindings(JSON.parse(ev.data)));
    es.addEventListener("fleet", onFleet);
    es.onerror = () => setLive(false);
    setInterval(() => { if (Date.now() - lastEventAt > 10000) setLive(false); }, 2000);
  }

  // ---- usage page (#usage) -------------------------------------------------
  // /api/v1/usage: per job (user, container) GPU-hours held and energy over
  // a window of serve's history, stacked per time bucket, a table of the
  // groups and the waste by cause (docs/report.md).

  const USAGE_RANGES = [["6h", 21600], ["24h", 86400], ["7d", 604800]];
  const usage = { range: 86400, by: "job", data: null, charts: [], loading: 0 };

  function hours(v) { return known(v) ? v.toFixed(v >= 10 ? 2 : 4) : "n/a"; }
  function usageButtons(box, items, current, pick) {
    clear(box);
    for (const [label, value] of items)
      box.appendChild(h("button", { type: "button", class: value === current ? "active" : "",
        "data-value": label, onclick: () => pick(value) }, label));
  }
  function renderUsageControls() {
    // A fixed window (#usage?since=...) lights no range; a range ends it.
    const fixed = location.hash.includes("since=");
    usageButtons($("usage-ranges"), USAGE_RANGES, fixed ? null : usage.range, v => {
      usage.range = v;
      if (fixed) history.replaceState(null, "", "#usage");
      loadUsage();
    });
    usageButtons($("usage-by"), [["job", "job"], ["user", "user"], ["container", "container"],
      ["pod", "pod"], ["namespace", "namespace"]], usage.by,
      v => { usage.by = v; loadUsage(); });
  }
  function groupColor(g, i) { return g.other ? css("--muted") || "#999" : PALETTE[i % PALETTE.length]; }

  // One stacked chart: a group's band is its own value per bucket, drawn
  // over the sum of the groups before it.
  function usageChart(title, unit, field, u) {
    const box = h("div", { class: "chart", "data-chart": "usage-" + field },
      h("h3", null, title), h("div", { class: "plot" }));
    $("usage-charts").appendChild(box);
    const plot = box.querySelector(".plot");
    const n = u.buckets.length;
    const xs = u.buckets.concat([n ? u.buckets[n - 1] + u.bucket_s : u.window.until]);
    const own = u.groups.map(g => { const v = g.series[field].slice(); v.push(v.length ? v[v.length - 1] : 0); return v; });
    const cum = [];
    own.forEach((v, k) => cum.push(v.map((x, i) => x + (k ? cum[k - 1][i] : 0))));
    const order = u.groups.map((g, k) => k).reverse();  // the largest sum first: the others paint over it
    const axisStroke = css("--muted"), grid = css("--grid");
    const stepped = uPlot.paths.stepped({ align: 1 });
    const opts = Object.assign(chartSize(plot), {
      cursor: { drag: { x: false, y: false } },
      legend: { live: true },
      scales: { x: { time: true }, y: { range: (uu, lo, hi) => [0, hi > 0 ? hi * 1.05 : 1] } },
      axes: [
        { stroke: axisStroke, grid: { stroke: grid }, ticks: { stroke: grid } },
        { stroke: axisStroke, grid: { stroke: grid }, ticks: { stroke: grid }, size: axisSize,
          values: (uu, splits) => splits.map(v => String(+v.toPrecision(3))) },
      ],
      series: [{}].concat(order.map(k => ({ label: inert(u.groups[k].label), stroke: groupColor(u.groups[k], k),
        fill: groupColor(u.groups[k], k) + "99", width: 1, paths: stepped, points: { show: false },
        value: (uu, v, si, idx) => idx === null || idx === undefined ? "–" : hours(own[k][idx]) + " " + unit }))),
    });
    const chart = new uPlot(opts, [xs].concat(order.map(k => cum[k])), plot);
    usage.charts.push({ u: chart, el: plot });
  }

  function renderUsage(u) {
    usage.data = u;
    for (const c of usage.charts) c.u.destroy();
    usage.charts.length = 0;
    clear($("usage-charts"));
    const nd = u.node;
    const from = u.window.start || u.window.since, to = u.window.end || u.window.until;
    $("usage-text").textContent = u.window.samples + " samples, " + clock(from) + " – " + clock(to) +
      " · " + u.groups_total + " " + u.by + (u.groups_total === 1 ? "" : "s");
    const node = $("usage-node");
    clear(node);
    const fact = (label, v) => h("span", null, label + " ", h("b", null, v));
    append(node, [fact("GPUs", String(nd.gpus)), fact("available", hours(nd.gpu_hours_available) + " GPU-h"),
      fact("held", hours(nd.gpu_hours_held) + " GPU-h"), fact("busy", hours(nd.busy_gpu_hours) + " GPU-h"),
      fact("energy", hours(nd.energy_kwh) + " kWh"), fact("idle energy", hours(nd.idle_energy_kwh) + " kWh")]);
    usageChart("GPU-hours held per bucket (stacked)", "GPU-h", "gpu_hours_held", u);
    usageChart("Energy per bucket, kWh (stacked)", "kWh", "energy_kwh", u);

    const t = $("usage-table");
    clear(t);
    t.appendChild(h("thead", null, h("tr", null, [u.by, "GPUs", "GPU-h held", "busy GPU-h", "idle-held GPU-h",
      "energy kWh", "split", "waste by cause"].map(c => h("th", null, c)))));
    const body = h("tbody");
    u.groups.forEach((g, i) => {
      const waste = g.waste.map(w => w.id + " " + Math.round(100 * w.share) + "%").join(", ");
      body.appendChild(h("tr", { "data-key": g.key, class: g.other ? "other" : "" },
        h("td", { class: "label", title: g.label }, h("span", { class: "swatch", style: { background: groupColor(g, i) } }),
          g.other ? "other (" + g.groups + ")" : g.label),
        h("td", null, g.gpus.join(",")),
        h("td", { class: "num held" }, hours(g.gpu_hours_held)),
        h("td", { class: "num" }, hours(g.busy_gpu_hours)),
        h("td", { class: "num" }, hours(g.idle_held_gpu_hours)),
        h("td", { class: "num energy" }, hours(g.energy_kwh)),
        h("td", null, g.split),
        h("td", { class: "waste" }, waste || (u.findings ? "none" : "not judged"))));
    });
    if (!u.groups.length) body.appendChild(h("tr", null, h("td", { colspan: 8, class: "muted" }, "no GPU was held in this window")));
    t.appendChild(body);

    // Waste by cause: each finding's GPU-hours (its share of each group's
    // held time), added up over the groups.
    const causes = {};
    for (const g of u.groups)
      for (const w of g.waste) {
        const c = causes[w.id] || (causes[w.id] = { id: w.id, severity: w.severity, gpuh: 0, groups: [] });
        c.gpuh += w.share * g.gpu_hours_held;
        c.groups.push(g.label);
      }
    const list = Object.values(causes).sort((a, b) => b.gpuh - a.gpuh);
    const wbox = $("usage-waste");
    clear(wbox);
    const held = nd.gpu_hours_held || 0;
    if (!list.length) wbox.appendChild(h("p", { class: "muted" }, u.findings ? "no efficiency finding in this window" : "not judged"));
    for (const c of list)
      wbox.appendChild(h("div", { class: "cause", "data-cause": c.id },
        meter([{ pct: held > 0 ? 100 * c.gpuh / held : 0 }]),
        h("b", null, c.id), hours(c.gpuh) + " GPU-h", h("span", { class: "muted" }, c.groups.join(", "))));
    performance.mark("gd-usage-drawn");
  }

  async function loadUsage() {
    renderUsageControls();
    const ticket = ++usage.loading;
    $("usage-text").textContent = "loading…";
    try {
      // #usage?since=T&until=T: a fixed window (a link to share).
      const fixed = new URLSearchParams(location.hash.split("?")[1] || "");
      const q = new URLSearchParams({ since: fixed.get("since") || (usage.range / 3600) + "h", by: usage.by,
        buckets: "48", top: "8" });
      if (fixed.get("until")) q.set("until", fixed.get("until"));
      const u = await getJSON("/api/v1/usage?" + q.toString());
      if (ticket === usage.loading) renderUsage(u);
    } catch (e) {
      if (ticket === usage.loading) $("usage-text").textContent = "usage unavailable: " + e.message;
    }
  }

  // ---- fleet page (#fleet) -------------------------------------------------
  // /api/v1/fleet (serve --fleet-prometheus): every node of the fleet's
  // Prometheus as `top --prometheus` lists them. serve orders the nodes (the
  // worst first) and says each one's status by top's rules
  // (src/monitor/fleet_rows.h); the page draws a row per node and a cell per
  // GPU, and a node's findings when its row is opened. All of it came from
  // Prometheus: text goes in as text, and a node links only to the http://
  // address serve checked (its serve's scrape address).

  const fleet = { data: null, colour: "util", filter: "", open: {}, loading: 0, shown: false };
  const DASHBOARD_URL = /^https?:\/\/(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+):[0-9]{1,5}\/$/;
  const SEVERITY_WORD = { critical: "CRIT", warning: "WARN", info: "INFO" };

  // top's age text: "45s", "2m", "3h", "4d".
  function ageText(s) {
    if (!(s >= 0)) s = 0;
    if (s < 60) return Math.floor(s) + "s";
    if (s < 3600) return Math.floor(s / 60) + "m";
    if (s < 86400) return Math.floor(s / 3600) + "h";
    return Math.min(9999, Math.floor(s / 86400)) + "d";
  }
  function fleetStatusText(n) {
    return n.status === "refused" ? "refused" : n.status + " " + ageText(n.age_s);
  }
  // top's filter: a node whose name or a finding's id holds the text.
  function fleetMatches(n, needle) {
    if (!needle) return true;
    if (n.name.toLowerCase().includes(needle)) return true;
    return (n.findings || []).some(f => f.id.includes(needle));
  }
  // The worst severity of the findings that name GPU `index` ("" none).
  function gpuSeverity(n, index) {
    let worst = "";
    const rank = { "": 0, info: 1, warning: 2, critical: 3 };
    for (const f of n.findings || [])
      if ((f.gpus || []).includes(index) && rank[f.severity] > rank[worst]) worst = f.severity;
    return worst;
  }
  function gpuTitle(g) {
    const mem = known(g.mem_used_bytes) ? bytes(g.mem_used_bytes) + (known(g.mem_total_bytes) ? " / " + bytes(g.mem_total_bytes) : "") : "n/a";
    return "GPU " + g.index + ": util " + pct(g.util_pct) + " · memory " + mem + " · " +
      (known(g.temp_c) ? g.temp_c + " °C" : "n/a °C") + " · " + (known(g.power_w) ? num(g.power_w, 0) + " W" : "n/a W");
  }
  // top's TEMP and POWER columns: the hottest GPU, the power of all.
  function hottest(n) {
    const t = (n.gpus || []).filter(g => known(g.temp_c)).map(g => g.temp_c);
    return t.length ? Math.max.apply(null, t) + "°C" : "-";
  }
  function powerText(n) {
    const w = (n.gpus || []).filter(g => known(g.power_w) && isFinite(g.power_w));
    if (!w.length) return "-";
    const sum = w.reduce((a, g) => a + g.power_w, 0);
    return sum >= 10000 ? (sum / 1000).toFixed(1) + "kW" : sum.toFixed(0) + "W";
  }
  function nodeName(n) {
    // A link only to the address serve checked, and checked again here.
    if (n.dashboard && DASHBOARD_URL.test(n.dashboard))
      return h("a", { href: n.dashboard, target: "_blank", rel: "noopener noreferrer", class: "node-link",
        title: "this node's gpudoctor serve dashboard", onclick: ev => ev.stopPropagation() }, n.name);
    return h("span", { class: "node-name" }, n.name);
  }
  function nodeDetails(n, columns) {
    const box = h("div", { class: "fleet-details" });
    if (n.status === "refused") box.appendChild(h("p", { class: "chip crit" }, "not judged: " + (n.error || "")));
    else if (n.status !== "ok")
      box.appendChild(h("p", { class: "muted" }, n.status === "gone"
        ? "no series within Prometheus' lookback: the last values, " + ageText(n.age_s) + " old, greyed"
        : "its newest sample is " + ageText(n.age_s) + " old; values greyed"));
    const list = n.findings || [];
    box.appendChild(h("h3", null, "Findings (" + n.findings_count + ")"));
    // What was judged, as top's node view says it.
    box.appendChild(h("p", { class: "muted fleet-window" }, n.window_samples > 1
      ? "this refresh's sample, and its last " + n.window_samples + " scrapes (" + ageText(n.window_span_s) + ")"
      : "this refresh's sample"));
    const note = fleet.data && fleet.data.window_note;
    if (note) box.appendChild(h("p", { class: "muted fleet-window-note" }, note));
    if (!list.length) box.appendChild(h("p", { class: "muted" }, "none"));
    for (const f of list)
      box.appendChild(h("div", { class: "finding " + f.severity, "data-id": f.id },
        h("div", { class: "head" }, h("span", { class: "badge " + f.severity }, f.severity),
          h("b", null, f.id), f.gpus && f.gpus.length ? h("span", { class: "muted" }, "GPU " + f.gpus.join(",")) : null,
          h("span", { class: "summary" }, f.summary)),
        f.evidence ? h("p", { class: "muted" }, f.evidence) : null));
    if (n.findings_count > list.length)
      box.appendChild(h("p", { class: "muted" }, "and " + (n.findings_count - list.length) + " more"));
    const nj = n.not_judged || [];
    // What could not be judged from Prometheus' series (often a dozen
    // rules that need the kernel log or the process lists): folded.
    if (nj.length)
      box.appendChild(h("details", { class: "not-judged" }, h("summary", null, "Not judged (" + nj.length + ")"),
        h("ul", null, nj.map(x =>
          h("li", { "data-id": x.id }, h("b", null, x.id), h("span", { class: "muted" }, " " + x.reason))))));
    return h("tr", { class: "fleet-open", "data-open": n.name }, h("td", { colspan: columns }, box));
  }

  function renderFleetControls() {
    usageButtons($("fleet-colour"), [["util", "util"], ["finding", "finding"]], fleet.colour,
      v => { fleet.colour = v; renderFleetControls(); if (fleet.data) renderFleet(fleet.data); });
    $("fleet-legend").textContent = fleet.colour === "util"
      ? "Each cell is a GPU, coloured by its utilisation (darker is busier; ? unknown); hover for memory, temperature and power. A node's row opens its findings."
      : "Each cell is a GPU, coloured by the worst finding that names it (red critical, amber warning, blue info). A node's row opens its findings.";
  }

  // The grid draws only the rows near the screen (a screen above and below
  // it; spacer rows stand for the rest, at the heights the rows had when
  // drawn) and keeps those rows between rounds by name, changing only the
  // parts whose text, colour or title moved. At 2,048 nodes of 8 GPUs every
  // row drawn and rebuilt each round took ~1.7 s to first draw and ~0.65 s
  // an update on a 2-core machine (bench/fleet/fleet_page.py); the page's
  // filter finds a node that is off screen. Each part of a row keeps the
  // key it was last drawn from; a part whose key moved is set again, as
  // text.
  const FLEET_HEADS = [["NODE", ""], ["DATA", ""], ["GPUS", "num"], ["GPU", "cells"],
    ["TEMP", "num"], ["POWER", "num"], ["N", "num"], ["WORST FINDING", ""]];
  const fleetGrid = { body: null, colour: "", rows: new Map(), heights: new Map(), rowPx: 31,
    list: [], empty: null, before: null, after: null, frame: 0 };

  function setPart(part, key, draw) {
    if (part.key === key) return;
    part.key = key;
    draw(part.el);
  }
  function textOf(el, text) { el.textContent = inert(text); }
  function fleetWorst(n) {
    if (n.worst_id)
      return [h("span", { class: "badge " + n.worst_severity }, SEVERITY_WORD[n.worst_severity] || n.worst_severity), " ",
        h("span", { class: "worst-id" }, n.worst_id)];
    return n.status === "refused" ? h("span", { class: "muted" }, "not judged: " + (n.error || "")) : h("span", { class: "muted" }, "-");
  }
  function gpuCellKey(n, g) {
    const util = known(g.util_pct);
    const cls = "gpu-cell" + (fleet.colour === "finding" ? " sev-" + (gpuSeverity(n, g.index) || "none")
      : util ? " u" + Math.min(4, Math.floor(Math.max(0, g.util_pct) / 20)) : " unknown");
    return [cls, gpuTitle(g), util ? String(g.util_pct) : "", util ? num(g.util_pct) : "?"];
  }
  // A node's row: its parts, each with the element it draws into.
  function newFleetRow(name) {
    const toggle = () => { fleet.open[name] = !fleet.open[name]; renderFleet(fleet.data); };
    const part = (tag, cls) => ({ el: h(tag, cls ? { class: cls } : null), key: null });
    const r = {
      fold: part("button", "fold ghost"), link: part("td", "name"), status: part("td"), gpus: part("td", "num gpus"),
      cells: { el: h("td", { class: "cells" }), list: [] }, temp: part("td", "num temp"),
      power: part("td", "num power"), count: part("td", "num count"), worst: part("td", "worst"),
      key: null, details: null,
    };
    r.fold.el.type = "button";
    r.fold.el.title = "show / hide its findings";
    r.fold.el.addEventListener("click", ev => { ev.stopPropagation(); toggle(); });
    r.link.el.appendChild(r.fold.el);
    r.tr = h("tr", { "data-node": name, onclick: toggle }, r.link.el, r.status.el, r.gpus.el, r.cells.el,
      r.temp.el, r.power.el, r.count.el, r.worst.el);
    return r;
  }
  function drawFleetRow(r, n, open) {
    setPart(r, n.status, () => {
      r.tr.className = "fleet-node" + (n.status !== "ok" ? " greyed" : "");
      r.tr.setAttribute("data-status", inert(n.status));
    });
    setPart(r.fold, open, el => { el.setAttribute("aria-expanded", open ? "true" : "false"); el.textContent = open ? "▾" : "▸"; });
    setPart(r.link, n.dashboard || "", td => {
      while (td.childNodes.length > 1) td.removeChild(td.lastChild);
      td.appendChild(nodeName(n));
    });
    const status = fleetStatusText(n);
    setPart(r.status, n.status + "\n" + status, td => { td.className = "status " + n.status; textOf(td, status); });
    const gpus = n.gpus || [];
    setPart(r.gpus, gpus.length, td => textOf(td, gpus.length ? String(gpus.length) : "-"));
    const cells = r.cells;
    if (cells.list.length !== gpus.length) {
      clear(cells.el);
      cells.list = gpus.map(() => ({ el: cells.el.appendChild(h("span")), key: null }));
    }
    gpus.forEach((g, i) => {
      const k = gpuCellKey(n, g);
      setPart(cells.list[i], g.index + "\n" + k.join("\n"), el => {
        el.className = k[0];
        el.setAttribute("title", inert(k[1]));
        el.setAttribute("data-gpu", inert(g.index));
        el.setAttribute("data-util", k[2]);
        textOf(el, k[3]);
      });
    });
    const temp = hottest(n), power = powerText(n), count = n.findings_count ? String(n.findings_count) : "";
    setPart(r.temp, temp, td => textOf(td, temp));
    setPart(r.power, power, td => textOf(td, power));
    setPart(r.count, count, td => textOf(td, count));
    setPart(r.worst, [n.worst_id, n.worst_severity, n.status === "refused" && n.error].join("\n"), td => {
      clear(td);
      append(td, fleetWorst(n));
    });
  }
  function fleetSpacer() {
    return h("tr", { class: "fleet-spacer", "aria-hidden": "true" }, h("td", { colspan: FLEET_HEADS.length }));
  }
  function drawFleetGrid(rows, count, d) {
    const t = $("fleet-grid");
    if (!fleetGrid.body || fleetGrid.body.parentNode !== t) {
      clear(t);
      fleetGrid.body = h("tbody");
      fleetGrid.colour = "";
      fleetGrid.rows.clear();
      fleetGrid.before = fleetSpacer();
      fleetGrid.after = fleetSpacer();
      t.appendChild(h("thead"));
      t.appendChild(fleetGrid.body);
    }
    if (fleetGrid.colour !== fleet.colour) {
      fleetGrid.colour = fleet.colour;
      const head = t.tHead;
      clear(head);
      head.appendChild(h("tr", null, FLEET_HEADS.map(x =>
        h("th", { class: x[1] }, x[0] === "GPU" ? "GPU " + fleet.colour.toUpperCase() : x[0]))));
    }
    // How many nodes the grid lists (drawn or not).
    t.setAttribute("data-rows", String(rows.length));
    fleetGrid.list = rows;
    fleetGrid.empty = rows.length ? null : h("tr", null, h("td", { colspan: FLEET_HEADS.length, class: "muted" },
      count ? "no node matches the filter" : d.t ? "no node in this Prometheus" : "reading the fleet…"));
    const present = new Set((d.nodes || []).map(n => n.name));
    for (const name of fleetGrid.heights.keys()) if (!present.has(name)) fleetGrid.heights.delete(name);
    placeFleetRows(true);
  }
  // Draws the rows that are within a screen of the viewport. `all`: every
  // drawn row again (a new round); else only the rows coming into range.
  function placeFleetRows(all) {
    const g = fleetGrid, list = g.list;
    const height = n => g.heights.get(n.name) || g.rowPx;
    const top = -g.body.getBoundingClientRect().top, screen = window.innerHeight || 900;
    const from = top - screen, to = top + 2 * screen;
    let y = 0, first = 0;
    while (first < list.length && y + height(list[first]) < from) y += height(list[first++]);
    const above = y;
    let last = first;
    while (last < list.length && y < to) y += height(list[last++]);
    let below = 0;
    for (let i = last; i < list.length; i++) below += height(list[i]);
    const want = [];
    if (above) { g.before.style.height = above + "px"; want.push(g.before); }
    const drawn = new Map();
    for (let i = first; i < last; i++) {
      const n = list[i];
      let r = g.rows.get(n.name);
      const fresh = !r;
      if (fresh) r = newFleetRow(n.name);
      drawn.set(n.name, r);
      const open = !!fleet.open[n.name];
      if (all || fresh || r.node !== n) {
        r.node = n;
        drawFleetRow(r, n, open);
        // An opened node's findings are drawn again each round (they are
        // few).
        const wasOpen = notJudgedOpen(r.details);
        r.details = open ? nodeDetails(n, FLEET_HEADS.length) : null;
        if (wasOpen && r.details) (r.details.querySelector(".not-judged") || {}).open = true;
      }
      want.push(r.tr);
      if (r.details) want.push(r.details);
    }
    g.rows = drawn;  // rows scrolled far away are let go
    if (g.empty) want.push(g.empty);
    if (below) { g.after.style.height = below + "px"; want.push(g.after); }
    // Moves only what is out of place; what is left after is dropped.
    const body = g.body;
    let at = body.firstChild;
    for (const el of want) {
      if (el === at) at = at.nextSibling;
      else body.insertBefore(el, at);
    }
    while (at) {
      const next = at.nextSibling;
      body.removeChild(at);
      at = next;
    }
    // The heights the drawn rows take, for the spacers of the next pass.
    if (fleet.shown)
      for (const [name, r] of drawn) {
        const px = r.tr.offsetHeight + (r.details ? r.details.offsetHeight : 0);
        if (px) g.heights.set(name, px);
        if (px && !r.details) g.rowPx = px;
      }
  }
  function onFleetScroll() {
    if (!fleet.shown || !fleetGrid.body || fleetGrid.frame) return;
    fleetGrid.frame = requestAnimationFrame(() => { fleetGrid.frame = 0; placeFleetRows(false); });
  }
  window.addEventListener("scroll", onFleetScroll, { passive: true });
  window.addEventListener("resize", onFleetScroll);

  function renderFleet(d) {
    const began = performance.now();
    fleet.data = d;
    const needle = fleet.filter.trim().toLowerCase();
    const rows = (d.nodes || []).filter(n => fleetMatches(n, needle));
    const count = (d.nodes || []).length;
    $("fleet-count").textContent = "(" + count + (rows.length !== count ? ", " + rows.length + " shown" : "") + ")";
    $("fleet-text").textContent = d.t ? "from " + d.source + " · round " + num(d.round_s, 2) + " s at " + clock(d.t) +
      " · every " + d.interval_s + " s" : "reading " + d.source + "…";
    const crit = rows.filter(n => n.worst_severity === "critical").length;
    const warn = rows.filter(n => n.worst_severity === "warning").length;
    const stale = rows.filter(n => n.status === "stale").length;
    const gone = rows.filter(n => n.status === "gone" || n.status === "refused").length;
    const sum = $("fleet-summary");
    clear(sum);
    if (d.error) sum.appendChild(h("p", { class: "chip crit fleet-error" }, "cannot read the fleet: " + d.error));
    append(sum, [h("b", null, count + " node" + (count === 1 ? "" : "s")),
      h("span", { class: crit ? "chip crit" : "chip" }, crit + " critical"),
      h("span", { class: warn ? "chip warn" : "chip" }, warn + " warning"),
      h("span", { class: stale ? "chip warn" : "chip" }, stale + " stale"),
      h("span", { class: gone ? "chip crit" : "chip" }, gone + " not answering"),
      d.nodes_left_out ? h("span", { class: "chip warn" }, "+" + d.nodes_left_out + " nodes past the bound") : null,
      d.series_unnamed ? h("span", { class: "chip warn" }, "+" + d.series_unnamed + " GPU series naming no host, left out") : null]);

    drawFleetGrid(rows, count, d);
    performance.mark("gd-fleet-drawn");
    // How long the render took, for bench/fleet/fleet_page.py (User Timing
    // 3; a browser without it only loses the measure).
    try { performance.measure("gd-fleet-render", { start: began }); } catch (e) { /* no User Timing 3 */ }
  }

  async function loadFleet() {
    const ticket = ++fleet.loading;
    try {
      const d = await getJSON("/api/v1/fleet");
      showFleetTab();
      if (ticket === fleet.loading) renderFleet(d);
    } catch (e) {
      if (ticket === fleet.loading) $("fleet-text").textContent = "fleet unavailable: " + e.message;
    }
  }
  function showFleetTab() { $("tab-fleet").hidden = false; }
  // The live stream's "fleet" event: a new round is in (the tab appears);
  // the page fetches it only while it shows the Fleet tab.
  function onFleet() {
    showFleetTab();
    if (fleet.shown) loadFleet();
  }
  $("fleet-filter").addEventListener("input", ev => {
    fleet.filter = ev.target.value;
    if (fleet.data) renderFleet(fleet.data);
  });

  function showPage() {
    const page = location.hash.split("?")[0];
    const onUsage = page === "#usage", onFleet = page === "#fleet";
    $("dash").hidden = onUsage || onFleet;
    $("usage-page").hidden = !onUsage;
    $("fleet-page").hidden = !onFleet;
    fleet.shown = onFleet;
    $("tab-node").className = onUsage || onFleet ? "" : "active";
    $("tab-usage").className = onUsage ? "active" : "";
    $("tab-fleet").className = onFleet ? "active" : "";
    if (onUsage) loadUsage();
    else if (onFleet) { renderFleetControls(); loadFleet(); }
    else for (const c of charts) c.u.setSize(chartSize(c.el));
  }
  window.addEventListener("hashchange", showPage);

  // ---- start ---------------------------------------------------------------

  async function start() {
    // The Fleet tab shows with the live stream's first "fleet" event (serve
    // sends one to each new stream when it reads a fleet).
    if (["#usage", "#fleet"].includes(location.hash.split("?")[0])) showPage();
    renderRanges();
    // History and status at once: the first chart waits for the slower.
    state.until = Date.now() / 1000;
    state.since = state.until - state.range;
    // The first chart's metric alone comes back soonest; all of them (the
    // first again, so one range is consistent) once it has drawn.
    const firstHistory = getJSON(historyUrl(CHARTS.slice(0, 1)));
    firstHistory.catch(() => {});
    try {
      const st = await getJSON("/api/v1/status");
      state.header = st.header;
      state.sample = st.sample;
      state.collect = st.collect;
      $("footer").textContent = "gpudoctor " + (st.collect.version || "") + " · sampling every " +
        st.collect.interval_s + " s · read-only";
    } catch (e) {
      $("node").textContent = "cannot reach serve: " + e.message;
    }
    renderHeader();
    renderOverview();
    // The first chart first: the others are built once it has drawn.
    makeChart(CHARTS[0]);
    const first = loadHistory(firstHistory);
    connect();
    getJSON("/api/v1/findings").then(renderFindings).catch(() => {});
    await first;
    loadProcesses();
    loadSparks();
    await new Promise(r => requestAnimationFrame(() => setTimeout(r, 0)));
    for (const def of CHARTS.slice(1)) makeChart(def);
    await loadHistory();
    setInterval(() => getJSON("/api/v1/status").then(st => { state.collect = st.collect; }).catch(() => {}), 15000);
    let resizeTimer = 0;
    window.addEventListener("resize", () => {
      clearTimeout(resizeTimer);
      resizeTimer = setTimeout(() => {
        for (const c of charts.concat(usage.charts)) c.u.setSize(chartSize(c.el));
      }, 100);
    });
  }
  start();
})();
