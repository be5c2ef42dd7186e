"""A new user's first hour, as one test, through the command line only: a blank repository, two
tools written by hand (with the usual mistakes on the way), check, serve, call good and bad, a
run with a scripted model, and the errors read back from what was printed and traced."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from schemawire.trace import read_trace

SCHEMAWIRE = str(Path(sys.executable).with_name("schemawire"))

LOOKUP_ORDER = """{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "$id": "https://example.com/schemas/tools/lookup_order.json",
  "x-version": "1.0.0",
  "description": "Look an order up by its id.",
  "type": "object",
  "properties": {
    "order_id": {"type": "string", "pattern": "^A-[0-9]{4}$", "description": "Like A-1042."}
  },
  "required": ["order_id"],
  "additionalProperties": false,
}
"""

CREATE_REFUND = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://example.com/schemas/tools/create_refund.json",
    "x-version": "1.0.0",
    "description": "Refund part of an order. Writes to billing: call it once per refund.",
    "type": "object",
    "properties": {
        "order_id": {"type": "string", "pattern": "^A-[0-9]{4}$", "description": "The order."},
        "amount": {"type": "number", "exclusiveMinimum": 0, "description": "How much."},
        "reason": {"enum": ["late", "damaged", "duplicate"], "description": "Why."},
    },
    "required": ["order_id", "amount", "reason"],
    "additionalProperties": False,
}
REFUND_OUTPUT = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://example.com/schemas/tools/create_refund.output.json",
    "x-version": "1.0.0",
    "type": "object",
    "properties": {"refund_id": {"type": "string"}, "status": {"enum": ["pending", "done"]}},
    "required": ["refund_id", "status"],
    "additionalProperties": False,
}
# The first draft of the functions: lookup_order's parameter is not the schema's property.
IMPLEMENTATIONS = """
ORDERS = {"A-1042": {"order_id": "A-1042", "total": 20.0, "status": "delivered"}}


def lookup_order(id: str) -> dict:
    return ORDERS.get(id, {"order_id": id, "status": "unknown"})


def create_refund(order_id: str, amount: float, reason: str) -> dict:
    return {"refund_id": "R-1", "status": "pending"}
"""
SERVE_TOOLS = """lookup_order = "implementations:lookup_order"
create_refund = "implementations:create_refund"
"""


def schemawire(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [SCHEMAWIRE, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "PATH": f"{Path(SCHEMAWIRE).parent}{os.pathsep}{os.environ['PATH']}"},
    )


def rule_ids(output: str) -> list[str]:
    return [word for line in output.splitlines() for word in line.split() if word[:2] == "SW"]


def call(tool: str, arguments: Any, cwd: Path) -> tuple[int, dict[str, Any]]:
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    done = schemawire("call", tool, text, "--json", "--", "schemawire", "serve", ".", cwd=cwd)
    return done.returncode, json.loads(done.stdout)


def chat(*turns: tuple[str, Any] | str) -> dict[str, Any]:
    """A script of Chat Completions responses: a call ``(tool, arguments)``, or a final text."""
    responses = []
    for number, turn in enumerate(turns, 1):
        if isinstance(turn, str):
            message: dict[str, Any] = {"role": "assistant", "content": turn}
            responses.append({"choices": [{"index": 0, "message": message}]})
            continue
        function = {"name": turn[0], "arguments": json.dumps(turn[1])}
        tool_call = {"id": f"call_{number}", "type": "function", "function": function}
        message = {"role": "assistant", "content": None, "tool_calls": [tool_call]}
        responses.append({"choices": [{"index": 0, "message": message}]})
    return {"api": "openai.chat", "responses": responses}


@pytest.mark.slow
def test_a_new_users_first_hour(tmp_path: Path) -> None:
    # A blank repository: nothing to delete, and check says what to write first.
    assert schemawire("init", "--blank", "agent", cwd=tmp_path).returncode == 0
    root = tmp_path / "agent"
    empty = schemawire("check", cwd=root)
    assert empty.returncode == 2
    assert "schemas/tools/NAME.json" in empty.stderr

    # The first tool, with a trailing comma: one finding, at its line and column.
    (root / "schemas/tools/lookup_order.json").write_text(LOOKUP_ORDER, encoding="utf-8")
    comma = schemawire("check", cwd=root)
    assert comma.returncode == 1
    assert "schemas/tools/lookup_order.json:11:32: SW001" in comma.stdout
    assert rule_ids(comma.stdout).count("SW001") == 1
    fixed = LOOKUP_ORDER.replace('"additionalProperties": false,', '"additionalProperties": false')
    (root / "schemas/tools/lookup_order.json").write_text(fixed, encoding="utf-8")

    # The second tool and both functions: a parameter that is not the schema's is a finding.
    (root / "schemas/tools/create_refund.json").write_text(json.dumps(CREATE_REFUND))
    (root / "schemas/tools/create_refund.output.json").write_text(json.dumps(REFUND_OUTPUT))
    implementations = root / "implementations.py"
    implementations.write_text(implementations.read_text() + IMPLEMENTATIONS)
    settings = root / "schemawire.toml"
    settings.write_text(settings.read_text() + SERVE_TOOLS)
    mismatch = schemawire("check", "--json", cwd=root)
    assert mismatch.returncode == 1
    findings = json.loads(mismatch.stdout)["findings"]
    assert {f["rule"] for f in findings if f["severity"] == "error"} == {"SW504"}
    implementations.write_text(
        implementations.read_text()
        .replace("def lookup_order(id: str)", "def lookup_order(order_id: str)")
        .replace('ORDERS.get(id, {"order_id": id,', 'ORDERS.get(order_id, {"order_id": order_id,')
    )

    # Fixtures that pass and fail, and the check is green.
    fixtures = {
        "tools/lookup_order/valid/known.json": {"order_id": "A-1042"},
        "tools/lookup_order/invalid/no_prefix.json": {"order_id": "1042"},
        "tools/create_refund/valid/late.json": {
            "order_id": "A-1042",
            "amount": 5,
            "reason": "late",
        },
        "tools/create_refund/invalid/negative.json": {
            "order_id": "A-1042",
            "amount": -5,
            "reason": "late",
        },
    }
    for relative, value in fixtures.items():
        path = root / "fixtures" / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value))
    green = schemawire("check", "--json", cwd=root)
    assert green.returncode == 0, green.stdout
    assert json.loads(green.stdout)["fixtures"]["passed"] == 4

    # Served over MCP: a good call, and a bad one that never reaches the function.
    code, good = call("lookup_order", {"order_id": "A-1042"}, root)
    assert (code, good["output"]["structuredContent"]["status"]) == (0, "delivered")
    code, bad = call("create_refund", {"order_id": "A-1042", "amount": -5, "reason": "late"}, root)
    assert (code, bad["sent"]) == (1, False)
    error = bad["output"]["content"]["error"]
    assert (error["code"], error["violations"][0]["pointer"]) == ("arguments_invalid", "/amount")
    code, cut = call("create_refund", '{"order_id": "A-1042", "amount": 5', root)
    assert (code, cut["output"]["content"]["error"]["code"]) == (1, "arguments_malformed")

    # A scripted model: a string amount refused, corrected, answered.
    script = chat(
        ("create_refund", {"order_id": "A-1042", "amount": "5", "reason": "late"}),
        ("create_refund", {"order_id": "A-1042", "amount": 5, "reason": "late"}),
        "Refund R-1 is pending.",
    )
    (root / "script.json").write_text(json.dumps(script))
    ran = schemawire(
        "run", "-m", "script:script.json", "--repo", ".", "Refund 5 on A-1042.", cwd=root
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "answer: Refund R-1 is pending." in ran.stdout
    (trace_line,) = [line for line in ran.stdout.splitlines() if line.startswith("trace: ")]

    # The errors, read back from the trace: the refusal, then the call that ran.
    hops = list(read_trace(root / trace_line.removeprefix("trace: ")))
    verdicts = [hop.verdict for hop in hops if hop.verdict and hop.verdict["gate"] == "arguments"]
    refused, accepted = verdicts
    assert refused["rejection"]["code"] == "arguments_invalid"
    assert refused["rejection"]["violations"][0]["pointer"] == "/amount"
    assert accepted["accepted"]
    assert {hop.run_id for hop in hops} == {trace_line.rsplit("/", 1)[1].removesuffix(".jsonl")}

    # A function that returns the wrong shape: its result gate's error reaches the caller whole.
    implementations.write_text(
        implementations.read_text().replace(
            'return {"refund_id": "R-1", "status": "pending"}', 'return {"status": "ok"}'
        )
    )
    code, wrong = call("create_refund", {"order_id": "A-1042", "amount": 5, "reason": "late"}, root)
    error = wrong["output"]["content"]["error"]
    assert (code, error["code"], error["version"]) == (1, "result_invalid", "1.0.0")
    assert error["schema"] == REFUND_OUTPUT["$id"]
    assert [v["pointer"] for v in error["violations"]] == ["/refund_id", "/status"]

    # The eval the blank repository came with still runs, offline.
    assert schemawire("eval", cwd=root).returncode == 0
