"""Whole request bodies from the loop's deltas.

The loop traces each request to a model as what it adds to the one before (a run repeats its
whole conversation with every request; tracing each in full costs time and space in the square
of its length): ``"history": {"key", "kept"}`` says the first ``kept`` entries of
``payload[key]`` are the previous request's, and ``"tools": "unchanged"`` says the tools are
the previous request's. "The previous request" is the one before it to the same model (the same
``from`` and ``to``) in the same run: the same run id and the same ``run`` span (runs of one
host that overlap write to one trace, each with its own deltas).

`whole_body` is one step of the rebuild, so that a reader that seeks (a page over a long file)
can rebuild one body from the one before; `Wholes` rebuilds every body of a trace in order.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from schemawire.types import Hop

__all__ = ["whole_body"]


def is_model_request(hop: Hop) -> bool:
    """Whether ``hop`` is a request the loop sent to a model (its payload maybe a delta)."""
    return hop.direction == "send" and hop.target.startswith("model:")


def whole_body(previous_whole: dict[str, Any] | None, delta: dict[str, Any]) -> dict[str, Any]:
    """The whole body of a request: ``delta`` (a send hop's payload as written) with its history
    and tools filled in from ``previous_whole`` (the whole body of the previous request to the
    same model; None for the first), and its ``history`` member dropped. The members keep their
    order, so the body written as JSON is the bytes the model was sent (secrets redacted).

    A delta whose earlier entries ``previous_whole`` does not hold (the reader skipped the
    request before, or a crash cut its line) is returned as it is, ``history`` member and all:
    what is missing is not made up.

    Example:
        >>> first = {"model": "m", "messages": [{"role": "user"}], "tools": [{"name": "t"}]}
        >>> delta = {"model": "m", "messages": [{"role": "assistant"}], "tools": "unchanged",
        ...          "history": {"key": "messages", "kept": 1}}
        >>> whole_body(first, delta)["messages"]
        [{'role': 'user'}, {'role': 'assistant'}]
    """
    history = delta.get("history")
    tools_unchanged = delta.get("tools") == "unchanged"
    if history is None and not tools_unchanged:
        return delta
    if previous_whole is None:
        return delta
    body = {member: value for member, value in delta.items() if member != "history"}
    if isinstance(history, dict):
        earlier = _earlier(previous_whole, history, delta)
        if earlier is None:
            return delta
        key = history["key"]
        body[key] = [*earlier, *delta[key]]
    if tools_unchanged:
        if "tools" not in previous_whole:
            return delta
        body["tools"] = previous_whole["tools"]
    return body


def _earlier(
    previous_whole: dict[str, Any], history: dict[str, Any], delta: dict[str, Any]
) -> list[Any] | None:
    """The entries the delta keeps from the previous body, or None when it does not hold them."""
    key, kept = history.get("key"), history.get("kept")
    if not isinstance(key, str) or not isinstance(kept, int) or isinstance(kept, bool):
        return None
    before = previous_whole.get(key)
    if not isinstance(before, list) or len(before) < kept or not isinstance(delta.get(key), list):
        return None
    return before[:kept]


class Wholes:
    """Rebuilds each model request of a trace read in order: feed it every hop (`whole`)."""

    def __init__(self) -> None:
        self._last: dict[tuple[str, str, str, str | None], dict[str, Any]] = {}
        self._run_of: dict[str, str | None] = {}  # span id -> the run span it is in

    def whole(self, hop: Hop) -> Hop:
        """``hop``, its payload a whole body when it is a model request written as a delta."""
        if hop.protocol == "span":
            self._note_span(hop)
            return hop
        if not is_model_request(hop) or not isinstance(hop.payload, dict):
            return hop
        key = (hop.run_id, hop.source, hop.target, self._run_of.get(hop.span or ""))
        body = whole_body(self._last.get(key), hop.payload)
        self._last[key] = body
        if body is hop.payload:
            return hop
        return dataclasses.replace(hop, payload=body)

    def _note_span(self, hop: Hop) -> None:
        payload = hop.payload
        if hop.direction != "start" or not isinstance(payload, dict) or hop.span is None:
            return
        if payload.get("kind") == "run":
            self._run_of[hop.span] = hop.span
        else:
            parent = payload.get("parent")
            self._run_of[hop.span] = self._run_of.get(parent) if isinstance(parent, str) else None
