"""Case files: checked against the case schema, with errors that say where."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from schemawire.errors import ConfigError, ErrorCode, JSONError
from schemawire.evals import CASE_SCHEMA, load_case
from schemawire.schema.validator import compile_schema
from tests.evals.cases import CASES, FLOW, REFUND, WriteCase, flow_case


def test_the_example_cases_load_and_run_in_their_repository() -> None:
    cases = [load_case(path) for path in sorted(CASES.glob("*.json"))]
    assert [case.path.stem for case in cases] == ["handoff_refused", "happy_path", "unsure_triage"]
    assert {case.root for case in cases} == {REFUND.resolve()}
    assert cases[1].flow == REFUND.resolve() / "flows" / "refund.json"
    assert cases[1].name == "refund happy path"


def test_the_case_schema_is_a_valid_schema_with_an_id() -> None:
    compile_schema(CASE_SCHEMA)
    assert CASE_SCHEMA["$id"] == "https://schemawire.dev/schemas/eval-case.json"


def test_a_case_without_a_name_is_named_after_its_file(write_case: WriteCase) -> None:
    assert load_case(write_case(flow_case(status="done"), "evals/quick.json")).name == "quick"


def error_of(write_case: WriteCase, document: dict[str, Any]) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        load_case(write_case(document))
    return caught.value


@pytest.mark.parametrize(
    ("document", "pointer"),
    [
        ({"flow": "flows/refund.json", "expect": {"status": "done"}}, "/input"),
        (flow_case(status="finished"), "/expect/status"),
        (flow_case(route=3), "/expect/route"),
        (flow_case(calls=[{"arguments": {}}]), "/expect/calls/0/tool"),
        (flow_case(calls_order="set"), "/expect/calls"),
        (flow_case(output={}), "/expect/output"),
        (flow_case(), "/expect"),
        ({**flow_case(status="done"), "model": "gpt-4"}, "/model"),
        (
            {**flow_case(status="done"), "models": {"triage": {"responses": []}}},
            "/models/triage/api",
        ),
        ({**flow_case(status="done"), "extra": 1}, "/extra"),
    ],
)
def test_a_case_that_breaks_the_case_schema_names_the_pointer(
    write_case: WriteCase, document: dict[str, Any], pointer: str
) -> None:
    error = error_of(write_case, document)
    assert error.code == ErrorCode.CONFIG_INVALID
    pointers = [error.pointer] + [
        line.split(": ")[0].split()[-1] for line in error.message.splitlines()[1:]
    ]
    assert pointer in pointers, error.message
    assert error.line is not None
    assert error.source.endswith("case.json")


def test_every_violation_is_listed_and_the_first_is_located(write_case: WriteCase) -> None:
    path = write_case({"flow": "flows/refund.json", "input": 3, "expect": {"route": 5}})
    with pytest.raises(ConfigError) as caught:
        load_case(path)
    error = caught.value
    assert error.pointer == "/input"
    line = path.read_text().splitlines()[error.line - 1]  # type: ignore[operator]
    assert line.strip().startswith('"input"')
    assert "also /expect/route: must be of type null or string" in str(error)


@pytest.mark.parametrize(
    ("document", "pointer"),
    [
        ({**flow_case(status="done"), "tools": ["lookup_order"]}, "/tools"),
        ({**flow_case(status="done"), "instructions": "Be brief."}, "/instructions"),
        (
            {"input": "hi", "model": "script:x.json", "expect": {"route": "billing"}},
            "/expect/route",
        ),
        (
            {"input": "hi", "model": "script:x.json", "expect": {"state": {"fields": {}}}},
            "/expect/state",
        ),
        (
            {"input": "hi", "model": "script:x.json", "models": {}, "expect": {"status": "done"}},
            "/models",
        ),
    ],
)
def test_a_case_mixing_flow_and_single_agent_keys_is_refused(
    write_case: WriteCase, document: dict[str, Any], pointer: str
) -> None:
    assert error_of(write_case, document).pointer == pointer


def test_a_case_that_is_not_json_says_where(write_case: WriteCase, tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{"input": "hi",\n "expect": }', encoding="utf-8")
    with pytest.raises(JSONError) as caught:
        load_case(path)
    assert caught.value.line == 2


def test_repo_is_relative_to_the_case_file(tmp_path: Path) -> None:
    folder = tmp_path / "cases"
    folder.mkdir()
    path = folder / "case.json"
    relative = os.path.relpath(FLOW.parents[1], folder)
    path.write_text(json.dumps({"repo": relative, **flow_case(status="done")}))
    assert not Path(relative).is_absolute()
    assert load_case(path).root == REFUND.resolve()
