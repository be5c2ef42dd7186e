"use strict";
// The Run page: one trace as a waterfall (spans nested: run → turn → model request / tool call
// → MCP request → verdicts; an old trace grouped by its user turns), filtered and searched on
// the server, drawn virtually (only the rows in view are in the DOM), and one hop at a time in
// full on the right: its JSON as a tree, its verdict's violations, the value they judged.

(() => {
  const ROW_H = 26; // px, every row the same height: the list is drawn by arithmetic
  const PAGE = 200; // rows fetched per request
  const OVERSCAN = 12;
  const FOLLOW_MS = 1500; // how often a run still going is asked for new hops
  const INDEXING_MS = 250; // how often a trace still being indexed is asked how far it got
  const main = document.getElementById("main");
  const params = new URLSearchParams(location.search);
  const runId = decodeURIComponent(location.pathname.split("/").pop());
  const where = params.get("file") ? `file=${encodeURIComponent(params.get("file"))}` : `run=${encodeURIComponent(runId)}`;
  const view = { total: 0, pages: new Map(), asked: new Set(), generation: 0, selected: null, asking: 0, filters: {}, collapsed: new Set() };
  const ui = {};

  // The head: what the run was, at a glance. ---------------------------------------------
  function head(meta) {
    const facts = [
      ["when", meta.start ? sw.when(meta.start) : "—"],
      ["duration", sw.duration(meta.duration) || "—"],
      ["model", (meta.models || []).join(", ") || "—"],
      ["tools", (meta.tools || []).join(", ") || "—"],
      ["hops", meta.hops.toLocaleString()],
    ];
    const counts = [["refusals", meta.refusals, "bad"], ["repairs", meta.repairs, "warn"], ["redactions", meta.redactions, "warn"], ["errors", meta.errors, "bad"]];
    return sw.el("section", { class: "run-head" },
      sw.el("div", { class: "run-title" },
        sw.el("h1", {}, "Run ", sw.el("span", { class: "mono" }, meta.run || runId)),
        sw.el("span", { class: `badge status-${meta.status}` }, meta.status),
        sw.el("span", { class: "muted mono small" }, meta.file),
        sw.el("button", { class: "eval-button", type: "button", onclick: makeEval }, "Make an eval case from this run")),
      sw.el("dl", { class: "facts" }, facts.map(([k, v]) => [sw.el("dt", {}, k), sw.el("dd", {}, v)]),
        counts.map(([k, n, kind]) => [sw.el("dt", {}, k), sw.el("dd", { class: n ? kind : "muted" }, String(n))])),
      meta.spans ? null : sw.el("p", { class: "muted small" }, "This trace has no spans (written before they were): its hops are grouped by the user's turns."));
  }

  // Filters and search. --------------------------------------------------------------------
  function toolbar(meta) {
    const select = (name, label, options) => sw.el("label", {}, label + " ",
      sw.el("select", { name, onchange: changed }, sw.el("option", { value: "" }, "all"), options.map((o) => sw.el("option", { value: o }, o))));
    const search = debounced(changed, 150); // while typing; Enter searches at once
    ui.search = sw.el("input", { type: "search", name: "q", placeholder: "Search every hop (server side)… Enter searches", "aria-label": "Search every hop", oninput: search, onkeydown: (event) => { if (event.key === "Enter") search.now(); } });
    ui.count = sw.el("span", { class: "muted count", "aria-live": "polite" });
    return sw.el("div", { class: "toolbar filters" },
      ui.search,
      select("protocol", "protocol", meta.protocols),
      select("tool", "tool", meta.tool_names),
      select("verdict", "verdict", ["accepted", "repaired", "refused"]),
      sw.el("label", {}, sw.el("input", { type: "checkbox", name: "errors", onchange: changed }), " errors only"),
      sw.el("button", { type: "button", class: "fold-turns", title: "Show each turn as one row", onclick: () => foldAll(true) }, "collapse turns"),
      sw.el("button", { type: "button", class: "unfold", onclick: () => foldAll(false) }, "expand all"),
      ui.count);
  }

  function debounced(f, ms) {
    let timer = null;
    const later = () => { clearTimeout(timer); timer = setTimeout(f, ms); };
    later.now = () => { clearTimeout(timer); f(); };
    return later;
  }

  function changed() {
    const filters = {};
    for (const input of document.querySelectorAll(".filters [name]")) {
      const value = input.type === "checkbox" ? (input.checked ? "1" : "") : input.value.trim();
      if (value) filters[input.name] = value;
    }
    view.filters = filters;
    reload();
  }

  function query(start) {
    const q = new URLSearchParams(view.filters);
    if (view.collapsed.size) q.set("collapsed", [...view.collapsed].join(","));
    q.set("start", String(start));
    q.set("count", String(PAGE));
    return `/api/runs/rows?${where}&${q}`;
  }

  // The waterfall, drawn virtually. ---------------------------------------------------------
  async function reload({ keepPlace = false } = {}) {
    view.generation += 1;
    view.pages.clear();
    view.asked.clear();
    if (!keepPlace) ui.scroller.scrollTop = 0;
    await fetchPage(Math.floor(ui.scroller.scrollTop / ROW_H / PAGE));
  }

  // Collapsing spans: the server leaves out the rows inside; "turns" folds every turn. ---
  function isCollapsed(row) {
    const c = view.collapsed;
    return c.has(row.span) || (c.has("turns") && row.kind === "turn" && !c.has(`-${row.span}`));
  }

  function toggleSpan(event, row) {
    event.stopPropagation();
    const c = view.collapsed;
    if (isCollapsed(row)) {
      c.delete(row.span);
      if (c.has("turns") && row.kind === "turn") c.add(`-${row.span}`);
    } else {
      c.delete(`-${row.span}`);
      c.add(row.span);
    }
    reload({ keepPlace: true });
  }

  function foldAll(turns) {
    view.collapsed = new Set(turns ? ["turns"] : []);
    reload();
  }

  async function fetchPage(page) {
    if (view.asked.has(page)) return;
    view.asked.add(page);
    const generation = view.generation;
    try {
      const answer = await sw.api(query(page * PAGE));
      if (generation !== view.generation) return; // a newer filter's answer supersedes it
      view.total = answer.total;
      view.pages.set(page, answer.rows);
      const what = Object.keys(view.filters).length ? `${answer.total.toLocaleString()} of ${answer.hops.toLocaleString()} hops` : `${answer.hops.toLocaleString()} hops`;
      const shown = answer.more ? `${what} (first ${answer.total.toLocaleString()} matches)` : what;
      ui.count.textContent = answer.indexing ? `${shown} so far (indexing the rest…)` : shown;
      draw();
    } catch (error) {
      view.asked.delete(page);
      ui.list.replaceChildren(sw.errorBox(error));
    }
  }

  function draw() {
    ui.spacer.style.height = `${view.total * ROW_H}px`;
    const first = Math.max(0, Math.floor(ui.scroller.scrollTop / ROW_H) - OVERSCAN);
    const last = Math.min(view.total, Math.ceil((ui.scroller.scrollTop + ui.scroller.clientHeight) / ROW_H) + OVERSCAN);
    const rows = [];
    for (let at = first; at < last; at++) {
      const page = Math.floor(at / PAGE);
      const loaded = view.pages.get(page);
      if (!loaded) { fetchPage(page); return; } // drawn when it comes; the rows shown stay
      const row = loaded[at - page * PAGE];
      if (row) rows.push(rowElement(row, at));
    }
    ui.list.replaceChildren(...rows);
    if (!view.total) ui.list.replaceChildren(sw.el("div", { class: "muted nothing" }, "No hop matches."));
  }

  function rowElement(row, at) {
    const isSpan = row.kind !== undefined;
    const outcome = row.outcome ? sw.el("span", { class: `badge outcome-${row.outcome}` }, row.outcome === "rejected" ? "refused" : row.outcome) : null;
    const bar = sw.el("span", { class: `bar ${isSpan ? "bar-span" : "bar-hop"} kind-${row.kind || row.protocol}${row.error ? " bar-error" : ""}` });
    bar.style.left = `${(row.bar[0] * 100).toFixed(3)}%`;
    bar.style.width = isSpan ? `max(2px, ${(row.bar[1] * 100).toFixed(3)}%)` : "2px";
    const name = sw.el("span", { class: "name" },
      isSpan && row.span ? sw.el("button", { type: "button", class: "fold", "aria-label": isCollapsed(row) ? "expand" : "collapse", "aria-expanded": String(!isCollapsed(row)), onclick: (event) => toggleSpan(event, row) }, isCollapsed(row) ? "▸" : "▾") : sw.el("span", { class: "fold" }),
      isSpan ? sw.el("span", { class: `kind kind-${row.kind}` }, row.kind) : sw.el("span", { class: `proto proto-${row.protocol.replace(/\W/g, "_")}` }, row.protocol),
      !isSpan && arrow(row) ? sw.el("span", { class: "dir" }, arrow(row)) : null,
      sw.el("span", { class: "label", title: isSpan ? (row.name ?? row.label) : row.label }, isSpan ? spanName(row) : row.label),
      row.inside ? turnSummary(row.inside) : null);
    const flat = Object.keys(view.filters).length > 0; // filtered rows lose their tree: no indent
    name.style.paddingLeft = `${(flat ? 0 : row.depth) * 16 + 4}px`;
    const element = sw.el("div", {
      class: `wf-row${isSpan ? " wf-span" : ""}${row.error ? " wf-error" : ""}${view.selected === row.i ? " selected" : ""}`,
      role: "row", tabindex: "0", dataset: { index: row.i, seq: row.seq, depth: row.depth },
      onclick: () => select(row),
      onkeydown: (event) => step(event, row, at),
    },
      sw.el("span", { class: "seq mono" }, String(row.seq)),
      name,
      sw.el("span", { class: "marks" }, outcome, row.redacted ? sw.el("span", { class: "badge warn", title: "a secret was replaced" }, "redacted") : null, isSpan && row.status && row.status !== "ok" ? sw.el("span", { class: `badge status-${row.status}` }, row.status) : null),
      timing(row),
      sw.el("span", { class: "track" }, bar));
    element.style.top = `${at * ROW_H}px`;
    return element;
  }

  /** A span's duration; a response's wait for its request; else when the hop happened. */
  function timing(row) {
    const at = `+${sw.duration(row.t) || "0 ms"} from the start`;
    if (row.duration !== undefined && row.duration !== null) return sw.el("span", { class: "dur mono", title: at }, sw.duration(row.duration));
    if (row.waited !== null && row.waited !== undefined) return sw.el("span", { class: "dur mono waited", title: `${at}; this long after its request` }, sw.duration(row.waited));
    return sw.el("span", { class: "dur mono", title: at }, `+${sw.duration(row.t) || "0 ms"}`);
  }

  /** A turn's tools, refusals and errors, beside its name. */
  function turnSummary(inside) {
    return sw.el("span", { class: "inside" },
      inside.tools.length ? sw.el("span", { class: "muted" }, inside.tools.join(", ")) : null,
      inside.refusals ? sw.el("span", { class: "bad" }, `${inside.refusals} refused`) : null,
      inside.errors ? sw.el("span", { class: "bad" }, `${inside.errors} error${inside.errors > 1 ? "s" : ""}`) : null);
  }

  /** Who the hop went to (→) or came from (←), without the protocol its badge already says. */
  function arrow(row) {
    const peer = (name) => name.replace(/^model:.*/, "model").replace(/^(mcp|python):/, "");
    if (row.direction === "send" && row.to !== row.from) return `→ ${peer(row.to)}`;
    if (row.direction === "receive" && row.from !== "user") return `← ${peer(row.from)}`;
    if (row.direction === "error") return "error";
    return "";
  }

  /** A span's name, less the kind its badge shows ("turn 3", not "turn turn 3"); an old
   *  trace's turn shows the user's text. */
  function spanName(row) {
    if (row.name === undefined) return row.label;
    return row.name === row.kind ? "" : row.name;
  }

  /** Enter shows the hop; the arrow keys move to the row above or below (and show it). */
  function step(event, row, at) {
    if (event.key === "Enter") { select(row); return; }
    const next = event.key === "ArrowDown" ? at + 1 : event.key === "ArrowUp" ? at - 1 : null;
    if (next === null || next < 0 || next >= view.total) return;
    event.preventDefault();
    const page = view.pages.get(Math.floor(next / PAGE));
    const target = page && page[next % PAGE];
    if (!target) return;
    const top = next * ROW_H;
    if (top < ui.scroller.scrollTop) ui.scroller.scrollTop = top;
    else if (top + ROW_H > ui.scroller.scrollTop + ui.scroller.clientHeight) ui.scroller.scrollTop = top + ROW_H - ui.scroller.clientHeight;
    draw();
    const shown = ui.list.querySelector(`.wf-row[data-index="${target.i}"]`);
    if (shown) shown.focus();
    select(target);
  }

  // One hop in full. -------------------------------------------------------------------------
  async function select(row) {
    view.selected = row.i;
    const asked = ++view.asking; // a later click's answer wins, whichever arrives first
    for (const el of ui.list.querySelectorAll(".wf-row.selected")) el.classList.remove("selected");
    const shown = ui.list.querySelector(`.wf-row[data-index="${row.i}"]`);
    if (shown) shown.classList.add("selected");
    ui.detail.replaceChildren(sw.el("p", { class: "muted" }, "Loading…"));
    try {
      const hop = await sw.api(`/api/runs/hop?${where}&index=${row.i}`);
      if (asked === view.asking) ui.detail.replaceChildren(...detail(row, hop));
    } catch (error) {
      if (asked === view.asking) ui.detail.replaceChildren(sw.errorBox(error));
    }
  }

  function treeBox(text, options, title) {
    let tree = jsonTree.render(text, { unwrap: true, open: 3, ...options });
    const box = sw.el("div", { class: "tree-box" }, tree);
    const wrap = sw.el("button", { type: "button", "aria-pressed": "false", onclick: () => {
      const on = !tree.classList.contains("wrap");
      tree.classList.toggle("wrap", on);
      wrap.setAttribute("aria-pressed", String(on));
    } }, "wrap");
    const copied = sw.el("span", { class: "muted small copied", "aria-live": "polite" });
    const tools = sw.el("div", { class: "toolbar tree-tools" },
      title ? sw.el("strong", {}, title) : null,
      sw.el("button", { type: "button", onclick: () => jsonTree.expandAll(tree) }, "expand all"),
      sw.el("button", { type: "button", onclick: () => jsonTree.collapseAll(tree) }, "collapse all"),
      wrap,
      sw.el("button", { type: "button", onclick: async () => { await sw.copy(text); copied.textContent = "copied"; } }, "copy"),
      copied);
    const replace = (newText, newOptions) => {
      const wrapped = tree.classList.contains("wrap");
      tree = jsonTree.render(newText, { unwrap: true, open: 3, ...newOptions });
      tree.classList.toggle("wrap", wrapped);
      box.replaceChildren(tree);
      text = newText;
    };
    return { element: sw.el("div", { class: "tree-panel" }, tools, box), replace, box: () => box };
  }

  function detail(row, hop) {
    const parts = [sw.el("div", { class: "hop-title" },
      sw.el("strong", {}, `#${row.seq} `), sw.el("span", { class: "mono" }, row.kind ? `${row.kind} span` : `${row.protocol} ${row.direction}`),
      sw.el("span", { class: "muted" }, ` ${row.from} → ${row.to} · +${sw.duration(row.t) || "0 ms"}`))];
    const line = JSON.parse(hop.line);
    const verdict = line.verdict;
    if (verdict) parts.push(verdictBox(verdict, hop));
    const panel = treeBox(hop.line, {}, hop.whole ? null : "hop as written");
    if (hop.whole) {
      let whole = false;
      const toggle = sw.el("button", { type: "button", class: "whole-toggle", onclick: () => {
        whole = !whole;
        panel.replace(whole ? hop.whole : hop.line, {});
        toggle.textContent = whole ? "show as written (delta)" : "show the whole request body";
      } }, "show the whole request body");
      parts.push(sw.el("p", { class: "muted small" }, "This request was written as a delta of the previous one. ", toggle));
    }
    parts.push(panel.element);
    return parts;
  }

  function verdictBox(verdict, hop) {
    const rejection = verdict.rejection || {};
    const violations = rejection.violations || [];
    const schema = hop.schema;
    const judged = sw.el("div", { class: "judged" });
    const items = violations.map((v) => sw.el("li", {},
      sw.el("button", { type: "button", class: "violation", title: "Show it in the value judged", onclick: () => showJudged(hop, v.pointer, judged) },
        sw.el("span", { class: "mono pointer" }, v.pointer || "/"), " ", sw.el("span", { class: "keyword" }, v.keyword), " ", v.message),
      v.expected !== undefined || v.got !== undefined
        ? sw.el("div", { class: "small mono expected" }, `expected ${JSON.stringify(v.expected)} · got ${JSON.stringify(v.got)}`) : null));
    const changes = (verdict.changes || []).map((c) => sw.el("li", {}, sw.el("span", { class: "mono pointer" }, c.pointer || "/"), ` ${c.kind}: ${c.detail || ""}`));
    return sw.el("section", { class: `verdict outcome-${verdict.outcome}` },
      sw.el("div", {}, sw.el("strong", {}, `${verdict.gate} gate`), ` · ${verdict.tool} · `,
        sw.el("span", { class: `badge outcome-${verdict.outcome}` }, verdict.outcome === "rejected" ? "refused" : verdict.outcome)),
      schema ? sw.el("div", { class: "small schema" }, "schema ",
        sw.el("a", { class: "mono", href: `/toolbox?schema=${encodeURIComponent(schema.file || schema.id || "")}` }, schema.file || schema.id),
        schema.version ? ` · x-version ${schema.version}` : "", schema.file && schema.id ? sw.el("span", { class: "muted mono" }, ` ${schema.id}`) : null) : null,
      rejection.hint ? sw.el("div", { class: "small muted" }, rejection.hint) : null,
      items.length ? sw.el("ul", { class: "violations" }, items) : null,
      changes.length ? sw.el("ul", { class: "changes" }, changes) : null,
      hop.judged ? sw.el("button", { type: "button", class: "show-judged", onclick: () => showJudged(hop, null, judged) }, "show the value judged") : null,
      judged);
  }

  async function showJudged(hop, pointer, into) {
    if (!hop.judged) { into.replaceChildren(sw.el("p", { class: "muted" }, "The value this verdict judged is not in the trace near it.")); return; }
    const judged = await sw.api(`/api/runs/hop?${where}&index=${hop.judged.index}`);
    const base = hop.judged.pointer;
    const highlight = pointer === null ? [base] : [pointer === "" || pointer === "/" ? base : base + pointer];
    const panel = treeBox(judged.line, { highlight }, `the value judged: hop #${JSON.parse(judged.line).seq}`);
    into.replaceChildren(panel.element);
    const marked = into.querySelector(".jt-hl");
    if (marked) marked.scrollIntoView({ block: "center" });
  }

  // The eval case. --------------------------------------------------------------------------
  async function makeEval() {
    ui.detail.replaceChildren(sw.el("p", { class: "muted" }, "Making the case…"));
    try {
      const answer = await sw.api(`/api/runs/eval?${where}`, { method: "POST", body: {} });
      ui.detail.replaceChildren(...evalCase(answer));
    } catch (error) {
      ui.detail.replaceChildren(sw.errorBox(error));
    }
  }

  function evalCase(answer) {
    const blob = new Blob([answer.case], { type: "application/json" });
    const status = sw.el("div", { class: "small", "aria-live": "polite" });
    const write = answer.can_write
      ? sw.el("button", { type: "button", class: "primary write-case", onclick: async () => {
          try {
            const written = await sw.api(`/api/runs/eval?${where}`, { method: "POST", body: { write: true } });
            if (written.not_written) status.replaceChildren(sw.errorBox({ message: written.not_written }));
            else status.replaceChildren(sw.el("span", { class: "ok" }, `written: ${written.written}`));
            write.disabled = true;
          } catch (error) {
            status.replaceChildren(sw.errorBox(error));
          }
        } }, `write ${answer.path}`)
      : sw.el("span", { class: "muted small" }, "Start the page with --repo to write it under the repository's evals/.");
    return [
      sw.el("h2", {}, "Eval case from this run"),
      sw.el("div", { class: "toolbar" }, sw.el("a", { class: "button download-case", href: URL.createObjectURL(blob), download: answer.name }, "download ", answer.name), write),
      status,
      answer.notes.length ? sw.el("ul", { class: "notes small muted" }, answer.notes.map((n) => sw.el("li", {}, n))) : null,
      treeBox(answer.case, { open: 2 }, "the case").element,
    ];
  }

  // The page. -------------------------------------------------------------------------------
  async function start() {
    let meta;
    try {
      meta = await sw.api(`/api/runs/run?${where}`);
    } catch (error) {
      main.replaceChildren(sw.errorBox(error));
      return;
    }
    document.title = `Run ${meta.run || runId} · schemawire`;
    ui.spacer = sw.el("div", { class: "wf-spacer" });
    ui.list = sw.el("div", { class: "wf-rows", role: "rowgroup" });
    ui.spacer.append(ui.list);
    ui.scroller = sw.el("div", { class: "wf", role: "table", "aria-label": "hops" }, ui.spacer);
    ui.scroller.addEventListener("scroll", () => requestAnimationFrame(draw), { passive: true });
    ui.detail = sw.el("aside", { class: "detail" }, sw.el("p", { class: "muted" }, "Pick a hop to see its JSON."));
    const legend = sw.el("div", { class: "wf-head" }, sw.el("span", { class: "seq" }, "#"), sw.el("span", { class: "name" }, "hop"), sw.el("span", { class: "marks" }, "verdict"), sw.el("span", { class: "dur" }, "duration / at"), sw.el("span", { class: "track muted" }, "time in its turn"));
    ui.head = head(meta);
    main.replaceChildren(ui.head, toolbar(meta), sw.el("div", { class: "split" }, sw.el("div", { class: "wf-column" }, legend, ui.scroller), ui.detail));
    await reload();
    later(meta);
  }

  /** Ask again while the run is still going (its run span open) or still being indexed. */
  function later(meta) {
    if (meta.indexing) setTimeout(() => follow(meta), INDEXING_MS);
    else if (meta.status === "open") setTimeout(() => follow(meta), FOLLOW_MS);
  }

  /** New hops appear (a run still going, a trace indexed on), the rows in view stay put. */
  async function follow(before) {
    let meta;
    try {
      meta = await sw.api(`/api/runs/run?${where}`);
    } catch {
      later(before);
      return;
    }
    if (meta.hops !== before.hops || meta.indexing !== before.indexing) {
      const fresh = head(meta);
      ui.head.replaceWith(fresh);
      ui.head = fresh;
      choices("protocol", meta.protocols);
      choices("tool", meta.tool_names);
      view.generation += 1;
      view.pages.clear();
      view.asked.clear();
      await fetchPage(Math.floor(ui.scroller.scrollTop / ROW_H / PAGE));
    }
    later(meta);
  }

  /** A filter's choices, grown with the trace (the one picked stays picked). */
  function choices(name, options) {
    const select = document.querySelector(`.filters select[name="${name}"]`);
    const picked = select.value;
    select.replaceChildren(sw.el("option", { value: "" }, "all"), options.map((o) => sw.el("option", { value: o }, o)));
    select.value = options.includes(picked) ? picked : "";
  }

  document.addEventListener("DOMContentLoaded", start);
})();
