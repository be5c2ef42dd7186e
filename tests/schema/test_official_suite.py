"""The official JSON-Schema-Test-Suite, run through `schema.validator` (required tests).

Remotes are registered locally under http://localhost:1234/, as the suite's own harness serves
them; nothing is fetched. Every known failure is named in a manifest with its reason: a known
failure that starts passing fails this test too, so the manifest stays true.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest

from schemawire._json import load_file
from schemawire.errors import SchemaError
from schemawire.schema.dialect import DRAFT_07, DRAFT_2020_12, Dialect
from schemawire.schema.validator import compile_schema, refuse_retrieval

SUITE = Path(__file__).parents[1] / "data" / "json-schema-test-suite"
MANIFEST: Any = load_file(Path(__file__).parents[1] / "data" / "suite-known-failures.json")
KNOWN_FAILURES: dict[str, str] = MANIFEST["failures"]
DIALECTS = {"draft2020-12": DRAFT_2020_12, "draft7": DRAFT_07}
# The required tests follow each dialect's default: 2020-12 makes format an annotation,
# draft-07 asserts it. The optional format tests run with assertion on, as the gates do.
ASSERT_FORMATS = {"draft2020-12": False, "draft7": True}


def suite_cases(*, formats: bool = False) -> Iterator[Any]:
    for draft in DIALECTS:
        folder = (
            SUITE / "tests" / draft / "optional" / "format" if formats else SUITE / "tests" / draft
        )
        for path in sorted(folder.glob("*.json")):
            for group in load_file(path):  # type: ignore[union-attr]
                for test in group["tests"]:
                    case_id = f"{draft}/{path.name}::{group['description']}::{test['description']}"
                    yield pytest.param(
                        draft, group["schema"], test["data"], test["valid"], id=case_id
                    )


def remotes(draft: str, dialect: Dialect) -> jsonschema_rs.Registry:
    base = SUITE / "remotes"
    # Remotes of other dialects (and "v1", the next one) are interpreted differently.
    other_drafts = {p.name for p in base.glob("draft*")} - {draft} | {"v1"}
    resources = [
        (f"http://localhost:1234/{path.relative_to(base).as_posix()}", load_file(path))
        for path in sorted(base.rglob("*.json"))
        if path.relative_to(base).parts[0] not in other_drafts
    ]
    return jsonschema_rs.Registry(resources, draft=dialect.draft, retriever=refuse_retrieval)


REGISTRIES = {draft: remotes(draft, dialect) for draft, dialect in DIALECTS.items()}


def outcome(
    draft: str, schema: Any, instance: Any, *, assert_formats: bool | None = None
) -> bool | str:
    try:
        compiled = compile_schema(
            schema,
            registry=REGISTRIES[draft],
            dialect=DIALECTS[draft],
            assert_formats=ASSERT_FORMATS[draft] if assert_formats is None else assert_formats,
        )
    except SchemaError as error:
        return f"does not compile: {error.message}"
    valid = compiled.is_valid(instance)
    violations = compiled.violations(instance)
    assert valid == (not violations), "is_valid and violations disagree"
    return valid


@pytest.mark.parametrize(("draft", "schema", "instance", "valid"), list(suite_cases()))
def test_official_suite_case(
    request: pytest.FixtureRequest, draft: str, schema: Any, instance: Any, valid: bool
) -> None:
    case_id = request.node.callspec.id
    got = outcome(draft, schema, instance)
    if case_id in KNOWN_FAILURES:
        assert got != valid, f"known failure now passes; remove it from the manifest: {case_id}"
    else:
        assert got == valid


@pytest.mark.parametrize(("draft", "schema", "instance", "valid"), list(suite_cases(formats=True)))
def test_official_format_case_with_format_assertion(
    draft: str, schema: Any, instance: Any, valid: bool
) -> None:
    assert outcome(draft, schema, instance, assert_formats=True) == valid


@pytest.mark.slow
@pytest.mark.parametrize(("draft", "minimum"), [("draft2020-12", 0.999), ("draft7", 1.0)])
def test_suite_pass_rate_matches_jsonschema_rs(draft: str, minimum: float) -> None:
    cases = [case.values for case in suite_cases() if case.values[0] == draft]
    passed = sum(outcome(d, schema, data) == valid for d, schema, data, valid in cases)
    assert len(cases) > 900
    assert passed / len(cases) >= minimum
