"""Docs that run: every command and code block of the README and docs does what it says."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio.from_thread
import pytest
from starlette.responses import JSONResponse, Response

from schemawire.schema.config import load_config
from schemawire.schema.rules import rules_markdown
from tests.host.loopback import provider

ROOT = Path(__file__).parents[1]
SCHEMAWIRE = Path(sys.executable).with_name("schemawire")


def blocks(text: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", text, flags=re.DOTALL)


# Pages whose console and python blocks run; their commands run in order, in one directory.
PAGES = (
    "README.md",
    "docs/projections.md",
    "docs/gates.md",
    "docs/mcp.md",
    "docs/host.md",
    "docs/diff.md",
    "docs/flows.md",
    "docs/evals.md",
    "docs/traces.md",
)


def console_commands() -> list[tuple[str, str, int]]:
    commands: list[tuple[str, str, int]] = []
    for page in PAGES:
        for block in blocks((ROOT / page).read_text(encoding="utf-8"), "console"):
            for line in block.splitlines():
                if line.startswith("$ "):
                    commands.append((page, line[2:], 0))
                elif line.startswith("# exit "):
                    commands[-1] = (page, commands[-1][1], int(line.removeprefix("# exit ")))
    return commands


def with_schemawire() -> dict[str, str]:
    """The environment with `schemawire` on PATH, as the docs assume (an MCP server command)."""
    return {**os.environ, "PATH": f"{SCHEMAWIRE.parent}{os.pathsep}{os.environ.get('PATH', '')}"}


# A python block that asks a real provider is marked, just above it, with the recorded answers
# the test replays in its place: <!-- replay: tests/data/docs/NAME.json -->
_PYTHON = re.compile(r"(?:<!-- replay: (\S+) -->\n)?```python\n(.*?)```", flags=re.DOTALL)


def python_blocks() -> list[tuple[str, str, str | None]]:
    return [
        (page, found.group(2), found.group(1))
        for page in PAGES
        for found in _PYTHON.finditer((ROOT / page).read_text(encoding="utf-8"))
    ]


@contextlib.contextmanager
def provider_replaying(script: str | None, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """For a block marked with a replay: an OpenAI-compatible server on loopback that answers
    its requests with the recorded responses, in order, where ``OPENAI_BASE_URL`` points."""
    if script is None:
        yield
        return
    responses = json.loads((ROOT / script).read_text(encoding="utf-8"))["responses"]

    def answer(attempt: int, body: dict[str, Any]) -> Response:
        return JSONResponse(responses[attempt - 1])

    with (
        anyio.from_thread.start_blocking_portal("asyncio") as portal,
        portal.wrap_async_context_manager(provider(answer)) as (url, app),
    ):
        monkeypatch.setenv("OPENAI_BASE_URL", f"{url}/v1")
        monkeypatch.setenv("OPENAI_API_KEY", "sk-docs-replay")
        yield
    assert len(app.requests) == len(responses)  # the example asked the model every time


def test_rules_page_matches_the_catalogue() -> None:
    assert (ROOT / "docs/rules.md").read_text(encoding="utf-8") == rules_markdown()


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One directory for the README's commands, run in order, with the examples at hand."""
    directory = tmp_path_factory.mktemp("readme")
    (directory / "examples").symlink_to(ROOT / "examples")
    return directory


@pytest.mark.slow
@pytest.mark.parametrize(("page", "command", "exit_code"), console_commands())
def test_documented_command_runs(page: str, command: str, exit_code: int, workdir: Path) -> None:
    argv = shlex.split(command)
    assert argv[0] == "schemawire"
    completed = subprocess.run(
        [str(SCHEMAWIRE), *argv[1:]],
        cwd=workdir,
        env=with_schemawire(),
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == exit_code, completed.stdout + completed.stderr


@pytest.mark.slow
@pytest.mark.parametrize(("page", "code", "replay"), python_blocks())
def test_documented_python_prints_what_it_shows(
    page: str, code: str, replay: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", with_schemawire()["PATH"])
    expected = [line.removeprefix("# ") for line in code.splitlines() if line.startswith("# ")]
    output = io.StringIO()
    cwd = Path.cwd()
    os.chdir(ROOT)
    try:
        with provider_replaying(replay, monkeypatch), contextlib.redirect_stdout(output):
            exec(compile(code, page, "exec"), {})
    finally:
        os.chdir(cwd)
    assert output.getvalue().splitlines() == expected


def test_configuration_example_is_a_valid_configuration(tmp_path: Path) -> None:
    (example,) = blocks((ROOT / "docs/configuration.md").read_text(encoding="utf-8"), "toml")
    (tmp_path / "schemawire.toml").write_text(example, encoding="utf-8")
    config = load_config(tmp_path)
    assert config.id_base == "https://example.com/"
    assert config.lint.ignores("SW101", "schemas/tools/legacy_refund.json")
