"""The exception tree: one, drawn in `schemawire.errors`; nothing else crosses the public API."""

from __future__ import annotations

import importlib
import pkgutil
import re
import sys
from pathlib import Path

import anyio
import pytest

import schemawire
from schemawire import errors
from schemawire._json import ParseLimits, loads
from schemawire.errors import (
    ErrorCode,
    FlowError,
    JSONError,
    ModelError,
    RunLookupError,
    SchemawireError,
    ServerError,
    StoreError,
    UsageError,
)
from schemawire.gates import CODES, ValueLimits
from schemawire.host import ScriptedModel
from schemawire.mcp import SERVER_PROBLEMS, McpClient, StdioServer
from schemawire.store import SqliteStore, find_run

pytestmark = pytest.mark.anyio

# Exceptions that never reach a caller, each with where it stops (its docstring says why).
PRIVATE = {
    "schemawire._jsonpos.ScanError": "schemawire._json turns it into a JSONError",
    "schemawire.project._type_names.UnknownTypeError": "parse_type returns None",
    "schemawire.host.providers._RetryableError": "the retry loop catches it",
    "schemawire.evals.pytest_plugin.CaseFailedError": "pytest's failure protocol",
}
# Modules that need an optional extra to import.
EXTRAS = ("schemawire.integrations", "schemawire.store.postgres")


def drawn_tree() -> dict[str, str]:
    """Each class of the tree in the errors module's docstring, and its parent."""
    parents: dict[str, str] = {}
    stack: list[tuple[int, str]] = []
    for line in (errors.__doc__ or "").splitlines():
        found = re.match(r"^( *)(?:[│ ]*[├└]── )?([A-Z]\w+Error)\b", line)
        if found is None:
            continue
        depth = len(line) - len(line.lstrip(" │├└─"))
        while stack and stack[-1][0] >= depth:
            stack.pop()
        if stack:
            parents[found[2]] = stack[-1][1]
        stack.append((depth, found[2]))
    return parents


def test_the_tree_drawn_is_the_tree_there_is() -> None:
    classes = {
        name: value
        for name in errors.__all__
        if isinstance(value := getattr(errors, name), type) and issubclass(value, Exception)
    }
    actual = {
        name: cls.__base__.__name__ for name, cls in classes.items() if cls is not SchemawireError
    }
    assert drawn_tree() == actual


def test_every_exception_class_in_the_library_is_a_schemawire_error_or_stays_inside() -> None:
    found: dict[str, type[BaseException]] = {}
    for module_info in pkgutil.walk_packages(schemawire.__path__, "schemawire."):
        name = module_info.name
        if name.startswith(EXTRAS) or name.endswith("__main__"):
            continue
        module = importlib.import_module(name)
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, BaseException)
                and value.__module__ == name
            ):
                found[f"{name}.{value.__qualname__}"] = value
    outside = {name for name, cls in found.items() if not issubclass(cls, SchemawireError)} - set(
        PRIVATE
    )
    assert outside == set()
    assert set(PRIVATE) <= set(found)  # the list stays true: a class that went leaves it


@pytest.mark.parametrize("error", ["ServerError", "ModelError", "StoreError", "FlowError"])
def test_each_family_is_exported_from_the_top(error: str) -> None:
    value = getattr(schemawire, error)
    assert value is getattr(errors, error)
    assert issubclass(value, SchemawireError)


# --- each family, raised by a public function, with its code ---------------------------------


def test_limits_out_of_range_are_a_usage_error() -> None:
    with pytest.raises(UsageError, match="max_depth"):
        ParseLimits(max_depth=1000)
    with pytest.raises(UsageError, match="positive"):
        ValueLimits(max_items=0)


async def test_misused_mcp_client_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="needs a command"):
        StdioServer.from_argv([])
    with pytest.raises(UsageError, match="async with"):
        await McpClient(StdioServer(sys.executable)).connect()


def test_json_that_cannot_be_read_is_a_json_error_with_its_code() -> None:
    with pytest.raises(JSONError) as raised:
        loads('{"a": 1,}')
    assert isinstance(raised.value, SchemawireError)
    assert raised.value.code == ErrorCode.JSON_SYNTAX


async def test_a_server_that_cannot_start_is_a_server_error_with_its_code(tmp_path: Path) -> None:
    with anyio.fail_after(30), pytest.raises(ServerError) as raised:
        async with McpClient(StdioServer(str(tmp_path / "no-such-server"))):
            pass
    assert isinstance(raised.value, SchemawireError)
    assert raised.value.code == "not_started"


async def test_a_model_out_of_script_is_a_model_error_with_its_code() -> None:
    with pytest.raises(ModelError) as raised:
        await ScriptedModel("openai.chat", []).respond({})
    assert isinstance(raised.value, SchemawireError)
    assert raised.value.code == "model_out_of_script"


def test_a_run_id_that_names_no_run_is_a_store_error(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "runs.db")
    with pytest.raises(RunLookupError) as raised:
        find_run(store, "3f2a9c01")
    assert isinstance(raised.value, StoreError)
    assert isinstance(raised.value, SchemawireError)
    assert raised.value.candidates == ()


def test_a_flow_error_carries_the_rejection_that_stopped_it() -> None:
    assert issubclass(FlowError, SchemawireError)
    assert FlowError("stopped").rejection is None


# --- docs/errors.md: every code once ----------------------------------------------------------

ERRORS_DOC = Path(__file__).parents[1] / "docs" / "errors.md"


def documented(section: str) -> dict[str, list[str]]:
    """The rows of the table under ``## <section>`` in docs/errors.md: code -> other cells."""
    text = ERRORS_DOC.read_text(encoding="utf-8")
    body = text.split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
    rows: dict[str, list[str]] = {}
    for line in body.splitlines():
        cells = [cell.strip() for cell in line.strip("|").split(" | ")]
        if line.startswith("| `"):
            code = cells[0].strip("`")
            assert code not in rows, f"{code} is listed twice"
            rows[code] = cells[1:]
    return rows


def test_every_rejection_and_change_code_is_documented_once_with_its_meaning() -> None:
    rejections = documented("Rejection codes")
    changes = documented("Change codes")
    assert set(rejections).isdisjoint(changes)
    meanings = {code: cells[-1] for code, cells in (rejections | changes).items()}
    assert meanings == CODES


def test_every_rejection_code_belongs_to_gates_that_exist() -> None:
    gates = {code: cells[0] for code, cells in documented("Rejection codes").items()}
    named = {gate for listed in gates.values() for gate in listed.split(", ")}
    assert named == {"arguments", "results", "handoff", "state"}


def test_every_input_server_and_model_code_is_documented() -> None:
    assert set(documented("Input codes")) == {str(code) for code in ErrorCode}
    server = {code: cells[0] for code, cells in documented("Server codes").items()}
    assert server == SERVER_PROBLEMS
    model_codes = {v for k, v in vars(ModelError).items() if k.isupper() and isinstance(v, str)}
    assert set(documented("Model codes")) == model_codes
