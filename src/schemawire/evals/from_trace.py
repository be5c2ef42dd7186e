"""A case from a recorded run: its input, its model's responses, and what it did, as expected.

The case replays the run. Each model's responses are in the trace, so the case plays them
again: an agent whose responses are those of its own script (the flow names it) is left to
that script; any other agent's responses, and a single agent's, are written into the case as
an inline script. A recorded live run becomes an offline case that way.

What a trace cannot say, and what the case does instead (`RecordedCase.notes` says which
applied):

- the flow file and the repository: taken from the caller, or found (the one flow of the
  repository whose agents the run visited, starting where it started);
- a script's path: the responses are recognised by their content;
- why a run failed (the error is not a hop): the case expects ``failed``, not the error;
- tool results: they come from the tools when the case runs; only the calls are expected;
- the options (max turns, strictness) and a single agent's tools and system prompt: the case
  uses the defaults and every ``[serve.tools]`` function;
- MCP tools: their calls are expected, but a case runs the repository's Python functions only;
- secrets: the trace holds payloads redacted, and so does the case.

Each run has its own trace file (``.schemawire/traces/<run id>.jsonl``), which a resumed run
appends to: a resumed run reads as one run (see `read_outcome`). A file that several runs
appended to (each given the same ``--trace``, or a file written before runs had one each) gives
the case of the last run in it: hops are grouped by their run id.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from schemawire.errors import InputError, UsageError
from schemawire.evals.discover import CASES_FOLDER
from schemawire.evals.expect import same_json
from schemawire.evals.outcome import ModelResponse, Outcome, read_outcome, route_targets
from schemawire.flows.definition import Flow, load_flow
from schemawire.host import ScriptedModel
from schemawire.schema.config import find_root
from schemawire.trace import read_trace
from schemawire.types import Hop

__all__ = ["RecordedCase", "case_from_trace"]

CASE_SCHEMA_ID = "https://schemawire.dev/schemas/eval-case.json"


@dataclass(frozen=True, slots=True)
class RecordedCase:
    """A case written from a trace.

    Attributes:
        document: the case, as JSON.
        path: where the case is to be written (``out``, or ``evals/<trace>.json`` of the
            repository); the case's relative paths are relative to it.
        notes: what the trace could not say, and what the case does instead.
    """

    document: dict[str, Any]
    path: Path
    notes: list[str] = field(default_factory=list[str])


def case_from_trace(
    trace: str | Path,
    *,
    flow: str | Path | None = None,
    repo: str | Path | None = None,
    out: str | Path | None = None,
    name: str | None = None,
) -> RecordedCase:
    """The case that replays the run recorded in ``trace`` (the last one, when several runs
    share the file) and expects what it did.

    Args:
        trace: a trace file (JSON Lines, as ``schemawire run --trace`` writes).
        flow: the run's flow file, for a flow run (default: found in the repository).
        repo: the repository (default: the flow's, or the one that holds the current folder).
        out: where the case will be written, for its relative paths (default:
            ``evals/`` of the repository).
        name: the case's name (default: the trace file's).

    Raises:
        UsageError: the trace holds no run, or its flow cannot be found.
        JSONError: a line of the trace is not a hop.
    """
    trace = Path(trace)
    hops, notes = _last_run(trace)
    probe = read_outcome(hops)
    if probe.input is None:
        raise UsageError(f"{trace}: the trace holds no user input: is it a run's trace?")
    document: dict[str, Any] = {
        "$schema": CASE_SCHEMA_ID,
        "name": name or trace.stem,
        "description": f"Recorded from {trace.name} by schemawire eval --from-trace.",
    }
    if probe.steps:
        outcome, path, body = _flow_run(
            hops, probe, trace, flow=flow, repo=repo, out=out, notes=notes
        )
    else:
        outcome, path, body = _agent_run(probe, trace, repo=repo, out=out, notes=notes)
    document |= body
    document["expect"] = _expect(outcome, notes)
    return RecordedCase(document, path, notes)


def _last_run(trace: Path) -> tuple[list[Hop], list[str]]:
    """The hops of the last run in ``trace``, and a note when it holds more than one."""
    runs = _runs(read_trace(trace))
    hops = runs[-1] if runs else []
    notes: list[str] = []
    if len(runs) > 1:
        notes.append(
            f"the trace holds {len(runs)} runs; the case is the last (run {hops[0].run_id})"
        )
    return hops, notes


def _flow_run(
    hops: list[Hop],
    probe: Outcome,
    trace: Path,
    *,
    flow: str | Path | None,
    repo: str | Path | None,
    out: str | Path | None,
    notes: list[str],
) -> tuple[Outcome, Path, dict[str, Any]]:
    """A flow run's outcome (read with its flow's routes), the case's path, and the case's
    ``repo``, ``flow``, ``input`` and ``models``."""
    found = _flow(flow, repo, probe, notes)
    outcome = read_outcome(hops, route_targets(found))
    root = Path(repo).resolve() if repo is not None else find_root(found.path.parent)
    path = _path(root, out, trace)
    body = _place(root, path)
    body["flow"] = Path(os.path.relpath(found.path.resolve(), root)).as_posix()
    body["input"] = outcome.input
    models = _flow_models(found, outcome, notes)
    if models:
        body["models"] = models
    return outcome, path, body


def _agent_run(
    outcome: Outcome,
    trace: Path,
    *,
    repo: str | Path | None,
    out: str | Path | None,
    notes: list[str],
) -> tuple[Outcome, Path, dict[str, Any]]:
    """A single agent's outcome, the case's path, and the case's ``repo``, ``input`` and
    ``model`` (its recorded responses, inline)."""
    root = find_root(repo if repo is not None else ".")
    path = _path(root, out, trace)
    body = _place(root, path)
    body["input"] = outcome.input
    body["model"] = _single_model(outcome)
    notes.append(
        "the trace does not say which script or model answered: the responses "
        "it recorded are written into the case"
    )
    notes.append(
        "the system prompt, the options and the tools offered are not read from "
        "the trace: the case offers every [serve.tools] function"
    )
    return outcome, path, body


def _runs(hops: Iterable[Hop]) -> list[list[Hop]]:
    """The hops of each run, in the order the runs start (several runs can share a file)."""
    runs: dict[str, list[Hop]] = {}
    for hop in hops:
        runs.setdefault(hop.run_id, []).append(hop)
    return list(runs.values())


# --- where things are ---------------------------------------------------------------------------


def _flow(
    given: str | Path | None, repo: str | Path | None, outcome: Outcome, notes: list[str]
) -> Flow:
    if given is not None:
        return load_flow(given)
    root = find_root(repo if repo is not None else ".")
    candidates = []
    for path in sorted((root / "flows").glob("*.json")):
        try:
            candidate = load_flow(path)
        except InputError:
            continue
        if candidate.start == outcome.steps[0] and set(outcome.steps) <= set(candidate.agents):
            candidates.append(candidate)
    if len(candidates) != 1:
        which = ", ".join(str(c.path) for c in candidates) or f"none in {root / 'flows'}"
        raise UsageError(
            f"the trace does not name its flow, and {len(candidates)} flows "
            f"could have run it ({which}): give --flow"
        )
    notes.append(
        f"the trace does not name its flow: {candidates[0].path} is the one flow of "
        "the repository that could have run it"
    )
    return candidates[0]


def _path(root: Path, out: str | Path | None, trace: Path) -> Path:
    """Where the case is to be written: ``out``, or ``evals/`` of the repository."""
    return Path(out).resolve() if out is not None else root / CASES_FOLDER / f"{trace.stem}.json"


def _place(root: Path, path: Path) -> dict[str, Any]:
    """``repo``, when the case will not sit inside the repository it runs in."""
    folder = path.parent
    if find_root(folder) == root.resolve():
        return {}
    return {"repo": Path(os.path.relpath(root.resolve(), folder)).as_posix()}


# --- models -------------------------------------------------------------------------------------


def _flow_models(flow: Flow, outcome: Outcome, notes: list[str]) -> dict[str, Any]:
    """An inline script for each agent whose responses are not its own script's."""
    models: dict[str, Any] = {}
    for agent in dict.fromkeys(outcome.steps):
        recorded = [r for r in outcome.responses if r.agent == agent]
        if recorded and not _own_script_plays(flow, agent, recorded):
            models[agent] = _inline(recorded)
            notes.append(
                f"agent {agent}'s responses are not those of a script the flow names: "
                "they are written into the case"
            )
    return models


def _own_script_plays(flow: Flow, agent: str, recorded: list[ModelResponse]) -> bool:
    spec = flow.agents[agent].model
    if spec is None or not spec.startswith("script:"):
        return False
    try:
        script = ScriptedModel.from_file(flow.path.parent / spec.removeprefix("script:"))
    except (InputError, UsageError, OSError):
        return False
    played = script.responses[: len(recorded)]
    return len(played) == len(recorded) and all(
        r.api == script.api and same_json(r.body, body)
        for r, body in zip(recorded, played, strict=True)
    )


def _single_model(outcome: Outcome) -> dict[str, Any]:
    if not outcome.responses:
        raise UsageError("the trace holds no model response to replay")
    return _inline(outcome.responses)


def _inline(responses: list[ModelResponse]) -> dict[str, Any]:
    first = responses[0]
    script: dict[str, Any] = {"api": first.api}
    if first.model is not None:
        script["model"] = first.model
    return script | {"responses": [r.body for r in responses]}


# --- what the run did ---------------------------------------------------------------------------


def _expect(outcome: Outcome, notes: list[str]) -> dict[str, Any]:
    expect: dict[str, Any] = {"status": outcome.status}
    if outcome.steps:
        expect["steps"] = outcome.steps
        if outcome.handoff != "none":
            expect["route"] = outcome.route
    expect["calls"] = [call.to_json() for call in outcome.calls]
    expect["calls_order"] = "exact"
    if outcome.status == "done":
        expect["output"] = {"equals": outcome.output}
    else:
        notes.append(
            "the run failed, and a trace does not say why: the case expects status "
            'failed (add "error" to expect the reason)'
        )
    if outcome.steps and outcome.state is not None:
        expect["state"] = {"equals": outcome.state}
    mcp = sorted({c.tool for c in outcome.calls if c.via == "mcp"})
    if mcp:
        notes.append(
            f"the run called MCP tools ({', '.join(mcp)}): a case runs only the "
            "repository's [serve.tools] functions"
        )
    return expect
