"""Soak bench: mixed traffic for a long time against ``schemawire serve --http`` and the gating
proxy (``serve --http --upstream -- <the bare SDK server over stdio>``) at once, the memory of
each server process sampled as it goes. Not part of ``make bench``: it runs 30 minutes.

    python -m bench.run --only soak                      # 30 minutes (make soak)
    python -m bench.soak --minutes 1 --every 2           # a quick smoke run

Traffic, against each server, all the time (paced, so that the two servers and the clients fit
on a small machine): two clients making small calls (one in ten refused: ``city`` is a number);
one making a 200 KB call (accepted) every 2 s and a 1 MB call (refused: too many items) every
5 s; a client opening a new session, calling once and dropping it every second (half closed with
a DELETE, half abandoned); and three slow clients, each sending an HTTP request's headers a few
bytes a second for 20 s before it hangs up.

Every ``--every`` seconds (default 10) the resident set size of each server process (and of the
proxy's upstream) is read (psutil if installed, else ``/proc/<pid>/status``). The verdict
compares the median of the last third of the run with the median of the warm-up window:
minutes 2 to 5 of a run of 15 minutes or more, else the same fractions of a shorter run
(2/30 to 5/30). "flat within 10%" when the later median is within 10% of the earlier.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from bench import serving

TARGETS = ("ours", "proxy")
SMALL_PAUSE = 0.02
SLOW_CLIENTS = 3
SLOW_SECONDS = 20.0
FLAT = 0.10


@dataclass
class Traffic:
    """What the clients of one server did: calls by outcome."""

    counts: Counter[str] = field(default_factory=Counter)

    def count(self, what: str) -> None:
        self.counts[what] += 1


@dataclass(frozen=True, slots=True)
class Sample:
    """The memory of the servers at one moment, in bytes (0: not running)."""

    seconds: float
    rss: dict[str, int]


async def _call(client: ClientSession, traffic: Traffic, label: str, arguments: Any) -> None:
    try:
        with anyio.fail_after(120):
            result = await client.call_tool("lookup", arguments)
        traffic.count(f"{label} {'refused' if result.is_error else 'ok'}")
    except Exception as error:  # counted: the report says how many
        traffic.count(f"{label} failed: {type(error).__name__}")


async def small_calls(url: str, traffic: Traffic, until: float) -> None:
    async with serving.session(url) as client:
        number = 0
        while time.monotonic() < until:
            refused = number % 10 == 9
            arguments = {"city": number} if refused else serving.small_arguments(number)
            await _call(client, traffic, "small", arguments)
            number += 1
            await anyio.sleep(SMALL_PAUSE)


async def large_calls(url: str, traffic: Traffic, until: float) -> None:
    accepted = {"city": "x" * 99_000, "items": [123456789] * 10_000}  # about 200 KB
    refused = {"items": [0] * 500_000}  # 1 MB, over the items limit
    async with serving.session(url) as client:
        number = 0
        while time.monotonic() < until:
            await _call(client, traffic, "200 KB", accepted)
            if number % 5 == 4:
                await _call(client, traffic, "1 MB", refused)
            number += 1
            await anyio.sleep(2)


async def passing_sessions(url: str, traffic: Traffic, until: float) -> None:
    number = 0
    while time.monotonic() < until:
        try:
            with anyio.fail_after(60):
                await _one_session(url, traffic, terminate=number % 2 == 0)
        except Exception as error:  # counted: the report says how many
            traffic.count(f"session failed: {type(error).__name__}")
        number += 1
        await anyio.sleep(1)


async def _one_session(url: str, traffic: Traffic, terminate: bool) -> None:
    async with (
        httpx2.AsyncClient(timeout=30) as http,
        streamable_http_client(url, http_client=http, terminate_on_close=terminate) as (r, w),
        ClientSession(r, w) as client,
    ):
        await client.initialize()
        await _call(client, traffic, "new session", serving.small_arguments(0))


async def slow_client(port: int, traffic: Traffic, until: float) -> None:
    headers = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    while time.monotonic() < until:
        ended = min(until, time.monotonic() + SLOW_SECONDS)
        try:
            stream = await anyio.connect_tcp("127.0.0.1", port)
            async with stream:
                sent = 0
                while time.monotonic() < ended:
                    await stream.send(headers[sent % len(headers) : sent % len(headers) + 4])
                    sent += 4
                    await anyio.sleep(1)
            traffic.count("slow client held")
        except OSError as error:  # the server hung up: what a timeout does
            traffic.count(f"slow client cut: {type(error).__name__}")
        except anyio.BrokenResourceError:
            traffic.count("slow client cut: BrokenResourceError")


async def _traffic(url: str, traffic: Traffic, until: float) -> None:
    port = int(url.split(":")[2].split("/", maxsplit=1)[0])
    async with anyio.create_task_group() as group:
        for _ in range(2):
            group.start_soon(small_calls, url, traffic, until)
        group.start_soon(large_calls, url, traffic, until)
        group.start_soon(passing_sessions, url, traffic, until)
        for _ in range(SLOW_CLIENTS):
            group.start_soon(slow_client, port, traffic, until)


def _rss(pid: int) -> int:
    try:
        return serving.rss_bytes(pid)
    except (OSError, ProcessLookupError):
        return 0


def _measure(servers: list[serving.Server], started: float) -> Sample:
    rss = {server.kind: _rss(server.pid) for server in servers}
    proxy = next((server for server in servers if server.kind == "proxy"), None)
    if proxy is not None:
        rss["upstream"] = sum(_rss(child) for child in serving.children(proxy.pid))
    return Sample(time.monotonic() - started, rss)


async def _soak(
    servers: list[serving.Server], seconds: float, every: float, traffic: dict[str, Traffic]
) -> list[Sample]:
    started = time.monotonic()
    until = started + seconds
    samples = [_measure(servers, started)]
    with anyio.fail_after(seconds + 600):
        async with anyio.create_task_group() as group:
            for server in servers:
                group.start_soon(_traffic, server.url, traffic[server.kind], until)
            while time.monotonic() < until:
                await anyio.sleep(min(every, max(0.0, until - time.monotonic())))
                samples.append(_measure(servers, started))
                print(
                    f"  {samples[-1].seconds:6.0f} s: "
                    + ", ".join(f"{k} {v / 1e6:.1f} MB" for k, v in samples[-1].rss.items()),
                    file=sys.stderr,
                )
    return samples


def run(work: Path, minutes: float, every: float) -> tuple[list[Sample], dict[str, Traffic]]:
    """Soak both servers for ``minutes``, sampling every ``every`` seconds."""
    repository = serving.make_repository(work)
    traffic = {kind: Traffic() for kind in TARGETS}
    with contextlib.ExitStack() as stack:
        servers = [stack.enter_context(serving.started(kind, repository)) for kind in TARGETS]
        samples = anyio.run(_soak, servers, minutes * 60, every, traffic)
    return samples, traffic


def warm_window(seconds: float) -> tuple[float, float]:
    """The seconds whose samples make the baseline: minutes 2 to 5, or those fractions of a
    run shorter than 15 minutes."""
    if seconds >= 15 * 60:
        return 120.0, 300.0
    return seconds * 2 / 30, seconds * 5 / 30


def verdict(samples: list[Sample], kind: str) -> tuple[float, float, bool]:
    """The baseline median, the last third's median (bytes), and whether they are within 10%."""
    total = samples[-1].seconds
    low, high = warm_window(total)
    early = [s.rss[kind] for s in samples if low <= s.seconds <= high] or [samples[1].rss[kind]]
    late = [s.rss[kind] for s in samples if s.seconds >= total * 2 / 3]
    before, after = statistics.median(early), statistics.median(late)
    return before, after, abs(after - before) <= FLAT * before


def print_report(samples: list[Sample], traffic: dict[str, Traffic]) -> bool:
    """The curve, the traffic and the verdicts; whether every server stayed flat."""
    kinds = list(samples[0].rss)
    print("| seconds | " + " | ".join(f"{_label(k)} RSS MB" for k in kinds) + " |")
    print("|---:|" + "---:|" * len(kinds))
    for sample in samples:
        print(
            f"| {sample.seconds:.0f} | "
            + " | ".join(f"{sample.rss[k] / 1e6:.1f}" for k in kinds)
            + " |"
        )
    print()
    for kind, counts in traffic.items():
        done = ", ".join(f"{what}: {n:,}" for what, n in sorted(counts.counts.items()))
        print(f"traffic to {serving.LABELS[kind]}: {done}")
    low, high = warm_window(samples[-1].seconds)
    print()
    print(f"verdict: median of the last third beside the median of {low:.0f}-{high:.0f} s")
    flat = True
    for kind in kinds:
        before, after, within = verdict(samples, kind)
        flat = flat and within
        word = "flat within 10%" if within else "NOT flat"
        print(
            f"  {_label(kind)}: {before / 1e6:.1f} MB -> {after / 1e6:.1f} MB "
            f"({(after - before) / before:+.1%}): {word}"
        )
    return flat


def _label(kind: str) -> str:
    return serving.LABELS.get(kind, "the proxy's upstream (bare SDK, stdio)")


def add_options(parser: argparse.ArgumentParser) -> None:
    """The options of this bench (also under ``python -m bench.run --only soak``)."""
    group = parser.add_argument_group("soak")
    group.add_argument("--minutes", type=float, default=30.0, help="soak: how long (default 30)")
    group.add_argument(
        "--every",
        type=float,
        default=10.0,
        help="soak: seconds between memory samples (default 10)",
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_options(parser)
    options = parser.parse_args()
    work = serving.ROOT / "bench" / ".work"
    work.mkdir(exist_ok=True)
    flat = print_report(*run(work, options.minutes, options.every))
    sys.exit(0 if flat else 1)


if __name__ == "__main__":
    main()
