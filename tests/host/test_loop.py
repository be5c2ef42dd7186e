"""The agent loop with a scripted model (OpenAI Chat Completions responses) and Python tools.

Each test scripts what the model answers, runs the host, and asserts what the model was sent
back: the requests the scripted model recorded, exactly as they would go over the wire.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from schemawire.host import Host, HostOptions, ScriptedModel, python_tools
from schemawire.schema.repository import Repository
from schemawire.trace import Trace
from schemawire.types import ToolSpec
from tests.helpers import WriteRepo, tool_schema
from tests.host.chat_script import calls, says, tool_messages

pytestmark = pytest.mark.anyio


class Desk:
    """Three tools whose calls are recorded; ``slow`` finishes last, whatever the order."""

    def __init__(self) -> None:
        self.ran: list[tuple[str, dict[str, Any]]] = []
        self.fast_done = anyio.Event()

    async def weather(self, city: str, unit: str = "celsius") -> dict[str, Any]:
        self.ran.append(("weather", {"city": city, "unit": unit}))
        return {"city": city, "temp": 18}

    async def slow(self, city: str) -> dict[str, Any]:
        await self.fast_done.wait()  # let the calls after it in the turn finish first
        self.ran.append(("slow", {"city": city}))
        return {"city": city}

    async def fast(self, city: str) -> dict[str, Any]:
        self.ran.append(("fast", {"city": city}))
        self.fast_done.set()
        return {"city": city}

    def broken(self, city: str) -> dict[str, Any]:
        raise KeyError("internal state")

    async def stuck(self, city: str) -> dict[str, Any]:
        await anyio.Event().wait()
        return {}


def desk_repository(write_repo: WriteRepo) -> Repository:
    unit = {"type": "string", "enum": ["celsius", "fahrenheit"]}
    weather = tool_schema("weather", properties={"city": {"type": "string"}, "unit": unit})
    files = {
        f"schemas/tools/{name}.json": tool_schema(name)
        for name in ("slow", "fast", "broken", "stuck")
    }
    return Repository.load(write_repo({"schemas/tools/weather.json": weather, **files}))


def host(repository: Repository, desk: Desk, script: list[dict[str, Any]], **options: Any) -> Host:
    functions = {
        "weather": desk.weather,
        "slow": desk.slow,
        "fast": desk.fast,
        "broken": desk.broken,
        "stuck": desk.stuck,
    }
    runners = python_tools(repository, functions)
    for runner in runners:
        runner.timeout = 0.5
    model = ScriptedModel("openai.chat", script, name="m")
    return Host(model, runners, options=HostOptions(**options), trace=Trace())


async def test_parallel_calls_are_matched_by_id_in_the_models_order(write_repo: WriteRepo) -> None:
    desk = Desk()
    script = [
        calls(
            ("c1", "slow", {"city": "a"}),
            ("c2", "fast", {"city": "b"}),
            ("c3", "weather", {"city": "c", "unit": None}),
        ),
        says("done"),
    ]
    run_host = host(desk_repository(write_repo), desk, script)
    result = await run_host.run("go")
    assert (result.stopped, result.answer) == ("answer", "done")
    assert [name for name, _ in desk.ran][-1] == "slow"  # it finished last...
    second = run_host.model.requests[1]  # type: ignore[attr-defined]
    tool_ids = [m["tool_call_id"] for m in second["messages"] if m["role"] == "tool"]
    assert tool_ids == ["c1", "c2", "c3"]  # ...and is still answered first
    assert json.loads(tool_messages(second)["c1"]) == {"city": "a"}
    # strict mode sent unit as null, which stands for "absent": the default applied
    assert ("weather", {"city": "c", "unit": "celsius"}) in desk.ran


@pytest.mark.slow
async def test_failures_are_answered_and_the_run_goes_on(write_repo: WriteRepo) -> None:
    desk = Desk()
    script = [
        calls(
            ("c1", "broken", {"city": "x"}),
            ("c2", "stuck", {"city": "y"}),
            ("c3", "nowhere", {}),
            ("c4", "weather", '{"city": "z",'),
            ("c5", "weather", {"city": "ok", "unit": "celsius"}),
        ),
        says("sorry about the rest"),
    ]
    run_host = host(desk_repository(write_repo), desk, script)
    result = await run_host.run("go")
    assert result.stopped == "answer"
    requests = run_host.model.requests  # type: ignore[attr-defined]
    sent = {k: json.loads(v) for k, v in tool_messages(requests[1]).items()}
    codes = {k: v.get("error", {}).get("code") for k, v in sent.items()}
    assert codes == {
        "c1": "tool_failed",
        "c2": "tool_failed",
        "c3": "tool_unknown",
        "c4": "arguments_malformed",
        "c5": None,
    }
    assert sent["c1"]["error"]["violations"][0]["message"] == "KeyError: 'internal state'"
    assert "did not finish within 0.5 s" in sent["c2"]["error"]["violations"][0]["message"]
    assert 'there is no tool "nowhere"' in sent["c3"]["error"]["violations"][0]["message"]
    assert sent["c5"] == {"city": "ok", "temp": 18}
    assert [name for name, _ in desk.ran] == ["weather"]  # only the good call ran (besides the
    # two that failed inside the tool, which record nothing)


async def test_a_refused_call_is_corrected_within_the_budget(write_repo: WriteRepo) -> None:
    desk = Desk()
    bad = {"city": "上海", "unit": "kelvin"}
    script = [
        calls(("c1", "weather", bad)),
        calls(("c2", "weather", bad)),
        calls(("c3", "weather", bad)),
        says("I cannot"),
    ]
    run_host = host(desk_repository(write_repo), desk, script, retries_per_tool=2)
    result = await run_host.run("go")
    assert result.stopped == "answer"
    requests = run_host.model.requests  # type: ignore[attr-defined]
    first = json.loads(tool_messages(requests[1])["c1"])["error"]
    assert (first["code"], first["violations"][0]["pointer"]) == ("arguments_invalid", "/unit")
    assert first["schema"] == "https://example.com/schemas/tools/weather.json"
    third = json.loads(tool_messages(requests[3])["c3"])["error"]
    assert (third["code"], third["hint"]) == (
        "retries_exhausted",
        "Stop calling weather; answer with what you have.",
    )
    assert desk.ran == []


async def test_turn_limit(write_repo: WriteRepo) -> None:
    desk = Desk()
    script = [calls((f"c{i}", "fast", {"city": "a"})) for i in range(3)]
    result = await host(desk_repository(write_repo), desk, script, max_turns=3).run("go")
    assert (result.stopped, result.turns, result.answer) == ("turn_limit", 3, None)
    assert len(result.calls) == 3


async def test_the_final_answer_is_held_to_the_output_schema(write_repo: WriteRepo) -> None:
    repository = desk_repository(write_repo)
    schema = {
        "type": "object",
        "properties": {"temp": {"type": "integer"}},
        "required": ["temp"],
        "additionalProperties": False,
    }
    output = ToolSpec("answer", schema)
    script = [says('{"temp": "warm"}'), says('{"temp": 18}')]
    model = ScriptedModel("openai.chat", script, name="m")
    run_host = Host(model, python_tools(repository, {"fast": Desk().fast}), output=output)
    result = await run_host.run("how warm?")
    assert (result.stopped, result.output) == ("answer", {"temp": 18})
    second = model.requests[1]
    assert second["response_format"]["type"] == "json_schema"
    retry = second["messages"][-1]["content"]
    assert retry.startswith("Your answer does not match the required output schema")
    assert '"pointer":"/temp"' in retry


async def test_a_null_for_an_optional_output_member_stands_for_absent(
    write_repo: WriteRepo,
) -> None:
    # Strict Structured Outputs make every member required, an optional one nullable.
    schema = {
        "type": "object",
        "properties": {"temp": {"type": "integer"}, "note": {"type": "string"}},
        "required": ["temp"],
        "additionalProperties": False,
    }
    model = ScriptedModel("openai.chat", [says('{"temp": 18, "note": null}')], name="m")
    repository = desk_repository(write_repo)
    run_host = Host(
        model, python_tools(repository, {"fast": Desk().fast}), output=ToolSpec("answer", schema)
    )
    result = await run_host.run("how warm?")
    assert (result.stopped, result.output) == ("answer", {"temp": 18})
    sent = model.requests[0]["response_format"]["json_schema"]["schema"]
    assert sent["required"] == ["temp", "note"]


async def test_every_boundary_is_a_hop(write_repo: WriteRepo) -> None:
    desk = Desk()
    script = [
        calls(("c1", "weather", {"city": "a", "unit": "kelvin"}), ("c2", "fast", {"city": "b"})),
        says("done"),
    ]
    run_host = host(desk_repository(write_repo), desk, script)
    await run_host.run("go")
    hops = [h for h in run_host.trace.hops if h.protocol != "span"]  # tests/trace: the spans
    kinds = [(h.source, h.target, h.protocol, h.direction) for h in hops]
    assert kinds == [
        ("user", "host", "text", "receive"),
        ("host", "model:openai.chat", "openai.chat", "send"),
        ("model:openai.chat", "host", "openai.chat", "receive"),
        ("host", "host", "gate", "check"),  # c1 refused: the gate's own hop
        ("host", "python:fast", "python", "send"),  # c2, with the argument gate's verdict
        ("python:fast", "host", "python", "receive"),
        ("host", "model:openai.chat", "openai.chat", "send"),
        ("model:openai.chat", "host", "openai.chat", "receive"),
    ]
    verdicts = [h.verdict["outcome"] for h in run_host.trace.hops if h.verdict]
    assert verdicts == ["rejected", "accepted", "accepted"]


def test_two_tools_of_one_name_are_refused(write_repo: WriteRepo) -> None:
    from schemawire.errors import UsageError

    repository = desk_repository(write_repo)
    runners = python_tools(repository, {"fast": Desk().fast})
    with pytest.raises(UsageError, match='two tools are named "fast"'):
        Host(ScriptedModel("openai.chat", []), [*runners, *runners])


async def test_a_tools_own_timeout_is_its_own_error(write_repo: WriteRepo) -> None:
    def times_out(city: str) -> dict[str, Any]:
        raise TimeoutError("the upstream API timed out")

    repository = desk_repository(write_repo)
    (runner,) = python_tools(repository, {"fast": times_out})
    script = [calls(("c1", "fast", {"city": "a"})), says("sorry")]
    model = ScriptedModel("openai.chat", script, name="m")
    await Host(model, [runner]).run("go")
    error = json.loads(tool_messages(model.requests[1])["c1"])["error"]
    assert error["violations"][0]["message"] == "TimeoutError: the upstream API timed out"
