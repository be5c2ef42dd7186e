"""Load bench: small tool calls from 1, 8 and 32 concurrent clients against
``schemawire serve --http`` and a bare MCP SDK server with the same tool, in one run.

    python -m bench.run --only load
    python -m bench.load --clients 1 8 32 --seconds 10

Each client is the SDK's ``ClientSession`` over Streamable HTTP, in its own session, calling
``lookup`` with small arguments as fast as answers come for ``--seconds`` seconds (after a
warm-up of a few calls each). The servers run in their own processes; the clients share this
one (so its CPU is part of what is measured, the same for both servers). Reported: calls per
second, p50 and p99 latency, errors (exceptions and error results), and ours/bare throughput.
Rounds alternate the servers so that the machine's noise falls on both.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import anyio

from bench import serving

CLIENTS = (1, 8, 32)
WARMUP_CALLS = 5


@dataclass(frozen=True, slots=True)
class Load:
    """One server at one concurrency: calls per second, latencies (ms), errors."""

    server: str
    clients: int
    calls_per_second: float
    p50_ms: float
    p99_ms: float
    errors: int


@dataclass
class _Calls:
    """What the clients of one measurement share: when to stop, what they measured, and an
    event set once every client has warmed up."""

    clients: int
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    ready: anyio.Event = field(default_factory=anyio.Event)
    warmed: int = 0
    until: float = float("inf")


async def _client(url: str, number: int, calls: _Calls) -> None:
    async with serving.session(url) as client:
        for call in range(WARMUP_CALLS):
            await client.call_tool("lookup", serving.small_arguments(number + call))
        calls.warmed += 1
        if calls.warmed == calls.clients:
            calls.ready.set()
        await calls.ready.wait()
        call = 0
        while time.perf_counter() < calls.until:
            started = time.perf_counter()
            try:
                with anyio.fail_after(60):
                    result = await client.call_tool("lookup", serving.small_arguments(call))
                if result.is_error:
                    calls.errors.append("error result")
            except Exception as error:  # counted: the table says how many
                calls.errors.append(type(error).__name__)
            calls.latencies.append(time.perf_counter() - started)
            call += 1


async def _load(url: str, clients: int, seconds: float) -> tuple[float, list[float], int]:
    calls = _Calls(clients)
    with anyio.fail_after(seconds + 300):
        async with anyio.create_task_group() as group:
            for number in range(clients):
                group.start_soon(_client, url, number, calls)
            await calls.ready.wait()
            started = time.perf_counter()
            calls.until = started + seconds
        elapsed = time.perf_counter() - started
    return len(calls.latencies) / elapsed, calls.latencies, len(calls.errors)


def run(
    work: Path, clients: tuple[int, ...] = CLIENTS, seconds: float = 10.0, rounds: int = 3
) -> list[Load]:
    """Per server and concurrency: the median of ``rounds`` (throughput; latencies pooled)."""
    repository = serving.make_repository(work)
    rates: dict[tuple[str, int], list[float]] = {}
    latencies: dict[tuple[str, int], list[float]] = {}
    errors: dict[tuple[str, int], int] = {}
    for number in range(rounds):
        kinds = ("ours", "bare") if number % 2 == 0 else ("bare", "ours")
        for kind in kinds:
            with serving.started(kind, repository) as server:
                for count in clients:
                    rate, times, failed = anyio.run(_load, server.url, count, seconds)
                    key = (kind, count)
                    rates.setdefault(key, []).append(rate)
                    latencies.setdefault(key, []).extend(times)
                    errors[key] = errors.get(key, 0) + failed
                    print(
                        f"  round {number + 1}/{rounds}: {kind}, {count} clients: "
                        f"{rate:,.0f} calls/s",
                        file=sys.stderr,
                    )
    return [
        Load(
            kind,
            count,
            statistics.median(rates[kind, count]),
            _percentile(latencies[kind, count], 0.5),
            _percentile(latencies[kind, count], 0.99),
            errors[kind, count],
        )
        for count in clients
        for kind in ("ours", "bare")
    ]


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return 1000 * ordered[min(len(ordered) - 1, int(len(ordered) * share))] if ordered else 0.0


def print_table(rows: list[Load], seconds: float, rounds: int) -> None:
    print(
        f"| small calls, {seconds:g} s x {rounds} rounds | clients | calls/s | p50 ms | p99 ms "
        "| errors | x bare SDK |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    bare = {row.clients: row.calls_per_second for row in rows if row.server == "bare"}
    for row in rows:
        ratio = row.calls_per_second / bare[row.clients] if bare.get(row.clients) else 0.0
        print(
            f"| {serving.LABELS[row.server]} | {row.clients} | {row.calls_per_second:,.0f} | "
            f"{row.p50_ms:.1f} | {row.p99_ms:.1f} | {row.errors} | {ratio:.2f}x |"
        )


def add_options(parser: argparse.ArgumentParser) -> None:
    """The options of this bench (also under ``python -m bench.run --only load``)."""
    group = parser.add_argument_group("load")
    group.add_argument(
        "--clients",
        type=int,
        nargs="+",
        default=list(CLIENTS),
        help="load: concurrent clients (default 1 8 32)",
    )
    group.add_argument(
        "--seconds",
        type=float,
        default=10.0,
        help="load: seconds of calls per server and concurrency",
    )
    group.add_argument("--load-rounds", type=int, default=3, help="load: rounds (default 3)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_options(parser)
    options = parser.parse_args()
    work = serving.ROOT / "bench" / ".work"
    work.mkdir(exist_ok=True)
    rows = run(work, tuple(options.clients), options.seconds, options.load_rounds)
    print_table(rows, options.seconds, options.load_rounds)


if __name__ == "__main__":
    main()
