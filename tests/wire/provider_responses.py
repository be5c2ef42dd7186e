"""The provider-response corpus (tests/data/provider-responses): its cases, the tools each
offered (under their own names or renamed), and how a turn is compared with what is expected."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from schemawire.wire import AssistantTurn, ToolRef
from tests.helpers import same_json

CORPUS = Path(__file__).parents[1] / "data" / "provider-responses" / "cases.jsonl"
API_OF_MODULE = {
    "openai_chat": "openai.chat",
    "openai_responses": "openai.responses",
    "anthropic": "anthropic",
    "gemini": "gemini",
}


def load_cases() -> list[dict[str, Any]]:
    """Every case, in the file's order."""
    return [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines()]


CASES = load_cases()


def case_id(case: dict[str, Any]) -> str:
    """A readable id that names the case: its line in cases.jsonl, API, source file and
    interaction; ``optin-`` first for the cases that need a request option."""
    line = CASES.index(case) + 1
    source = case["source"]
    stem = re.sub(r"(\.chunks)?\.(yaml|json|txt|bin)$", "", source["path"].rsplit("/", 1)[-1])
    interaction = source.get("interaction")
    where = f"{stem[:60]}" + (f"-{interaction}" if interaction is not None else "")
    return ("optin-" if "optin" in case else "") + f"{line:03d}-{case['api']}-{where}"


def api(case: dict[str, Any]) -> str:
    return API_OF_MODULE[case["api"]]


def canonical(name: str, renamed: bool) -> str:
    """The canonical name of the tool the model knows as ``name``, in one run or the other."""
    return f"renamed.{name}" if renamed else name


def tool_refs(case: dict[str, Any], renamed: bool) -> tuple[ToolRef, ...]:
    """The case's tools: under their own names, or renamed (the wire name unchanged)."""
    return tuple(ToolRef(canonical(name, renamed), name, {"name": name}) for name in case["tools"])


def parsed(arguments: Any) -> Any:
    """A call's arguments as JSON: OpenAI's are a JSON string, the others' an object."""
    return json.loads(arguments) if isinstance(arguments, str) else arguments


def disagreements(turn: AssistantTurn, case: dict[str, Any], renamed: bool) -> list[str]:
    """Where ``turn`` differs from what the case expects (empty: it agrees). Texts compare
    with "" equal to null; a call whose expected id is null may have any id unique in the
    turn."""
    expected = case["expected"]
    found: list[str] = []
    if (turn.text or None) != (expected["text"] or None):
        found.append(f"text {turn.text!r}, expected {expected['text']!r}")
    calls, wanted = turn.tool_calls, expected["calls"]
    if len(calls) != len(wanted):
        return [*found, f"{len(calls)} calls, expected {len(wanted)}"]
    if len({call.call_id for call in calls}) != len(calls):
        found.append(f"call ids not unique: {[call.call_id for call in calls]}")
    for number, (call, want) in enumerate(zip(calls, wanted, strict=True)):
        if want["id"] is not None and call.call_id != want["id"]:
            found.append(f"call {number}: id {call.call_id!r}, expected {want['id']!r}")
        if call.name != canonical(want["name"], renamed):
            found.append(f"call {number}: name {call.name!r}, expected {want['name']!r}")
        if not same_json(parsed(call.arguments), want["arguments"]):
            shown = f"arguments {call.arguments!r}, expected {want['arguments']!r}"
            found.append(f"call {number}: {shown}")
    return found


def sse_text(case: dict[str, Any]) -> str:
    """The case's stream as its API writes it on the wire (see `sse_for`)."""
    return sse_for(api(case), case["events"])


def sse_for(api_name: str, events: list[Any]) -> str:
    """Stream events as ``api_name`` writes them on the wire: ``event:`` lines where the API
    has them (Responses, Anthropic), Gemini's CRLF line ends, Chat's closing ``[DONE]``."""
    texts = [json.dumps(event, ensure_ascii=False) for event in events]
    if api_name == "openai.chat":
        return "".join(f"data: {text}\n\n" for text in [*texts, "[DONE]"])
    if api_name == "gemini":
        return "".join(f"data: {text}\r\n\r\n" for text in texts)
    kinds = [event["type"] for event in events]
    return "".join(f"event: {k}\ndata: {t}\n\n" for k, t in zip(kinds, texts, strict=True))


def split_at(data: bytes, cuts: list[int]) -> list[bytes]:
    """``data`` in pieces, cut at each of ``cuts`` (anywhere: inside a line, a CRLF or a
    UTF-8 character)."""
    points = sorted({min(max(cut, 0), len(data)) for cut in cuts})
    starts, ends = [0, *points], [*points, len(data)]
    return [data[start:end] for start, end in zip(starts, ends, strict=True) if end > start]
