"use strict";
// The Diff page: two runs' hops aligned by protocol, method and tool (a longest common
// subsequence, computed by the server), a summary, and for the chosen pair its RFC 6902 patch
// and the two hops side by side with the changed places marked. A pair's patch is asked for
// only when it is shown.

(() => {
  const { el, api } = sw;
  const PAGE = 500;
  const state = { a: "", b: "", rows: [], total: 0, changedOnly: false, selected: null };
  const ui = {};

  function build() {
    const main = document.getElementById("main");
    ui.pickA = el("select", { id: "run-a", "aria-label": "Run A" });
    ui.pickB = el("select", { id: "run-b", "aria-label": "Run B" });
    ui.compare = el("button", { class: "primary", id: "compare", onclick: () => choose(ui.pickA.value, ui.pickB.value) }, "Compare");
    ui.swap = el("button", { id: "swap", title: "Swap A and B", onclick: () => choose(ui.pickB.value, ui.pickA.value) }, "⇄ swap");
    ui.changedOnly = el("input", { type: "checkbox", id: "changed-only", onchange: () => { state.changedOnly = ui.changedOnly.checked; load(); } });
    ui.summary = el("section", { class: "df-summary", id: "summary", role: "status", "aria-live": "polite" });
    ui.rows = el("tbody", { id: "rows" });
    ui.more = el("button", { class: "hidden", id: "more", onclick: () => load(state.rows.length) }, "more rows");
    ui.detail = el("section", { class: "df-detail panel", id: "detail", "aria-label": "The chosen pair" }, el("p", { class: "muted" }, "Choose a row to see its patch and the two hops side by side."));
    main.append(
      el("h1", {}, "Diff two runs"),
      el(
        "div",
        { class: "toolbar df-pickers" },
        el("label", { for: "run-a", class: "df-side df-tag-a" }, "A"),
        ui.pickA,
        el("label", { for: "run-b", class: "df-side df-tag-b" }, "B"),
        ui.pickB,
        ui.compare,
        ui.swap,
      ),
      ui.summary,
      el(
        "div",
        { class: "df-grid" },
        el(
          "section",
          { class: "df-list panel", "aria-label": "Aligned hops" },
          el("div", { class: "toolbar" }, ui.changedOnly, el("label", { for: "changed-only" }, " changed and unpaired only")),
          el(
            "table",
            { class: "df-table" },
            el("thead", {}, el("tr", {}, el("th", {}, "#"), el("th", {}, "A"), el("th", {}, "B"), el("th", {}, "hop"), el("th", {}, ""))),
            ui.rows,
          ),
          ui.more,
        ),
        ui.detail,
      ),
    );
  }

  async function loadRuns() {
    const { runs } = await api("/api/diff/runs");
    const options = () =>
      runs.map((run) => el("option", { value: run.run }, `${run.run} · ${sw.when(run.modified)}${run.question ? ` · ${run.question.slice(0, 40)}` : ""}`));
    ui.pickA.replaceChildren(...options());
    ui.pickB.replaceChildren(...options());
    const query = new URLSearchParams(location.search);
    const a = query.get("a") || (runs[1] && runs[1].run) || "";
    const b = query.get("b") || (runs[0] && runs[0].run) || "";
    if (!runs.length) ui.summary.replaceChildren(el("p", { class: "muted" }, "No runs under the traces folder yet: run schemawire demo, then reload."));
    if (a && b) choose(a, b);
  }

  function choose(a, b) {
    state.selected = null;
    state.a = a;
    state.b = b;
    ui.pickA.value = a;
    ui.pickB.value = b;
    const url = new URL(location.href);
    url.searchParams.set("a", a);
    url.searchParams.set("b", b);
    history.replaceState(null, "", url);
    load();
  }

  async function load(offset = 0) {
    const query = new URLSearchParams({ a: state.a, b: state.b, offset, limit: PAGE });
    if (state.changedOnly) query.set("only", "changed");
    if (offset === 0) ui.summary.replaceChildren(el("p", { class: "muted" }, "aligning…"));
    try {
      const answer = await api(`/api/diff?${query}`);
      if (offset === 0) {
        state.rows = [];
        ui.rows.replaceChildren();
        showSummary(answer);
      }
      state.rows.push(...answer.rows);
      state.total = answer.total;
      ui.rows.append(...answer.rows.map(rowView));
      ui.more.classList.toggle("hidden", state.rows.length >= state.total);
      ui.more.textContent = `more rows (${(state.total - state.rows.length).toLocaleString()} left)`;
      if (offset === 0) {
        const kept = answer.rows.find((row) => row.row === state.selected);
        const first = kept || answer.rows.find((row) => row.equal !== true);
        if (first) select(first.row);
      }
    } catch (error) {
      ui.summary.replaceChildren(sw.errorBox(error));
    }
  }

  function showSummary(answer) {
    const s = answer.summary;
    const card = (label, value, cls = "", id = "") => el("div", { class: `df-card ${cls}`, id: id || null }, el("div", { class: "df-num" }, value.toLocaleString()), el("div", { class: "muted" }, label));
    const verdicts = s.verdicts.length
      ? el(
          "div",
          { class: "df-verdicts", id: "verdict-changes" },
          el("strong", { class: "bad" }, `${s.verdicts.length} verdict${s.verdicts.length === 1 ? "" : "s"} differ: `),
          s.verdicts.map((v) => el("button", { class: "df-link", onclick: () => select(v.row) }, `#${v.row} ${v.gate} ${v.tool}: ${v.a} in A, ${v.b} in B`)),
        )
      : el("div", { class: "df-verdicts ok", id: "verdict-changes" }, "every gate verdict is the same in both runs");
    ui.summary.replaceChildren(
      el(
        "div",
        { class: "df-cards" },
        card("hops in A", s.hops.a, "df-a-card", "hops-a"),
        card("hops in B", s.hops.b, "df-b-card", "hops-b"),
        card("pairs equal", s.equal, "ok", "pairs-equal"),
        card("pairs changed", s.changed, s.changed ? "warn" : "", "pairs-changed"),
        card("only in A", s.only_a, s.only_a ? "bad" : "", "only-a"),
        card("only in B", s.only_b, s.only_b ? "bad" : "", "only-b"),
      ),
      verdicts,
      el("p", { class: "muted df-note", id: "ignored" }, "Left out of every comparison, since it always differs: ", answer.ignored.join("; "), ". Aligned by ", answer.algorithm, "."),
    );
  }

  function rowView(row) {
    const status = row.kind === "a" ? ["only in A", "bad"] : row.kind === "b" ? ["only in B", "bad"] : row.equal ? ["equal", "muted"] : ["changed", "warn"];
    const outcome = (side) => (side && side.outcome ? el("span", { class: `df-outcome ${side.outcome === "accepted" ? "ok" : "bad"}` }, side.outcome) : null);
    const tr = el(
      "tr",
      { class: `df-row df-${row.kind}${row.equal === false ? " df-changed" : ""}`, tabindex: "0", dataset: { row: row.row }, onclick: () => select(row.row), onkeydown: (e) => rowKey(e, row.row) },
      el("td", { class: "mono muted" }, String(row.row)),
      el("td", { class: "mono" }, row.a ? String(row.a.seq) : "", " ", outcome(row.a)),
      el("td", { class: "mono" }, row.b ? String(row.b.seq) : "", " ", outcome(row.b)),
      el("td", { class: "mono df-label" }, row.label),
      el("td", {}, el("span", { class: `badge ${status[1]}` }, status[0])),
    );
    return tr;
  }

  function rowKey(event, row) {
    if (event.key === "Enter" || event.key === " ") {
      event.preventDefault();
      select(row);
    } else if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      const next = event.key === "ArrowDown" ? event.target.nextElementSibling : event.target.previousElementSibling;
      if (next) next.focus();
    }
  }

  async function select(row) {
    state.selected = row;
    for (const tr of ui.rows.children) tr.classList.toggle("df-selected", tr.dataset.row === String(row));
    ui.detail.replaceChildren(el("p", { class: "muted" }, "computing the patch…"));
    try {
      const pair = await api(`/api/diff/pair?${new URLSearchParams({ a: state.a, b: state.b, row })}`);
      if (state.selected !== row) return;
      ui.detail.replaceChildren(...pairView(pair));
      for (const pane of ui.detail.querySelectorAll(".df-pane")) {
        const marked = pane.querySelector(".jt-hl");
        if (marked) pane.scrollTop = Math.max(0, marked.offsetTop - pane.clientHeight / 3);
      }
    } catch (error) {
      ui.detail.replaceChildren(sw.errorBox(error));
    }
  }

  function pairView(pair) {
    const nodes = [el("h2", { class: "mono" }, `#${pair.row} ${pair.label}`)];
    if (pair.kind !== "pair") {
      nodes.push(el("p", { class: "bad" }, `Only in ${pair.kind.toUpperCase()}: the other run has no hop with this key here.`));
    } else if (pair.equal) {
      nodes.push(el("p", { class: "ok" }, "Equal (leaving out what always differs)."));
    } else {
      nodes.push(
        el("p", { class: "warn" }, `${pair.edits.length} edit${pair.edits.length === 1 ? "" : "s"} from A to B:`),
        el("ul", { class: "df-edits", id: "edits" }, pair.edits.map(editView)),
        el(
          "details",
          { class: "df-patch", id: "patch" },
          el("summary", {}, "RFC 6902 patch"),
          el("div", { class: "toolbar" }, el("button", { onclick: () => sw.copy(pair.patch) }, "Copy the patch")),
          jsonTree.render(pair.patch, { open: 3 }),
        ),
      );
    }
    const side = (name, text, highlight) =>
      el(
        "div",
        { class: `df-pane df-pane-${name}`, id: `pane-${name}` },
        el("h3", {}, name === "a" ? `A · ${state.a}` : `B · ${state.b}`),
        text === null ? el("p", { class: "muted" }, "no hop") : wrapped(jsonTree.render(text, { highlight: highlight || [], open: 2 })),
      );
    nodes.push(el("div", { class: "df-sides" }, side("a", pair.a_text, pair.highlight_a), side("b", pair.b_text, pair.highlight_b)));
    return nodes;
  }

  /** One edit; when it replaced a string that holds JSON, the edits inside that JSON too. */
  function editView(edit) {
    const inner = edit.inner
      ? el("ul", { class: "df-inner" }, el("li", { class: "muted" }, "inside the JSON this string holds:"), edit.inner.map((line) => el("li", { class: `df-edit df-op-${line[0] === "+" ? "add" : line[0] === "-" ? "remove" : "replace"}` }, line)))
      : null;
    return el("li", { class: `df-edit df-op-${edit.op}` }, edit.line, inner);
  }

  function wrapped(tree) {
    tree.classList.add("wrap");
    return tree;
  }

  document.addEventListener("DOMContentLoaded", () => {
    build();
    loadRuns().catch((error) => ui.summary.replaceChildren(sw.errorBox(error)));
  });
})();
