"""The local page's bench: a 100,000-hop trace opened and searched in Debian's chromium.

1. Generate a realistic trace with spans (docs: spans.md's format): per turn, a user text, a
   model request written as a delta of the previous one (``history`` kept, ``tools``
   unchanged), its response with tool calls (arguments as JSON strings), each call's argument
   gate verdict (about 6% refused with violations, 3% repaired), an MCP ``tools/call`` request
   and its response (paired by id, no span of its own), the result gate's verdict.
2. Server side: the index built from cold, a refresh after the file grew by one turn, a search.
3. In the browser (``/usr/bin/chromium`` through Playwright): from navigation to the first
   screen of hops visible, and from typing a query to its results shown; medians over rounds.
4. The Runs page's list of 300 traces, from cold and with the summaries cached.

    python -m bench.run --only ui
"""

from __future__ import annotations

import json
import random
import statistics
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

TOOLS = {
    "get_weather": {"city": ["Shanghai", "Lisbon", "Nairobi", "Quito"], "unit": ["celsius"]},
    "create_refund": {"order_id": ["A-1001", "A-2093", "B-7781"], "amount": [12.5, 99, 240]},
    "search_orders": {"customer": ["c_981", "c_112", "c_4410"], "status": ["open", "shipped"]},
}
QUERY = "B-7781"  # in about a third of the refund calls
# When the first row of hops is in the page, by the page's own clock (ms since navigation):
# the server runs in this process, and Playwright's client here shares its GIL with the
# indexing thread, so the time Python sees the row is later than the time the page shows it.
FIRST_ROW = """
new MutationObserver((_, observer) => {
  if (document.querySelector('.wf-row')) {
    window.__firstRow = performance.now();
    observer.disconnect();
  }
}).observe(document, {childList: true, subtree: true});
"""
ROUNDS = 5


class _Writer:
    """Hops of one run, as the loop and the span helper write them."""

    def __init__(self, file: Any, run: str, start: float) -> None:
        self.file, self.run, self.clock, self.seq = file, run, start, 0
        self.sent = 0  # messages in the last request to the model (its whole body)
        self.pending: list[dict[str, Any]] = []  # messages since: the next request's delta

    def hop(self, **fields: Any) -> None:
        self.seq += 1
        hop = {
            "run": self.run,
            "seq": self.seq,
            "time": round(self.clock, 6),
            "from": fields["source"],
            "to": fields["target"],
            "protocol": fields["protocol"],
            "direction": fields["direction"],
            "payload": fields.get("payload"),
            "verdict": fields.get("verdict"),
        }
        if fields.get("span"):
            hop["span"] = fields["span"]
        self.file.write(json.dumps(hop, ensure_ascii=False, separators=(",", ":")) + "\n")

    def start(self, kind: str, name: str, parent: str | None, **attributes: Any) -> str:
        span = uuid.uuid4().hex[:16]
        payload = {"kind": kind, "name": name, "parent": parent, **attributes}
        self.hop(
            source="host",
            target="host",
            protocol="span",
            direction="start",
            span=span,
            payload=payload,
        )
        return span

    def end(self, span: str, kind: str, status: str = "ok") -> None:
        self.hop(
            source="host",
            target="host",
            protocol="span",
            direction="end",
            span=span,
            payload={"kind": kind, "status": status},
        )

    def tick(self, low: float, high: float, rng: random.Random) -> None:
        self.clock += rng.uniform(low, high)


def generate(path: Path, *, hops: int = 100_000, seed: int = 15, end: bool = True) -> int:
    """Write a trace of about ``hops`` hops (whole turns) to ``path``; the hops written."""
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as file:
        writer = _Writer(file, uuid.UUID(int=rng.getrandbits(128)).hex[:16], 1_796_000_000.0)
        run = writer.start("run", "support-desk", None, model="gpt-4.1-mini")
        writer.pending = [{"role": "system", "content": "You are the support desk's agent."}]
        turn = 0
        while writer.seq < hops - 2:
            turn += 1
            _turn(writer, run, turn, rng)
        if end:
            writer.end(run, "run")
        return writer.seq


def _turn(writer: _Writer, run: str, turn: int, rng: random.Random) -> None:
    span = writer.start("turn", f"turn {turn}", run)
    question = f"Order {rng.choice(['A-1001', 'B-7781', 'C-3310'])}: where is it, and the weather?"
    writer.hop(
        source="user",
        target="host",
        protocol="text",
        direction="receive",
        span=span,
        payload={"text": question},
    )
    calls = [(name, _arguments(name, rng)) for name in rng.sample(sorted(TOOLS), rng.randint(1, 3))]
    writer.pending.append({"role": "user", "content": question})
    _model(writer, span, turn, calls, rng)
    for k, (name, arguments) in enumerate(calls):
        _tool(writer, span, f"call_{turn}_{k}", name, arguments, rng)
    writer.end(span, "turn")


def _arguments(name: str, rng: random.Random) -> dict[str, Any]:
    return {key: rng.choice(values) for key, values in TOOLS[name].items()}


def _model(
    writer: _Writer,
    parent: str,
    turn: int,
    calls: list[tuple[str, dict[str, Any]]],
    rng: random.Random,
) -> None:
    """One model request, written as the loop does: the first whole, each later one a delta
    (the messages since the last request, ``history`` kept, ``tools`` unchanged)."""
    span = writer.start("model", "gpt-4.1-mini", parent)
    request: dict[str, Any] = {"model": "gpt-4.1-mini", "messages": writer.pending}
    if writer.sent:
        request |= {"tools": "unchanged", "history": {"key": "messages", "kept": writer.sent}}
    else:
        request["tools"] = [_tool_definition(name) for name in sorted(TOOLS)]
    writer.sent += len(writer.pending)
    writer.hop(
        source="host",
        target="model:openai.chat",
        protocol="openai.chat",
        direction="send",
        span=span,
        payload=request,
    )
    writer.tick(0.3, 1.6, rng)
    tool_calls = [
        {
            "id": f"call_{turn}_{k}",
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)},
        }
        for k, (name, arguments) in enumerate(calls)
    ]
    response = {
        "id": f"chatcmpl-{turn}",
        "object": "chat.completion",
        "model": "gpt-4.1-mini",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": None, "tool_calls": tool_calls},
            }
        ],
        "usage": {"prompt_tokens": 400 + 30 * writer.sent, "completion_tokens": 40},
    }
    writer.hop(
        source="model:openai.chat",
        target="host",
        protocol="openai.chat",
        direction="receive",
        span=span,
        payload=response,
    )
    writer.end(span, "model")
    writer.pending = [response["choices"][0]["message"]]


def _tool_definition(name: str) -> dict[str, Any]:
    properties = {key: {"type": "string"} for key in TOOLS[name]}
    return {
        "type": "function",
        "function": {
            "name": name,
            "parameters": {"type": "object", "properties": properties, "required": [*properties]},
        },
    }


def _tool(  # noqa: PLR0917 (one tool call of the generated run)
    writer: _Writer,
    parent: str,
    call: str,
    name: str,
    arguments: dict[str, Any],
    rng: random.Random,
) -> None:
    span = writer.start("tool", name, parent, call=call)
    refused = rng.random() < 0.06
    repaired = not refused and rng.random() < 0.03
    verdict = _verdict("arguments", name, refused=refused, repaired=repaired)
    writer.hop(
        source="host",
        target="host",
        protocol="gate",
        direction="check",
        span=span,
        payload={"tool": name},
        verdict=verdict,
    )
    if refused:
        refusal = {"error": verdict["rejection"]}
        writer.pending.append(
            {"role": "tool", "tool_call_id": call, "content": json.dumps(refusal)}
        )
        writer.end(span, "tool", "refused")
        return
    mcp = writer.start("mcp", "tools/call", span)
    request_id = writer.seq
    writer.hop(
        source="host",
        target="mcp:support-desk",
        protocol="mcp",
        direction="send",
        span=mcp,
        payload={
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments},
        },
    )
    writer.tick(0.02, 0.25, rng)
    failed = rng.random() < 0.02
    structured = {"tool": name, "ok": not failed, **arguments, "checked_at": round(writer.clock)}
    writer.pending.append({"role": "tool", "tool_call_id": call, "content": json.dumps(structured)})
    writer.hop(
        source="mcp:support-desk",
        target="host",
        protocol="mcp",
        direction="receive",
        payload={
            "jsonrpc": "2.0",
            "id": request_id,
            "result": {
                "content": [{"type": "text", "text": json.dumps(structured)}],
                "structuredContent": structured,
                "isError": failed,
            },
        },
    )
    writer.end(mcp, "mcp", "error" if failed else "ok")
    writer.hop(
        source="host",
        target="host",
        protocol="gate",
        direction="check",
        span=span,
        payload={"tool": name},
        verdict=_verdict("results", name, refused=False, repaired=False),
    )
    writer.end(span, "tool", "error" if failed else "ok")


def _verdict(gate: str, tool: str, *, refused: bool, repaired: bool) -> dict[str, Any]:
    schema = f"https://example.com/schemas/tools/{tool}.json"
    rejection = None
    if refused:
        violation = {
            "pointer": "/amount" if tool == "create_refund" else "/unit",
            "keyword": "type",
            "message": "must be number",
            "expected": "number",
            "got": "string",
        }
        rejection = {
            "code": f"{gate}_invalid",
            "tool": tool,
            "schema": schema,
            "version": "1.0.0",
            "violations": [violation],
            "hint": f"Call {tool} again with arguments that satisfy its schema.",
        }
    changes = (
        [
            {
                "kind": "json_repaired",
                "pointer": "",
                "detail": "a trailing comma removed",
                "before": None,
                "after": None,
            }
        ]
        if repaired
        else []
    )
    return {
        "gate": gate,
        "tool": tool,
        "outcome": "rejected" if refused else "repaired" if repaired else "accepted",
        "accepted": not refused,
        "rejection": rejection,
        "changes": changes,
        "conforms": not refused,
    }


# --- measuring --------------------------------------------------------------------------------


def server_side(path: Path) -> dict[str, float]:
    """Index from cold, refresh after growth, search: milliseconds; index bytes per hop."""
    from schemawire.ui._trace_index import TraceIndex

    started = time.perf_counter()
    index = TraceIndex(path)
    index.refresh()
    cold = (time.perf_counter() - started) * 1000
    with path.open("a", encoding="utf-8") as file:
        writer = _Writer(file, index.rows[-1].run, index.rows[-1].time + 1)
        writer.seq = index.rows[-1].seq
        _turn(writer, index.rows[0].span or "", 99_999, random.Random(1))
    started = time.perf_counter()
    index.refresh()
    grow = (time.perf_counter() - started) * 1000
    searches = []
    for _ in range(ROUNDS):
        started = time.perf_counter()
        hits, _more = index.search(QUERY)
        searches.append((time.perf_counter() - started) * 1000)
    return {
        "hops": len(index.rows),
        "bytes": path.stat().st_size,
        "index_ms": cold,
        "grow_ms": grow,
        "search_ms": statistics.median(searches),
        "hits": len(hits),
        "bytes_per_hop": index.memory() / len(index.rows),
    }


def browser_side(folder: Path, path: Path) -> dict[str, float]:
    """Median ms from navigation to the first screen of hops, and from typing to results."""
    from playwright.sync_api import sync_playwright

    from schemawire.ui import UiConfig
    from schemawire.ui.server import LocalServer

    server = LocalServer(UiConfig(traces=folder, repo=None, token=""))
    opens, searches = [], []
    with server.running(), sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path="/usr/bin/chromium",
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        page = browser.new_page(viewport={"width": 1360, "height": 860})
        page.add_init_script(FIRST_ROW)
        page.goto(f"{server.base}/?token={server.config.token}")
        page.wait_for_selector("table.runs a.run-link", timeout=60_000)  # indexed once here
        url = f"{server.base}/run/{path.stem}?file={path.name}"
        for _ in range(ROUNDS):
            page.goto(url)
            page.wait_for_selector(".wf-row", timeout=10_000)
            opens.append(page.evaluate("window.__firstRow"))
            started = time.perf_counter()
            page.fill("input[name=q]", QUERY)
            page.press("input[name=q]", "Enter")  # at once, as a person who typed it does
            page.locator(".count", has_text=" of ").wait_for(timeout=10_000)
            searches.append((time.perf_counter() - started) * 1000)
        browser.close()
    return {"open_ms": statistics.median(opens), "search_ms_browser": statistics.median(searches)}


def browser_cold(path: Path) -> dict[str, float]:
    """Median ms from navigation to the first screen of hops of a trace no request has indexed
    yet (a fresh server each round; the file in the OS's cache), and to the whole index (the
    page's count no longer says "indexing")."""
    import shutil

    from playwright.sync_api import sync_playwright

    from schemawire.ui import UiConfig
    from schemawire.ui.server import LocalServer

    opens, whole = [], []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path="/usr/bin/chromium",
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        for _ in range(ROUNDS):
            with tempfile.TemporaryDirectory() as folder:
                server = LocalServer(UiConfig(traces=Path(folder), repo=None, token=""))
                with server.running():
                    page = browser.new_page(viewport={"width": 1360, "height": 860})
                    page.add_init_script(FIRST_ROW)
                    page.goto(f"{server.base}/?token={server.config.token}")
                    page.goto(f"{server.base}/static/favicon.svg")  # the Runs page left
                    shutil.copy(path, Path(folder) / path.name)
                    page.goto(f"{server.base}/run/{path.stem}?file={path.name}")
                    page.wait_for_selector(".wf-row", timeout=10_000)
                    opens.append(page.evaluate("window.__firstRow"))
                    page.wait_for_function(
                        "() => !document.querySelector('.count').textContent.includes('index')",
                        timeout=30_000,
                    )
                    whole.append(page.evaluate("performance.now()"))
                    page.close()
        browser.close()
    return {"open_cold_ms": statistics.median(opens), "indexed_ms": statistics.median(whole)}


def listing(traces: int = 300) -> dict[str, float]:
    """The Runs page's list of ``traces`` traces of about 200 hops: from cold (each read
    once) and warm (summaries cached by size and mtime), milliseconds."""
    from schemawire.ui._run_folder import TraceFolder
    from schemawire.ui._runs import _listing

    with tempfile.TemporaryDirectory() as folder:
        for k in range(traces):
            generate(Path(folder) / f"run-{k:04}.jsonl", hops=200, seed=k)
        runs = TraceFolder(Path(folder))
        started = time.perf_counter()
        _listing(runs, None)
        cold = (time.perf_counter() - started) * 1000
        warm = []
        for _ in range(ROUNDS):
            started = time.perf_counter()
            _listing(runs, None)
            warm.append((time.perf_counter() - started) * 1000)
    return {"traces": traces, "list_cold_ms": cold, "list_warm_ms": statistics.median(warm)}


def run(hops: int = 100_000) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "bench-100k.jsonl"
        written = generate(path, hops=hops)
        figures = {"written": float(written), **server_side(path)}
        figures |= browser_cold(path)
        figures |= browser_side(Path(folder), path)
    return figures | listing()


def print_table(figures: dict[str, float]) -> None:
    print("\nThe local page: a generated trace in Debian's chromium (medians of", ROUNDS, "rounds)")
    rows = [
        ("trace", f"{figures['hops']:,.0f} hops, {figures['bytes'] / 1e6:.1f} MB"),
        ("index from cold (server)", f"{figures['index_ms']:,.0f} ms"),
        ("index after one more turn", f"{figures['grow_ms']:.1f} ms"),
        ("index memory per hop", f"{figures['bytes_per_hop']:.0f} B"),
        (
            f"search {QUERY!r} (server)",
            f"{figures['search_ms']:.1f} ms, {figures['hits']:,.0f} hops",
        ),
        ("open cold: navigation to first screen", f"{figures['open_cold_ms']:.0f} ms"),
        ("open cold: to the whole index", f"{figures['indexed_ms']:.0f} ms"),
        ("open warm: navigation to first screen", f"{figures['open_ms']:.0f} ms"),
        ("search: typed to results shown", f"{figures['search_ms_browser']:.0f} ms"),
        (
            f"Runs list of {figures['traces']:.0f} traces, cold",
            f"{figures['list_cold_ms']:,.0f} ms",
        ),
        (
            f"Runs list of {figures['traces']:.0f} traces, cached",
            f"{figures['list_warm_ms']:.1f} ms",
        ),
    ]
    for name, value in rows:
        print(f"  {name:<36} {value}")


def main() -> None:
    figures = run()
    print_table(figures)
