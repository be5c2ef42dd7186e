"""Gateway bench: what one call costs through the gateway over three upstreams, beside the
single-upstream gating proxy (issue 14's goal: the gateway adds no more per call than the proxy).

Contenders, each a fresh ``schemawire serve`` process over stdio with the SDK's bare
``ClientSession`` as its client, interleaved round by round, each timing sequential ``echo``
calls to the npm server-everything:

- the gating proxy: ``serve --upstream -- mcp-server-everything stdio``, tool ``echo``;
- the gateway over server-everything, server-filesystem and server-memory: ``serve --upstream
  everything -- ... --upstream fs -- ... --upstream memory -- ...``, tool ``everything_echo``;
- the same gateway with ``--shortlist``: the call made through ``call_tool`` (name and arguments
  checked by call_tool's gate, then the inner call by echo's).

Both gates and the trace of both sides run in every contender. Per contender, the median and
the p99 of each round, then the median of the rounds.

    python -m bench.gateway [--calls 1000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from bench.mcp_calls import Call, p99, timed

ROOT = Path(__file__).parents[1]
PEERS = ROOT / "tests" / "peers" / "node_modules" / ".bin"
SCHEMAWIRE = Path(sys.executable).with_name("schemawire")
MESSAGE = {"message": "hello from the bench"}
PROXY = "schemawire proxy, one upstream: echo"
GATEWAY = "schemawire gateway, three upstreams: everything_echo"
SHORTLISTED = "schemawire gateway --shortlist: call_tool(everything_echo)"

Connect = Callable[[AsyncExitStack, Path], Awaitable[Call]]


def _upstreams(files: Path) -> list[str]:
    return [
        *("--upstream", "everything", "--", str(PEERS / "mcp-server-everything"), "stdio"),
        *("--upstream", "fs", "--", str(PEERS / "mcp-server-filesystem"), str(files)),
        *("--upstream", "memory", "--", "env", f"MEMORY_FILE_PATH={files / 'memory.jsonl'}"),
        str(PEERS / "mcp-server-memory"),
    ]


async def _session(stack: AsyncExitStack, args: list[str]) -> ClientSession:
    parameters = StdioServerParameters(command=str(SCHEMAWIRE), args=["serve", *args])
    read, write = await stack.enter_async_context(stdio_client(parameters))
    session = await stack.enter_async_context(ClientSession(read, write))
    await session.initialize()
    return session


def _caller(session: ClientSession, name: str, arguments: dict[str, Any]) -> Call:
    async def call() -> Any:
        result = await session.call_tool(name, arguments)
        assert not result.is_error, result
        return result

    return call


async def proxy(stack: AsyncExitStack, work: Path) -> Call:
    upstream = ["--upstream", "--", str(PEERS / "mcp-server-everything"), "stdio"]
    session = await _session(stack, ["--repo", str(ROOT), *upstream])
    return _caller(session, "echo", MESSAGE)


async def gateway(stack: AsyncExitStack, work: Path) -> Call:
    session = await _session(stack, ["--repo", str(ROOT), *_upstreams(work)])
    return _caller(session, "everything_echo", MESSAGE)


async def shortlisted(stack: AsyncExitStack, work: Path) -> Call:
    session = await _session(stack, ["--repo", str(ROOT), "--shortlist", *_upstreams(work)])
    return _caller(session, "call_tool", {"name": "everything_echo", "arguments": MESSAGE})


CONTENDERS: dict[str, Connect] = {PROXY: proxy, GATEWAY: gateway, SHORTLISTED: shortlisted}


async def _round(connect: Connect, calls: int, work: Path) -> list[float]:
    async with AsyncExitStack() as stack:
        return await timed(await connect(stack, work), calls)


def run(calls: int = 1000, rounds: int = 3) -> dict[str, tuple[float, float]]:
    """Per contender: (median ms per call, p99 ms per call), medians over ``rounds``."""
    for binary in ("mcp-server-everything", "mcp-server-filesystem", "mcp-server-memory"):
        if not (PEERS / binary).exists():
            raise SystemExit(f"{PEERS / binary} is missing: run `make test` once (it installs it)")
    medians: dict[str, list[float]] = {label: [] for label in CONTENDERS}
    p99s: dict[str, list[float]] = {label: [] for label in CONTENDERS}
    with tempfile.TemporaryDirectory(prefix="gateway-bench-") as work:
        for number in range(rounds):
            for label, connect in CONTENDERS.items():
                times = anyio.run(_round, connect, calls, Path(work))
                medians[label].append(statistics.median(times) * 1000)
                p99s[label].append(p99(times) * 1000)
                print(f"  round {number + 1}/{rounds}: {label}", file=sys.stderr)
    return {
        label: (statistics.median(medians[label]), statistics.median(p99s[label]))
        for label in CONTENDERS
    }


def print_table(results: dict[str, tuple[float, float]], calls: int) -> None:
    anchor = results[PROXY][0]
    print(
        f"| {calls} sequential echo calls to server-everything, ClientSession over stdio "
        "| median ms/call | p99 ms/call | x proxy (median) |"
    )
    print("|---|---:|---:|---:|")
    for label, (median, tail) in results.items():
        print(f"| {label} | {median:.3f} | {tail:.2f} | {median / anchor:.2f}x |")
    added = 1000 * (results[GATEWAY][0] - anchor)
    print()
    print(f"the gateway over three upstreams adds {added:+.0f} µs per call to the proxy's")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args()
    print_table(run(options.calls, options.rounds), options.calls)


if __name__ == "__main__":
    main()
