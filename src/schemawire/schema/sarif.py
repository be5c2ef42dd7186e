"""Findings as a SARIF 2.1.0 log, so that code-scanning tools show them inline."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any
from urllib.parse import quote

from schemawire._version import __version__
from schemawire.schema.rules import RULES, Finding, Rule

__all__ = ["SARIF_SCHEMA", "to_sarif"]

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_INFORMATION_URI = "https://pypi.org/project/schemawire/"


def to_sarif(findings: Iterable[Finding]) -> dict[str, Any]:
    """A SARIF log with one run: schemawire's rule catalogue and one result per finding."""
    rules = list(RULES.values())
    index = {item.id: position for position, item in enumerate(rules)}
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "schemawire",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "informationUri": _INFORMATION_URI,
                        "rules": [_rule(item) for item in rules],
                    }
                },
                "columnKind": "unicodeCodePoints",
                "results": [_result(finding, index[finding.rule.id]) for finding in findings],
            }
        ],
    }


def _rule(rule: Rule) -> dict[str, Any]:
    return {
        "id": rule.id,
        "name": rule.name,
        "shortDescription": {"text": f"{rule.name}: {rule.summary}"},
        "fullDescription": {"text": rule.summary},
        "defaultConfiguration": {"level": str(rule.severity)},
        "properties": {"category": rule.category},
    }


def _result(finding: Finding, rule_index: int) -> dict[str, Any]:
    message = finding.message + (f" ({finding.hint})" if finding.hint else "")
    location: dict[str, Any] = {
        "physicalLocation": {"artifactLocation": {"uri": quote(finding.file, safe="/")}},
    }
    if finding.line is not None:
        location["physicalLocation"]["region"] = {
            "startLine": finding.line,
            "startColumn": finding.column or 1,
        }
    if finding.pointer:
        location["logicalLocations"] = [{"fullyQualifiedName": finding.pointer, "kind": "member"}]
    return {
        "ruleId": finding.rule.id,
        "ruleIndex": rule_index,
        "level": str(finding.severity),
        "message": {"text": message},
        "locations": [location],
    }
