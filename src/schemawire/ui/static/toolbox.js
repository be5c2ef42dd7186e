"use strict";
// The Toolbox page: paste, drop or pick JSON, then format, check, validate or diff it. Every
// action is computed on this machine by the server, with the same Python as `schemawire fmt`,
// `validate` and `diff` (the page only shows the answers), so the two never disagree.

(() => {
  const { el, api } = sw;
  const ACTIONS = [
    { id: "format", label: "Format", hint: "indent, sort keys, minify (schemawire fmt)" },
    { id: "check", label: "Check", hint: "syntax: line, column, caret (the parser's words)" },
    { id: "validate", label: "Validate", hint: "against a schema (schemawire validate --json)" },
    { id: "diff", label: "Diff", hint: "against a second document (schemawire diff)" },
    { id: "lines", label: "JSON Lines", hint: "format, check or validate line by line" },
  ];
  const state = { action: "format", bytes: { a: null, b: null }, names: { a: null, b: null }, schemas: [] };
  const ui = {};

  function build() {
    const main = document.getElementById("main");
    ui.input = textArea("input", "Input: paste JSON, or drop a file here");
    ui.inputB = textArea("input-b", "Second document (B), to diff against the input (A)");
    ui.inputNote = el("div", { class: "tb-note muted", id: "input-note" });
    ui.inputBNote = el("div", { class: "tb-note muted" });
    ui.fileButton = el("input", { type: "file", id: "open-file", accept: ".json,.jsonl,application/json", class: "tb-file" });
    ui.repoFile = el("input", { type: "search", id: "repo-file", list: "repo-files", placeholder: "a JSON file of the repository", autocomplete: "off", class: "tb-wide" });
    ui.repoFiles = el("datalist", { id: "repo-files" });
    ui.bBlock = el(
      "div",
      { class: "tb-block hidden", id: "b-block" },
      el("label", { for: "input-b", class: "tb-label" }, "B: the document after"),
      ui.inputB,
      ui.inputBNote,
    );
    const left = el(
      "section",
      { class: "tb-left", "aria-label": "Documents" },
      el(
        "div",
        { class: "toolbar" },
        el("label", { for: "open-file", class: "tb-label-inline" }, "Open a file"),
        ui.fileButton,
        el("label", { for: "repo-file", class: "tb-label-inline" }, "or pick one"),
        ui.repoFile,
        ui.repoFiles,
      ),
      el("label", { for: "input", class: "tb-label" }, "A: the document"),
      ui.input,
      ui.inputNote,
      ui.bBlock,
    );
    ui.result = el("div", { class: "tb-result", id: "result", role: "status", "aria-live": "polite", "aria-atomic": "false" });
    const right = el(
      "section",
      { class: "tb-right", "aria-label": "Action and result" },
      actionPicker(),
      options(),
      el(
        "div",
        { class: "toolbar" },
        (ui.run = el("button", { class: "primary", id: "run", onclick: run }, "Run")),
        el("span", { class: "muted tb-keys" }, keysHint()),
      ),
      ui.result,
    );
    main.append(
      el(
        "div",
        { class: "tb-head" },
        el("h1", {}, "Toolbox"),
        el("p", { class: "muted" }, "Everything is computed on this machine by the same code as ", el("code", {}, "schemawire fmt"), ", ", el("code", {}, "validate"), " and ", el("code", {}, "diff"), ": nothing is uploaded."),
      ),
      el("div", { class: "tb-grid" }, left, right),
    );
    wireInputs();
    chooseAction("format");
  }

  function keysHint() {
    return "Ctrl+Enter runs · Alt+1…5 chooses the action · Alt+I goes to the input · Alt+R to the result";
  }

  function textArea(id, placeholder) {
    return el("textarea", { id, rows: 22, spellcheck: "false", placeholder, class: "tb-text", "aria-describedby": "input-note" });
  }

  function actionPicker() {
    const group = el("fieldset", { class: "tb-actions" }, el("legend", {}, "Action"));
    ACTIONS.forEach((action, i) => {
      const radio = el("input", { type: "radio", name: "action", id: `action-${action.id}`, value: action.id, onchange: () => chooseAction(action.id) });
      group.append(
        el("label", { class: "tb-action", for: `action-${action.id}`, title: action.hint }, radio, ` ${action.label} `, el("kbd", {}, `Alt+${i + 1}`)),
      );
    });
    return group;
  }

  function options() {
    ui.indent = el(
      "select",
      { id: "indent" },
      el("option", { value: "2" }, "2 spaces"),
      el("option", { value: "4" }, "4 spaces"),
      el("option", { value: "tab" }, "tabs"),
      el("option", { value: "minify" }, "minify (one line)"),
    );
    ui.sortKeys = el("input", { type: "checkbox", id: "sort-keys" });
    ui.schema = el("input", { type: "search", id: "schema", list: "schema-list", placeholder: "file name or $id", autocomplete: "off", class: "tb-wide" });
    ui.schemaList = el("datalist", { id: "schema-list" });
    ui.pasteSchema = el("input", { type: "checkbox", id: "paste-schema", onchange: () => ui.schemaText.classList.toggle("hidden", !ui.pasteSchema.checked) });
    ui.schemaText = el("textarea", { id: "schema-text", rows: 8, spellcheck: "false", class: "tb-text hidden", placeholder: "a JSON Schema", "aria-label": "Pasted schema" });
    ui.linesMode = el("select", { id: "lines-mode" }, el("option", { value: "check" }, "check each line"), el("option", { value: "format" }, "format (one compact value per line)"), el("option", { value: "validate" }, "validate each line against the schema"));
    ui.maxBytes = el("input", { type: "number", id: "max-bytes", min: 1, placeholder: "16777216", class: "tb-num" });
    ui.maxDepth = el("input", { type: "number", id: "max-depth", min: 1, max: 250, placeholder: "128", class: "tb-num" });
    const row = (...children) => el("div", { class: "tb-row" }, ...children);
    ui.formatOptions = el("div", { class: "tb-options", dataset: { for: "format lines" } }, row(el("label", { for: "indent" }, "Indent "), ui.indent), row(ui.sortKeys, el("label", { for: "sort-keys" }, " sort keys")));
    ui.linesOptions = el("div", { class: "tb-options", dataset: { for: "lines" } }, row(el("label", { for: "lines-mode" }, "Each line: "), ui.linesMode));
    ui.schemaOptions = el(
      "div",
      { class: "tb-options", dataset: { for: "validate lines" } },
      row(el("label", { for: "schema" }, "Schema "), ui.schema, ui.schemaList),
      row(ui.pasteSchema, el("label", { for: "paste-schema" }, " paste a schema instead")),
      ui.schemaText,
    );
    const limits = el("details", { class: "tb-limits" }, el("summary", {}, "Parser limits"), row(el("label", { for: "max-bytes" }, "max bytes "), ui.maxBytes, el("label", { for: "max-depth" }, " max depth "), ui.maxDepth));
    return el("div", {}, ui.linesOptions, ui.formatOptions, ui.schemaOptions, limits);
  }

  function chooseAction(id) {
    state.action = id;
    document.getElementById(`action-${id}`).checked = true;
    for (const block of document.querySelectorAll(".tb-options")) {
      block.classList.toggle("hidden", !block.dataset.for.split(" ").includes(id));
    }
    ui.bBlock.classList.toggle("hidden", id !== "diff");
    ui.input.rows = ui.inputB.rows = id === "diff" ? 12 : 22;
    ui.run.textContent = { format: "Format", check: "Check syntax", validate: "Validate", diff: "Diff A → B", lines: "Run on each line" }[id];
  }

  // --- documents: pasted text, or a dropped / opened / picked file's bytes as they are ---

  function wireInputs() {
    for (const [side, area, note] of [["a", ui.input, ui.inputNote], ["b", ui.inputB, ui.inputBNote]]) {
      area.addEventListener("input", () => {
        state.bytes[side] = null; // edited: the text is now what counts
        note.textContent = "";
      });
      area.addEventListener("dragover", (event) => event.preventDefault());
      area.addEventListener("drop", (event) => {
        event.preventDefault();
        const file = event.dataTransfer.files[0];
        if (file) readFile(file, side);
      });
    }
    ui.fileButton.addEventListener("change", () => {
      if (ui.fileButton.files[0]) readFile(ui.fileButton.files[0], "a");
    });
    ui.repoFile.addEventListener("change", pickRepositoryFile);
    ui.repoFile.addEventListener("keydown", (event) => {
      if (event.key === "Enter") pickRepositoryFile();
    });
    document.addEventListener("keydown", shortcut);
  }

  async function readFile(file, side) {
    const bytes = new Uint8Array(await file.arrayBuffer());
    setBytes(side, file.name, bytes);
  }

  function setBytes(side, name, bytes) {
    const area = side === "a" ? ui.input : ui.inputB;
    const note = side === "a" ? ui.inputNote : ui.inputBNote;
    const text = new TextDecoder("utf-8").decode(bytes);
    state.bytes[side] = { name, base64: toBase64(bytes), crlf: crlfAt(text) };
    state.names[side] = name;
    area.value = text;
    const plain = new TextEncoder().encode(area.value).length === bytes.length;
    note.textContent = `${name}: ${bytes.length.toLocaleString()} bytes, sent as they are${plain ? "" : " (not all UTF-8: the text shows � where a byte is not)"}`;
  }

  /** Where ``text`` has a CR LF line end: a text area shows each as LF alone (one UTF-16 unit
   *  fewer), while the server's offsets count the file's own characters. */
  function crlfAt(text) {
    const found = [];
    for (let at = text.indexOf("\r\n"); at !== -1; at = text.indexOf("\r\n", at + 2)) found.push(at);
    return found;
  }

  /** An offset in the document the server read, in the text area's value. */
  function areaOffset(offset) {
    const crlf = (state.bytes.a && state.bytes.a.crlf) || [];
    let before = 0;
    while (before < crlf.length && crlf[before] < offset) before++;
    return offset - before;
  }

  function toBase64(bytes) {
    let binary = "";
    for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
    return btoa(binary);
  }

  function fromBase64(text) {
    return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
  }

  async function pickRepositoryFile() {
    const path = ui.repoFile.value.trim();
    if (!path) return;
    try {
      const file = await api(`/api/toolbox/file?path=${encodeURIComponent(path)}`);
      if (file.base64 !== undefined) setBytes("a", file.path, fromBase64(file.base64));
      else {
        ui.input.value = file.text;
        state.bytes.a = null;
        ui.inputNote.textContent = `${file.path} from the repository`;
      }
      state.names.a = file.path;
      ui.input.focus();
    } catch (error) {
      show(sw.errorBox(error));
    }
  }

  function documentOf(side) {
    const bytes = state.bytes[side];
    if (bytes) return { name: bytes.name, base64: bytes.base64 };
    const area = side === "a" ? ui.input : ui.inputB;
    return state.names[side] ? { name: state.names[side], text: area.value } : { text: area.value };
  }

  function limits() {
    const result = {};
    if (ui.maxBytes.value) result.max_bytes = Number(ui.maxBytes.value);
    if (ui.maxDepth.value) result.max_depth = Number(ui.maxDepth.value);
    return result;
  }

  function schemaChoice() {
    if (ui.pasteSchema.checked) return { schema_text: ui.schemaText.value };
    return { schema: ui.schema.value.trim() };
  }

  // --- running an action ---

  function shortcut(event) {
    if (event.ctrlKey && event.key === "Enter") {
      event.preventDefault();
      run();
    } else if (event.altKey && /^[1-5]$/.test(event.key)) {
      event.preventDefault();
      const action = ACTIONS[Number(event.key) - 1].id;
      chooseAction(action);
      document.getElementById(`action-${action}`).focus();
    } else if (event.altKey && (event.key === "i" || event.key === "I")) {
      event.preventDefault();
      ui.input.focus();
    } else if (event.altKey && (event.key === "r" || event.key === "R")) {
      event.preventDefault();
      const first = ui.result.querySelector("button, [tabindex]");
      (first || ui.result).focus();
    }
  }

  async function run() {
    const action = state.action === "lines" ? `lines-${ui.linesMode.value}` : state.action;
    const requests = {
      format: () => ["format", { input: documentOf("a"), style: ui.indent.value, sort_keys: ui.sortKeys.checked, ...limits() }],
      check: () => ["check", { input: documentOf("a"), ...limits() }],
      validate: () => ["validate", { input: documentOf("a"), ...schemaChoice(), ...limits() }],
      diff: () => ["diff", { a: documentOf("a"), b: documentOf("b"), ...limits() }],
      "lines-check": () => ["check", { input: documentOf("a"), lines: true, ...limits() }],
      "lines-format": () => ["format", { input: documentOf("a"), style: "lines", sort_keys: ui.sortKeys.checked, ...limits() }],
      "lines-validate": () => ["validate", { input: documentOf("a"), lines: true, ...schemaChoice(), ...limits() }],
    };
    const [route, body] = requests[action]();
    show(el("p", { class: "muted" }, "working…"));
    ui.result.setAttribute("aria-busy", "true");
    try {
      const answer = await api(`/api/toolbox/${route}`, { method: "POST", body });
      show(...render(action, answer));
    } catch (error) {
      show(failure(error));
    } finally {
      ui.result.removeAttribute("aria-busy");
    }
  }

  function show(...nodes) {
    ui.result.replaceChildren(...nodes.filter((node) => node !== null && node !== undefined)); // a null would show as the text "null"
    ui.result.dataset.done = String(Date.now());
  }

  function render(action, answer) {
    if (action === "format" || action === "lines-format") return answer.ok ? formattedView(answer.text) : refusalView(answer.error);
    if (action === "check") return answer.ok ? [verdict(true, "valid JSON: the parser accepts it")] : refusalView(answer.error);
    if (action === "lines-check") return linesView(answer);
    if (action === "validate" || action === "lines-validate") return validationView(answer);
    return diffView(answer);
  }

  function verdict(ok, text) {
    return el("p", { class: `tb-verdict ${ok ? "ok" : "bad"}`, id: "verdict" }, ok ? "✓ " : "✗ ", text);
  }

  function formattedView(text) {
    return [
      verdict(true, `formatted: ${text.split("\n").length - 1} lines, ${new TextEncoder().encode(text).length.toLocaleString()} bytes`),
      el(
        "div",
        { class: "toolbar" },
        el("button", { id: "use-output", onclick: () => useAsInput(text) }, "Use as input"),
        el("button", { onclick: () => sw.copy(text) }, "Copy"),
      ),
      el("pre", { class: "tb-output", id: "output", tabindex: "0" }, text),
    ];
  }

  function useAsInput(text) {
    ui.input.value = text;
    state.bytes.a = null;
    ui.inputNote.textContent = "the formatted text";
    ui.input.focus();
  }

  /** The parser's refusal: code, message, line and column, the caret excerpt, and the
   *  command's own words; a button jumps to the place in the input. */
  function refusalView(error, heading = "not accepted") {
    const where = error.line ? `line ${error.line}, column ${error.column}` : "";
    return [
      verdict(false, `${heading}: ${error.message}`),
      el(
        "dl",
        { class: "tb-facts" },
        el("dt", {}, "code"), el("dd", {}, el("code", { class: "tb-code" }, error.code)),
        where ? [el("dt", {}, "where"), el("dd", { class: "tb-where" }, where, error.pointer ? ` (${error.pointer})` : "")] : null,
      ),
      error.excerpt ? el("pre", { class: "tb-excerpt", id: "excerpt" }, error.excerpt) : null,
      error.line ? el("button", { class: "tb-jump", onclick: () => jumpToLine(error.line, error.column) }, `Go to ${where}`) : null,
      el("p", { class: "muted tb-small" }, "The command line says:"),
      el("pre", { class: "tb-cli", id: "cli-message" }, error.shown),
    ];
  }

  function failure(error) {
    const detail = error.error || {};
    if (detail.shown) return el("div", {}, ...refusalView(detail, detail.source && detail.source.includes("schema") ? "the schema cannot be used" : "cannot run"));
    return sw.errorBox(error);
  }

  function linesView(answer) {
    const { total, refused } = answer;
    return [
      verdict(refused === 0, `${total.toLocaleString()} lines: ${(total - refused).toLocaleString()} accepted, ${refused.toLocaleString()} refused`),
      listedNote(answer.listed !== "all", answer.lines.length, refused, "refused line"),
      el(
        "table",
        { class: "tb-lines" },
        el("thead", {}, el("tr", {}, el("th", {}, "line"), el("th", {}, "verdict"))),
        el(
          "tbody",
          {},
          answer.lines.map((line) =>
            el(
              "tr",
              { dataset: { line: line.line } },
              el("td", { class: "mono" }, String(line.line)),
              el(
                "td",
                {},
                line.ok
                  ? el("span", { class: "ok" }, "✓ JSON")
                  : el("button", { class: "tb-link bad", onclick: () => jumpToLine(line.error.line, line.error.column) }, `✗ column ${line.error.column}: ${line.error.message}`),
              ),
            ),
          ),
        ),
      ),
    ];
  }

  /** When a huge JSON Lines text is answered, only (the first of) the lines that fail are
   *  listed: say so, and how many of them are shown. */
  function listedNote(partial, shown, failing, what) {
    if (!partial) return null;
    const all = shown === failing ? `every ${what}` : `the first ${shown.toLocaleString()} of ${failing.toLocaleString()} ${what}s`;
    return el("p", { class: "muted tb-small", id: "listed" }, `Too many lines to list: shown are ${all} (the command line lists them all).`);
  }

  function validationView(answer) {
    const { valid, invalid, unreadable } = answer.summary;
    const total = valid + invalid + unreadable;
    const nodes = [
      verdict(invalid + unreadable === 0, `${total} instance${total === 1 ? "" : "s"}: ${valid} valid, ${invalid} invalid${unreadable ? `, ${unreadable} unreadable` : ""}`),
      el("p", { class: "muted tb-small" }, "against ", el("code", {}, answer.schema), " · click a violation to go to its place in the input"),
      listedNote(answer.listed !== "all", answer.results.length, invalid + unreadable, "line that fails"),
    ];
    for (const result of answer.results) {
      const head = el("h2", { class: "tb-source" }, result.source, " ", el("span", { class: `badge ${result.valid ? "ok" : "bad"}` }, result.error ? "unreadable" : result.valid ? "valid" : "invalid"));
      nodes.push(head);
      if (result.error) {
        nodes.push(...refusalView(result.error));
        continue;
      }
      if (!result.violations.length) continue;
      nodes.push(
        el(
          "ul",
          { class: "tb-violations" },
          result.violations.map((v) =>
            el(
              "li",
              {},
              el(
                "button",
                { class: "tb-violation", dataset: { pointer: v.pointer, offset: v.offset }, onclick: () => jumpToOffset(v.offset) },
                el("code", { class: "tb-pointer" }, v.pointer || "/"),
                el("span", { class: "tb-keyword" }, v.keyword),
                el("span", {}, v.message),
              ),
            ),
          ),
        ),
      );
    }
    return nodes;
  }

  function diffView(answer) {
    if (!answer.ok) return refusalView(answer.error, `${answer.side.toUpperCase()} is not accepted`);
    if (answer.equal) return [verdict(true, "no differences (whitespace and key order do not count)")];
    return [
      verdict(false, `${answer.edits.length} edit${answer.edits.length === 1 ? "" : "s"} from A to B`),
      el("ul", { class: "tb-edits", id: "edits" }, answer.edits.map((edit) => el("li", { class: `tb-edit tb-${edit.op}` }, edit.line))),
      el("h2", {}, "RFC 6902 patch"),
      el("div", { class: "toolbar" }, el("button", { onclick: () => sw.copy(answer.patch) }, "Copy the patch")),
      jsonTree.render(answer.patch, { open: 3 }),
    ];
  }

  // --- jumping to a place in the input ---

  /** Select what a pointer names at ``offset`` (UTF-16 units), and scroll it into view: an
   *  array item, or an object member from its key, to the end of its value when that is a
   *  string, number or literal; an object or array to the end of its first line. */
  function jumpToOffset(serverOffset) {
    const offset = areaOffset(serverOffset);
    const text = ui.input.value;
    const lineEnd = text.indexOf("\n", offset);
    select(offset, valueEnd(text, offset) ?? (lineEnd === -1 ? text.length : lineEnd));
  }

  /** Where the value at ``at`` ends (past a member's key and colon); null for an object or
   *  an array. */
  function valueEnd(text, at) {
    let end = scalarEnd(text, at);
    if (end !== null && text[at] === '"') {
      const colon = /^\s*:\s*/.exec(text.slice(end, end + 200));
      if (colon) end = scalarEnd(text, end + colon[0].length); // a key: on to its value
    }
    return end;
  }

  /** Where the string, number or literal that starts at ``at`` ends; null for anything else. */
  function scalarEnd(text, at) {
    if (text[at] === '"') {
      let i = at + 1;
      while (i < text.length && text[i] !== '"') i += text[i] === "\\" ? 2 : 1;
      return Math.min(i + 1, text.length);
    }
    const literal = /^(?:-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null|NaN|-?Infinity)/.exec(text.slice(at, at + 400));
    return literal ? at + literal[0].length : null;
  }

  /** Line and column as the parser counts them (1-based; columns in characters). */
  function jumpToLine(line, column) {
    const text = ui.input.value;
    let start = 0;
    for (let i = 1; i < line && start !== -1; i++) start = text.indexOf("\n", start) + 1 || -1;
    if (start === -1) start = text.length;
    let offset = start;
    for (let c = 1; c < (column || 1) && offset < text.length; c++) offset += text.codePointAt(offset) > 0xffff ? 2 : 1;
    select(offset, Math.min(offset + 1, text.length));
  }

  function select(start, end) {
    const area = ui.input;
    area.focus();
    area.setSelectionRange(start, end);
    const line = area.value.slice(0, start).split("\n").length;
    const height = parseFloat(getComputedStyle(area).lineHeight) || 18;
    area.scrollTop = Math.max(0, (line - 1) * height - area.clientHeight / 3);
  }

  // --- the repository's files and schemas ---

  async function loadRepository() {
    try {
      const [files, schemas] = await Promise.all([api("/api/toolbox/files"), api("/api/toolbox/schemas")]);
      ui.repoFiles.replaceChildren(...files.files.map((path) => el("option", { value: path })));
      if (!files.repo) ui.repoFile.placeholder = "no repository (start with --repo DIR)";
      state.schemas = schemas.schemas;
      ui.schemaList.replaceChildren(
        ...schemas.schemas.flatMap((s) => [
          el("option", { value: s.path, label: s.id || s.title || "" }),
          s.id ? el("option", { value: s.id, label: s.path }) : null,
        ]).filter(Boolean),
      );
    } catch (error) {
      show(sw.errorBox(error));
    }
  }

  /** `/toolbox?schema=NAME` (the Run page's link from a verdict to its schema): validate
   *  against that schema, chosen already. */
  function fromAddress() {
    const schema = new URLSearchParams(location.search).get("schema");
    if (!schema) return;
    ui.schema.value = schema;
    chooseAction("validate");
    ui.input.focus();
  }

  document.addEventListener("DOMContentLoaded", () => {
    build();
    fromAddress();
    loadRepository();
  });
})();
