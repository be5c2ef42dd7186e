"""Results as JUnit XML, the report every CI system reads: one ``testsuite``, a ``testcase``
per case; a failed case carries a ``failure``, a case that could not run an ``error``."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence

from schemawire.evals.runner import CaseResult

__all__ = ["junit_xml"]

# Characters XML 1.0 cannot hold, even escaped (a model's answer may have any).
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def junit_xml(results: Sequence[CaseResult], suite: str = "schemawire eval") -> str:
    """The results as a JUnit XML document.

    A ``failure``'s ``message`` lists every failure on one line; its text, one per line, with
    where each expectation is written (``file:line:column #pointer``).
    """
    root = ET.Element("testsuites")
    failed = sum(r.status == "failed" for r in results)
    errors = sum(r.status == "error" for r in results)
    seconds = sum(r.seconds for r in results)
    testsuite = ET.SubElement(
        root,
        "testsuite",
        name=suite,
        tests=str(len(results)),
        failures=str(failed),
        errors=str(errors),
        skipped="0",
        time=f"{seconds:.3f}",
    )
    for result in results:
        _testcase(testsuite, result)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def _testcase(suite: ET.Element, result: CaseResult) -> None:
    folder = result.path.resolve().parent
    case = ET.SubElement(
        suite,
        "testcase",
        classname=_clean(f"{folder.parent.name}.{folder.name}"),
        name=_clean(result.name),
        file=_clean(str(result.path)),
        time=f"{result.seconds:.3f}",
    )
    if result.status == "failed":
        failure = ET.SubElement(
            case,
            "failure",
            type="EvalFailure",
            message=_clean("; ".join(str(f) for f in result.failures)),
        )
        failure.text = _clean(
            "\n".join(
                f"{result.path}:{f.line}:{f.column} #{f.pointer or '/'}: {f.message}"
                for f in result.failures
            )
        )
    elif result.status == "error":
        error = ET.SubElement(
            case,
            "error",
            type="UnusableCase",
            message=_clean(result.summary),
        )
        error.text = _clean(result.error or "")


def _clean(text: str) -> str:
    return _NOT_XML.sub("\ufffd", text)
