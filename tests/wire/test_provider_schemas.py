"""The providers' schemas have teeth: the bodies the wire tests pass would fail with one
misspelt or misplaced member."""

from __future__ import annotations

from typing import Any

import pytest

from schemawire.wire import wire_format
from tests.wire import scenario
from tests.wire.provider_schemas import errors

REQUESTS = {
    "openai.chat": ("openai", "CreateChatCompletionRequest"),
    "openai.responses": ("openai", "CreateResponse"),
    "anthropic": ("anthropic", "CreateMessageParams"),
    "gemini": ("gemini", "GenerateContentRequest"),
}


def _misspell_first_key(node: dict[str, Any]) -> dict[str, Any]:
    first = next(iter(node))
    return {f"{first}_": node[first], **{k: v for k, v in node.items() if k != first}}


@pytest.mark.parametrize("api", list(REQUESTS))
def test_a_request_with_a_misspelt_member_fails_the_providers_schema(api: str) -> None:
    provider, component = REQUESTS[api]
    body = wire_format(api).body(scenario.first_request(api, scenario.tool_refs(api)))
    assert errors(provider, component, body) == []
    assert errors(provider, component, _misspell_first_key(body)) != []


@pytest.mark.parametrize("api", list(REQUESTS))
def test_a_message_with_a_misspelt_member_fails_the_providers_schema(api: str) -> None:
    provider, component = REQUESTS[api]
    body = wire_format(api).body(scenario.first_request(api, scenario.tool_refs(api)))
    conversation = "messages" if "messages" in body else "input" if "input" in body else "contents"
    body[conversation][-1] = _misspell_first_key(body[conversation][-1])
    assert errors(provider, component, body) != []
