"""`schema.implementations`: what ``[serve.tools]`` names is importable, present, and takes the
arguments its tool's schema describes; check says so, or says which entry and why."""

from __future__ import annotations

import inspect
import json
import keyword
import os
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from schemawire._json import dumps
from schemawire.application.check import check_repository
from schemawire.cli._app import app
from schemawire.errors import ConfigError, ErrorCode, UsageError
from schemawire.mcp.launch import load_implementations as served
from schemawire.schema.implementations import (
    implementation_findings,
    implemented_specs,
    load_implementations,
    signature_mismatches,
)
from schemawire.schema.repository import Repository
from tests.helpers import WriteRepo, tool_schema

ROOT = Path(__file__).parents[2]
CITY = {"type": "string", "description": "A city."}
UNIT = {"type": "string", "enum": ["c", "f"], "description": "A unit."}
WEATHER = tool_schema("weather", properties={"city": CITY, "unit": UNIT}, required=["city"])


@pytest.fixture
def module_name() -> Iterator[str]:
    """A module name no other test imports, taken out of ``sys.modules`` and its folder out of
    ``sys.path`` afterwards."""
    name = f"impl_{uuid.uuid4().hex[:12]}"
    path = list(sys.path)
    yield name
    sys.modules.pop(name, None)
    sys.path[:] = path


def serving(write_repo: WriteRepo, module: str, source: str, tools: str) -> Path:
    """A repository with the weather tool, ``module``.py holding ``source``, and ``tools`` as
    its ``[serve.tools]`` table."""
    return write_repo(
        {
            "schemawire.toml": f'[serve]\nname = "desk"\n\n[serve.tools]\n{tools}\n',
            f"{module}.py": source,
            "schemas/tools/weather.json": WEATHER,
        }
    )


def found(root: Path) -> list[tuple[str, str, str, int | None]]:
    report = check_repository(root, fixtures=False)
    return [(f.rule.id, f.file, f.pointer, f.line) for f in report.findings]


def test_a_module_that_fails_to_import_is_one_finding_at_its_entry(
    write_repo: WriteRepo, module_name: str
) -> None:
    source = "raise RuntimeError('no database configured\\nsecond line')\n"
    tools = f'weather = "{module_name}:weather"\nother = "{module_name}:other"'
    root = serving(write_repo, module_name, source, tools)
    other = tool_schema("other", properties={"city": CITY}, required=["city"])
    root.joinpath("schemas/tools/other.json").write_text(dumps(other))
    report = check_repository(root, fixtures=False)
    (finding,) = [f for f in report.findings if f.rule.id == "SW501"]  # one per module
    assert (finding.file, finding.pointer, finding.line, finding.column) == (
        "schemawire.toml",
        "/serve/tools/weather",
        5,
        1,
    )
    assert finding.message == (f"cannot import {module_name}: RuntimeError: no database configured")
    assert "Traceback" not in finding.message


def test_a_missing_function_is_a_finding_that_suggests_the_close_name(
    write_repo: WriteRepo, module_name: str
) -> None:
    source = "def weather(city, unit='c'):\n    return {}\n"
    root = serving(write_repo, module_name, source, f'weather = "{module_name}:wether"')
    report = check_repository(root, fixtures=False)
    (finding,) = report.findings
    assert (finding.rule.id, finding.pointer, finding.line) == ("SW502", "/serve/tools/weather", 5)
    assert finding.hint == "did you mean weather?"


def test_a_name_that_is_not_callable_is_a_finding(write_repo: WriteRepo, module_name: str) -> None:
    root = serving(write_repo, module_name, "weather = 42\n", f'weather = "{module_name}:weather"')
    assert [rule for rule, *_ in found(root)] == ["SW502"]


def test_an_implementation_without_a_schema_suggests_the_tool_meant(
    write_repo: WriteRepo, module_name: str
) -> None:
    source = "def weather(city, unit='c'):\n    return {}\n"
    tools = f'weather = "{module_name}:weather"\nwaether = "{module_name}:weather"'
    report = check_repository(serving(write_repo, module_name, source, tools), fixtures=False)
    (finding,) = report.findings
    assert (finding.rule.id, finding.pointer, finding.line) == ("SW505", "/serve/tools/waether", 6)
    assert finding.hint == "did you mean weather?"


def test_a_tool_without_an_implementation_is_a_finding_that_can_be_silenced(
    write_repo: WriteRepo, module_name: str
) -> None:
    source = "def weather(city, unit='c'):\n    return {}\n"
    root = serving(write_repo, module_name, source, f'weather = "{module_name}:weather"')
    search = tool_schema("search", properties={"q": CITY}, required=["q"])
    root.joinpath("schemas/tools/search.json").write_text(dumps(search))
    (finding,) = check_repository(root, fixtures=False).findings
    assert (finding.rule.id, finding.file) == ("SW503", "schemas/tools/search.json")
    assert '"schemas/tools/search.json" = ["SW503"]' in (finding.hint or "")
    settings = root / "schemawire.toml"
    settings.write_text(
        settings.read_text()
        + '\n[lint.per-file-ignores]\n"schemas/tools/search.json" = ["SW503"]\n'
    )
    assert check_repository(root, fixtures=False).findings == ()


def test_a_repository_that_serves_nothing_needs_no_implementations(write_repo: WriteRepo) -> None:
    root = write_repo({"schemas/tools/weather.json": WEATHER})
    assert found(root) == []
    root.joinpath("schemawire.toml").write_text("[serve]\n")
    assert [rule for rule, *_ in found(root)] == ["SW503"]


def test_modules_are_imported_only_for_a_repository_that_names_them(
    write_repo: WriteRepo, module_name: str, tmp_path: Path
) -> None:
    marker = tmp_path / "imported"
    source = f"open({str(marker)!r}, 'w').close()\ndef weather(city, unit='c'):\n    return 1\n"
    root = write_repo({f"{module_name}.py": source, "schemas/tools/weather.json": WEATHER})
    check_repository(root, fixtures=False)
    assert not marker.exists()
    root.joinpath("schemawire.toml").write_text(
        f'[serve.tools]\nweather = "{module_name}:weather"\n'
    )
    assert found(root) == []
    assert marker.exists()


def test_check_reads_implementations_without_the_mcp_sdk(tmp_path: Path) -> None:
    code = f"""
import sys
from schemawire.application.check import check_repository
from schemawire.cli._app import app
report = check_repository({str(ROOT / "examples/support-desk")!r})
assert report.findings == (), report.findings
above = ("mcp", "httpx", "httpx2", "schemawire.mcp", "schemawire.host")
loaded = [name for name in sys.modules if name.startswith(above)]
assert not loaded, loaded
"""
    completed = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, timeout=60, check=False
    )
    assert completed.returncode == 0, completed.stderr.decode()


@pytest.mark.parametrize(
    ("signature", "expected"),
    [
        ("city, unit='c'", []),
        ("city, unit='c', *, idempotency_key=None", []),
        ("city, idempotency_key, unit='c'", []),
        ("city, **options", []),
        ("city='Paris', unit='c'", [("/required/0", "city is required")]),
        ("city, unit", [("/properties/unit", "unit is optional")]),
        ("city", [("/properties/unit", "takes no parameter unit")]),
        ("city, user, unit='c'", [("/properties", "parameter user has no default")]),
        ("city, unit='c', user=None", []),
        ("city, /, unit='c'", [("/properties/city", "positional-only")]),
        ("*args", [("/properties/city", "no parameter city"), ("/properties/unit", "unit")]),
    ],
)
def test_each_way_a_signature_disagrees_with_the_schema(
    signature: str, expected: list[tuple[str, str]]
) -> None:
    namespace: dict[str, Any] = {}
    exec(f"def weather({signature}):\n    return None\n", namespace)
    mismatches = list(signature_mismatches(namespace["weather"], WEATHER))
    assert [pointer for pointer, _ in mismatches] == [pointer for pointer, _ in expected]
    for (_, message), (_, part) in zip(mismatches, expected, strict=True):
        assert part in message


def test_a_signature_mismatch_is_located_in_the_schema(
    write_repo: WriteRepo, module_name: str
) -> None:
    source = "def weather(city, unit):\n    return {}\n"
    root = serving(write_repo, module_name, source, f'weather = "{module_name}:weather"')
    (finding,) = check_repository(root, fixtures=False).findings
    assert (finding.rule.id, finding.file, finding.pointer) == (
        "SW504",
        "schemas/tools/weather.json",
        "/properties/unit",
    )
    assert finding.message.startswith(f"{module_name}:weather: unit is optional")
    line = (root / finding.file).read_text().splitlines()[(finding.line or 0) - 1]
    assert line.strip().startswith('"unit"')


_KEYS = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=12).filter(
    lambda key: not keyword.iskeyword(key)
)


@given(properties=st.lists(_KEYS, min_size=1, max_size=6, unique=True), data=st.data())
def test_a_function_written_from_its_schema_never_disagrees(
    properties: list[str], data: st.DataObject
) -> None:
    required = data.draw(st.lists(st.sampled_from(properties), unique=True))
    schema = {"type": "object", "properties": {p: {} for p in properties}, "required": required}
    function = _function(
        [(name, name not in required) for name in data.draw(st.permutations(properties))]
    )
    assert list(signature_mismatches(function, schema)) == []
    if len(properties) > len(required):
        optional = next(p for p in properties if p not in required)
        strict = _function(
            [(name, name not in required and name != optional) for name in properties]
        )
        assert [p for p, _ in signature_mismatches(strict, schema)] == [f"/properties/{optional}"]


def _function(parameters: list[tuple[str, bool]]) -> Callable[..., Any]:
    """A function of keyword-only ``parameters`` (name, whether it has a default)."""

    def function(**kwargs: Any) -> None:
        return None

    empty = inspect.Parameter.empty
    function.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [
            inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None if has else empty)
            for name, has in parameters
        ]
    )
    return function


def test_load_implementations_raises_a_config_error_where_serve_imports_it(
    write_repo: WriteRepo, module_name: str
) -> None:
    assert served is load_implementations
    root = serving(write_repo, module_name, "", f'weather = "{module_name}:weather"')
    with pytest.raises(ConfigError) as caught:
        load_implementations(Repository.load(root))
    assert caught.value.code == ErrorCode.CONFIG_INVALID
    assert caught.value.pointer == "/serve/tools/weather"


def test_settings_in_pyproject_are_located_too(write_repo: WriteRepo, module_name: str) -> None:
    root = write_repo(
        {
            "pyproject.toml": f'[tool.schemawire.serve.tools]\nweather = "{module_name}:nope"\n',
            f"{module_name}.py": "",
            "schemas/tools/weather.json": WEATHER,
        }
    )
    findings = list(implementation_findings(Repository.load(root)))
    assert [(f.rule.id, f.file, f.line) for f in findings] == [("SW502", "pyproject.toml", 2)]


def test_what_a_module_prints_while_imported_stays_out_of_check_json(
    write_repo: WriteRepo, module_name: str
) -> None:
    source = "print('connecting...')\ndef weather(city, unit='c'):\n    return {}\n"
    root = serving(write_repo, module_name, source, f'weather = "{module_name}:weather"')
    result = CliRunner().invoke(app, ["check", str(root), "--json"], catch_exceptions=False)
    assert json.loads(result.stdout)["findings"] == [
        {
            "rule": "SW205",
            "name": "missing-fixtures",
            "severity": "warning",
            "file": os.path.relpath(root / "schemas/tools/weather.json"),
            "pointer": "",
            "line": 1,
            "column": 1,
            "message": "no fixtures in fixtures/tools/weather/valid/ and "
            "fixtures/tools/weather/invalid/",
            "hint": "store 2-3 examples that must pass and fail",
        }
    ]
    assert "connecting..." in result.stderr


def test_the_host_and_the_server_refuse_a_function_whose_tool_has_no_schema(
    write_repo: WriteRepo,
) -> None:
    from schemawire.host import python_tools
    from schemawire.mcp.server import LocalTools

    repository = Repository.load(write_repo({"schemas/tools/weather.json": WEATHER}))
    functions = {"weather": print, "wether": print, "forecast": print}

    assert list(implemented_specs(repository, {"weather": print})) == ["weather"]
    for build in (python_tools, LocalTools):
        with pytest.raises(UsageError, match="no schema for tools forecast, wether in "):
            build(repository, functions)
