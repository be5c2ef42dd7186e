"""Load bench: small tool calls from 1, 8 and 32 concurrent clients against
``schemawire serve --http``, schemawire's gating proxy and a bare MCP SDK server with the same
tool, in one run.

    python -m bench.run --only load
    python -m bench.load --clients 1 8 32 --seconds 10

The servers: ``serve --http`` on the bench's repository (``ours``); the gating proxy started the
CLI way, ``serve --http --upstream -- python -m bench.bare_server`` (``proxy``: its upstream is
the bare server over stdio); the bare SDK server over Streamable HTTP (``bare``,
`bench/bare_server.py`). Each client is the SDK's ``ClientSession`` over Streamable HTTP, in its
own session, calling ``lookup`` with small arguments as fast as answers come for ``--seconds``
seconds (after a warm-up of a few calls each). The servers run in their own processes; the
clients share this one (so its CPU is part of what is measured, the same for every server).
Rounds alternate the order of the servers so that the machine's noise falls on all of them.

Reported: calls per second (the median over rounds), p50 and p99 latency (pooled over rounds),
errors (exceptions and error results), each server's throughput and p99 over the bare SDK's,
and the CPU time the server used per call (user and system, all its threads, from
``/proc/<pid>/stat``; the proxy's and its upstream's together): on a busy machine calls/s swing
with what else runs, CPU per call much less. Memory: each server process's resident set size
(the proxy's own, not its upstream's), read once the server has served a warm-up load of the
most clients, then at the end of its run, and sampled every 0.1 s between for the peak; the
round whose growth is largest is shown.

The goal (issue 17): at 8 and 32 clients, the server and the proxy serve at least the bare SDK
server's calls per second, with a p99 no worse, no errors, and memory flat over the run (the
end within `FLAT` of the start).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import anyio

from bench import serving

CLIENTS = (1, 8, 32)
SERVERS = ("ours", "proxy", "bare")
GOAL_CLIENTS = (8, 32)
WARMUP_CALLS = 5
WARMUP_SECONDS = 2.0  # of the most clients, before memory is first read
SAMPLE_EVERY = 0.1  # seconds between memory samples
FLAT = 0.10  # memory is flat when the end is within this share of the start
MIB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class Load:
    """One server at one concurrency: calls per second, latencies (ms), errors."""

    server: str
    clients: int
    calls_per_second: float
    p50_ms: float
    p99_ms: float
    errors: int
    cpu_ms: float
    """CPU time the server used per call (the proxy's and its upstream's), in ms."""


@dataclass(frozen=True, slots=True)
class Memory:
    """One server process's resident set size over one run, in bytes."""

    server: str
    start: int
    end: int
    peak: int

    @property
    def growth(self) -> int:
        return self.end - self.start

    @property
    def flat(self) -> bool:
        return self.end <= self.start * (1 + FLAT)


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


@contextmanager
def _peak_memory(pid: int) -> Iterator[list[int]]:
    """The highest resident set size of ``pid`` while the block runs (sampled in a thread),
    in the one-item list yielded, filled in as it goes."""
    peak = [serving.rss_bytes(pid)]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(SAMPLE_EVERY):
            try:
                peak[0] = max(peak[0], serving.rss_bytes(pid))
            except (OSError, ProcessLookupError):
                return  # the server is gone; its end reading will say so

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        yield peak
    finally:
        done.set()
        sampler.join()


_Measured = tuple[float, list[float], int, float]  # calls/s, latencies, errors, CPU seconds


def _server_cpu(pid: int) -> float:
    """CPU seconds used by the server process ``pid`` and its children (a proxy's upstream)."""
    return sum(serving.cpu_seconds(one) for one in (pid, *serving.children(pid)))


def _measured(server: serving.Server, clients: int, seconds: float) -> _Measured:
    """One measurement of ``server`` at ``clients``, with the CPU time the server used."""
    before = _server_cpu(server.pid)
    rate, times, failed = anyio.run(_load, server.url, clients, seconds)
    return rate, times, failed, _server_cpu(server.pid) - before


@dataclass
class _Results:
    """Per (server, concurrency): each round's calls/s, the pooled latencies, the errors; per
    server, each round's memory."""

    rates: dict[tuple[str, int], list[float]] = field(default_factory=dict)
    cpu: dict[tuple[str, int], list[float]] = field(default_factory=dict)
    latencies: dict[tuple[str, int], list[float]] = field(default_factory=dict)
    errors: dict[tuple[str, int], int] = field(default_factory=dict)
    memory: dict[str, list[Memory]] = field(default_factory=dict)

    def add(self, kind: str, clients: int, measured: _Measured) -> None:
        rate, times, failed, cpu = measured
        key = (kind, clients)
        self.rates.setdefault(key, []).append(rate)
        self.cpu.setdefault(key, []).append(1000 * cpu / max(1, len(times)))
        self.latencies.setdefault(key, []).extend(times)
        self.errors[key] = self.errors.get(key, 0) + failed


def _one_server(
    kind: str,
    repository: Path,
    clients: tuple[int, ...],
    *,
    seconds: float,
    results: _Results,
    round_label: str,
) -> None:
    """One server's run: a warm-up at the most clients, then each concurrency in turn."""
    with serving.started(kind, repository) as server:
        anyio.run(_load, server.url, max(clients), WARMUP_SECONDS)
        start = serving.rss_bytes(server.pid)
        with _peak_memory(server.pid) as peak:
            for count in clients:
                measured = _measured(server, count, seconds)
                results.add(kind, count, measured)
                print(
                    f"  round {round_label}: {kind}, {count} clients: {measured[0]:,.0f} calls/s, "
                    f"server CPU {results.cpu[kind, count][-1]:.2f} ms/call",
                    file=sys.stderr,
                )
        end = serving.rss_bytes(server.pid)
        memory = Memory(kind, start, end, max(peak[0], end))
        results.memory.setdefault(kind, []).append(memory)


def run(
    work: Path,
    clients: tuple[int, ...] = CLIENTS,
    seconds: float = 10.0,
    rounds: int = 3,
    servers: tuple[str, ...] = SERVERS,
) -> tuple[list[Load], list[Memory]]:
    """Per server and concurrency: the median of ``rounds`` (throughput; latencies pooled);
    per server, the memory of its round that grew most."""
    repository = serving.make_repository(work)
    results = _Results()
    for number in range(rounds):
        shift = number % len(servers)
        for kind in servers[shift:] + servers[:shift]:
            label = f"{number + 1}/{rounds}"
            _one_server(
                kind, repository, clients, seconds=seconds, results=results, round_label=label
            )
    loads = [
        Load(
            kind,
            count,
            statistics.median(results.rates[kind, count]),
            _percentile(results.latencies[kind, count], 0.5),
            _percentile(results.latencies[kind, count], 0.99),
            results.errors[kind, count],
            statistics.median(results.cpu[kind, count]),
        )
        for count in clients
        for kind in servers
    ]
    memory = [max(results.memory[kind], key=lambda m: m.growth) for kind in servers]
    return loads, memory


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return 1000 * ordered[min(len(ordered) - 1, int(len(ordered) * share))] if ordered else 0.0


def print_table(rows: list[Load], memory: list[Memory], seconds: float, rounds: int) -> None:
    """The load table, the memory table, then each goal's verdict with its ratios."""
    print(
        f"| small calls, {seconds:g} s x {rounds} rounds | clients | calls/s | p50 ms | p99 ms "
        "| errors | x bare SDK | server CPU ms/call |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    bare = {row.clients: row for row in rows if row.server == "bare"}
    for row in rows:
        ratio = (
            row.calls_per_second / bare[row.clients].calls_per_second if row.clients in bare else 0
        )
        print(
            f"| {serving.LABELS[row.server]} | {row.clients} | {row.calls_per_second:,.0f} | "
            f"{row.p50_ms:.1f} | {row.p99_ms:.1f} | {row.errors} | {ratio:.2f}x | "
            f"{row.cpu_ms:.2f} |"
        )
    print()
    print(
        "| server process (the round that grew most) | RSS at start MiB | peak MiB | end MiB "
        "| growth MiB |"
    )
    print("|---|---:|---:|---:|---:|")
    for used in memory:
        print(
            f"| {serving.LABELS[used.server]} | {used.start / MIB:.1f} | {used.peak / MIB:.1f} | "
            f"{used.end / MIB:.1f} | {used.growth / MIB:+.1f} |"
        )
    print()
    _print_goals(rows, memory, bare)


def _print_goals(rows: list[Load], memory: list[Memory], bare: dict[int, Load]) -> None:
    used = {m.server: m for m in memory}
    for row in rows:
        if row.server == "bare" or row.clients not in GOAL_CLIENTS or row.clients not in bare:
            continue
        anchor = bare[row.clients]
        rate = row.calls_per_second / anchor.calls_per_second
        p99 = row.p99_ms / anchor.p99_ms if anchor.p99_ms else float("inf")
        grown = used[row.server]
        met = rate >= 1 and p99 <= 1 and row.errors == 0 and grown.flat
        print(
            f"goal, {serving.LABELS[row.server]} at {row.clients} clients: calls/s at least "
            f"the bare SDK's: {rate:.2f}x; p99 no worse: {p99:.2f}x; errors: {row.errors}; "
            f"memory flat (within {FLAT:.0%}): {grown.growth / MIB:+.1f} MiB: "
            f"{'met' if met else 'not met'}"
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
    group.add_argument(
        "--servers",
        nargs="+",
        choices=SERVERS,
        default=list(SERVERS),
        help="load: the servers to load (default all three)",
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_options(parser)
    options = parser.parse_args()
    work = serving.ROOT / "bench" / ".work"
    work.mkdir(exist_ok=True)
    servers = tuple(options.servers)
    rows, memory = run(work, tuple(options.clients), options.seconds, options.load_rounds, servers)
    print_table(rows, memory, options.seconds, options.load_rounds)


if __name__ == "__main__":
    main()
