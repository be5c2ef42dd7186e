"""The LangChain integration: StructuredTools whose calls pass our gates, run by LangGraph."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import ToolMessage

from schemawire.integrations.langchain import structured_tools
from schemawire.schema.repository import Repository

DESK = Path(__file__).parents[2] / "examples" / "support-desk"


def _tools(calls: list[dict[str, Any]]) -> dict[str, Any]:
    def get_weather(city: str, unit: str = "celsius") -> dict[str, Any]:
        calls.append({"city": city, "unit": unit})
        return {"city": city, "temp_c": 11.5, "condition": "cloudy"}

    tools = structured_tools(Repository.load(DESK), {"get_weather": get_weather})
    return {tool.name: tool for tool in tools}


def _invoke(tool: Any, args: dict[str, Any]) -> ToolMessage:
    message = tool.invoke({"type": "tool_call", "name": tool.name, "args": args, "id": "c1"})
    assert isinstance(message, ToolMessage)
    return message


def test_a_good_call_runs_the_function() -> None:
    calls: list[dict[str, Any]] = []
    message = _invoke(_tools(calls)["get_weather"], {"city": "Paris"})
    assert calls == [{"city": "Paris", "unit": "celsius"}]
    assert message.status == "success"
    assert json.loads(str(message.content))["city"] == "Paris"


def test_a_bad_call_never_reaches_the_function() -> None:
    calls: list[dict[str, Any]] = []
    message = _invoke(_tools(calls)["get_weather"], {"city": "Paris", "unit": "kelvin"})
    assert calls == []
    assert message.status == "error"
    error = json.loads(str(message.content))["error"]
    assert "/unit" in json.dumps(error)


def test_the_args_schema_is_the_canonical_one() -> None:
    tool = _tools([])["get_weather"]
    schema = tool.tool_call_schema
    assert isinstance(schema, dict)
    assert schema["properties"]["unit"]["enum"] == ["celsius", "fahrenheit"]


def test_langgraph_tool_node_runs_the_gated_tools() -> None:
    from langchain_core.messages import AIMessage
    from langgraph.graph import END, START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode

    calls: list[dict[str, Any]] = []
    graph = StateGraph(MessagesState)
    graph.add_node("tools", ToolNode(list(_tools(calls).values())))
    graph.add_edge(START, "tools")
    graph.add_edge("tools", END)
    asked = AIMessage(
        "",
        tool_calls=[
            {"name": "get_weather", "args": {"city": "Paris", "unit": "kelvin"}, "id": "a"},
            {"name": "get_weather", "args": {"city": "Paris"}, "id": "b"},
        ],
    )
    _, refused, answered = graph.compile().invoke({"messages": [asked]})["messages"]
    assert calls == [{"city": "Paris", "unit": "celsius"}]
    assert refused.status == "error"
    assert "/unit" in str(refused.content)
    assert answered.status == "success"


def test_the_docs_quick_start_runs_as_written(capsys: pytest.CaptureFixture[str]) -> None:
    page = Path("docs/integrations/langchain.md").read_text(encoding="utf-8")
    block = page.split("<!-- quick start -->\n```python\n", 1)[1].split("```", 1)[0]
    exec(compile(block, "langchain.md", "exec"), {})
    expected = block.rsplit("# ", 1)[1].strip()
    assert capsys.readouterr().out.strip() == expected
