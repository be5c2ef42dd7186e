"use strict";
// The Runs page: every trace under the traces folder, newest first, kept up to date by polling
// a signature of the files' sizes and times (an unchanged folder costs one small answer).

(() => {
  const POLL_MS = 1500;
  const main = document.getElementById("main");
  const state = { signature: null, timer: null };

  const statusBadge = (status) => sw.el("span", { class: `badge status-${status}` }, status);
  const count = (n, kind) => sw.el("td", { class: `num${n ? " " + kind : " zero"}` }, String(n));
  const list = (items) => (items && items.length ? items.join(", ") : "—");

  function row(run) {
    const href = `/run/${encodeURIComponent(run.run || run.file)}?file=${encodeURIComponent(run.file)}`;
    if (run.status === "unreadable") {
      return sw.el("tr", { class: "unreadable", dataset: { file: run.file } },
        sw.el("td", {}, sw.el("span", { class: "mono" }, run.file)),
        sw.el("td", {}, statusBadge("unreadable")),
        sw.el("td", { colspan: "9", class: "bad" }, run.error));
    }
    return sw.el("tr", { dataset: { file: run.file, run: run.run || "" } },
      sw.el("td", {}, sw.el("a", { class: "mono run-link", href }, run.run || run.file),
        run.file !== `${run.run}.jsonl` ? sw.el("div", { class: "muted small mono" }, run.file) : null),
      sw.el("td", {}, statusBadge(run.status)),
      sw.el("td", { class: "nowrap" }, run.start ? sw.when(run.start) : "—"),
      sw.el("td", { class: "num" }, sw.duration(run.duration)),
      sw.el("td", {}, list(run.models)),
      sw.el("td", { class: "tools" }, list(run.tools)),
      count(run.refusals, "bad"),
      count(run.repairs, "warn"),
      count(run.redactions, "warn"),
      count(run.errors, "bad"),
      sw.el("td", { class: "num" }, run.hops.toLocaleString()));
  }

  function table(answer) {
    const head = ["run", "status", "when", "duration", "model", "tools", "refusals", "repairs", "redactions", "errors", "hops"];
    return sw.el("table", { class: "runs" },
      sw.el("thead", {}, sw.el("tr", {}, head.map((h, i) => sw.el("th", { class: i >= 6 || i === 3 ? "num" : "" }, h)))),
      sw.el("tbody", {}, answer.runs.map(row)));
  }

  function show(answer) {
    const title = sw.el("div", { class: "toolbar" },
      sw.el("h1", {}, "Runs"),
      sw.el("span", { class: "muted" }, `${answer.runs.length} trace${answer.runs.length === 1 ? "" : "s"} under `, sw.el("span", { class: "mono" }, answer.folder)),
      sw.el("span", { class: "live muted", title: "New and growing traces appear here by themselves" }, "● live"));
    const body = answer.runs.length
      ? table(answer)
      : sw.el("p", { class: "muted empty" }, "No traces yet. schemawire run and schemawire demo write one per run into this folder; a run appears here as it goes.");
    main.replaceChildren(title, body);
  }

  async function poll() {
    try {
      const query = state.signature ? `?since=${state.signature}` : "";
      const answer = await sw.api(`/api/runs/list${query}`);
      if (!answer.unchanged) show(answer);
      state.signature = answer.signature;
    } catch (error) {
      main.replaceChildren(sw.errorBox(error));
      state.signature = null; // the next answer draws the list again, changed or not
    } finally {
      state.timer = setTimeout(poll, POLL_MS);
    }
  }

  document.addEventListener("DOMContentLoaded", poll);
})();
