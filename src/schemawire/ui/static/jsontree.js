"use strict";
// JSON as a collapsible tree, read from its text without loss: integers beyond 2^53, duplicate
// keys and key order are shown as written (the browser's JSON.parse would round the first and
// drop the second). `jsonTree.render(text, options)` returns the tree's element.

const jsonTree = (() => {
  /** Parse JSON text into nodes: {type: "object", members: [[key, node]...]}, {type: "array",
   *  items}, {type: "string", value}, {type: "number", raw}, {type: "literal", raw}. Throws on
   *  text that is not JSON (the server has checked it; this is the last line). */
  function parse(text) {
    let at = 0;
    const space = () => {
      while (at < text.length && " \t\n\r".includes(text[at])) at++;
    };
    const fail = () => {
      throw new SyntaxError(`not JSON at character ${at}`);
    };
    function value() {
      space();
      const c = text[at];
      if (c === "{") return object();
      if (c === "[") return array();
      if (c === '"') return { type: "string", value: string() };
      const m = /^(-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)/.exec(text.slice(at, at + 400));
      if (!m) fail();
      at += m[0].length;
      return { type: /^[-\d]/.test(m[0]) ? "number" : "literal", raw: m[0] };
    }
    function string() {
      const start = at;
      at++;
      while (at < text.length && text[at] !== '"') at += text[at] === "\\" ? 2 : 1;
      if (at >= text.length) fail();
      at++;
      return JSON.parse(text.slice(start, at));
    }
    function object() {
      at++;
      const members = [];
      space();
      if (text[at] === "}") { at++; return { type: "object", members }; }
      for (;;) {
        space();
        if (text[at] !== '"') fail();
        const key = string();
        space();
        if (text[at++] !== ":") fail();
        members.push([key, value()]);
        space();
        if (text[at] === ",") { at++; continue; }
        if (text[at++] !== "}") fail();
        return { type: "object", members };
      }
    }
    function array() {
      at++;
      const items = [];
      space();
      if (text[at] === "]") { at++; return { type: "array", items }; }
      for (;;) {
        items.push(value());
        space();
        if (text[at] === ",") { at++; continue; }
        if (text[at++] !== "]") fail();
        return { type: "array", items };
      }
    }
    const node = value();
    space();
    if (at !== text.length) fail();
    return node;
  }

  const escapeToken = (token) => String(token).replace(/~/g, "~0").replace(/\//g, "~1");

  /** The tree of ``text`` (JSON) as an element.
   *  options.highlight: JSON Pointers to mark (a gate's violations);
   *  options.open: levels open at first (default 2);
   *  options.unwrap: show a string that is itself JSON (an arguments string, a tool result's
   *  text) as a tree in place, marked "JSON in a string", the raw string one click away; the
   *  pointers inside go on from the string's own. */
  function render(text, options = {}) {
    const highlight = new Set(options.highlight || []);
    const open = options.open ?? 2;
    const unwrap = options.unwrap === true;
    const root = sw.el("div", { class: "jt", role: "tree" });
    root.append(node(parse(text), "", null, 0));
    return root;

    function inner(value) {
      const trimmed = value.trim();
      if (!unwrap || trimmed.length < 2 || !"{[".includes(trimmed[0])) return null;
      try {
        return parse(trimmed);
      } catch {
        return null;
      }
    }

    function unwrapped(parsed, raw, pointer, label, depth) {
      const tree = node(parsed, pointer, null, depth);
      const rawRow = sw.el("div", { class: "jt-row hidden" }, sw.el("span", { class: "jt-toggle" }), sw.el("span", { class: "jt-str" }, JSON.stringify(raw)));
      const button = sw.el("button", { class: "jt-raw", type: "button", title: "Show the string as written" }, "raw");
      button.addEventListener("click", () => {
        const showRaw = rawRow.classList.contains("hidden");
        rawRow.classList.toggle("hidden", !showRaw);
        tree.classList.toggle("hidden", showRaw);
        button.textContent = showRaw ? "tree" : "raw";
      });
      const head = sw.el("div", { class: "jt-row" + (highlight.has(pointer) ? " jt-hl" : ""), dataset: { pointer } }, sw.el("span", { class: "jt-toggle" }), label, sw.el("span", { class: "jt-inner" }, "JSON in a string"), button);
      return sw.el("div", { class: "jt-unwrapped" }, head, sw.el("div", { class: "jt-children" }, tree, rawRow));
    }

    function node(n, pointer, key, depth) {
      const label = key === null ? null : sw.el("span", { class: "jt-key" }, JSON.stringify(key), ": ");
      const marked = highlight.has(pointer) ? " jt-hl" : "";
      if (n.type === "object" || n.type === "array") {
        const entries = n.type === "object" ? n.members : n.items.map((item, i) => [i, item]);
        const [openMark, closeMark] = n.type === "object" ? ["{", "}"] : ["[", "]"];
        const children = sw.el("div", { class: "jt-children", role: "group" });
        for (const [k, child] of entries) {
          children.append(node(child, `${pointer}/${escapeToken(k)}`, n.type === "object" ? k : null, depth + 1));
        }
        const row = sw.el("div", { class: "jt-row" + marked, role: "treeitem", dataset: { pointer } });
        const toggle = sw.el("span", { class: "jt-toggle", "aria-hidden": "true" });
        const noun = (n.type === "object" ? "key" : "item") + (entries.length === 1 ? "" : "s");
        const summary = sw.el("span", { class: "jt-note" }, `${entries.length} ${noun}`);
        const setOpen = (isOpen) => {
          children.classList.toggle("hidden", !isOpen);
          toggle.textContent = entries.length ? (isOpen ? "▾" : "▸") : "";
          row.setAttribute("aria-expanded", String(isOpen));
        };
        toggle.addEventListener("click", () => setOpen(children.classList.contains("hidden")));
        row.jtSetOpen = setOpen;
        row.append(toggle, label || "", openMark, summary);
        setOpen(depth < open || highlightedBelow(pointer));
        return sw.el("div", {}, row, children, sw.el("div", { class: "jt-row" }, closeMark));
      }
      const parsed = n.type === "string" ? inner(n.value) : null;
      if (parsed) return unwrapped(parsed, n.value, pointer, label, depth);
      const shown = n.type === "string" ? JSON.stringify(n.value) : n.raw;
      const kind = n.type === "string" ? "jt-str" : n.type === "number" ? "jt-num" : n.raw === "null" ? "jt-null" : "jt-bool";
      return sw.el(
        "div",
        { class: "jt-row" + marked, role: "treeitem", dataset: { pointer } },
        sw.el("span", { class: "jt-toggle" }),
        label,
        sw.el("span", { class: kind }, shown),
      );
    }

    function highlightedBelow(pointer) {
      for (const p of highlight) if (p.startsWith(pointer + "/")) return true;
      return false;
    }
  }

  /** Open (or close) every level of a rendered tree. */
  function expandAll(root, isOpen = true) {
    for (const row of root.querySelectorAll(".jt-row")) if (row.jtSetOpen) row.jtSetOpen(isOpen);
    if (!isOpen) {
      const top = root.querySelector(".jt-row");
      if (top && top.jtSetOpen) top.jtSetOpen(true); // the root stays open: its keys show
    }
  }

  return { parse, render, expandAll, collapseAll: (root) => expandAll(root, false) };
})();
