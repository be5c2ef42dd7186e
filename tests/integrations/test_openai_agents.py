"""The OpenAI Agents SDK integration, driven by a scripted `agents.models.interface.Model`
that answers from recorded Responses output items and keeps every input it was sent: a good
call runs, a bad one never reaches the function and the model's next turn reads our
violations, results are redacted and checked, MCP tools and handoffs are gated too."""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from agents import Agent, Model, ModelResponse, RunConfig, Usage, function_tool
from agents import Runner as AgentsRunner
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

from schemawire import Repository, Trace
from schemawire.errors import FlowError
from schemawire.host import PythonTool
from schemawire.integrations.openai_agents import (
    function_tool_of,
    function_tools,
    gated_handoff,
    mcp_function_tools,
    run,
)
from schemawire.mcp import McpClient, StdioServer
from schemawire.trace import read_trace, span_tree
from schemawire.types import ToolSpec

ROOT = Path(__file__).resolve().parents[2]
SUPPORT_DESK = ROOT / "examples" / "support-desk"
PAGE = ROOT / "docs" / "integrations" / "openai-agents.md"
SECRET = json.loads((ROOT / "tests" / "data" / "secrets.json").read_text("utf-8"))["secrets"][0]
NO_SDK_TRACING = RunConfig(tracing_disabled=True)

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # the SDK runs on asyncio


Turn = list[tuple[str, dict[str, Any]]] | str  # the calls of one model turn, or its answer


class ScriptedModel(Model):
    """Answers turn after turn from a script, and keeps each input it was sent."""

    def __init__(self, script: list[Turn]) -> None:
        self.script = iter(script)
        self.inputs: list[Any] = []

    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        model_input = kwargs["input"] if "input" in kwargs else args[1]
        self.inputs.append(json.loads(json.dumps(model_input, default=str)))
        turn = next(self.script)
        usage = Usage(requests=1, input_tokens=1, output_tokens=1, total_tokens=2)
        return ModelResponse(output=_items(turn, len(self.inputs)), usage=usage, response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("these tests do not stream")


def _items(turn: Turn, number: int) -> list[Any]:
    if isinstance(turn, str):
        text = ResponseOutputText(text=turn, type="output_text", annotations=[])
        message = ResponseOutputMessage(
            id=f"msg_{number}", type="message", role="assistant", status="completed", content=[text]
        )
        return [message]
    return [
        ResponseFunctionToolCall(
            id=f"fc_{number}_{k}",
            call_id=f"call_{number}_{k}",
            name=name,
            arguments=json.dumps(arguments),
            type="function_call",
            status="completed",
        )
        for k, (name, arguments) in enumerate(turn)
    ]


def tool_outputs(model_input: list[dict[str, Any]]) -> list[Any]:
    """What the model read back for each call, parsed."""
    return [json.loads(i["output"]) for i in model_input if i.get("type") == "function_call_output"]


class Weather:
    """get_weather as the example implements it, keeping the keywords of every call."""

    def __init__(self, answer: dict[str, Any] | None = None) -> None:
        self.calls: list[dict[str, Any]] = []
        self.answer = answer

    def __call__(self, **arguments: Any) -> dict[str, Any]:
        self.calls.append(arguments)
        if self.answer is not None:
            return self.answer
        return {"city": arguments["city"], "temp_c": 11.5, "condition": "cloudy"}


KELVIN = ("get_weather", {"city": "Paris", "unit": "kelvin"})
CELSIUS = ("get_weather", {"city": "Paris", "unit": None})  # strict: null is "absent"


def weather_agent(model: Model, weather: Weather, trace: Trace | None = None) -> Agent[Any]:
    tools = function_tools(SUPPORT_DESK, {"get_weather": weather}, trace=trace)
    return Agent(name="desk", model=model, tools=tools)


async def test_a_good_call_runs_the_function_with_the_canonical_arguments() -> None:
    model, weather = ScriptedModel([[CELSIUS], "11.5 °C"]), Weather()
    result = await AgentsRunner.run(
        weather_agent(model, weather), "Paris?", run_config=NO_SDK_TRACING
    )
    assert weather.calls == [{"city": "Paris"}]
    assert tool_outputs(model.inputs[1]) == [
        {"city": "Paris", "temp_c": 11.5, "condition": "cloudy"}
    ]
    assert result.final_output == "11.5 °C"


async def test_tools_are_sent_strict_with_our_projection() -> None:
    (tool,) = function_tools(SUPPORT_DESK, {"get_weather": Weather()})
    assert tool.strict_json_schema is True
    assert tool.params_json_schema["required"] == ["city", "unit"]
    assert tool.params_json_schema["properties"]["unit"]["enum"] == ["celsius", "fahrenheit", None]


async def test_a_tool_the_strict_projection_would_narrow_is_sent_non_strict() -> None:
    # Strict mode cannot say "any value": sent strict, the model could never send a list here.
    schema = {"type": "object", "properties": {"value": {"description": "any JSON value"}}}
    schema |= {"required": ["value"], "additionalProperties": False}
    stored: list[Any] = []
    runner = PythonTool(ToolSpec("store", schema), lambda value: stored.append(value) or {})
    tool = function_tool_of(runner, Trace())
    assert tool.strict_json_schema is False
    assert tool.params_json_schema == schema
    model = ScriptedModel([[("store", {"value": [1, {"a": None}]})], "stored"])
    await AgentsRunner.run(
        Agent(name="s", model=model, tools=[tool]), "go", run_config=NO_SDK_TRACING
    )
    assert stored == [[1, {"a": None}]]


async def test_a_bad_call_never_reaches_the_function_and_the_model_corrects_itself() -> None:
    model, weather = ScriptedModel([[KELVIN], [CELSIUS], "11.5 °C"]), Weather()
    result = await AgentsRunner.run(
        weather_agent(model, weather), "Paris?", run_config=NO_SDK_TRACING
    )
    (refusal,) = tool_outputs(model.inputs[1])
    assert refusal["error"]["code"] == "arguments_invalid"
    assert [v["pointer"] for v in refusal["error"]["violations"]] == ["/unit"]
    assert weather.calls == [{"city": "Paris"}]  # only the corrected call ran
    assert result.final_output == "11.5 °C"


async def test_a_leaked_secret_is_redacted_for_the_model_and_in_the_trace() -> None:
    leak = {"city": SECRET["text"], "temp_c": 11.5, "condition": "cloudy"}
    model, weather, trace = ScriptedModel([[CELSIUS], "done"]), Weather(leak), Trace()
    await run(
        weather_agent(model, weather, trace), "Paris?", trace=trace, run_config=NO_SDK_TRACING
    )
    assert SECRET["secret"] not in json.dumps(model.inputs[1])
    assert tool_outputs(model.inputs[1])[0]["condition"] == "cloudy"
    assert SECRET["secret"] not in json.dumps([hop.to_json() for hop in trace.hops])


async def test_a_result_that_breaks_the_output_schema_is_caught_by_the_result_gate() -> None:
    model, weather = ScriptedModel([[CELSIUS], "done"]), Weather({"city": "Paris"})
    await AgentsRunner.run(weather_agent(model, weather), "Paris?", run_config=NO_SDK_TRACING)
    (refusal,) = tool_outputs(model.inputs[1])
    assert refusal["error"]["code"] == "result_invalid"
    assert [v["pointer"] for v in refusal["error"]["violations"]] == ["/temp_c", "/condition"]


async def test_the_trace_file_reads_back_as_a_run_with_its_tool_spans(tmp_path: Path) -> None:
    path = tmp_path / ".schemawire" / "traces" / "r1.jsonl"
    model, weather = ScriptedModel([[KELVIN], [CELSIUS], "11.5 °C"]), Weather()
    with Trace("r1", path=path) as trace:
        agent = weather_agent(model, weather, trace)
        await run(agent, "Paris?", trace=trace, run_config=NO_SDK_TRACING)
    tree = span_tree(read_trace(path))
    (root,) = tree.roots
    assert (root.kind, root.name) == ("run", "desk")
    assert [(c.kind, c.name, c.status) for c in root.children] == [
        ("tool", "get_weather", "refused"),
        ("tool", "get_weather", "ok"),
    ]


async def test_a_handoff_input_must_satisfy_the_handoff_schema() -> None:
    handed: list[Any] = []
    billing_model = ScriptedModel(["Refund filed."])
    billing = Agent(name="billing_agent", model=billing_model)
    good = {"intent": "refund", "order_id": "A-1042", "confidence": 0.9}
    good |= {"from": "triage", "to": "billing_agent"}
    transfer = gated_handoff(
        billing,
        SUPPORT_DESK,
        "handoffs/triage_to_billing",
        on_handoff=lambda _, v: handed.append(v),
    )
    triage = Agent(
        name="triage", model=ScriptedModel([[(transfer.tool_name, good)]]), handoffs=[transfer]
    )
    result = await AgentsRunner.run(triage, "refund A-1042", run_config=NO_SDK_TRACING)
    assert (result.final_output, handed) == ("Refund filed.", [good])


async def test_a_handoff_that_breaks_its_schema_never_starts_the_next_agent() -> None:
    billing_model = ScriptedModel(["Refund filed."])
    billing = Agent(name="billing_agent", model=billing_model)
    transfer = gated_handoff(billing, SUPPORT_DESK, "handoffs/triage_to_billing")
    bad = {"intent": "refund", "order_id": "1042", "confidence": 0.9}
    bad |= {"from": "triage", "to": "billing_agent"}
    triage = Agent(
        name="triage", model=ScriptedModel([[(transfer.tool_name, bad)]]), handoffs=[transfer]
    )
    with pytest.raises(FlowError) as caught:
        await AgentsRunner.run(triage, "refund 1042", run_config=NO_SDK_TRACING)
    rejection = caught.value.rejection
    assert rejection is not None
    assert rejection.code == "handoff_invalid"
    assert [v.pointer for v in rejection.violations] == ["/order_id"]
    assert billing_model.inputs == []


async def test_show_the_same_conversation_without_and_with_schemawire() -> None:
    # Without schemawire: the SDK's own tool takes `unit: str`, so "kelvin" reaches the function.
    reached: list[str] = []

    @function_tool
    def get_weather(city: str, unit: str = "celsius") -> dict[str, Any]:
        """Look up the current weather in a city."""
        reached.append(unit)
        return {"city": city, "temp_c": 11.5, "condition": "cloudy"}

    plain = Agent(name="desk", model=ScriptedModel([[KELVIN], "done"]), tools=[get_weather])
    await AgentsRunner.run(plain, "Paris?", run_config=NO_SDK_TRACING)
    assert reached == ["kelvin"]
    # With schemawire: the function never sees "kelvin"; the model reads why and corrects itself.
    model, weather = ScriptedModel([[KELVIN], [CELSIUS], "11.5 °C"]), Weather()
    result = await AgentsRunner.run(
        weather_agent(model, weather), "Paris?", run_config=NO_SDK_TRACING
    )
    assert [call.get("unit") for call in weather.calls] == [None]
    assert tool_outputs(model.inputs[1])[0]["error"]["violations"][0]["pointer"] == "/unit"
    assert result.final_output == "11.5 °C"


def quick_start() -> str:
    (code,) = re.findall(
        r"<!-- quick start -->\n```python\n(.*?)```", PAGE.read_text("utf-8"), re.S
    )
    return str(code)


def test_the_quick_start_runs_as_written(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    code = quick_start()
    assert len(code.strip().splitlines()) <= 10
    shutil.copytree(SUPPORT_DESK, tmp_path / "examples" / "support-desk")
    monkeypatch.chdir(tmp_path)
    model = ScriptedModel([[KELVIN], [CELSIUS], "It is 11.5 °C in Paris."])
    namespace: dict[str, Any] = {"model": model}
    exec(compile(code, str(PAGE), "exec"), namespace)
    assert namespace["result"].final_output == "It is 11.5 °C in Paris."
    assert tool_outputs(model.inputs[1])[0]["error"]["violations"][0]["pointer"] == "/unit"
    (written,) = (tmp_path / ".schemawire" / "traces").iterdir()
    assert [root.kind for root in span_tree(read_trace(written)).roots] == ["run"]


@pytest.mark.slow
async def test_an_mcp_servers_tools_are_gated_both_ways() -> None:
    repository = Repository.load(SUPPORT_DESK)
    server = StdioServer(sys.executable, ("-m", "schemawire", "serve", str(SUPPORT_DESK)))
    trace = Trace()
    async with McpClient(server, repository=repository) as client:
        tools = await mcp_function_tools(client, trace=trace)
        model = ScriptedModel([[KELVIN], [CELSIUS], "11.5 °C"])
        agent = Agent(name="desk", model=model, tools=tools)
        result = await run(agent, "Paris?", trace=trace, run_config=NO_SDK_TRACING)
    (refusal,) = tool_outputs(model.inputs[1])
    assert [v["pointer"] for v in refusal["error"]["violations"]] == ["/unit"]
    (answer,) = tool_outputs(model.inputs[2])[1:]
    assert answer["city"] == "Paris"
    assert "temp_c" in answer
    assert result.final_output == "11.5 °C"
    sent = [h for h in trace.hops if h.protocol == "mcp" and h.direction == "send"]
    calls = [h.payload for h in sent if h.payload.get("method") == "tools/call"]
    assert [c["params"]["arguments"] for c in calls] == [{"city": "Paris"}]  # kelvin never sent
    results = [h.verdict for h in trace.hops if h.verdict and h.verdict.get("gate") == "results"]
    assert results
    assert all(v["outcome"] == "accepted" for v in results)
