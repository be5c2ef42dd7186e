"""Spans exported to a real OTLP/HTTP receiver (tests/otel/receiver.py): from a live `Host`
run and from its trace file (`schemawire trace export`), the same spans; zero rejected, the
run's tree right, every attribute name in the pinned semantic conventions or ``schemawire.*``,
no content without opt-in, and no secret of the redaction corpus anywhere."""

from __future__ import annotations

import importlib
import json
import pkgutil
import urllib.request
from pathlib import Path
from typing import Any

import opentelemetry.semconv._incubating.attributes as incubating
import opentelemetry.semconv.attributes as stable
import pytest
from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse
from typer.testing import CliRunner

from schemawire import Host, PythonTool, ScriptedModel, ToolSpec, Trace
from schemawire.cli._app import app
from schemawire.otel import SCHEMA_URL, export_live
from tests.helpers import tool_schema
from tests.otel.receiver import Receiver

CORPUS = json.loads((Path(__file__).parents[1] / "data" / "secrets.json").read_text("utf-8"))
SECRETS = [case["secret"] for case in CORPUS["secrets"]]
LEAKS = "\n".join(case["text"] for case in CORPUS["secrets"])
CONTENT = (
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result",
    "gen_ai.system_instructions",
    "gen_ai.tool.definitions",
)


def registry() -> set[str]:
    """Every attribute name of the pinned opentelemetry-semantic-conventions package."""
    names: set[str] = set()
    for package in (incubating, stable):
        for module in pkgutil.iter_modules(package.__path__):
            loaded = importlib.import_module(f"{package.__name__}.{module.name}")
            names |= {v for k, v in vars(loaded).items() if k.isupper() and isinstance(v, str)}
    return names


def calls(name: str, arguments: dict[str, Any], call_id: str) -> dict[str, Any]:
    call = {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    return {
        "id": "r-" + call_id,
        "model": "scripted",
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 7},
    }


def says(text: str) -> dict[str, Any]:
    message = {"role": "assistant", "content": text}
    return {"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}


def leaky(city: str) -> dict[str, Any]:
    """A tool whose result carries every secret of the corpus."""
    return {"city": city, "note": LEAKS}


def run_host(trace: Trace) -> None:
    """A run: a refused call (city is a number), a call whose result leaks, an answer."""
    model = ScriptedModel(
        "openai.chat",
        [
            calls("lookup", {"city": 5}, "c1"),
            calls("lookup", {"city": "Oslo"}, "c2"),
            says("Done."),
        ],
    )
    tool = PythonTool(ToolSpec("lookup", tool_schema("lookup")), leaky)
    host = Host(model, tools=[tool], trace=trace)
    assert host.run_sync("Look up Oslo; " + LEAKS).stopped == "answer"


def exported(receiver: Receiver, tmp_path: Path) -> Path:
    path = tmp_path / "run.jsonl"
    trace = Trace(run_id="otel-run", path=path)
    export = export_live(trace, receiver.url)
    run_host(trace)
    assert export.close()
    trace.close()
    return path


def by_name(receiver: Receiver) -> dict[str, list[Any]]:
    spans: dict[str, list[Any]] = {}
    for span in receiver.spans:
        spans.setdefault(span.span.name, []).append(span)
    return spans


def test_a_live_run_is_exported_as_its_tree_with_known_attributes_and_no_content(
    receiver: Receiver, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", raising=False)
    exported(receiver, tmp_path)
    assert receiver.rejected == 0
    assert receiver.requests.get("application/x-protobuf")
    spans = by_name(receiver)
    (run,) = (
        spans["invoke_agent scripted"]
        if "invoke_agent scripted" in spans
        else [s for s in receiver.spans if s.span.name.startswith("invoke_agent")]
    )
    ids = {s.span_id: s for s in receiver.spans}
    assert run.parent_id == ""
    assert {s.trace_id for s in receiver.spans} == {run.trace_id}
    turns = [s for s in receiver.spans if s.attributes["schemawire.span.kind"] == "turn"]
    assert len(turns) == 3
    assert {t.parent_id for t in turns} == {run.span_id}
    tools = spans["execute_tool lookup"]
    models = [s for s in receiver.spans if s.span.name.startswith("chat ")]
    assert len(models) == 3
    assert all(ids[m.parent_id] in turns for m in models)
    assert all(ids[t.parent_id] in turns for t in tools)
    refused, ran = sorted(tools, key=lambda s: s.attributes["gen_ai.tool.call.id"])
    assert refused.attributes["error.type"] == "arguments_invalid"
    assert refused.attributes["schemawire.gate.arguments.outcome"] == "rejected"
    (event,) = refused.span.events
    assert [
        a.value.array_value.values[0].string_value
        for a in event.attributes
        if a.key == "schemawire.violation.pointers"
    ] == ["/city"]
    assert ran.attributes["schemawire.gate.arguments.outcome"] == "accepted"
    assert models[0].attributes["gen_ai.usage.input_tokens"] == 11
    names = {key for s in receiver.spans for key in s.attributes}
    names |= {a.key for s in receiver.spans for e in s.span.events for a in e.attributes}
    assert {n for n in names if not n.startswith("schemawire.")} - registry() == set()
    assert names & set(CONTENT) == set()
    assert {s.schema_url for s in receiver.spans} == {SCHEMA_URL}
    assert {s.service for s in receiver.spans} == {"schemawire"}
    sent = b"".join(s.span.SerializeToString() for s in receiver.spans).decode("utf-8", "replace")
    assert [secret[:24] for secret in SECRETS if secret in sent] == []


def test_content_is_exported_on_opt_in_and_it_is_redacted(
    receiver: Receiver, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "SPAN_ONLY")
    exported(receiver, tmp_path)
    assert receiver.rejected == 0
    names = {key for s in receiver.spans for key in s.attributes}
    assert {
        "gen_ai.input.messages",
        "gen_ai.output.messages",
        "gen_ai.tool.call.arguments",
        "gen_ai.tool.call.result",
    } <= names
    results = [
        s.attributes["gen_ai.tool.call.result"]
        for s in receiver.spans
        if "gen_ai.tool.call.result" in s.attributes
    ]
    assert any("Oslo" in result for result in results)
    sent = b"".join(s.span.SerializeToString() for s in receiver.spans).decode("utf-8", "replace")
    assert [secret[:24] for secret in SECRETS if secret in sent] == []


def test_trace_export_sends_the_same_spans_as_the_live_export(
    receiver: Receiver, tmp_path: Path
) -> None:
    path = exported(receiver, tmp_path)
    live = sorted((s.trace_id, s.span_id, s.parent_id, s.span.name) for s in receiver.spans)
    receiver.spans.clear()
    result = CliRunner().invoke(
        app, ["trace", "export", str(path), "--otlp", receiver.url, "--json"]
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["spans"] == {str(path): len(live)}
    assert report["rejected"] == {str(path): 0}
    offline = sorted((s.trace_id, s.span_id, s.parent_id, s.span.name) for s in receiver.spans)
    assert offline == live
    assert receiver.rejected == 0


def test_trace_export_reports_the_spans_the_collector_rejected_and_exits_1(
    receiver: Receiver, tmp_path: Path
) -> None:
    path = exported(receiver, tmp_path)
    sent = len(receiver.spans)
    receiver.spans.clear()
    receiver.refuse = {"turn 1", "turn 2"}
    result = CliRunner().invoke(
        app, ["trace", "export", str(path), "--otlp", receiver.url, "--json"]
    )
    assert result.exit_code == 1, result.output
    report = json.loads(result.stdout)
    assert report["spans"] == {str(path): sent}
    assert report["rejected"] == {str(path): 2}
    assert len(receiver.spans) == sent - 2


def test_trace_export_without_a_collector_says_what_to_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)
    result = CliRunner().invoke(app, ["trace", "export", str(tmp_path / "x.jsonl")])
    assert result.exit_code == 2
    assert "--otlp URL" in result.output


def test_the_receiver_takes_the_json_mapping_and_counts_rejected_spans(receiver: Receiver) -> None:
    request = {
        "resourceSpans": [
            {
                "scopeSpans": [
                    {
                        "spans": [
                            {
                                "traceId": "0af7651916cd43dd8448eb211c80319c",
                                "spanId": "b7ad6b7169203331",
                                "name": "ok",
                                "startTimeUnixNano": "1",
                                "endTimeUnixNano": "2",
                            },
                            {
                                "traceId": "00000000000000000000000000000000",
                                "spanId": "b7ad6b7169203331",
                                "name": "zero trace id",
                                "startTimeUnixNano": "1",
                                "endTimeUnixNano": "2",
                            },
                        ]
                    }
                ]
            }
        ]
    }
    body = json.dumps(request).encode()  # the OTLP JSON mapping: ids in hex
    sent = urllib.request.Request(
        receiver.url + "/v1/traces", body, {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(sent, timeout=10) as answer:
        response = json_format.Parse(answer.read(), ExportTraceServiceResponse())
    assert response.partial_success.rejected_spans == 1
    assert receiver.rejected == 1
    assert [s.span.name for s in receiver.spans] == ["ok"]
