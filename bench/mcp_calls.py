"""MCP bench: sequential ``echo`` calls to the npm server-everything over stdio.

Contenders, each on a fresh server process, interleaved round by round:
- the SDK's bare ``ClientSession`` (the anchor);
- schemawire's `McpClient` with both gates and the trace on, then with the trace off (so the
  cost of tracing shows on its own);
- the bare ``ClientSession`` through a proxy made of the SDK alone (`bench/passthrough_proxy.py`):
  what the extra process and hop cost by themselves;
- the bare ``ClientSession`` through schemawire's gating proxy (``schemawire serve --upstream``),
  the same hop with both gates and the trace of both sides.

Each call is timed alone; per contender, the median and the p99 of each round, then the median of
the rounds.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from schemawire.mcp import McpClient, StdioServer
from schemawire.trace import Trace

ROOT = Path(__file__).parents[1]
EVERYTHING = ROOT / "tests" / "peers" / "node_modules" / ".bin" / "mcp-server-everything"
SCHEMAWIRE = Path(sys.executable).with_name("schemawire")
WARMUP = 50
MESSAGE = {"message": "hello from the bench"}

Call = Callable[[], Awaitable[Any]]


async def _bare(stack: AsyncExitStack, command: str, args: list[str]) -> Call:
    parameters = StdioServerParameters(command=command, args=args)
    read, write = await stack.enter_async_context(stdio_client(parameters))
    session = await stack.enter_async_context(ClientSession(read, write))
    await session.initialize()

    async def call() -> Any:
        result = await session.call_tool("echo", MESSAGE)
        assert not result.is_error
        return result

    return call


async def bare_sdk(stack: AsyncExitStack) -> Call:
    return await _bare(stack, str(EVERYTHING), ["stdio"])


async def through_proxy(stack: AsyncExitStack) -> Call:
    args = ["serve", "--repo", str(ROOT), "--upstream", "--", str(EVERYTHING), "stdio"]
    return await _bare(stack, str(SCHEMAWIRE), args)


async def through_sdk_proxy(stack: AsyncExitStack) -> Call:
    args = ["-m", "bench.passthrough_proxy", str(EVERYTHING), "stdio"]
    return await _bare(stack, sys.executable, args)


def ours(tracing: bool) -> Callable[[AsyncExitStack], Awaitable[Call]]:
    async def connect(stack: AsyncExitStack) -> Call:
        server = StdioServer(str(EVERYTHING), ("stdio",))
        client = McpClient(server, trace=Trace(), mode="legacy", tracing=tracing)
        await stack.enter_async_context(client)

        async def call() -> Any:
            made = await client.call("echo", MESSAGE)
            assert made.accepted
            return made

        return call

    return connect


CONTENDERS: dict[str, Callable[[AsyncExitStack], Awaitable[Call]]] = {
    "mcp SDK ClientSession (bare)": bare_sdk,
    "schemawire McpClient, gates + trace": ours(tracing=True),
    "schemawire McpClient, gates, no trace": ours(tracing=False),
    "ClientSession through an SDK-only proxy (no gates, no trace)": through_sdk_proxy,
    "ClientSession through schemawire proxy": through_proxy,
}


async def _round(connect: Callable[[AsyncExitStack], Awaitable[Call]], calls: int) -> list[float]:
    async with AsyncExitStack() as stack:
        return await timed(await connect(stack), calls)


async def timed(call: Call, calls: int) -> list[float]:
    """Seconds each of ``calls`` sequential calls took, after `WARMUP` untimed ones."""
    for _ in range(WARMUP):
        await call()
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        await call()
        times.append(time.perf_counter() - start)
    return times


def p99(times: list[float]) -> float:
    """The 99th percentile of ``times`` (nearest rank)."""
    return sorted(times)[int(len(times) * 0.99) - 1]


def run(calls: int = 1000, rounds: int = 3) -> dict[str, tuple[float, float]]:
    """Per contender: (median ms per call, p99 ms per call), medians over ``rounds``."""
    if not EVERYTHING.exists():
        raise SystemExit(f"{EVERYTHING} is missing: run `make test` once (it installs it)")
    medians: dict[str, list[float]] = {label: [] for label in CONTENDERS}
    p99s: dict[str, list[float]] = {label: [] for label in CONTENDERS}
    for number in range(rounds):
        for label, connect in CONTENDERS.items():
            times = anyio.run(_round, connect, calls)
            medians[label].append(statistics.median(times) * 1000)
            p99s[label].append(p99(times) * 1000)
            print(f"  round {number + 1}/{rounds}: {label}", file=sys.stderr)
    return {
        label: (statistics.median(medians[label]), statistics.median(p99s[label]))
        for label in CONTENDERS
    }


def print_table(results: dict[str, tuple[float, float]], calls: int) -> None:
    anchor = results["mcp SDK ClientSession (bare)"][0]
    print(
        f"| {calls} sequential echo calls, server-everything over stdio | median ms/call "
        "| p99 ms/call | x bare SDK (median) |"
    )
    print("|---|---:|---:|---:|")
    for label, (median, tail) in results.items():
        print(f"| {label} | {median:.3f} | {tail:.2f} | {median / anchor:.2f}x |")
    traced = results["schemawire McpClient, gates + trace"][0]
    untraced = results["schemawire McpClient, gates, no trace"][0]
    print()
    print(f"tracing costs {1000 * (traced - untraced):.0f} µs per call (four hops, redacted)")
    client = traced / anchor
    proxy = results["ClientSession through schemawire proxy"][0] / anchor
    print(
        f"goal client with gates and trace, at most 1.15x the bare SDK: {_met(client <= 1.15)}"
        f" ({client:.2f}x)"
    )
    print(f"goal proxy, at most 1.5x the bare SDK: {_met(proxy <= 1.5)} ({proxy:.2f}x)")


def _met(met: bool) -> str:
    return "met" if met else "not met"


if __name__ == "__main__":
    print_table(run(), 1000)
