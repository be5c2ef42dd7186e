"""OpenTelemetry live export: what it adds per hop to a run's recording.

A Host run with a scripted model and a Python tool (a refused call, a call, an answer) is
recorded once; its hops are fed, many runs' worth with fresh span ids, to the exporter a live
export attaches (`schemawire.otel.OtlpExport.hop`: hops to spans, then the SDK's
`BatchSpanProcessor`), against the same recording without export. The exporter behind the
batch processor is a no-op (`_Nowhere`): the network is the collector's cost, paid on the
processor's own thread, not on the run's.
"""

from __future__ import annotations

import dataclasses
import json
import statistics
import time
from collections.abc import Sequence
from typing import Any

from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

from schemawire import Host, PythonTool, ScriptedModel, ToolSpec, Trace
from schemawire.otel import OtlpExport
from schemawire.types import Hop

RUNS_PER_ROUND = 200
SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
    "additionalProperties": False,
}


class _Nowhere(SpanExporter):
    def export(self, spans: Sequence[Any]) -> SpanExportResult:
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        pass


def _call(call_id: str, city: Any) -> dict[str, Any]:
    call = {
        "id": call_id,
        "type": "function",
        "function": {"name": "lookup", "arguments": json.dumps({"city": city})},
    }
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    return {"choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}]}


def recorded_run() -> list[Hop]:
    """The hops of one run."""
    answer = {
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}
        ]
    }
    model = ScriptedModel("openai.chat", [_call("c1", 5), _call("c2", "Oslo"), answer])
    tool = PythonTool(ToolSpec("lookup", SCHEMA), lambda city: {"city": city, "temp": 3})
    trace = Trace(run_id="bench")
    Host(model, tools=[tool], trace=trace).run_sync("Weather in Oslo?")
    return trace.hops


def _renumbered(hops: list[Hop], copy: int) -> list[Hop]:
    """The run again with span ids of its own (so each copy's spans are distinct)."""

    def span_id(value: str | None) -> str | None:
        return None if value is None else f"{int(value, 16) ^ (copy + 1):016x}"

    out = []
    for hop in hops:
        payload = hop.payload
        if hop.protocol == "span" and isinstance(payload, dict) and "parent" in payload:
            payload = {**payload, "parent": span_id(payload["parent"])}
        out.append(dataclasses.replace(hop, span=span_id(hop.span), payload=payload))
    return out


@dataclasses.dataclass(frozen=True)
class _Cost:
    """One round's seconds per hop: on the clock, and of CPU in the whole process (the batch
    processor's thread included, so work moved off the recording thread still counts)."""

    wall: float
    cpu: float


def _cost_per_hop(hops: list[Hop], export: bool) -> _Cost:
    """Record ``hops`` into a fresh trace, with live export or without; the flush at the end
    is inside the timed part."""
    exporter = OtlpExport(processor=BatchSpanProcessor(_Nowhere())) if export else None
    trace = Trace(run_id="bench", redact=False, on_hop=exporter.hop if exporter else None)
    wall, cpu = time.perf_counter(), time.process_time()
    for hop in hops:
        trace.record(
            hop.source,
            hop.target,
            hop.protocol,
            hop.direction,
            hop.payload,
            verdict=hop.verdict,
            span=hop.span,
        )
    if exporter is not None:
        exporter.close()
    return _Cost((time.perf_counter() - wall) / len(hops), (time.process_time() - cpu) / len(hops))


def run(rounds: int = 5) -> dict[str, Any]:
    """Median seconds per hop recorded (wall and CPU), without and with live export, the two
    interleaved round by round so that the machine's noise falls on both."""
    one = recorded_run()
    hops = [hop for copy in range(RUNS_PER_ROUND) for hop in _renumbered(one, copy)]
    without: list[_Cost] = []
    with_export: list[_Cost] = []
    for _ in range(max(rounds, 5)):
        without.append(_cost_per_hop(hops, export=False))
        with_export.append(_cost_per_hop(hops, export=True))
    return {
        "hops_per_run": len(one),
        "hops_per_round": len(hops),
        "rounds": len(without),
        "without": statistics.median(c.wall for c in without),
        "with": statistics.median(c.wall for c in with_export),
        "cpu_without": statistics.median(c.cpu for c in without),
        "cpu_with": statistics.median(c.cpu for c in with_export),
    }


def print_table(result: dict[str, Any]) -> None:
    print(
        f"OTel live export ({result['hops_per_round']} hops a round, "
        f"{result['hops_per_run']} a run, {result['rounds']} rounds; "
        "BatchSpanProcessor, no-op exporter behind it; flush timed)"
    )
    print("                          wall µs/hop   CPU µs/hop (all threads)")
    for label, wall, cpu in (
        ("recording, no export", result["without"], result["cpu_without"]),
        ("recording, live export", result["with"], result["cpu_with"]),
        (
            "added by export",
            result["with"] - result["without"],
            result["cpu_with"] - result["cpu_without"],
        ),
    ):
        print(f"  {label:<22} {wall * 1e6:11.2f}   {cpu * 1e6:11.2f}")
    added = (result["with"] - result["without"]) * 1e6
    print(f"  goal: added ≤ 20 µs/hop on the clock: {'met' if added <= 20 else 'NOT met'}")


if __name__ == "__main__":
    print_table(run())
