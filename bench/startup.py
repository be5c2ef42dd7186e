"""Startup bench: whole-process wall time of the commands people type, beside check-jsonschema.

Each command runs in a fresh process, ``runs`` times, interleaved round by round (so drift on a
shared machine hits every command alike); the table gives the median and the fastest run. Each
runs once before timing, with bytecode written (``PYTHONDONTWRITEBYTECODE`` is taken out of the
environment), as an installed package runs. Output goes to a pipe, with none of the variables
that change how rich renders set.

- the floor: ``python -c pass`` and ``python -c "import schemawire"``;
- ``schemawire --version`` and ``--help``;
- ``schemawire check`` of examples/support-desk, beside check-jsonschema on one of its schemas
  (``--check-metaschema``, and ``--schemafile`` with that tool's valid fixtures);
- ``schemawire eval`` of examples/refund's cases (a flow, Python tools, scripted models);
- ``schemawire call --url`` to a ``schemawire serve --http`` this bench starts and stops.

The goals (issue 11): ``--help`` and ``--version`` at most 1.5x ``import schemawire``; ``check``
of the example at most check-jsonschema's time for one file.
"""

from __future__ import annotations

import os
import select
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from schemawire.cli._toplevel import RENDERING_VARIABLES

ROOT = Path(__file__).parents[1]
BIN = Path(sys.executable).parent
SCHEMA = Path("schemas/tools/get_weather.json")  # self-contained: check-jsonschema fetches $refs
FIXTURES = Path("fixtures/tools/get_weather/valid")
CALL_ARGUMENTS = '{"city": "Paris"}'
SERVER_START_TIMEOUT = 60.0


@dataclass(frozen=True)
class Command:
    label: str
    argv: list[str]
    cwd: Path


@dataclass(frozen=True)
class Row:
    label: str
    median: float
    fastest: float


def run(work: Path, runs: int) -> list[Row]:
    """Time every command ``runs`` times, interleaved, with a server up for ``call --url``."""
    desk, refund = _copies(work / "startup")
    environment = _environment()
    with _serving(desk, environment) as url:
        commands = _commands(desk, refund, url)
        for command in commands:  # bytecode written, files in the page cache
            _time(command, environment)
        samples: dict[str, list[float]] = {command.label: [] for command in commands}
        for _ in range(runs):
            for command in commands:
                samples[command.label].append(_time(command, environment))
    return [Row(label, statistics.median(times), min(times)) for label, times in samples.items()]


def _copies(folder: Path) -> tuple[Path, Path]:
    """Fresh copies of the two examples, so the runs write nothing into the project."""
    shutil.rmtree(folder, ignore_errors=True)
    ignore = shutil.ignore_patterns("__pycache__", ".schemawire")
    desk = shutil.copytree(
        ROOT / "examples" / "support-desk", folder / "support-desk", ignore=ignore
    )
    refund = shutil.copytree(ROOT / "examples" / "refund", folder / "refund", ignore=ignore)
    return desk, refund


def _environment() -> dict[str, str]:
    unset = {"PYTHONDONTWRITEBYTECODE", *RENDERING_VARIABLES}
    return {name: value for name, value in os.environ.items() if name not in unset}


def _commands(desk: Path, refund: Path, url: str) -> list[Command]:
    python, schemawire = str(BIN / "python"), str(BIN / "schemawire")
    check_jsonschema = str(BIN / "check-jsonschema")
    fixtures = [str(FIXTURES / path.name) for path in sorted((desk / FIXTURES).glob("*.json"))]
    return [
        Command("python -c pass", [python, "-c", "pass"], desk),
        Command('python -c "import schemawire"', [python, "-c", "import schemawire"], desk),
        Command("schemawire --version", [schemawire, "--version"], desk),
        Command("schemawire --help", [schemawire, "--help"], desk),
        Command("schemawire check examples/support-desk", [schemawire, "check", "."], desk),
        Command(
            f"check-jsonschema --check-metaschema {SCHEMA.name}",
            [check_jsonschema, "--check-metaschema", str(SCHEMA)],
            desk,
        ),
        Command(
            f"check-jsonschema --schemafile {SCHEMA.name} ({len(fixtures)} fixtures)",
            [check_jsonschema, "--schemafile", str(SCHEMA), *fixtures],
            desk,
        ),
        Command("schemawire eval examples/refund (3 cases)", [schemawire, "eval"], refund),
        Command(
            "schemawire call get_weather --url (serve --http)",
            [schemawire, "call", "get_weather", CALL_ARGUMENTS, "--url", url],
            desk,
        ),
    ]


def _time(command: Command, environment: dict[str, str]) -> float:
    start = time.perf_counter()
    completed = subprocess.run(
        command.argv,
        cwd=command.cwd,
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        timeout=120,
        check=False,
    )
    elapsed = time.perf_counter() - start
    if completed.returncode != 0:
        why = completed.stderr.decode(errors="replace").strip()[-500:]
        raise RuntimeError(f"{command.label} exited {completed.returncode}: {why}")
    return elapsed


@contextmanager
def _serving(root: Path, environment: dict[str, str]) -> Iterator[str]:
    """``schemawire serve --http`` on a free loopback port, stopped afterwards; yields its URL."""
    argv = [str(BIN / "schemawire"), "serve", "--http", "--port", "0"]
    with subprocess.Popen(argv, cwd=root, env=environment, stderr=subprocess.PIPE) as server:
        try:
            yield _announced_url(server)
        finally:
            server.terminate()
            server.wait(timeout=30)


def _announced_url(server: subprocess.Popen[bytes]) -> str:
    """The URL the server says it listens at (its first line on stderr), waited for a bounded
    time."""
    assert server.stderr is not None
    pipe = server.stderr.fileno()  # read unbuffered: select sees only what the pipe holds
    deadline = time.monotonic() + SERVER_START_TIMEOUT
    line = b""
    while b"\n" not in line:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([pipe], [], [], left)[0]:
            raise RuntimeError("schemawire serve --http did not say where it listens")
        chunk = os.read(pipe, 4096)
        if not chunk:
            raise RuntimeError(f"schemawire serve --http exited: {line.decode(errors='replace')}")
        line += chunk
    text = line.decode().partition("\n")[0].strip()
    if " at " not in text:
        raise RuntimeError(f"schemawire serve --http said {text!r}, not where it listens")
    return text.rsplit(" at ", 1)[1]


def print_table(rows: list[Row], runs: int) -> None:
    """The table, then each goal's ratio."""
    by_label = {row.label: row for row in rows}
    floor = by_label["python -c pass"].median
    package = by_label['python -c "import schemawire"'].median
    print()
    heading = f"whole process ({runs} runs each, interleaved)"
    print(f"| {heading} | median | fastest | x `import schemawire` |")
    print("|---|---:|---:|---:|")
    for row in rows:
        print(
            f"| `{row.label}` | {row.median * 1000:.0f} ms | {row.fastest * 1000:.0f} ms | "
            f"{row.median / package:.2f}x |"
        )
    print()
    print(f"interpreter alone: {floor * 1000:.0f} ms; import schemawire: {package * 1000:.0f} ms")
    for label in ("schemawire --version", "schemawire --help"):
        ratio = by_label[label].median / package
        print(f"{label}: {ratio:.2f}x import schemawire (goal at most 1.5x: {_met(ratio <= 1.5)})")
    check = by_label["schemawire check examples/support-desk"].median
    for row in rows:
        if row.label.startswith("check-jsonschema"):
            ratio = check / row.median
            goal = f"goal at most 1x: {_met(ratio <= 1)}"
            print(f"schemawire check / {row.label}: {ratio:.2f}x ({goal})")


def _met(met: bool) -> str:
    return "met" if met else "NOT met"
