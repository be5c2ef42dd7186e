"""The servers and clients that `bench/hostile.py`, `bench/load.py` and `bench/soak.py` share.

- `make_repository`: a tiny repository under ``bench/.work`` with one tool, ``lookup``
  (``city``: a string, ``items``: an array of integers), implemented in Python.
- `started`: a server in its own process (and process group) for as long as a block runs:
  ``schemawire serve --http`` on that repository (``ours``), the same tool on the bare MCP SDK
  (``bare``, `bench/bare_server.py`: no gates, no trace), or schemawire's gating proxy over
  Streamable HTTP in front of the bare server over stdio (``proxy``). On exit the whole group
  is stopped (SIGTERM, then SIGKILL), so a proxy's upstream goes with it.
- `session`: an MCP SDK client session over Streamable HTTP, bounded.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

ROOT = Path(__file__).parents[1]
SCHEMAWIRE = Path(sys.executable).with_name("schemawire")
KINDS = ("ours", "bare", "proxy")
LABELS = {
    "ours": "schemawire serve --http",
    "bare": "bare MCP SDK server",
    "proxy": "schemawire proxy (--http --upstream)",
}
_STARTUP_SECONDS = 60.0
_STOP_SECONDS = 10.0
_LISTENING = re.compile(rb"http://127\.0\.0\.1:(\d+)/mcp")

LOOKUP_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://example.com/schemas/tools/lookup.json",
    "x-version": "1.0.0",
    "title": "lookup",
    "description": "Look a city up, with optional item numbers.",
    "type": "object",
    "properties": {
        "city": {"type": "string", "description": "A city's name."},
        "items": {"type": "array", "items": {"type": "integer"}, "description": "Numbers."},
    },
    "additionalProperties": False,
}
_SETTINGS = """\
[repository]
id-base = "https://example.com/"

[serve]
name = "bench-lookup"
python-path = ["."]

[serve.tools]
lookup = "implementations:lookup"
"""
_IMPLEMENTATIONS = '''\
"""The bench's one tool."""

from typing import Any


def lookup(city: str = "", items: list[int] | None = None) -> dict[str, Any]:
    """A short answer whatever the size of the question."""
    return {"city": city[:20], "items": len(items or ())}
'''


def make_repository(work: Path) -> Path:
    """The bench's repository under ``work`` (written afresh): its root."""
    root = work / "lookup-repository"
    (root / "schemas" / "tools").mkdir(parents=True, exist_ok=True)
    (root / "schemas" / "tools" / "lookup.json").write_text(json.dumps(LOOKUP_SCHEMA, indent=2))
    (root / "schemawire.toml").write_text(_SETTINGS)
    (root / "implementations.py").write_text(_IMPLEMENTATIONS)
    return root


@dataclass(frozen=True, slots=True)
class Server:
    """A server running in its own process: what it is, its URL and its process id."""

    kind: str
    url: str
    pid: int


def _command(kind: str, repository: Path, trace: Path | None) -> list[str]:
    bare = [sys.executable, "-m", "bench.bare_server"]
    traced = ["--trace", str(trace)] if trace is not None else []
    if kind == "bare":
        return [*bare, "--http"]
    if kind == "ours":
        return [str(SCHEMAWIRE), "serve", str(repository), "--http", "--port", "0", *traced]
    if kind == "proxy":
        return [
            str(SCHEMAWIRE),
            "serve",
            "--repo",
            str(repository),
            "--http",
            "--port",
            "0",
            *traced,
            "--upstream",
            "--",
            *bare,
        ]
    raise ValueError(f"no server kind {kind!r}: one of {', '.join(KINDS)}")


@contextlib.contextmanager
def started(kind: str, repository: Path, trace: Path | None = None) -> Iterator[Server]:
    """``kind`` (see `KINDS`) serving on a free loopback port while the block runs.

    Raises:
        RuntimeError: the server did not say where it listens within a minute.
    """
    process = subprocess.Popen(
        _command(kind, repository, trace),
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own process group: stopped whole, upstream included
    )
    try:
        port = _port(process)
        yield Server(kind, f"http://127.0.0.1:{port}/mcp", process.pid)
    finally:
        _stop(process)


def _port(process: subprocess.Popen[bytes]) -> int:
    """The port the server announces on stderr (read line by line, up to a deadline)."""
    assert process.stderr is not None
    deadline = time.monotonic() + _STARTUP_SECONDS
    said = b""
    while time.monotonic() < deadline:
        line = process.stderr.readline()
        if not line and process.poll() is not None:
            break
        said += line
        found = _LISTENING.search(line)
        if found:
            _drain(process)
            return int(found.group(1))
    raise RuntimeError(f"the server did not start: {said.decode(errors='replace')[-2000:]}")


def _drain(process: subprocess.Popen[bytes]) -> None:
    """Read what the server writes to stderr from now on, so that a full pipe never blocks it."""
    stream = process.stderr
    assert stream is not None
    threading.Thread(target=lambda: [None for _ in stream], daemon=True).start()


def _stop(process: subprocess.Popen[bytes]) -> None:
    """Stop the server's whole process group: SIGTERM, and SIGKILL if it lingers."""
    for sent in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, sent)
        try:
            process.wait(_STOP_SECONDS)
        except subprocess.TimeoutExpired:
            continue
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)  # the upstream, if it outlived its proxy
        return


@asynccontextmanager
async def session(url: str, timeout: float = 120.0) -> AsyncIterator[ClientSession]:
    """An initialised MCP SDK client session to ``url`` over Streamable HTTP; requests bounded
    by ``timeout`` seconds."""
    async with AsyncExitStack() as stack:
        http = await stack.enter_async_context(
            httpx2.AsyncClient(timeout=httpx2.Timeout(timeout, read=timeout))
        )
        read, write = await stack.enter_async_context(streamable_http_client(url, http_client=http))
        client = await stack.enter_async_context(ClientSession(read, write))
        with anyio.fail_after(timeout):
            await client.initialize()
        yield client


def rss_bytes(pid: int) -> int:
    """The resident set size of process ``pid``, in bytes (psutil if installed, else /proc)."""
    try:
        import psutil
    except ImportError:
        return _proc_rss(pid)
    return int(psutil.Process(pid).memory_info().rss)


def _proc_rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise ProcessLookupError(pid)


def cpu_seconds(pid: int) -> float:
    """The CPU time (user and system, every thread) process ``pid`` has used, in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime


def children(pid: int) -> list[int]:
    """The process ids of ``pid``'s direct children (a proxy's upstream)."""
    path = Path(f"/proc/{pid}/task/{pid}/children")
    try:
        return [int(child) for child in path.read_text().split()]
    except OSError:
        return []


def small_arguments(number: int) -> dict[str, Any]:
    """The arguments of one small call."""
    return {"city": f"Paris {number % 100}", "items": [number % 7, 1, 2]}
