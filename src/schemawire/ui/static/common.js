"use strict";
// What every page shares: calling the API, building elements (never from HTML strings, so no
// value from a trace can become markup), and showing errors.

const sw = (() => {
  /** Call the page's JSON API; resolves to the answer's JSON, rejects with its error. */
  async function api(path, { method = "GET", body, signal } = {}) {
    const init = { method, headers: { accept: "application/json" }, signal, credentials: "same-origin" };
    if (body !== undefined) {
      init.headers["content-type"] = "application/json";
      init.body = typeof body === "string" ? body : JSON.stringify(body);
    }
    const response = await fetch(path, init);
    const text = await response.text();
    let data;
    try {
      data = text ? JSON.parse(text) : null;
    } catch {
      throw new ApiError({ code: "bad_answer", message: `not JSON from ${path}` }, response.status);
    }
    if (!response.ok) throw new ApiError((data && data.error) || { message: response.statusText }, response.status);
    return data;
  }

  class ApiError extends Error {
    constructor(error, status) {
      super(error.message || String(error));
      this.error = error;
      this.status = status;
    }
  }

  /** el("div", {class: "x", onclick: f}, child, "text", ...): an element; children may be
   *  nodes, strings (as text), arrays of either, or null (skipped). */
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === undefined || value === null || value === false) continue;
      if (key.startsWith("on") && typeof value === "function") node.addEventListener(key.slice(2), value);
      else if (key === "class") node.className = value;
      else if (key === "dataset") Object.assign(node.dataset, value);
      else node.setAttribute(key, value === true ? "" : String(value));
    }
    append(node, children);
    return node;
  }

  function append(node, children) {
    for (const child of children) {
      if (child === null || child === undefined || child === false) continue;
      if (Array.isArray(child)) append(node, child);
      else node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
  }

  /** An error as the page shows it: its message, and its code and position when it has them. */
  function errorBox(error) {
    const detail = error && error.error ? error.error : error;
    const where = detail && detail.line ? ` (line ${detail.line}, column ${detail.column})` : "";
    return el("div", { class: "error-box", role: "alert" }, `${detail.message || error}${where}`);
  }

  function markCurrentNav() {
    const page = document.body.dataset.page;
    const current = page === "run" ? "runs" : page;
    for (const link of document.querySelectorAll("header.top nav a")) {
      if (link.dataset.nav === current) link.setAttribute("aria-current", "page");
    }
  }

  /** A duration in seconds as a person reads it. */
  function duration(seconds) {
    if (seconds === null || seconds === undefined) return "";
    if (seconds < 0.001) return `${Math.round(seconds * 1e6)} µs`;
    if (seconds < 1) return `${(seconds * 1000).toFixed(seconds < 0.01 ? 2 : 0)} ms`;
    return `${seconds.toFixed(2)} s`;
  }

  /** A time (seconds since the epoch) as local date and time. */
  function when(seconds) {
    return new Date(seconds * 1000).toLocaleString();
  }

  async function copy(text) {
    await navigator.clipboard.writeText(text);
  }

  document.addEventListener("DOMContentLoaded", markCurrentNav);
  return { api, ApiError, el, errorBox, duration, when, copy };
})();
