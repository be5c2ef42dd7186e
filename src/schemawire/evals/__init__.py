"""Evals: cases that run an agent or a flow and say what the run must do.

A case file (``evals/<name>.json``, checked against ``case.schema.json``) names the user's
input, the model (a script, or a live model), and what to expect: the tool calls, the route,
the status, the final output and the state. The layers, each on the one before:

- `load_case` reads and checks a case file (`Case`; `check_case`, a case not yet written);
- `read_outcome` reads what a run did from its hops (`Outcome`);
- `check_expectations` compares the two, one check per key of ``expect`` (`CHECKS`; values
  compared by `same_json`), giving each `Failure`: a sentence and a JSON Pointer;
- `run_case` runs a case in a fresh store, with an in-memory trace (`CaseResult`);
- `junit_xml` reports results for CI; `case_from_trace` writes a case from a recorded run.

``schemawire eval`` and the pytest plugin (`schemawire.evals.pytest_plugin`) run the same cases.
"""

from __future__ import annotations

from schemawire.evals.case import CASE_SCHEMA, Case, check_case, load_case
from schemawire.evals.discover import CASES_FOLDER, find_cases, is_case_file
from schemawire.evals.expect import CHECKS, Failure, check_expectations, same_json
from schemawire.evals.from_trace import RecordedCase, case_from_trace
from schemawire.evals.junit import junit_xml
from schemawire.evals.outcome import (
    ModelResponse,
    ObservedCall,
    Outcome,
    read_outcome,
    route_targets,
)
from schemawire.evals.runner import CaseResult, run_case, run_case_async, run_cases

__all__ = [
    "CASES_FOLDER",
    "CASE_SCHEMA",
    "CHECKS",
    "Case",
    "CaseResult",
    "Failure",
    "ModelResponse",
    "ObservedCall",
    "Outcome",
    "RecordedCase",
    "case_from_trace",
    "check_case",
    "check_expectations",
    "find_cases",
    "is_case_file",
    "junit_xml",
    "load_case",
    "read_outcome",
    "route_targets",
    "run_case",
    "run_case_async",
    "run_cases",
    "same_json",
]
