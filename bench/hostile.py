"""Hostile-input bench: the worst shape for each secret detector and each walk of the gates,
and what one worst-case request does to every other client of a server.

    python -m bench.run --only hostile                   # everything (about 15-30 minutes)
    python -m bench.hostile --sizes 1000000 --timeout 60 --skip-latency
    python -m bench.hostile --skip-shapes --big-timeout 60

1. Shapes (`bench/hostile_shapes.py`) at 1 MB and 10 MB: each input is built and run once in a
   fresh process, killed after ``--timeout`` seconds (then reported "> N s"). A row gives the
   time of the gate (or the redactor) alone, the outcome (``accepted``, or the rejection's
   code; for the redactor, how many secrets it replaced), the size of what the model would read
   (the budget is 32,768 bytes), and the process's peak memory above what it held before.
2. Other clients: for each worst-case request, a fresh ``schemawire serve --http`` and, beside
   it, a fresh bare MCP SDK server with the same tool (`bench/bare_server.py`). Four clients
   (the SDK's ``ClientSession`` over Streamable HTTP) call the tool in a loop; after a quiet
   spell (their latency with nothing else going on), a fifth sends the request (its JSON-RPC
   body built beforehand, so the bench's own event loop is not what stalls). Reported: the
   request's own time, and the small calls' p50, p99 and maximum while it was in flight. A
   small call counts when it overlapped the request.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx2

from bench import serving
from bench.hostile_shapes import WALK_SHAPES, detector_shapes

SIZES = (1_000_000, 10_000_000)
SMALL_CLIENTS = 4
QUIET_SECONDS = 2.0
_PROTOCOL = "2025-11-25"

# --- shapes, one process each -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Timed:
    """One shape at one size: its time (None: killed at the timeout), outcome and sizes."""

    group: str
    name: str
    size: int
    seconds: float | None
    outcome: str = ""
    shown_bytes: int | None = None
    peak_mb: float | None = None


def _shapes(group: str) -> dict[str, Any]:
    return detector_shapes() if group == "detector" else WALK_SHAPES


def probe(group: str, name: str, size: int) -> dict[str, Any]:
    """Build the shape, run it once, and say what it took (in this process)."""
    built = _shapes(group)[name](size)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    outcome, shown = built.run()
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "seconds": seconds,
        "outcome": outcome,
        "shown_bytes": shown,
        "size": built.size,
        "peak_mb": (after - before) / 1024,
    }


def timed(group: str, name: str, size: int, timeout: float) -> Timed:
    """``probe`` in a fresh process, killed after ``timeout`` seconds."""
    command = [sys.executable, "-m", "bench.hostile", "--probe", group, name, str(size)]
    try:
        done = subprocess.run(
            command, cwd=serving.ROOT, capture_output=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        return Timed(group, name, size, None, "killed")
    if done.returncode != 0:
        return Timed(group, name, size, None, f"crashed: {done.stderr.decode()[-300:]}")
    got = json.loads(done.stdout)
    return Timed(
        group, name, got["size"], got["seconds"], got["outcome"], got["shown_bytes"], got["peak_mb"]
    )


def run_shapes(sizes: tuple[int, ...], timeout: float, only: str | None = None) -> list[Timed]:
    """Every shape (or those whose name holds ``only``) at every size."""
    rows = []
    for group in ("detector", "walk"):
        for name in _shapes(group):
            if only is not None and only not in name:
                continue
            for size in sizes:
                rows.append(timed(group, name, size, timeout))
                print(f"  {name} at {size:,} bytes: {_seconds(rows[-1], timeout)}", file=sys.stderr)
    return rows


def _seconds(row: Timed, timeout: float) -> str:
    return f"> {timeout:g} s" if row.seconds is None else f"{row.seconds:.3f} s"


def print_shapes(rows: list[Timed], timeout: float) -> None:
    print("| worst shape | input bytes | time | outcome | bytes the model reads | peak MB |")
    print("|---|---:|---:|---|---:|---:|")
    for row in rows:
        shown = "" if row.shown_bytes is None else f"{row.shown_bytes:,}"
        peak = "" if row.peak_mb is None else f"{row.peak_mb:,.0f}"
        print(
            f"| {row.name} | {row.size:,} | {_seconds(row, timeout)} | {row.outcome} | "
            f"{shown} | {peak} |"
        )


# --- other clients during a worst-case request ----------------------------------------------


def _trigger_string(size: int) -> str:
    return "a." * ((size - 4) // 2) + " ://"


BIG_REQUESTS: dict[str, Any] = {
    "array of 500,000 items (1 MB)": lambda: {"items": [0] * 500_000},
    "array of 2,000,000 items (4 MB)": lambda: {"items": [0] * 2_000_000},
    'string of 64 KB: "a." * n + " ://"': lambda: {"city": _trigger_string(64 * 1024)},
    "string of 64 KB: BEGIN PRIVATE KEY headers": lambda: {
        "city": "-----BEGIN RSA PRIVATE KEY-----\n" * (64 * 1024 // 32)
    },
    'string of 1 MB: "a." * n + " ://"': lambda: {"city": _trigger_string(1024 * 1024)},
    "string of 1 MB, one trigger word": lambda: {
        "city": "lorem ipsum dolor " * 29_000 + "password " + "sit amet " * 58_000
    },
}


@dataclass(frozen=True, slots=True)
class Stall:
    """What one worst-case request did to a server: its own time (None: no answer in time),
    the small calls' latencies (ms) with nothing else going on, and while it ran."""

    server: str
    request: str
    big_seconds: float | None
    quiet_ms: list[float]
    during_ms: list[float]
    errors: int


async def _small_caller(
    url: str, log: list[tuple[float, float]], errors: list[str], stop: anyio.Event, number: int
) -> None:
    async with serving.session(url) as client:
        call = 0
        while not stop.is_set():
            started = time.perf_counter()
            try:
                with anyio.fail_after(120):
                    result = await client.call_tool("lookup", serving.small_arguments(number))
                if result.is_error:
                    errors.append("error result")
            except Exception as error:  # counted, not fatal: the table says how many
                errors.append(type(error).__name__)
            log.append((started, time.perf_counter()))
            call += 1


async def _raw_session(http: httpx2.AsyncClient, url: str) -> dict[str, str]:
    """A session opened by hand (so the big request's body can be sent as prepared bytes)."""
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": _PROTOCOL,
            "capabilities": {},
            "clientInfo": {"name": "hostile-bench", "version": "1"},
        },
    }
    answer = await http.post(url, json=init, headers=headers)
    answer.raise_for_status()
    headers = {
        **headers,
        "mcp-protocol-version": _PROTOCOL,
        "mcp-session-id": answer.headers["mcp-session-id"],
    }
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    (await http.post(url, json=note, headers=headers)).raise_for_status()
    return headers


async def _big_call(url: str, body: bytes, timeout: float) -> float | None:
    async with httpx2.AsyncClient(timeout=httpx2.Timeout(timeout)) as http:
        headers = await _raw_session(http, url)
        started = time.perf_counter()
        try:
            with anyio.fail_after(timeout):
                answer = await http.post(url, content=body, headers=headers)
                await answer.aread()
        except (TimeoutError, httpx2.TimeoutException):
            return None
        return time.perf_counter() - started


def _overlapping(log: list[tuple[float, float]], start: float, end: float) -> list[float]:
    return [(b - a) * 1000 for a, b in log if a < end and b > start]


async def _stall(
    url: str, body: bytes, timeout: float
) -> tuple[float | None, list[float], list[float], int]:
    log: list[tuple[float, float]] = []
    errors: list[str] = []
    stop = anyio.Event()
    async with anyio.create_task_group() as group:
        for number in range(SMALL_CLIENTS):
            group.start_soon(_small_caller, url, log, errors, stop, number)
        with anyio.fail_after(60):
            while len(log) < 10 * SMALL_CLIENTS:  # warmed up
                await anyio.sleep(0.05)
        quiet_start = time.perf_counter()
        await anyio.sleep(QUIET_SECONDS)
        quiet = _overlapping(log, quiet_start, time.perf_counter())
        started = time.perf_counter()
        big = await _big_call(url, body, timeout)
        ended = time.perf_counter()
        stop.set()  # the calls in flight finish (and are logged) before the group exits
    return big, quiet, _overlapping(log, started, ended), len(errors)


def run_stalls(work: Path, timeout: float, only: str | None = None) -> list[Stall]:
    """Every big request against a fresh server of each kind."""
    repository = serving.make_repository(work)
    rows = []
    for label, arguments in BIG_REQUESTS.items():
        if only is not None and only not in label:
            continue
        call = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "lookup", "arguments": arguments()},
        }
        body = json.dumps(call, separators=(",", ":")).encode()
        for kind in ("ours", "bare"):
            with serving.started(kind, repository) as server:
                big, quiet, during, errors = anyio.run(_stall, server.url, body, timeout)
            rows.append(Stall(kind, label, big, quiet, during, errors))
            print(f"  {label}, {kind}: {big}", file=sys.stderr)
    return rows


def _percentile(values: list[float], share: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))]


def _ms(value: float | None) -> str:
    return "" if value is None else f"{value:,.0f}"


def print_stalls(rows: list[Stall], timeout: float) -> None:
    print(
        f"| worst-case request ({SMALL_CLIENTS} other clients calling) | server "
        "| its time | others' p50 ms quiet | p99 quiet | p50 during | p99 during | max during "
        "| small calls during | errors |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        took = f"> {timeout:g} s" if row.big_seconds is None else f"{row.big_seconds:.2f} s"
        quiet = statistics.median(row.quiet_ms) if row.quiet_ms else None
        print(
            f"| {row.request} | {serving.LABELS[row.server]} | {took} | {_ms(quiet)} | "
            f"{_ms(_percentile(row.quiet_ms, 0.99))} | "
            f"{_ms(_percentile(row.during_ms, 0.5))} | {_ms(_percentile(row.during_ms, 0.99))} | "
            f"{_ms(max(row.during_ms, default=None))} | {len(row.during_ms)} | {row.errors} |"
        )


# --- the command ------------------------------------------------------------------------------


def run(work: Path, options: argparse.Namespace) -> None:
    """Both parts, as ``options`` say, printed as tables."""
    if not options.skip_shapes:
        print_shapes(
            run_shapes(options.sizes, options.timeout, options.only_shape), options.timeout
        )
        print()
    if not options.skip_latency:
        print_stalls(run_stalls(work, options.big_timeout, options.only_shape), options.big_timeout)


def add_options(parser: argparse.ArgumentParser) -> None:
    """The options of this bench (also under ``python -m bench.run --only hostile``)."""
    group = parser.add_argument_group("hostile")
    group.add_argument(
        "--sizes",
        type=int,
        nargs="+",
        default=list(SIZES),
        help="hostile: input sizes in bytes (default 1 MB and 10 MB)",
    )
    group.add_argument(
        "--timeout",
        type=float,
        default=60.0,
        help="hostile: seconds a shape may take before it is killed",
    )
    group.add_argument(
        "--big-timeout",
        type=float,
        default=60.0,
        help="hostile: seconds the worst-case request may take",
    )
    group.add_argument(
        "--only-shape",
        dest="only_shape",
        default=None,
        help="hostile: only shapes and requests whose name holds this",
    )
    group.add_argument("--skip-shapes", action="store_true", help="hostile: no shape table")
    group.add_argument("--skip-latency", action="store_true", help="hostile: no latency table")


def main() -> None:
    if sys.argv[1:2] == ["--probe"]:
        group, name, size = sys.argv[2:5]
        print(json.dumps(probe(group, name, int(size))))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_options(parser)
    options = parser.parse_args()
    options.sizes = tuple(options.sizes)
    work = serving.ROOT / "bench" / ".work"
    work.mkdir(exist_ok=True)
    run(work, options)


if __name__ == "__main__":
    main()
