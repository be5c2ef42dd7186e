"""`Verdict`: a frozen value made by keyword or a named constructor, equal only to a verdict."""

from __future__ import annotations

import dataclasses

import pytest

from schemawire.gates import Change, Verdict
from schemawire.types import Rejection

REJECTION = Rejection.for_tool(
    "lookup", gate="arguments", code="tool_unknown", line="no such tool", hint="Call another."
)


def test_the_named_constructors_make_what_the_keywords_make() -> None:
    change = Change("redacted", "/key", "a secret was replaced")
    accepted = Verdict.accept(gate="results", tool="lookup", value=1, changes=(change,))
    assert accepted == Verdict(
        gate="results", tool="lookup", accepted=True, value=1, changes=(change,)
    )
    assert (accepted.outcome, accepted.redacted, accepted.rejection) == ("redacted", True, None)
    refused = Verdict.reject(REJECTION, gate="arguments", tool="lookup")
    assert refused == Verdict(
        gate="arguments",
        tool="lookup",
        accepted=False,
        value=None,
        rejection=REJECTION,
        conforms=False,
    )
    assert refused.outcome == "rejected"


def test_a_verdict_is_not_a_tuple_and_equals_no_tuple() -> None:
    verdict = Verdict.accept(gate="arguments", tool="lookup", value={"city": "Oslo"})
    assert verdict != ("arguments", "lookup", True, {"city": "Oslo"}, None, (), None)
    assert not isinstance(verdict, tuple)
    with pytest.raises(TypeError):
        iter(verdict)  # type: ignore[call-overload]


def test_a_verdict_is_made_by_keyword_only_and_cannot_change() -> None:
    with pytest.raises(TypeError):
        Verdict("arguments", "lookup", True, None)  # type: ignore[misc]
    verdict = Verdict.accept(gate="arguments", tool="lookup", value=None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        verdict.accepted = False  # type: ignore[misc]


def test_a_rejection_is_made_by_keyword_only() -> None:
    with pytest.raises(TypeError):
        Rejection("arguments", "tool_unknown", "lookup", None, None, (), "")  # type: ignore[misc]
    assert REJECTION.to_json()["error"]["violations"] == [
        {"pointer": "", "keyword": "tool", "message": "no such tool", "expected": None, "got": None}
    ]
