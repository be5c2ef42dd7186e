"use strict";
// The Tools page: the repository's tools (filterable); one tool's canonical schema, what each
// projection sends and loses, and a form that calls it through the gates, its hops shown as
// the server streams them. Everything comes from /api/tools (schemawire.ui._tools).

(() => {
  const { el, api } = sw;
  const main = document.getElementById("main");
  const state = { tools: [], mcp: null, detail: null, tab: "schema", view: 0, form: null, mode: "form", asked: 0 };

  async function start() {
    main.classList.add("tl-page");
    let listed;
    try {
      listed = await api("/api/tools");
    } catch (error) {
      main.replaceChildren(sw.errorBox(error));
      return;
    }
    state.tools = listed.tools;
    state.mcp = listed.mcp;
    if (!listed.repo && !listed.mcp) {
      main.replaceChildren(noRepository(listed.hint));
      return;
    }
    const params = new URLSearchParams(location.search);
    state.tab = params.get("tab") || "schema";
    main.replaceChildren(layout(listed));
    const first = params.get("tool") || (state.tools[0] && state.tools[0].name);
    if (first) await select(first);
  }

  function noRepository(hint) {
    return el("div", { class: "panel tl-empty" },
      el("h1", {}, "Tools"),
      el("p", {}, hint),
      el("pre", { class: "tl-command" }, "schemawire ui --repo examples/support-desk"),
    );
  }

  // --- the list ------------------------------------------------------------------------------

  function layout(listed) {
    const filter = el("input", { type: "search", id: "tl-filter", placeholder: "Filter tools", "aria-label": "Filter tools", autocomplete: "off" });
    const count = el("div", { class: "tl-count muted", id: "tl-count" });
    const list = el("ul", { class: "tl-list", id: "tl-list", role: "listbox", "aria-label": "Tools" });
    for (const tool of state.tools) list.append(listItem(tool));
    const apply = () => {
      const words = filter.value.toLowerCase().split(/\s+/).filter(Boolean);
      let shown = 0;
      for (const item of list.children) {
        const hit = words.every((w) => item.dataset.text.includes(w));
        item.classList.toggle("hidden", !hit);
        shown += hit;
      }
      const from = listed.repo || `the MCP server ${listed.mcp.label}`;
      count.textContent = `${shown} of ${state.tools.length} tools · ${from}`;
    };
    filter.addEventListener("input", apply);
    apply();
    const problem = listed.mcp_problem
      ? el("div", { class: "tl-count bad", id: "tl-mcp-problem" }, `The MCP server's own tools are not listed: ${listed.mcp_problem}`)
      : null;
    return el("div", { class: "tl-layout" },
      el("aside", { class: "tl-side" }, filter, count, problem, list),
      el("section", { class: "tl-detail", id: "tl-detail", "aria-live": "polite" }),
    );
  }

  function listItem(tool) {
    const text = [tool.name, tool.title, tool.description, tool.file, tool.version, tool.server_only ? "server only" : ""].filter(Boolean).join(" ").toLowerCase();
    const button = el("button", { type: "button", class: "tl-item", role: "option", dataset: { tool: tool.name }, onclick: () => select(tool.name) },
      el("span", { class: "tl-item-head" },
        el("span", { class: "tl-item-name mono" }, tool.name),
        tool.version ? el("span", { class: "badge tl-version" }, `v${tool.version}`) : null,
        tool.server_only ? el("span", { class: "badge tl-server-only", title: "listed by the MCP server; the repository has no schema for it" }, "server only") : null,
      ),
      tool.title && tool.title !== tool.name ? el("span", { class: "tl-item-title" }, tool.title) : null,
      el("span", { class: "tl-item-desc" }, tool.description),
      el("span", { class: "tl-item-file mono muted" }, tool.file),
    );
    return el("li", { dataset: { text, tool: tool.name } }, button);
  }

  async function select(name) {
    const detail = document.getElementById("tl-detail");
    for (const item of document.querySelectorAll(".tl-item")) {
      item.setAttribute("aria-selected", String(item.dataset.tool === name));
    }
    const asked = ++state.asked;  // a later click wins, whichever answer comes first
    let tool;
    try {
      tool = await api(`/api/tools/tool/${encodeURIComponent(name)}`);
    } catch (error) {
      if (asked === state.asked) detail.replaceChildren(sw.errorBox(error));
      return;
    }
    if (asked !== state.asked) return;
    state.detail = tool;
    state.view = 0;
    state.form = null;
    remember();
    detail.replaceChildren(header(tool), tabs(), el("div", { id: "tl-tab" }));
    showTab(state.tab);
  }

  function remember() {
    const params = new URLSearchParams({ tool: state.detail.name, tab: state.tab });
    history.replaceState(null, "", `/tools?${params}`);
  }

  function header(tool) {
    const fromServer = tool.source === "mcp";
    const implemented = fromServer
      ? el("span", { class: "badge", title: "listed by the MCP server; its own schema gates the calls" }, tool.server_only ? "MCP server only" : "MCP server")
      : tool.implemented
        ? el("span", { class: "badge ok", title: "a Python implementation is named under [serve.tools]" }, "implemented")
        : el("span", { class: "badge muted", title: "no Python implementation: call it on an MCP server" }, "no implementation");
    const version = tool.version
      ? el("span", { class: "badge tl-version" }, `x-version ${tool.version}`)
      : fromServer ? null : el("span", { class: "badge warn" }, "no x-version");
    return el("div", { class: "tl-head" },
      el("div", { class: "tl-title" },
        el("h1", { class: "mono" }, tool.name),
        version,
        implemented,
      ),
      tool.title && tool.title !== tool.name ? el("div", { class: "tl-subtitle" }, tool.title) : null,
      el("p", { class: "tl-desc" }, tool.description),
      el("div", { class: "tl-files mono muted" },
        el("span", { id: "tl-file" }, fromServer ? `listed by the MCP server ${state.mcp.label}` : tool.file),
        tool.output_file ? el("span", {}, ` · ${tool.output_file}`) : null,
        tool.id ? el("span", {}, ` · ${tool.id}`) : null,
      ),
    );
  }

  function tabs() {
    const names = [["schema", "Schema"], ["projections", "Projections"], ["call", "Call"]];
    const bar = el("div", { class: "tl-tabs", role: "tablist" });
    for (const [key, label] of names) {
      bar.append(el("button", { type: "button", role: "tab", id: `tl-tab-${key}`, dataset: { tab: key }, onclick: () => showTab(key) }, label));
    }
    return bar;
  }

  function showTab(key) {
    state.tab = ["schema", "projections", "call"].includes(key) ? key : "schema";
    remember();
    for (const button of document.querySelectorAll(".tl-tabs [role=tab]")) {
      button.setAttribute("aria-selected", String(button.dataset.tab === state.tab));
    }
    const body = document.getElementById("tl-tab");
    const tool = state.detail;
    if (state.tab === "schema") body.replaceChildren(schemaTab(tool));
    else if (state.tab === "projections") body.replaceChildren(projectionsTab(tool));
    else body.replaceChildren(callTab(tool));
  }

  // --- the schema ----------------------------------------------------------------------------

  function schemaTab(tool) {
    const panes = [
      el("div", { class: "panel tl-pane" },
        el("h2", {}, "Input schema ", el("span", { class: "muted mono" }, tool.file || "as the server lists it")),
        jsonTree.render(tool.schema, { open: 4 })),
    ];
    if (tool.output_schema) {
      panes.push(el("div", { class: "panel tl-pane" },
        el("h2", {}, "Output schema ", el("span", { class: "muted mono" }, tool.output_file || "")),
        jsonTree.render(tool.output_schema, { open: 4 })));
    }
    return el("div", { class: "tl-columns", id: "tl-schema" }, panes);
  }

  // --- the projections -----------------------------------------------------------------------

  function projectionsTab(tool) {
    const list = el("ul", { class: "tl-views", role: "listbox", "aria-label": "Targets" });
    const shown = el("div", { class: "tl-view", id: "tl-view" });
    tool.projections.forEach((view, index) => {
      const losses = view.losses.length;
      const mark = view.blocked
        ? el("span", { class: "badge bad" }, "refused")
        : losses ? el("span", { class: "badge warn" }, `${losses} loss${losses === 1 ? "" : "es"}`) : el("span", { class: "badge ok" }, "lossless");
      const button = el("button", { type: "button", class: "tl-view-item", role: "option", dataset: { index: String(index), target: view.target }, onclick: () => showView(index) },
        el("span", {}, view.label), mark);
      list.append(el("li", {}, button));
    });
    const showView = (index) => {
      state.view = index;
      for (const b of list.querySelectorAll("button")) b.setAttribute("aria-selected", String(Number(b.dataset.index) === index));
      shown.replaceChildren(viewBody(tool.projections[index]));
    };
    showView(state.view);
    return el("div", { class: "tl-projections" }, el("div", { class: "tl-views-side" }, list), shown);
  }

  function viewBody(view) {
    const payload = view.payload === null
      ? el("p", { class: "muted" }, "This target takes no such schema.")
      : jsonTree.render(view.payload, { open: 5 });
    const renamed = view.projected_name && view.projected_name !== state.detail.name
      ? el("p", { class: "warn" }, `sent as ${view.projected_name}`) : null;
    return el("div", { class: "tl-view-body" },
      el("div", { class: "panel" },
        el("h2", {}, view.losses.length ? `What ${view.label} loses (${view.losses.length})` : `What ${view.label} loses`),
        lossTable(view.losses)),
      el("div", { class: "panel" },
        el("h2", {}, `What ${view.label} is sent`),
        el("div", { class: "tl-command mono muted" }, view.command ? `${view.command}  →  adapters/${view.file}` : "projected from the server's schema (no repository)"),
        renamed, payload),
    );
  }

  /** ``text`` as text nodes with a line-break opportunity after each ``after`` (a long code
   * breaks at its underscores, a pointer at its slashes, not inside a word). */
  function breakable(text, after) {
    const parts = [];
    for (const piece of text.split(after)) {
      if (parts.length) parts.push(after, document.createElement("wbr"));
      parts.push(piece);
    }
    return parts;
  }

  function lossTable(losses) {
    if (!losses.length) return el("p", { class: "ok" }, "Nothing: the payload says everything the canonical schema says.");
    const table = el("table", { class: "tl-losses" },
      el("thead", {}, el("tr", {}, ["code", "where", "keyword", "what happens"].map((h) => el("th", {}, h)))));
    const body = el("tbody", {});
    for (const loss of losses) {
      body.append(el("tr", { class: loss.blocking ? "tl-blocking" : "" },
        el("td", { class: "mono" }, ...breakable(loss.code, "_")),
        el("td", { class: "mono" }, ...breakable(`${loss.document}:${loss.pointer || "/"}`, "/")),
        el("td", { class: "mono" }, loss.keyword || "—"),
        el("td", {}, loss.detail, loss.blocking ? el("strong", { class: "bad" }, " (the target refuses it)") : null)));
    }
    table.append(body);
    return table;
  }

  // --- the call ------------------------------------------------------------------------------

  function callTab(tool) {
    const form = toolsForm.build(JSON.parse(tool.form_schema));
    state.form = form;
    const raw = el("textarea", { id: "tl-raw", rows: "14", spellcheck: "false", "aria-label": "Arguments as JSON" });
    const rawHighlight = el("div", { id: "tl-raw-marks", class: "tl-raw-marks" });
    const rawPane = el("div", { class: "tl-raw hidden" },
      el("p", { class: "muted" }, "Sent exactly as written: the gate reads this text (duplicate keys, big integers and all)."),
      raw, rawHighlight);
    const modeButtons = el("div", { class: "tl-modes", role: "tablist" });
    const setMode = (mode) => {
      if (mode === "raw" && state.mode !== "raw") raw.value = form.text();
      state.mode = mode;
      form.node.classList.toggle("hidden", mode !== "form");
      rawPane.classList.toggle("hidden", mode !== "raw");
      for (const b of modeButtons.children) b.setAttribute("aria-selected", String(b.dataset.mode === mode));
    };
    for (const [mode, label] of [["form", "Form"], ["raw", "Raw JSON"]]) {
      modeButtons.append(el("button", { type: "button", role: "tab", id: `tl-mode-${mode}`, dataset: { mode }, onclick: () => setMode(mode) }, label));
    }
    const where = el("select", { id: "tl-where", "aria-label": "Where to call" },
      el("option", { value: "local", disabled: !tool.implemented }, tool.implemented ? "locally (the repository's Python function)" : "locally (no implementation)"),
      state.mcp ? el("option", { value: "mcp" }, `on the MCP server ${state.mcp.label}`) : null);
    if (!tool.implemented && state.mcp) where.value = "mcp";
    const callButton = el("button", { type: "button", class: "primary", id: "tl-call" }, "Call through the gates");
    const hops = el("ol", { class: "tl-hops", id: "tl-hops" });
    const run = el("div", { class: "tl-run muted", id: "tl-run" }, "No call yet. The arguments pass the argument gate first; a refused call never reaches the tool.");
    const outcome = el("div", { id: "tl-outcome" });
    callButton.addEventListener("click", () =>
      makeCall(tool, { form, raw, rawHighlight, where, callButton, hops, run, outcome }));
    state.mode = "form";
    setMode("form");
    return el("div", { class: "tl-columns tl-call" },
      el("div", { class: "panel tl-pane" },
        el("div", { class: "tl-call-head" }, el("h2", {}, "Arguments"), modeButtons),
        form.node, rawPane,
        el("div", { class: "toolbar tl-call-bar" }, where, callButton)),
      el("div", { class: "panel tl-pane" },
        el("h2", {}, "Hops"), run, hops, outcome),
    );
  }

  async function makeCall(tool, parts) {
    const { form, raw, rawHighlight, where, callButton, hops, run, outcome } = parts;
    const text = state.mode === "raw" ? raw.value : form.text();
    form.clear();
    rawHighlight.replaceChildren();
    hops.replaceChildren();
    outcome.replaceChildren();
    run.textContent = "calling…";
    callButton.disabled = true;
    try {
      const response = await fetch("/api/tools/call", {
        method: "POST",
        credentials: "same-origin",
        headers: { "content-type": "application/json", accept: "application/x-ndjson" },
        body: JSON.stringify({ tool: tool.name, arguments: text, where: where.value }),
      });
      if (!response.ok) {
        const answer = await response.json().catch(() => ({ error: { message: response.statusText } }));
        throw new sw.ApiError(answer.error || { message: response.statusText }, response.status);
      }
      await readLines(response, (line) => {
        if (line.run) showRun(run, line);
        else if (line.hop) hops.append(hopRow(line.hop));
        else if (line.done) showOutcome(line.done, { form, raw, rawHighlight, outcome, text });
      });
    } catch (error) {
      run.textContent = "";
      outcome.replaceChildren(sw.errorBox(error));
    } finally {
      callButton.disabled = false;
    }
  }

  /** Each JSON line of a streamed answer, as it arrives. */
  async function readLines(response, each) {
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      buffer += decoder.decode(value || new Uint8Array(), { stream: !done });
      let end;
      while ((end = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + 1);
        if (line.trim()) each(JSON.parse(line));
      }
      if (done) return;
    }
  }

  function showRun(run, line) {
    run.replaceChildren(
      "run ", el("a", { href: `/run/${encodeURIComponent(line.run)}`, class: "mono", id: "tl-run-link" }, line.run),
      " · ", el("span", { class: "mono", id: "tl-trace" }, line.trace),
      line.where === "mcp" ? " · on the MCP server" : " · locally");
  }

  function hopRow(hop) {
    const outcome = hop.outcome
      ? el("span", { class: `badge ${hop.outcome === "rejected" ? "bad" : hop.outcome === "accepted" ? "ok" : "warn"}` }, `${hop.gate}: ${hop.outcome}`)
      : null;
    const summary = el("summary", { class: "tl-hop-line" },
      el("span", { class: "tl-hop-seq mono muted" }, `#${hop.seq}`),
      el("span", { class: `tl-proto tl-proto-${hop.protocol}` }, hop.protocol),
      el("span", { class: "tl-hop-dir" }, hop.direction),
      el("span", { class: "mono tl-hop-method", title: hop.method || "" }, hop.method || ""),
      el("span", { class: "mono tl-hop-route", title: `${hop.from} → ${hop.to}` }, `${hop.from} → ${hop.to}`),
      outcome);
    const details = el("details", { class: "tl-hop" }, summary);
    let rendered = false;
    details.addEventListener("toggle", () => {
      if (details.open && !rendered) {
        details.append(jsonTree.render(hop.json, { open: 3 }));
        rendered = true;
      }
    });
    const data = { protocol: hop.protocol, direction: hop.direction, outcome: hop.outcome || "", method: hop.method || "" };
    return el("li", { dataset: data }, details);
  }

  function showOutcome(done, parts) {
    const { form, rawHighlight, outcome, text } = parts;
    if (done.error) {
      outcome.replaceChildren(sw.errorBox({ message: done.error }));
      return;
    }
    const blocks = [];
    if (done.accepted) {
      blocks.push(el("div", { class: "tl-verdict ok", id: "tl-verdict" }, "accepted by both gates"));
    } else {
      const where = done.sent ? "the tool ran; its result was refused" : "the tool was not called";
      blocks.push(el("div", { class: "tl-verdict bad", id: "tl-verdict" }, `refused by the ${done.refused_by} gate — ${where}`));
    }
    if (done.violations.length) blocks.push(violationList(done.violations, done.refused_by === "arguments"));
    if (done.changes.length) {
      blocks.push(el("ul", { class: "tl-changes", id: "tl-changes" },
        done.changes.map((c) => el("li", {}, el("span", { class: "badge warn" }, c.kind), " ", el("span", { class: "mono" }, c.pointer || "/"), ` ${c.detail}`))));
    }
    blocks.push(el("h2", {}, "What the caller reads"), el("div", { id: "tl-output" }, wrapped(jsonTree.render(done.output, { open: 4 }))));
    for (const inner of jsonInside(done.output)) {
      blocks.push(el("div", { class: "tl-inner" }, el("div", { class: "muted" }, "content text, itself JSON:"), wrapped(jsonTree.render(inner, { open: 4 }))));
    }
    outcome.replaceChildren(...blocks);
    if (done.refused_by === "arguments" && done.violations.length) {
      const pointers = done.violations.map((v) => v.pointer);
      form.mark(done.violations);
      if (state.mode === "raw") {
        try {
          rawHighlight.replaceChildren(el("div", { class: "muted" }, "where in what was sent:"), jsonTree.render(text, { highlight: pointers, open: 6 }));
        } catch {
          // not JSON at all: the violation (json_syntax) says where, with line and column
        }
      }
    }
  }

  /** A tree whose long strings wrap inside the panel (a hint is a sentence, not a column). */
  function wrapped(tree) {
    tree.classList.add("wrap");
    return tree;
  }

  function violationList(violations, inArguments) {
    return el("ul", { class: "tl-violations", id: "tl-violations" },
      violations.map((v) => el("li", {},
        // An argument's pointer names a field of the form; a result's names a place in the
        // output, which has no field to go to.
        inArguments
          ? el("button", { type: "button", class: "tl-pointer mono", title: "go to the field", onclick: () => focusPointer(v.pointer) }, v.pointer || "/")
          : el("span", { class: "tl-pointer mono" }, v.pointer || "/"),
        el("span", { class: "badge bad" }, v.keyword), ` ${v.message}`)));
  }

  function focusPointer(pointer) {
    const node = document.querySelector(`.tl-form [data-pointer="${CSS.escape(pointer)}"]`);
    if (node) {
      node.scrollIntoView({ block: "center" });
      const input = node.querySelector("input, select, textarea");
      if (input) input.focus();
    }
  }

  /** The texts of an output's content blocks that are themselves JSON (an MCP tool's result). */
  function jsonInside(outputText) {
    const found = [];
    let output;
    try {
      output = JSON.parse(outputText);  // only to find the blocks: each is shown from its text
    } catch {
      return found;
    }
    for (const block of Array.isArray(output.content) ? output.content : []) {
      if (block && block.type === "text" && typeof block.text === "string" && /^\s*[[{]/.test(block.text)) {
        try {
          jsonTree.parse(block.text);
          found.push(block.text);
        } catch {
          // this block is not JSON inside: shown as the text it is; the next may be
        }
      }
    }
    return found;
  }

  document.addEventListener("DOMContentLoaded", start);
})();
