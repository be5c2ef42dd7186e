"""Arize Phoenix (`phoenix serve`) for the tests, from its own venv (``make test`` builds
tests/.work/phoenix-venv from tests/phoenix-requirements.txt): started on 127.0.0.1 with free
ports and a fresh working directory, ready once ``/healthz`` answers, stopped by the test.

Phoenix takes OTLP/HTTP protobuf on its UI port (``/v1/traces``) and answers every request with
an empty ``ExportTraceServiceResponse``, then stores the spans in the background: what it kept is
read back through its REST API (``GET /v1/projects/{project}/spans``), never assumed.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

VENV = Path(__file__).parents[1] / ".work" / "phoenix-venv"
SERVE = VENV / "bin" / "phoenix"
READY_S = 120.0  # the first start runs its database migrations: about 20 s here
POLL_S = 0.2


@dataclass
class Phoenix:
    """A running Phoenix: its base URL (UI, REST and OTLP/HTTP) and its log file."""

    base: str
    log: Path
    process: subprocess.Popen[bytes]

    @property
    def traces_url(self) -> str:
        return self.base + "/v1/traces"

    def get(self, path: str, **query: Any) -> Any:
        """The JSON of a GET on Phoenix's REST API (``query`` values may be lists)."""
        url = self.base + path + "?" + urllib.parse.urlencode(query, doseq=True)
        with urllib.request.urlopen(url, timeout=10) as answer:
            return json.loads(answer.read())

    def spans(self, trace_ids: set[str], project: str = "default") -> list[dict[str, Any]]:
        """Every span Phoenix stored for these traces, all pages read."""
        spans: list[dict[str, Any]] = []
        query: dict[str, Any] = {"trace_id": sorted(trace_ids), "limit": 1000}
        while True:
            page = self.get(f"/v1/projects/{project}/spans", **query)
            spans += page["data"]
            if not page["next_cursor"]:
                return spans
            query["cursor"] = page["next_cursor"]

    def wait_for_spans(
        self, trace_ids: set[str], count: int, timeout: float = 30.0
    ) -> list[dict[str, Any]]:
        """The stored spans of ``trace_ids`` once there are ``count`` of them (Phoenix inserts
        in batches, after it answered), or what there is when ``timeout`` is up."""
        deadline = time.monotonic() + timeout
        spans = self.spans(trace_ids)
        while len(spans) < count and time.monotonic() < deadline:
            self.alive_after(POLL_S)
            spans = self.spans(trace_ids)
        return spans

    def alive_after(self, seconds: float) -> None:
        """Wait ``seconds`` on the process itself: a Phoenix that exits fails at once."""
        try:
            self.process.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            return
        tail = self.log.read_text("utf-8", "replace")[-3000:]
        raise AssertionError(f"phoenix serve exited with {self.process.returncode}:\n{tail}")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def environment(working_dir: Path, port: int, grpc_port: int) -> dict[str, str]:
    """Phoenix's settings (phoenix/config.py of the pinned release): loopback, our ports, a
    fresh SQLite database under ``working_dir``, nothing fetched from the internet (no
    telemetry, no web fonts or version checks from the page)."""
    return {
        **os.environ,
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(grpc_port),
        "PHOENIX_WORKING_DIR": str(working_dir),
        "PHOENIX_TELEMETRY_ENABLED": "false",
        "PHOENIX_ALLOW_EXTERNAL_RESOURCES": "false",
    }


@contextmanager
def running(working_dir: Path) -> Iterator[Phoenix]:
    """``phoenix serve`` until the block ends; ready (``/healthz`` says OK) when it is given.

    Its OTLP/gRPC receiver cannot be told a host and listens on every interface; it gets a
    free port of its own and is not used.
    """
    working_dir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    log = working_dir / "phoenix.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [str(SERVE), "serve"],
            env=environment(working_dir, port, free_port()),
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=working_dir,
        )
        phoenix = Phoenix(f"http://127.0.0.1:{port}", log, process)
        try:
            _wait_ready(phoenix)
            yield phoenix
        finally:
            _stop(process)


def _wait_ready(phoenix: Phoenix) -> None:
    deadline = time.monotonic() + READY_S
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(phoenix.base + "/healthz", timeout=2) as answer:
                if answer.status == 200:
                    return
        except OSError:
            pass
        phoenix.alive_after(POLL_S)
    raise AssertionError(f"phoenix serve was not ready in {READY_S:.0f} s")


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)
