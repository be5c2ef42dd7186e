"""Capture the real ``tools/list`` results of more MCP servers from npm, for the shortlist's
user-style query set (``bench/data/shortlist-user.jsonl``), into ``more/``.

A developer tool, run by hand from the repository root, never by the tests. The servers are not
test peers: install them into a temporary directory outside the repository first::

    MORE=$(mktemp -d) && cd "$MORE" && npm init -y && npm install --no-audit --no-fund \
        @modelcontextprotocol/server-sequential-thinking @modelcontextprotocol/server-github \
        @modelcontextprotocol/server-slack @modelcontextprotocol/server-google-maps \
        @playwright/mcp chrome-devtools-mcp @notionhq/notion-mcp-server
    cd - && .venv/bin/python tests/data/mcp-tools/capture_more.py "$MORE"

Each server is started over stdio from that directory's ``node_modules/.bin`` and captured the
way ``capture.py`` captures the reference servers (its session, tap and checks are reused): the
``tools/list`` result exactly as it came over the wire. No server is given a real token or a
browser: listing tools needs neither (slack and google-maps are given stand-in values, without
which they refuse to start). Where the data came from goes to ``more/PROVENANCE.json``. They
sit in a folder of their own so that what reads every ``*.json`` here (the projection bench's
corpus, the importer's tests) keeps reading the three reference servers only.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path
from typing import Any

import anyio
from capture import HERE, ROOT, CaptureError, as_json, capture_or_explain, tools_list

MORE = HERE / "more"


@dataclass(frozen=True)
class NpmServer:
    """A server installed from npm: the name its data is saved under, its package and binary."""

    name: str
    package: str
    binary: str
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    prefix: Path = Path()

    @property
    def command(self) -> Path:
        return self.prefix / "node_modules" / ".bin" / self.binary


SERVERS = (
    NpmServer(
        "sequential-thinking",
        "@modelcontextprotocol/server-sequential-thinking",
        "mcp-server-sequential-thinking",
    ),
    NpmServer("github", "@modelcontextprotocol/server-github", "mcp-server-github"),
    # These two refuse to start without their variables; they never use them to list tools.
    NpmServer(
        "slack",
        "@modelcontextprotocol/server-slack",
        "mcp-server-slack",
        env={"SLACK_BOT_TOKEN": "not-a-token", "SLACK_TEAM_ID": "not-a-team"},
    ),
    NpmServer(
        "google-maps",
        "@modelcontextprotocol/server-google-maps",
        "mcp-server-google-maps",
        env={"GOOGLE_MAPS_API_KEY": "not-a-key"},
    ),
    NpmServer("playwright", "@playwright/mcp", "playwright-mcp", ("--headless",)),
    NpmServer("chrome-devtools", "chrome-devtools-mcp", "chrome-devtools-mcp"),
    NpmServer("notion", "@notionhq/notion-mcp-server", "notion-mcp-server"),
)


def installed_version(prefix: Path, package: str) -> str:
    """The version of ``package`` that npm installed under ``prefix``."""
    manifest = prefix / "node_modules" / package / "package.json"
    found: str = json.loads(manifest.read_text(encoding="utf-8"))["version"]
    return found


async def capture_all(prefix: Path, scratch: Path) -> dict[str, str]:
    """Every file to write, by name, once every server has answered."""
    servers = [
        NpmServer(s.name, s.package, s.binary, s.args, {**os.environ, **s.env}, prefix)
        for s in SERVERS
    ]
    taps = {server.name: await capture_or_explain(server, scratch) for server in servers}  # type: ignore[arg-type]
    files = {f"{name}.json": as_json(tools_list(tap, {})) for name, tap in taps.items()}
    machine_paths = (str(scratch), str(prefix), str(ROOT), str(Path.home()))
    for name, text in files.items():
        if any(path in text for path in machine_paths):
            raise CaptureError(f"{name} names a path of this machine; add a placeholder")
    files["PROVENANCE.json"] = as_json(
        {
            "capturedOn": datetime.now(UTC).date().isoformat(),
            "client": {"package": "mcp", "version": version("mcp")},
            "servers": {s.name: provenance(s, taps[s.name].results, prefix) for s in servers},
        }
    )
    return files


def provenance(server: NpmServer, results: dict[str, Any], prefix: Path) -> dict[str, Any]:
    """Which package and version answered, and what it said about itself in ``initialize``."""
    initialized = results["initialize"][0]
    return {
        "package": server.package,
        "version": installed_version(prefix, server.package),
        "serverInfo": initialized["serverInfo"],
        "protocolVersion": initialized["protocolVersion"],
    }


def main(argv: list[str]) -> int:
    """Captures every server under the npm prefix given, then writes the files."""
    if len(argv) != 1:
        print("usage: capture_more.py NPM_PREFIX", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="mcp-tools-") as scratch:
        try:
            files = anyio.run(capture_all, Path(argv[0]).resolve(), Path(scratch))
        except CaptureError as error:
            print(f"capture_more.py: {error}", file=sys.stderr)
            return 1
    for name, text in files.items():
        (MORE / name).write_text(text, encoding="utf-8")
        if name != "PROVENANCE.json":
            print(f"{name}: {len(json.loads(text)['tools'])} tools")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
