"""The gates: every value that crosses a hop is checked against its full canonical schema.

- `ArgumentGate`: a tool call's arguments, before the tool runs.
- `ResultGate`: a tool's result, before the model reads it (validated, redacted, cut to size).
- `HandoffGate`: what one agent hands the next, before it starts; routes are JSON Schemas.

Both return a `Verdict` and never raise on their input.
"""

from __future__ import annotations

from schemawire.gates._values import ValueLimits
from schemawire.gates.arguments import ArgumentGate, ArgumentOptions
from schemawire.gates.handoff import HandoffDecision, HandoffGate, Route
from schemawire.gates.redact import Redactor, default_redactor
from schemawire.gates.results import ResultGate, ResultOptions
from schemawire.gates.verdict import CODES, Change, Verdict

__all__ = [
    "CODES",
    "ArgumentGate",
    "ArgumentOptions",
    "Change",
    "HandoffDecision",
    "HandoffGate",
    "Redactor",
    "ResultGate",
    "ResultOptions",
    "Route",
    "ValueLimits",
    "Verdict",
    "default_redactor",
]
