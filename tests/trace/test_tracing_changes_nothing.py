"""Tracing never changes behaviour: the same hostile requests get the same answers from
`schemawire serve` (and from the gating proxy) with ``--trace`` and without, and the server
goes on serving after them."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.abc import ByteReceiveStream
from mcp_types import jsonrpc_message_adapter
from pydantic import ValidationError

from tests.helpers import EXAMPLES, WriteRepo, tool_schema
from tests.mcp.helpers import SCRIPTED

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

SCHEMAWIRE = str(Path(sys.executable).with_name("schemawire"))
DESK = EXAMPLES / "support-desk"

# The text of an argument that is hostile to a JSON writer or reader, each sent raw.
HOSTILE: dict[str, bytes] = {
    "big integer": b'"Paris", "n": 1180591620717411303424',
    "big integer in the text": b'"1180591620717411303424"',
    "lone surrogate": b'"Par\\ud800is"',
    "lone low surrogate": b'"\\udfff"',
    "NaN": b'"Paris", "n": NaN',
    "Infinity": b'"Paris", "n": -Infinity',
    "deep nesting": b'"Paris", "n": ' + b"[" * 300 + b"]" * 300,
    "deeper nesting": b'"Paris", "n": ' + b'{"a":' * 3000 + b"0" + b"}" * 3000,
    "huge string": b'"' + b"x" * 3_000_000 + b'"',
    "invalid UTF-8": b'"Par\xff\xfeis"',
    "duplicate keys": b'"Paris", "city": "Oslo"',
    "NUL and controls": b'"Pa\\u0000r\\u001fis"',
}


def call_line(number: int, tool: str, member: str, text: bytes) -> bytes:
    head = f'{{"jsonrpc":"2.0","id":{number},"method":"tools/call","params":{{"name":"{tool}",'
    return head.encode() + f'"arguments":{{"{member}":'.encode() + text + b"}}}\n"


RESULTS = '''"""Tool results hostile to a JSON writer, by name."""

def hostile(kind: str) -> object:
    nested: object = 0
    for _ in range(300):
        nested = [nested]
    return {
        "big integer": {"n": 2**70},
        "lone surrogate": {"name": "report-\\udcff.txt"},  # what os.fsdecode makes of bad bytes
        "NaN": {"n": float("nan")},
        "deep nesting": {"n": nested},
        "huge string": {"text": "x" * 3_000_000},
        "bytes": {"data": b"\\x00\\xff"},
    }[kind]
'''

RESULT_KINDS = ["big integer", "lone surrogate", "NaN", "deep nesting", "huge string", "bytes"]


SERVE_HOSTILE = '[serve]\npython-path = ["."]\n[serve.tools]\nhostile = "tools:hostile"\n'


def hostile_repository(write_repo: WriteRepo) -> Path:
    """A repository serving ``hostile``: a tool whose results are hostile values."""
    schema = tool_schema("hostile", properties={"kind": {"type": "string"}}, required=["kind"])
    return write_repo(
        {
            "schemas/tools/hostile.json": schema,
            "tools.py": RESULTS,
            "schemawire.toml": SERVE_HOSTILE,
        }
    )


async def answers(command: list[str], lines: list[bytes]) -> dict[Any, Any]:
    """What the server at ``command`` answers to each line, by id, then to a ping; a line the
    SDK's transport cannot read gets no answer (it is dropped before any handler sees it)."""
    expected = {0, 99} | {_id(line) for line in lines if _readable(line)}
    async with await anyio.open_process(command) as process:
        assert process.stdin is not None
        assert process.stdout is not None
        for line in [INITIALIZE, INITIALIZED, *lines, PING]:
            await process.stdin.send(line)
        got = await _answers(process.stdout, expected)
        await process.stdin.aclose()
        with anyio.fail_after(20):
            await process.wait()
    return got


INITIALIZE = (
    b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":'
    b'"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}\n'
)
INITIALIZED = b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
PING = b'{"jsonrpc":"2.0","id":99,"method":"ping"}\n'


def _id(line: bytes) -> Any:
    return json.loads(line.decode("utf-8", "replace"))["id"]


def _readable(line: bytes) -> bool:
    try:
        jsonrpc_message_adapter.validate_json(line.decode("utf-8", "replace"), by_name=False)
    except ValidationError:
        return False
    return True


async def _answers(stdout: ByteReceiveStream, expected: set[Any]) -> dict[Any, Any]:
    got: dict[Any, Any] = {}
    buffer = b""
    with anyio.fail_after(120):
        while not expected <= got.keys():
            buffer += await stdout.receive()
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                message = json.loads(line)
                if "id" in message:
                    got[message["id"]] = message
    return got


def served(directory: Path, trace: Path | None) -> list[str]:
    return [SCHEMAWIRE, "serve", str(directory), *(["--trace", str(trace)] if trace else [])]


def proxied(directory: Path, trace: Path | None) -> list[str]:
    tracing = ["--trace", str(trace)] if trace else []
    return [
        SCHEMAWIRE,
        "serve",
        "--upstream",
        "--repo",
        str(directory),
        *tracing,
        "--",
        sys.executable,
        str(SCRIPTED),
    ]


def calls(tool: str, member: str, texts: list[bytes]) -> list[bytes]:
    return [call_line(number, tool, member, text) for number, text in enumerate(texts, 1)]


async def same_both_ways(
    command: Callable[[Path | None], list[str]], lines: list[bytes], path: Path
) -> dict[Any, Any]:
    plain = await answers(command(None), lines)
    traced = await answers(command(path), lines)
    assert traced == plain
    assert plain[99] == {"jsonrpc": "2.0", "id": 99, "result": {}}  # still serving
    assert path.stat().st_size > 0
    return plain


async def test_hostile_arguments_get_the_same_answers_with_and_without_a_trace(
    tmp_path: Path,
) -> None:
    lines = calls("get_weather", "city", list(HOSTILE.values()))
    await same_both_ways(lambda trace: served(DESK, trace), lines, tmp_path / "t.jsonl")


async def test_hostile_results_get_the_same_answers_with_and_without_a_trace(
    write_repo: WriteRepo, tmp_path: Path
) -> None:
    root = hostile_repository(write_repo)
    kinds = [json.dumps(kind).encode() for kind in RESULT_KINDS]
    got = await same_both_ways(
        lambda trace: served(root, trace), calls("hostile", "kind", kinds), tmp_path / "t.jsonl"
    )
    assert all("result" in got[number] for number in range(1, len(kinds) + 1))


async def test_the_proxy_answers_the_same_with_and_without_a_trace(tmp_path: Path) -> None:
    lines = calls("echo", "message", list(HOSTILE.values()))
    await same_both_ways(lambda trace: proxied(tmp_path, trace), lines, tmp_path / "t.jsonl")
