"""Findings as GitHub Actions workflow commands, so that a run's checks show them inline.

Each finding is one line, ``::error file=F,line=L,col=C,title=T::message``, as GitHub's
workflow-command syntax specifies: a property value escapes ``%``, ``\\r``, ``\\n``, ``:`` and
``,``; the message escapes ``%``, ``\\r`` and ``\\n`` (a raw newline would end the command).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from schemawire.schema.rules import Finding

__all__ = ["to_github_annotations"]

_DATA_ESCAPES = (("%", "%25"), ("\r", "%0D"), ("\n", "%0A"))
_PROPERTY_ESCAPES = (*_DATA_ESCAPES, (":", "%3A"), (",", "%2C"))


def to_github_annotations(findings: Iterable[Finding]) -> Iterator[str]:
    """One workflow command per finding: ``error`` or ``warning`` as its rule's severity, at
    its file, line and column, titled with the rule's id and name; the hint follows the
    message."""
    for finding in findings:
        yield _command(finding)


def _command(finding: Finding) -> str:
    properties = [("file", finding.file)]
    if finding.line is not None:
        properties.append(("line", str(finding.line)))
        properties.append(("col", str(finding.column or 1)))
    properties.append(("title", f"{finding.rule.id} {finding.rule.name}"))
    listed = ",".join(f"{name}={_escaped(value, _PROPERTY_ESCAPES)}" for name, value in properties)
    message = finding.message
    if finding.pointer:
        message += f" (at #{finding.pointer})"
    if finding.hint:
        message += f"; hint: {finding.hint}"
    return f"::{finding.severity} {listed}::{_escaped(message, _DATA_ESCAPES)}"


def _escaped(text: str, escapes: tuple[tuple[str, str], ...]) -> str:
    # "%" first, so that the escapes added after it are not escaped again.
    for raw, escape in escapes:
        text = text.replace(raw, escape)
    return text
