"""The wheel installed into fresh venvs, outside the source tree (no PYTHONPATH, cwd a temp
folder): the command works from it, and each extra alone brings what it enables.

The venvs are installed concurrently, once per session, with pip's cache: on a warm cache all of
them take well under two minutes on two cores.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from schemawire import __version__
from tests.packaging.conftest import clean_environment, fresh_venv

pytestmark = pytest.mark.slow  # builds the wheel and installs it into new venvs

# What each extra enables, as Python a user would run with it: the modules it must make
# importable (a framework, or the schemawire module built on it). Add a module's name to an
# extra's tuple when its integration lands (e.g. "schemawire.integrations.pydantic_ai").
EXTRAS: Mapping[str, tuple[str, ...]] = {
    "postgres": ("psycopg", "schemawire.store.postgres"),
    "semantic": ("wordllama",),
    "pydantic-ai": ("pydantic_ai", "schemawire.integrations"),
    "openai-agents": ("agents", "schemawire.integrations"),
    "langchain": ("langchain_core.tools", "schemawire.integrations"),
    "otel": (
        "opentelemetry.sdk.trace",
        "opentelemetry.exporter.otlp.proto.http.trace_exporter",
        "schemawire.otel",
    ),
    "docs": ("mkdocs", "material", "mkdocstrings_handlers.python"),
}
# Beyond the imports: the extra's feature does its work (the embedder loads its weights from
# the wheel and embeds a text; a run of the mkdocs command).
EXTRA_CHECKS: Mapping[str, str] = {
    "semantic": (
        "from schemawire.gates import semantic_embedder\n"
        "vectors = semantic_embedder()(['refund an order'])\n"
        "assert len(vectors) == 1 and len(vectors[0]) == 256, len(vectors[0])\n"
    ),
}
BASE = ""  # the venv with the wheel and no extra
COMMAND_TIMEOUT = 120


@pytest.fixture(scope="session")
def venvs(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A venv per extra and one without, each with the wheel installed; their bin folders."""
    root = tmp_path_factory.mktemp("venvs")

    def install(extra: str) -> Path:
        requirement = f"{wheel}[{extra}]" if extra else str(wheel)
        return fresh_venv(root / (extra or "base"), requirement)

    names = [BASE, *EXTRAS]
    with ThreadPoolExecutor(max_workers=len(names)) as pool:
        return dict(zip(names, pool.map(install, names), strict=True))


def run(bin_dir: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(bin_dir / args[0]), *args[1:]],
        check=False,
        cwd=cwd,
        env=clean_environment(),
        capture_output=True,
        text=True,
        timeout=COMMAND_TIMEOUT,
    )


def ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def test_the_installed_command_runs_version_init_check_demo(
    venvs: dict[str, Path], tmp_path: Path
) -> None:
    bin_dir = venvs[BASE]
    assert __version__ in ok(run(bin_dir, "schemawire", "--version", cwd=tmp_path))
    ok(run(bin_dir, "schemawire", "init", "desk", cwd=tmp_path))
    ok(run(bin_dir, "schemawire", "check", "desk", cwd=tmp_path))
    ok(run(bin_dir, "schemawire", "init", "--blank", "blank", cwd=tmp_path))
    ok(run(bin_dir, "schemawire", "check", "blank", "--allow-empty", cwd=tmp_path))
    demo = ok(run(bin_dir, "schemawire", "demo", cwd=tmp_path))
    assert demo.strip()


def test_the_installed_package_is_the_wheel_not_the_source_tree(
    venvs: dict[str, Path], tmp_path: Path
) -> None:
    where = ok(
        run(
            venvs[BASE],
            "python",
            "-c",
            "import schemawire; print(schemawire.__file__)",
            cwd=tmp_path,
        )
    )
    assert Path(where.strip()).is_relative_to(venvs[BASE].parent)


def test_the_installed_server_answers_a_gated_mcp_call_over_stdio(
    venvs: dict[str, Path], tmp_path: Path
) -> None:
    bin_dir = venvs[BASE]
    ok(run(bin_dir, "schemawire", "init", "desk", cwd=tmp_path))
    server = [str(bin_dir / "schemawire"), "serve", "."]
    good = run(
        bin_dir,
        "schemawire",
        "call",
        "get_weather",
        '{"city": "Paris"}',
        "--",
        *server,
        cwd=tmp_path / "desk",
    )
    assert '"city": "Paris"' in ok(good)
    assert "arguments: accepted" in good.stderr + good.stdout
    refused = run(
        bin_dir,
        "schemawire",
        "call",
        "get_weather",
        '{"city": "Paris", "unit": "kelvin"}',
        "--",
        *server,
        cwd=tmp_path / "desk",
    )
    assert refused.returncode != 0
    assert "/unit" in refused.stdout + refused.stderr


@pytest.mark.parametrize("extra", list(EXTRAS))
def test_each_extra_alone_brings_what_it_enables(
    extra: str, venvs: dict[str, Path], tmp_path: Path
) -> None:
    imports = "".join(f"import {module}\n" for module in EXTRAS[extra])
    ok(run(venvs[extra], "python", "-c", imports + EXTRA_CHECKS.get(extra, ""), cwd=tmp_path))


@pytest.mark.parametrize("extra", [name for name in EXTRAS if name != "docs"])
def test_the_wheel_alone_lacks_each_extra(
    extra: str, venvs: dict[str, Path], tmp_path: Path
) -> None:
    """The base install does not pull an extra's packages in by accident (then the extra would
    test nothing)."""
    first = EXTRAS[extra][0]
    result = run(venvs[BASE], "python", "-c", f"import {first}", cwd=tmp_path)
    assert result.returncode != 0
    assert "ModuleNotFoundError" in result.stderr
