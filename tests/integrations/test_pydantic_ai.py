"""The Pydantic AI integration against the real framework, with its own test model
(`FunctionModel`, scripted per test): no network."""

from __future__ import annotations

import asyncio
import json
import re
import sys
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from pydantic_ai import Agent
from pydantic_ai.exceptions import UnexpectedModelBehavior
from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from schemawire.integrations.pydantic_ai import SchemawireToolset
from schemawire.mcp import McpClient, StdioServer
from schemawire.schema.repository import Repository
from schemawire.trace import Trace, read_trace, span_tree

ROOT = Path(__file__).resolve().parents[2]
SUPPORT_DESK = ROOT / "examples" / "support-desk"
DOCS = ROOT / "docs" / "integrations" / "pydantic-ai.md"
SECRET = json.loads((ROOT / "tests/data/secrets.json").read_text(encoding="utf-8"))["secrets"][0]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def close_run_sync_loop() -> Iterator[None]:
    """`Agent.run_sync` leaves its event loop set, open, for the next call; close it after
    each test (an open loop is a ResourceWarning, an error here)."""
    yield
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            loop = asyncio.get_event_loop()
        except RuntimeError:  # none set: an async test's loop, which anyio closed
            return
    loop.close()
    asyncio.set_event_loop(None)


def calls(tool: str, arguments: dict[str, Any]) -> ModelResponse:
    return ModelResponse(parts=[ToolCallPart(tool, arguments)])


def answers(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """The final turn: says what the last tool returned."""
    return ModelResponse(
        parts=[TextPart(f"tool said: {last_return(messages).model_response_str()}")]
    )


def last_return(messages: list[ModelMessage]) -> ToolReturnPart:
    parts = [p for p in messages[-1].parts if isinstance(p, ToolReturnPart)]
    assert parts, messages[-1]
    return parts[-1]


def scripted(*turns: ModelResponse) -> tuple[FunctionModel, list[list[ModelMessage]]]:
    """A model that answers its requests with ``turns`` in order, then with `answers`; and
    the requests it was sent."""
    requests: list[list[ModelMessage]] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        requests.append(list(messages))
        at = len(requests) - 1
        return turns[at] if at < len(turns) else answers(messages, info)

    return FunctionModel(model), requests


class Weather:
    """get_weather's implementation, remembering every call it was given."""

    def __init__(self, answer: Any = None) -> None:
        self.calls: list[dict[str, Any]] = []
        self.answer = answer

    def __call__(self, **arguments: Any) -> Any:
        self.calls.append(arguments)
        if self.answer is not None:
            return self.answer
        return {"city": arguments["city"], "temp_c": 11.5, "condition": "cloudy"}


def toolset(weather: Weather, **options: Any) -> SchemawireToolset:
    return SchemawireToolset(SUPPORT_DESK, {"get_weather": weather}, **options)


def test_the_tool_carries_the_canonical_schema_with_its_references_resolved() -> None:
    refunds = SchemawireToolset(SUPPORT_DESK, {"create_refund": lambda **_: {}})
    (definition,) = (tool.tool_def for tool in refunds._tools.values())
    schema = definition.parameters_json_schema
    assert definition.name == "create_refund"
    assert "$ref" not in json.dumps(schema)  # self-contained: order.json inlined
    assert schema["properties"]["amount"]["exclusiveMinimum"] == 0
    assert schema["required"] == ["order_id", "amount", "reason"]
    assert definition.strict is False


def test_a_good_call_runs_the_function_with_the_accepted_arguments() -> None:
    weather = Weather()
    model, requests = scripted(calls("get_weather", {"city": "Paris", "unit": "fahrenheit"}))
    result = Agent(model, toolsets=[toolset(weather)]).run_sync("Weather in Paris?")
    assert weather.calls == [{"city": "Paris", "unit": "fahrenheit"}]
    assert json.loads(last_return(requests[1]).model_response_str())["temp_c"] == 11.5
    assert result.output.startswith("tool said: ")


def test_a_bad_call_never_runs_and_the_model_reads_our_violations_then_corrects_itself() -> None:
    weather = Weather()
    model, requests = scripted(
        calls("get_weather", {"city": "Paris", "unit": "kelvin"}),
        calls("get_weather", {"city": "Paris"}),
    )
    result = Agent(model, toolsets=[toolset(weather)]).run_sync("Weather in Paris?")
    refusal = last_return(requests[1])
    assert refusal.outcome == "retried"  # Pydantic AI's retry prompt, not a result
    error = json.loads(refusal.content)["error"]
    assert error["code"] == "arguments_invalid"
    assert [v["pointer"] for v in error["violations"]] == ["/unit"]
    assert weather.calls == [{"city": "Paris"}]  # only the corrected call ran
    assert '"temp_c":11.5' in result.output


def test_arguments_that_are_not_an_object_are_refused_by_our_gate_not_pydantic_ai() -> None:
    weather = Weather()
    bad = ModelResponse(parts=[ToolCallPart("get_weather", '["Paris"]')])
    model, requests = scripted(bad, calls("get_weather", {"city": "Paris"}))
    Agent(model, toolsets=[toolset(weather)]).run_sync("Weather in Paris?")
    error = json.loads(last_return(requests[1]).content)["error"]
    assert error["code"] == "arguments_invalid"
    assert weather.calls == [{"city": "Paris"}]


def test_pydantic_ais_retry_limit_still_applies() -> None:
    weather = Weather()
    kelvin = calls("get_weather", {"city": "Paris", "unit": "kelvin"})
    model, requests = scripted(kelvin, kelvin, kelvin, kelvin)
    agent = Agent(model, toolsets=[toolset(weather, max_retries=2)])
    with pytest.raises(UnexpectedModelBehavior, match="exceeded max retries count of 2"):
        agent.run_sync("Weather in Paris?")
    assert len(requests) == 3  # the first call and two retries
    assert weather.calls == []


def test_a_leaked_secret_is_redacted_in_what_the_model_reads_and_in_the_trace() -> None:
    leaky = Weather({"city": "Paris", "temp_c": 11.5, "condition": SECRET["text"]})
    trace = Trace()
    model, requests = scripted(calls("get_weather", {"city": "Paris"}))
    Agent(model, toolsets=[toolset(leaky, trace=trace)]).run_sync("Weather in Paris?")
    read = last_return(requests[1]).model_response_str()
    assert SECRET["secret"] not in read
    assert "Paris" in read
    assert SECRET["secret"] not in json.dumps([hop.to_json() for hop in trace.hops])


def test_a_result_that_breaks_the_output_schema_is_caught_by_the_result_gate() -> None:
    wrong = Weather({"city": "Paris", "temp_c": "warm", "condition": "cloudy"})
    model, requests = scripted(calls("get_weather", {"city": "Paris"}))
    Agent(model, toolsets=[toolset(wrong)]).run_sync("Weather in Paris?")
    assert wrong.calls == [{"city": "Paris"}]
    read = last_return(requests[1]).model_response_str()
    error = json.loads(read)["error"]
    assert error["code"] == "result_invalid"
    assert "/temp_c" in [v["pointer"] for v in error["violations"]]


def test_the_trace_file_holds_a_run_span_with_each_tool_call_in_it(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    model, _ = scripted(
        calls("get_weather", {"city": "Paris", "unit": "kelvin"}),
        calls("get_weather", {"city": "Paris"}),
    )
    with Trace("pai-1", path=path) as trace:
        Agent(model, toolsets=[toolset(Weather(), trace=trace)]).run_sync("Weather in Paris?")
    (run,) = span_tree(read_trace(path)).roots
    assert (run.kind, run.name, run.status) == ("run", "function:model:", "ok")
    assert [(s.kind, s.name, s.status) for s in run.children] == [
        ("tool", "get_weather", "refused"),
        ("tool", "get_weather", "ok"),
    ]


def test_two_runs_of_one_agent_are_two_run_spans() -> None:
    trace = Trace()
    model, _ = scripted(
        calls("get_weather", {"city": "Paris"}),
        ModelResponse(parts=[TextPart("11.5 in Paris")]),
        ModelResponse(parts=[TextPart("still 11.5")]),
    )
    agent = Agent(model, toolsets=[toolset(Weather(), trace=trace)])
    agent.run_sync("Weather in Paris?")
    agent.run_sync("And now?")
    runs = span_tree(trace.hops).roots
    assert [run.kind for run in runs] == ["run", "run"]
    assert [len(run.children) for run in runs] == [1, 0]


def plain_get_weather(seen: list[dict[str, Any]]) -> Callable[..., dict[str, Any]]:
    def get_weather(city: str, unit: str = "celsius") -> dict[str, Any]:
        """The current weather in a city."""
        seen.append({"city": city, "unit": unit})
        return {"city": city, "temp_c": 11.5, "condition": "cloudy"}

    return get_weather


def test_show_the_same_conversation_without_and_with_schemawire() -> None:
    conversation = (
        calls("get_weather", {"city": "Paris", "unit": "kelvin"}),
        calls("get_weather", {"city": "Paris"}),
    )
    # Without: a plain Pydantic AI tool, `unit: str`: the invalid unit reaches the function.
    seen: list[dict[str, Any]] = []
    model, _ = scripted(*conversation)
    Agent(model, tools=[plain_get_weather(seen)]).run_sync("Weather in Paris?")
    assert seen[0] == {"city": "Paris", "unit": "kelvin"}
    # With: the same conversation; the function never sees kelvin, the model corrects itself.
    weather = Weather()
    model, requests = scripted(*conversation)
    result = Agent(model, toolsets=[toolset(weather)]).run_sync("Weather in Paris?")
    assert weather.calls == [{"city": "Paris"}]
    assert "/unit" in last_return(requests[1]).model_response_str()
    assert "temp_c" in result.output


def test_the_quick_start_runs_as_written(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (code,) = re.findall(r"```python\n(.*?)```", DOCS.read_text(encoding="utf-8"), re.DOTALL)[:1]
    assert len([line for line in code.splitlines() if line.strip()]) <= 10
    monkeypatch.chdir(ROOT)
    namespace: dict[str, Any] = {}
    exec(compile(code, str(DOCS.name), "exec"), namespace)
    assert isinstance(namespace["toolset"], SchemawireToolset)
    assert json.loads(capsys.readouterr().out)["error"]["violations"][0]["pointer"] == "/unit"


@pytest.mark.slow
@pytest.mark.anyio
async def test_an_mcp_servers_tool_through_pydantic_ai_is_gated_both_ways(tmp_path: Path) -> None:
    path = tmp_path / "mcp.jsonl"
    model, requests = scripted(
        calls("create_refund", {"order_id": "A-1042", "amount": 0, "reason": "late"}),
        calls("create_refund", {"order_id": "A-1042", "amount": 12.5, "reason": "late"}),
    )
    server = StdioServer(sys.executable, ("-m", "schemawire", "serve", str(SUPPORT_DESK)))
    with Trace("pai-mcp", path=path) as trace:
        client = McpClient(server, repository=Repository.load(SUPPORT_DESK), trace=trace)
        tools = SchemawireToolset(SUPPORT_DESK, {}, mcp=client, trace=trace)
        with anyio.fail_after(60):
            result = await Agent(model, toolsets=[tools]).run("Refund A-1042, it came late.")
    error = json.loads(last_return(requests[1]).content)["error"]
    assert [v["pointer"] for v in error["violations"]] == ["/amount"]
    refund = json.loads(last_return(requests[2]).model_response_str())
    assert refund["status"] == "pending"
    assert refund["amount"] == 12.5
    assert "pending" in result.output
    hops = read_trace(path)
    sent = [h.payload for h in hops if h.protocol == "mcp" and h.direction == "send"]
    calls_sent = [p for p in sent if isinstance(p, dict) and p.get("method") == "tools/call"]
    assert len(calls_sent) == 1  # the refused call never reached the server
    assert not client.connected  # the toolset connected it, and closed it after the run
