"""What each command imports: only what it uses (the goals are timed by ``make bench``; these
tests time nothing, they read ``sys.modules`` as the process exits).

``--version`` and ``--help`` answer without Typer, from the help Typer renders (stored in
src/schemawire/cli and compared here with a fresh rendering); each command loads its own module
and no other; ``check`` never loads the MCP SDK, an HTTP client or the host; ``eval`` of Python
tools and scripted models loads neither the MCP SDK nor the HTTP client.
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import select
import shutil
import struct
import subprocess
import sys
import termios
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from schemawire._version import __version__
from schemawire.cli import _toplevel as toplevel
from schemawire.cli._app import COMMANDS, Command
from tests.helpers import EXAMPLES

pytestmark = pytest.mark.slow  # every test starts the console script as a process

STORED = Path(toplevel.__file__).parent
COMMAND_MODULES = sorted({command.target.partition(":")[0] for command in COMMANDS})
NOT_FOR_HELP = ("typer", "rich", "click", "pydantic", "mcp", "httpx2", "jsonschema_rs", "anyio")

# Runs ``schemawire ARGS`` as the console script does, then writes the names of every module
# loaded to the file named by the first argument (at exit, so after the command's own exit).
_WRAPPER = """
import atexit, json, sys
modules_file = sys.argv.pop(1)
sys.argv[0] = "schemawire"
def _write_modules():
    with open(modules_file, "w", encoding="utf-8") as file:
        json.dump(sorted(sys.modules), file)
atexit.register(_write_modules)
from schemawire.cli import main

main()
"""


@dataclass(frozen=True)
class Ran:
    code: int
    stdout: str
    stderr: str
    modules: frozenset[str]

    def loaded(self, *names: str) -> list[str]:
        """Which of the packages ``names`` (or their submodules) the command imported."""
        return sorted(
            m for m in self.modules if m in names or m.startswith(tuple(f"{n}." for n in names))
        )


def plain_environment(**overrides: str) -> dict[str, str]:
    """This environment without what changes how rich renders (CI sets some), UTF-8 output."""
    env = {k: v for k, v in os.environ.items() if k not in toplevel.RENDERING_VARIABLES}
    env["PYTHONIOENCODING"] = "utf-8"
    return {**env, **overrides}


def schemawire(tmp_path: Path, *args: str, cwd: Path | None = None, **env: str) -> Ran:
    modules = tmp_path / "modules.json"
    completed = subprocess.run(
        [sys.executable, "-c", _WRAPPER, str(modules), *args],
        cwd=cwd or tmp_path,
        env=plain_environment(**env),
        capture_output=True,
        encoding="utf-8",
        timeout=120,
        check=False,
    )
    loaded = frozenset(json.loads(modules.read_text(encoding="utf-8")))
    return Ran(completed.returncode, completed.stdout, completed.stderr, loaded)


def typer_renders_help(*, colour: bool, width: int = toplevel.WIDTH) -> str:
    """The top-level help as Typer renders it: plain, or as a colour terminal shows it."""
    colours = {"FORCE_COLOR": "1", "TERM": "xterm-256color"} if colour else {}
    completed = subprocess.run(
        [
            sys.executable,
            "-c",
            "from schemawire.cli._app import app; app(prog_name='schemawire')",
            "--help",
        ],
        env=plain_environment(COLUMNS=str(width), **colours),
        capture_output=True,
        encoding="utf-8",
        timeout=60,
        check=True,
    )
    return completed.stdout


# --- the stored help ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "colour"), [(toplevel.PLAIN_HELP, False), (toplevel.COLOUR_HELP, True)]
)
def test_the_stored_top_level_help_is_what_typer_renders(name: str, colour: bool) -> None:
    rendered = typer_renders_help(colour=colour)
    path = STORED / name
    if os.environ.get("SCHEMAWIRE_UPDATE_SNAPSHOTS") == "1":
        path.write_text(rendered, encoding="utf-8")
    assert path.read_text(encoding="utf-8") == rendered, (
        f"{name} is not what Typer renders for the app: run "
        "SCHEMAWIRE_UPDATE_SNAPSHOTS=1 pytest tests/cli/test_startup.py, and commit the file"
    )


def test_the_top_level_help_lists_every_command_with_its_summary_on_one_line() -> None:
    lines = (STORED / toplevel.PLAIN_HELP).read_text(encoding="utf-8").splitlines()
    for command in COMMANDS:
        row = next(line for line in lines if line.startswith(f"│ {command.name} "))
        assert command.summary in row, command.name
    assert "\x1b[" in (STORED / toplevel.COLOUR_HELP).read_text(encoding="utf-8")


# --- --help and --version without Typer ----------------------------------------------------------


@pytest.mark.parametrize(("args", "code"), [(["--help"], 0), ([], 2)])
def test_help_is_printed_without_typer_or_any_command(
    tmp_path: Path, args: list[str], code: int
) -> None:
    ran = schemawire(tmp_path, *args)
    assert ran.code == code
    assert ran.stdout == (STORED / toplevel.PLAIN_HELP).read_text(encoding="utf-8")
    assert ran.loaded(*NOT_FOR_HELP, *COMMAND_MODULES, "schemawire.cli._app") == []


def test_version_is_printed_without_typer(tmp_path: Path) -> None:
    ran = schemawire(tmp_path, "--version")
    assert (ran.code, ran.stdout) == (0, f"schemawire {__version__}\n")
    assert ran.loaded(*NOT_FOR_HELP, "schemawire.cli._app") == []


def test_where_rich_would_render_otherwise_typer_renders_the_help_and_no_command(
    tmp_path: Path,
) -> None:
    wide = schemawire(tmp_path, "--help", COLUMNS="100")
    assert wide.code == 0
    assert wide.stdout == typer_renders_help(colour=False, width=100)
    assert wide.loaded("typer")
    assert wide.loaded(*COMMAND_MODULES, "mcp", "httpx2", "jsonschema_rs") == []


def test_a_colour_terminal_gets_the_stored_colours_and_a_narrow_one_typers_rendering(
    tmp_path: Path,
) -> None:
    coloured = (STORED / toplevel.COLOUR_HELP).read_text(encoding="utf-8")
    assert on_a_terminal(tmp_path, "-m", "schemawire", "--help", columns=120) == coloured
    narrow = on_a_terminal(tmp_path, "-m", "schemawire", "--help", columns=60)
    assert narrow != coloured
    assert all(command.name in narrow for command in COMMANDS)


def test_the_stored_colours_are_what_typer_renders_on_a_terminal_as_wide(tmp_path: Path) -> None:
    typer_app = "from schemawire.cli._app import app; app(prog_name='schemawire')"
    rendered = on_a_terminal(tmp_path, "-c", typer_app, "--help", columns=toplevel.WIDTH)
    assert rendered == (STORED / toplevel.COLOUR_HELP).read_text(encoding="utf-8")


def on_a_terminal(tmp_path: Path, *python_args: str, columns: int) -> str:
    """What ``python PYTHON_ARGS`` writes to a pseudo-terminal ``columns`` wide."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    env = plain_environment(TERM="xterm-256color")
    del env["PYTHONIOENCODING"]  # a terminal's encoding is the locale's
    with subprocess.Popen(
        [sys.executable, *python_args],
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        stdout=follower,
        stderr=subprocess.PIPE,
        env=env,
    ) as process:
        os.close(follower)
        output = _read_until_closed(leader)
        assert process.wait(timeout=60) == 0, process.stderr.read() if process.stderr else ""
    os.close(leader)
    return output.decode("utf-8").replace("\r\n", "\n")


def _read_until_closed(fd: int, timeout: float = 60) -> bytes:
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], deadline - time.monotonic())
        if not ready:
            break
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # the terminal closes when the process exits
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


# --- each command imports what it uses ------------------------------------------------------------


@pytest.mark.parametrize("command", COMMANDS, ids=lambda command: command.name)
def test_a_commands_help_loads_its_own_module_and_no_other(
    tmp_path: Path, command: Command
) -> None:
    own = command.target.partition(":")[0]
    ran = schemawire(tmp_path, command.name, "--help")
    assert ran.code == 0, ran.stderr
    assert "Examples" in ran.stdout
    assert ran.loaded(*COMMAND_MODULES) == [own]
    assert ran.loaded("mcp", "httpx2") == []


def test_check_loads_no_mcp_sdk_http_client_or_host(tmp_path: Path) -> None:
    ran = schemawire(tmp_path, "check", str(EXAMPLES / "support-desk"))
    assert ran.code == 0, ran.stdout + ran.stderr
    assert (
        ran.loaded("mcp", "mcp_types", "httpx2", "anyio", "schemawire.host", "schemawire.mcp") == []
    )


def test_the_eval_of_a_blank_repository_loads_no_mcp_sdk(tmp_path: Path) -> None:
    assert schemawire(tmp_path, "init", "--blank", "agent").code == 0
    ran = schemawire(tmp_path, "eval", cwd=tmp_path / "agent")
    assert ran.code == 0, ran.stdout + ran.stderr
    assert "1 passed" in ran.stdout
    assert ran.loaded("mcp", "mcp_types", "schemawire.mcp", "httpx2") == []


def test_the_refund_examples_evals_load_no_mcp_sdk(tmp_path: Path) -> None:
    cases = tmp_path / "refund"
    shutil.copytree(EXAMPLES / "refund", cases, ignore=shutil.ignore_patterns("__pycache__"))
    ran = schemawire(tmp_path, "eval", cwd=cases)
    assert ran.code == 0, ran.stdout + ran.stderr
    assert "3 passed" in ran.stdout
    assert ran.loaded("mcp", "mcp_types", "schemawire.mcp", "httpx2") == []
