"""docs/security.md says what the defaults are: each figure it gives is the one the code uses."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from schemawire._json import load_file
from schemawire.gates import ResultOptions, ValueLimits
from schemawire.gates.redact import default_redactor
from schemawire.gates.results import _RESULT_LIMITS
from schemawire.mcp._http import HttpOptions
from schemawire.mcp._offload import OFFLOAD_FROM, WORKERS

ROOT = Path(__file__).parents[1]
PAGE = (ROOT / "docs" / "security.md").read_text(encoding="utf-8")
CORPUS = ROOT / "tests" / "data" / "secrets.json"


def rows(heading: str) -> dict[str, list[str]]:
    """The first table under ``heading``: its first cell -> the other cells."""
    section = PAGE.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]
    table = [line for line in section.splitlines() if line.startswith("| ")][1:]  # no header
    cells = [[cell.strip() for cell in line.strip("|").split("|")] for line in table]
    return {row[0]: row[1:] for row in cells}


def test_the_server_settings_are_the_defaults_and_flags_of_serve() -> None:
    table = rows("The server: `schemawire serve` and the gating proxy")
    options = HttpOptions()
    assert table["request headers must arrive within"][0] == f"{options.header_timeout:g} s"
    assert table["a request body must arrive within"][0].startswith(f"{options.body_timeout:g} s")
    assert table["a session with no request ends after"][0] == f"{options.sessions.idle:g} s"
    assert table["sessions per client address"][0] == str(options.sessions.per_client)
    assert table["sessions in all"][0] == str(options.sessions.total)
    assert options.host in table["address"][0]
    help_text = subprocess.run(
        [sys.executable, "-m", "schemawire", "serve", "--help"],
        capture_output=True,
        text=True,
        check=True,
        env={"COLUMNS": "200", "TERM": "dumb", "NO_COLOR": "1"},
    ).stdout
    flags = {
        flag for _, flag_cell in table.values() for flag in re.findall(r"--[a-z-]+", flag_cell)
    }
    assert len(flags) >= 8
    assert [flag for flag in sorted(flags) if flag not in help_text] == []


def test_the_work_moved_off_the_loop_is_as_said() -> None:
    assert OFFLOAD_FROM == 16 * 1024
    assert f"{OFFLOAD_FROM // 1024} KiB or more" in PAGE
    assert f"({WORKERS} at most)" in PAGE


def test_the_limits_are_those_of_the_gates() -> None:
    table = rows("Limits")
    arguments, budget = ValueLimits(), ResultOptions().max_bytes
    assert table["bytes of the value, as compact JSON"][0] == "1 MiB (`maxBytes`)"
    assert arguments.max_bytes == 1024 * 1024
    depth = [f"{arguments.max_depth} (`maxDepth`)", str(_RESULT_LIMITS.max_depth)]
    assert table["depth of nesting"] == depth
    assert table["characters of one string or key"][0] == f"{arguments.max_string:,} (`maxLength`)"
    items = table["items of one array, members of one object"]
    assert items == [f"{arguments.max_items:,} (`maxItems`)", f"{_RESULT_LIMITS.max_items:,}"]
    results = table["bytes of the value, as compact JSON"][1]
    assert results.startswith(f"{_RESULT_LIMITS.max_bytes // 2**20} MiB refused")
    assert f"{budget // 1024} KiB is what the model reads" in results


def test_the_corpus_figures_are_the_corpus() -> None:
    corpus = load_file(CORPUS)
    assert isinstance(corpus, dict)
    kinds = {case["kind"] for case in corpus["secrets"]}
    assert f"{len(corpus['secrets'])} secrets of {len(kinds)} kinds" in PAGE
    assert f"none of the {len(corpus['look_alikes'])}" in PAGE
    assert f"one of the {len(default_redactor().detectors)} detectors" in PAGE


def test_the_local_page_headers_are_the_ones_it_sends() -> None:
    from schemawire.ui._security import SECURITY_HEADERS

    table = rows("The local page: `schemawire ui`")
    policy = dict(SECURITY_HEADERS)[b"content-security-policy"].decode()
    assert f"`Content-Security-Policy: {policy}`" in table["what the page loads"][0]
    others = table["other headers"][0]
    for name, value in SECURITY_HEADERS:
        if name != b"content-security-policy":
            assert name.decode().lower() in others.lower(), name
            assert value.decode().lower() in others.lower(), value
