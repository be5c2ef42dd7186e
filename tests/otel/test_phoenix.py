"""A real run's spans in Arize Phoenix (`phoenix serve`, tests/otel/phoenix.py): a host run with
a Python tool (one call refused by the argument gate) and an MCP server over stdio, both trace
files sent with ``schemawire trace export --otlp URL --json``; zero spans rejected, every span
stored by Phoenix with its parent (the run's tree, the server's spans under the client's) and
our ``schemawire.*`` and ``gen_ai.*`` attributes; then Phoenix's page for the trace, in
chromium, shows the tree (artifacts/screenshots/phoenix-run-tree.png)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from schemawire import Host, PythonTool, ScriptedModel, StdioServer, ToolSpec, Trace
from schemawire.otel import OtlpExport
from schemawire.trace import read_trace
from tests.helpers import tool_schema
from tests.otel import phoenix as phoenix_serve
from tests.otel.phoenix import Phoenix
from tests.otel.test_export import calls, says
from tests.otel.test_trace_context import serve
from tests.ui.conftest import CHROMIUM, CHROMIUM_ARGS, SCREENSHOTS, WAIT_MS

pytestmark = pytest.mark.slow

TOOLS = ("execute_tool lookup", "execute_tool get_weather")
OURS = ("schemawire.", "gen_ai.")


@dataclass
class InPhoenix:
    """What was sent (the spans our exporter builds from the trace files), what the export
    command reported, and what Phoenix stored."""

    sent: list[ReadableSpan]
    report: dict[str, Any]
    stored: list[dict[str, Any]]

    @property
    def run(self) -> ReadableSpan:
        (run,) = [s for s in self.sent if (s.attributes or {})["schemawire.span.kind"] == "run"]
        return run


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Phoenix]:
    if not phoenix_serve.SERVE.exists():  # fails, never skips: make test installs it
        pytest.fail(
            "Arize Phoenix is not installed: make tests/.work/phoenix-venv/.installed",
            pytrace=False,
        )
    with phoenix_serve.running(tmp_path_factory.mktemp("phoenix")) as running:
        yield running


def population(city: str) -> dict[str, Any]:
    return {"city": city, "population": 709_000}


def run_host(client: Path, served: Path) -> None:
    """A refused call (city is a number), an MCP tool call, a call that runs, an answer."""
    model = ScriptedModel(
        "openai.chat",
        [
            calls("lookup", {"city": 5}, "c1"),
            calls("get_weather", {"city": "Oslo"}, "c2"),
            calls("lookup", {"city": "Oslo"}, "c3"),
            says("Oslo: 709,000 people."),
        ],
    )
    lookup = PythonTool(ToolSpec("lookup", tool_schema("lookup")), population)
    server = StdioServer(sys.executable, serve(served))
    with Trace(run_id="phoenix-run", path=client) as trace:
        host = Host(model, tools=[lookup], mcp=[server], trace=trace)
        assert host.run_sync("How many people live in Oslo, and what is its weather?").stopped == (
            "answer"
        )


def built(path: Path) -> list[ReadableSpan]:
    """The spans `trace export` sends for one file, built by the same exporter in memory."""
    memory = InMemorySpanExporter()
    with OtlpExport(processor=SimpleSpanProcessor(memory), content=True) as export:
        export.hops(read_trace(path, whole=False))
    return list(memory.get_finished_spans())


def export_command(paths: list[Path], url: str) -> dict[str, Any]:
    env = {**os.environ, "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_ONLY"}
    command = [sys.executable, "-m", "schemawire", "trace", "export", *map(str, paths)]
    done = subprocess.run(
        [*command, "--otlp", url, "--json"],
        env=env,
        capture_output=True,
        timeout=60,
        text=True,
        check=False,  # the exit code is asserted, with stderr shown
    )
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report


@pytest.fixture(scope="module")
def exported(phoenix: Phoenix, tmp_path_factory: pytest.TempPathFactory) -> InPhoenix:
    folder = tmp_path_factory.mktemp("run")
    paths = [folder / "client.jsonl", folder / "server.jsonl"]
    run_host(*paths)
    sent = [span for path in paths for span in built(path)]
    report = export_command(paths, phoenix.traces_url)
    stored = phoenix.wait_for_spans({trace_id(s) for s in sent}, len(sent))
    return InPhoenix(sent, report, stored)


def trace_id(span: ReadableSpan) -> str:
    return f"{span.get_span_context().trace_id:032x}"


def span_id(span: ReadableSpan) -> str:
    return f"{span.get_span_context().span_id:016x}"


def parent_id(span: ReadableSpan) -> str | None:
    return f"{span.parent.span_id:016x}" if span.parent else None


def plain(value: Any) -> Any:
    """An attribute value as JSON has it (arrays are tuples on SDK spans)."""
    return list(value) if isinstance(value, tuple) else value


def test_phoenix_rejects_no_span_and_keeps_the_runs_tree_and_our_attributes(
    exported: InPhoenix,
) -> None:
    assert set(exported.report["rejected"].values()) == {0}
    assert sum(exported.report["spans"].values()) == len(exported.sent)
    stored = {s["context"]["span_id"]: s for s in exported.stored}
    tree = {span_id(s): (s.name, parent_id(s)) for s in exported.sent}
    assert {key: (s["name"], s["parent_id"]) for key, s in stored.items()} == tree
    (sent, answered) = sorted(
        (s for s in exported.stored if s["name"] == "tools/call get_weather"),
        key=lambda s: s["attributes"]["schemawire.mcp.served"],
    )
    assert answered["parent_id"] == sent["context"]["span_id"]  # across the stdio pipe
    for span in exported.sent:
        ours = {k: plain(v) for k, v in (span.attributes or {}).items() if k.startswith(OURS)}
        kept = stored[span_id(span)]["attributes"]
        assert {k: kept.get(k) for k in ours} == ours, span.name
        assert [e["name"] for e in stored[span_id(span)]["events"]] == [e.name for e in span.events]


def test_phoenix_reads_the_runs_spans_as_agent_llm_and_tool_spans(exported: InPhoenix) -> None:
    kinds = {s["name"]: s["span_kind"] for s in exported.stored}
    assert kinds[exported.run.name] == "AGENT"
    assert kinds["chat scripted"] == "LLM"
    assert {kinds[name] for name in TOOLS} == {"TOOL"}
    (refused,) = [
        s
        for s in exported.stored
        if s["attributes"].get("gen_ai.tool.call.id") == "c1" and s["name"] == TOOLS[0]
    ]
    (verdict,) = refused["events"]
    assert verdict["attributes"]["schemawire.violation.pointers"] == ["/city"]
    assert refused["status_code"] == "ERROR"


@pytest.fixture
def page(phoenix: Phoenix) -> Iterator[Any]:
    """A chromium page (Debian's, as tests/ui does) that reaches only 127.0.0.1: any other
    request is aborted and fails the test."""
    from playwright.sync_api import sync_playwright

    elsewhere: list[str] = []

    def route(route: Any) -> None:
        if urlsplit(route.request.url).hostname == "127.0.0.1":
            route.continue_()
        else:
            elsewhere.append(route.request.url)
            route.abort()

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
        )
        context = browser.new_context(viewport={"width": 1440, "height": 1000})
        context.set_default_timeout(WAIT_MS * 3)  # Phoenix's first page load compiles queries
        context.route("**/*", route)
        yield context.new_page()
        browser.close()
    assert elsewhere == [], "the Phoenix page asked another host"


def test_phoenix_shows_the_runs_span_tree(phoenix: Phoenix, exported: InPhoenix, page: Any) -> None:
    """The trace opened at the refused call (Phoenix's own link to a span by its OTel id):
    the tree on the left, the span's gate verdict on the right."""
    (refused,) = [
        s for s in exported.sent if (s.attributes or {}).get("error.type") == "arguments_invalid"
    ]
    page.goto(f"{phoenix.base}/redirects/spans/{span_id(refused)}")
    page.wait_for_url(f"**/{trace_id(exported.run)}?selectedSpanNodeId=*")
    for name in (exported.run.name, *TOOLS, "tools/call get_weather"):
        page.get_by_text(name, exact=True).first.wait_for(state="visible")
    page.get_by_role("tab", name="Attributes").click()
    verdict = page.get_by_role("tabpanel").get_by_text("schemawire.gate.arguments.outcome")
    verdict.first.wait_for(state="visible")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "phoenix-run-tree.png"))
