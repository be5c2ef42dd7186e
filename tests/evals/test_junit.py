"""JUnit XML: one testsuite, a testcase per case, failures and errors CI systems read."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from schemawire.evals import CaseResult, Failure, junit_xml, run_cases
from tests.evals.cases import CASES, WriteCase, flow_case


def test_junit_has_a_testcase_per_case_with_failures_and_errors(write_case: WriteCase) -> None:
    failing = write_case({**flow_case(status="failed", route="end"), "name": "wrong"}, "f.json")
    unusable = write_case({**flow_case(status="done"), "flow": "flows/x.json"}, "u.json")
    results = run_cases([CASES / "happy_path.json", failing, unusable])
    root = ET.fromstring(junit_xml(results))
    assert root.tag == "testsuites"
    (suite,) = root
    assert (suite.tag, suite.get("tests"), suite.get("failures"), suite.get("errors")) == (
        "testsuite",
        "3",
        "1",
        "1",
    )
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == ["refund happy path", "wrong", "u"]
    assert cases[0].get("classname") == "refund.evals"
    assert list(cases[0]) == []
    (failure,) = cases[1]
    assert failure.tag == "failure"
    assert failure.get("message") == (
        "/expect/status: expected status `failed`, got `done`; "
        "/expect/route: expected route `end`, got route "
        "`billing`"
    )
    lines = (failure.text or "").splitlines()
    assert len(lines) == 2
    assert lines[0].startswith(f"{failing}:")
    assert "#/expect/status: expected" in lines[0]
    (error,) = cases[2]
    assert error.tag == "error"
    assert "/flow: no flow file" in (error.get("message") or "")
    assert float(cases[0].get("time") or "0") > 0


def test_text_xml_cannot_hold_is_replaced() -> None:
    failure = Failure("expected `a`, got `\x00\x1b[31m`", "/expect/output/equals", 3, 5)
    result = CaseResult(Path("evals/x.json"), "x\x07", "failed", [failure], 0.1)
    root = ET.fromstring(junit_xml([result]))
    case = root.find("testsuite/testcase")
    assert case is not None
    assert case.get("name") == "x\ufffd"
    assert "\ufffd[31m" in (case.find("failure").text or "")  # type: ignore[union-attr]
