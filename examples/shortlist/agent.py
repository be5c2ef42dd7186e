"""A host over a 1,000-tool catalogue that sends the model only 5 of them.

The user asks for two things: a restaurant table and the weather. The host's pre-selection
ranks the catalogue for the request and sends the 5 best tools (all about booking tables) and
``search_tools``. The model (scripted: ``script.json``, Chat Completions responses) books the
table and searches for a weather tool; the next request carries the one tool it found. Its
first call of that tool breaks the tool's schema (30 days, the most is 14) and is refused by
the argument gate like any call; the second runs.

    python examples/shortlist/agent.py                # what each request carried, the shortlists
    python examples/shortlist/agent.py --json         # the same as JSON
    python examples/shortlist/agent.py --trace run.jsonl

Offline, in about a second; with a real model (``--model openai:gpt-4.1-mini``) the same host
runs the same way, but what the model does is its own.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from catalogue import catalogue_tools

from schemawire.host import Host, HostOptions, RunResult
from schemawire.trace import Trace

HERE = Path(__file__).parent
QUESTION = (
    "Book a table for two at an Italian restaurant in Lisbon tonight at 20:00, "
    "and tell me if I need an umbrella."
)
K = 5


def run(model: str, trace_path: Path) -> dict[str, Any]:
    """Run the host once; what it sent and decided, as JSON."""
    calls: list[tuple[str, dict[str, Any]]] = []
    trace = Trace(path=trace_path)
    with trace:
        host = Host(model, catalogue_tools(calls), options=HostOptions(shortlist=K), trace=trace)
        result = host.run_sync(QUESTION)
    return _report(host, result, calls, trace_path)


def _report(
    host: Host, result: RunResult, ran: list[tuple[str, dict[str, Any]]], path: Path
) -> dict[str, Any]:
    api = host.model.api
    sent = [
        hop.payload for hop in host.trace.hops if (hop.protocol, hop.direction) == (api, "send")
    ]
    requests: list[dict[str, Any]] = []
    for body in sent:
        unchanged = body["tools"] == "unchanged"  # the trace's word for "as the last request"
        tools = requests[-1]["tools"] if unchanged else [_name(t) for t in body["tools"]]
        requests.append({"tools": tools, "unchanged": unchanged})
    shortlists = [
        {
            "by": hop.source,
            "query": hop.payload["query"],
            "tools": [t["name"] for t in hop.payload["tools"]],
        }
        for hop in host.trace.hops
        if hop.protocol == "shortlist"
    ]
    return {
        "catalogue": len(host.tools) - 1,  # search_tools is the host's own
        "k": K,
        "requests": requests,
        "shortlists": shortlists,
        "calls": [_call(record) for record in result.calls],
        "ran": [name for name, _ in ran],
        "answer": result.answer,
        "trace": str(path),
    }


def _name(tool: dict[str, Any]) -> str:
    """A tool's name in a request body (Chat Completions nests it in ``function``)."""
    return str(tool.get("name") or tool.get("function", {}).get("name") or tool.get("type"))


def _call(record: Any) -> dict[str, Any]:
    verdict = record.argument_verdict
    code = verdict.rejection.code if verdict.rejection is not None else None
    return {"tool": record.call.name, "accepted": verdict.accepted, "code": code}


def _print(report: dict[str, Any]) -> None:
    print(f"catalogue: {report['catalogue']} tools; the model is sent the best {report['k']}")
    for shortlist in report["shortlists"]:
        query = json.dumps(shortlist["query"], ensure_ascii=False)
        print(f"  {shortlist['by']}: {query} -> {', '.join(shortlist['tools'])}")
    for number, request in enumerate(report["requests"], start=1):
        same = " (byte for byte as before)" if request["unchanged"] else ""
        print(
            f"request {number}: {len(request['tools'])} tools{same}: {', '.join(request['tools'])}"
        )
    for call in report["calls"]:
        outcome = "accepted" if call["accepted"] else f"refused ({call['code']})"
        print(f"  call {call['tool']}: {outcome}")
    print(f"answer: {report['answer']}")
    print(f"trace: {report['trace']}")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=f"script:{HERE / 'script.json'}")
    parser.add_argument("--trace", type=Path, default=None)
    parser.add_argument("--json", action="store_true")
    arguments = parser.parse_args(argv)
    path = arguments.trace or Path(tempfile.mkdtemp()) / "shortlist.jsonl"
    report = run(arguments.model, path)
    if arguments.json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        _print(report)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
