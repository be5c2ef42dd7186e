"""`ToolResult`: when its content is MCP content blocks, and when it is a JSON value."""

from __future__ import annotations

import pytest

from schemawire import ToolResult
from schemawire.mcp.server import mcp_result


@pytest.mark.parametrize(
    ("content", "blocks"),
    [
        (
            [{"type": "text", "text": "hi"}, {"type": "resource_link", "uri": "a:b", "name": "b"}],
            True,
        ),
        ([{"type": "note", "text": "hi"}], False),  # a type MCP does not define: a JSON value
        ([], False),
        ([{"type": "text", "text": "hi"}, "hi"], False),
        ({"type": "text", "text": "hi"}, False),
    ],
)
def test_content_is_blocks_only_when_every_item_is_a_block_mcp_defines(
    content: object, blocks: bool
) -> None:
    assert ToolResult("c1", content).has_content_blocks is blocks


def test_a_list_of_objects_of_other_types_reaches_an_mcp_client_as_its_json_text() -> None:
    notes = [{"type": "note", "text": "hi"}]

    sent = mcp_result(ToolResult("c1", notes))

    assert sent["content"] == [{"type": "text", "text": '[{"type":"note","text":"hi"}]'}]
