"""Hops as they happen, one line each, for people: who to whom, what, and what the gate said."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.console import Console
from rich.markup import escape

from schemawire._json import dumps
from schemawire.errors import SchemawireError
from schemawire.types import Hop
from schemawire.wire import wire_format

__all__ = ["HopPrinter", "fold", "shown"]

_OUTCOME_STYLE = {
    "accepted": "green",
    "rejected": "bold red",
    "repaired": "yellow",
    "redacted": "yellow",
    "truncated": "yellow",
}


def shown(value: Any) -> str:
    """``value`` for people: a string as its text, any other JSON value as compact JSON (key
    order kept), never as Python writes it (``None``, ``True``, ``{'a': 1}``)."""
    return value if isinstance(value, str) else dumps(value, indent=False)


def fold(value: Any, width: int = 110) -> str:
    """``value`` as `shown` on one line, cut to ``width`` characters."""
    text = " ".join(shown(value).split())
    return text if len(text) <= width else text[: width - 1] + "…"


class HopPrinter:
    """Prints each hop of a trace as one line (pass it as ``Trace(on_hop=...)``)."""

    def __init__(self, console: Console, width: int = 110) -> None:
        self.console = console
        self.width = width

    def __call__(self, hop: Hop) -> None:
        if hop.protocol == "span":  # structure for readers of the file; each hop shows its own
            return
        # a decision taken in one place (a shortlist) is a hop from there to there: named once
        where = hop.source if hop.source == hop.target else f"{hop.source} → {hop.target}"
        arrow = f"[dim]{hop.seq:>3}[/] {escape(where)}"
        self.console.print(f"{arrow}  [cyan]{escape(hop.protocol)}[/] {self._summary(hop)}")

    def _summary(self, hop: Hop) -> str:
        payload = hop.payload if isinstance(hop.payload, dict) else {}
        if hop.verdict is not None and hop.protocol in ("gate", "handoff"):
            line = self._verdict(hop.verdict, hop.protocol)
            if hop.protocol == "handoff":
                route = payload.get("route")
                line += f"  → [bold]{escape(shown(route))}[/]" if route else "  [red]no route[/]"
            return line
        describe = _DESCRIBE.get(hop.protocol, _model_summary)
        return escape(fold(describe(hop, payload), self.width))

    def _verdict(self, verdict: dict[str, Any], protocol: str) -> str:
        """The gate's outcome (``arguments accepted get_weather``); the handoff gate's hop says
        ``handoff`` once (``handoff accepted triage_to_billing``)."""
        outcome = shown(verdict.get("outcome", "?"))
        style = _OUTCOME_STYLE.get(outcome, "white")
        gate = shown(verdict.get("gate", ""))
        said = outcome if gate == protocol else f"{gate} {outcome}"
        line = f"[{style}]{escape(said)}[/] {escape(shown(verdict.get('tool', '')))}"
        rejection = verdict.get("rejection")
        if rejection:
            first = (rejection.get("violations") or [{}])[0]
            where = shown(first.get("pointer") or "/")
            detail = f"{shown(rejection.get('code'))}: {where} {shown(first.get('message', ''))}"
            line += f"  [red]{escape(fold(detail, self.width))}[/]"
        for change in verdict.get("changes", [])[:3]:
            kind, where = shown(change.get("kind", "")), shown(change.get("pointer") or "/")
            line += f"  [yellow]{escape(kind)} {escape(where)}[/]"
        return line


def _mcp_summary(hop: Hop, payload: dict[str, Any]) -> Any:
    if "method" in payload:
        params = payload.get("params") or {}
        name = params.get("name") if isinstance(params, dict) else None
        if name is not None:
            return (
                f"{shown(payload['method'])} {shown(name)} {fold(params.get('arguments', {}), 80)}"
            )
        return payload["method"]
    if "error" in payload:
        return {"error": payload["error"]}
    if "unreadable" in payload:
        return payload["unreadable"]
    return payload.get("result", payload)


def _model_summary(hop: Hop, payload: dict[str, Any]) -> Any:
    """A model request by its size; a model answer by what it says (its text, its calls)."""
    if hop.protocol == "python":
        return payload
    if hop.direction == "send":
        new = payload.get("messages") or payload.get("input") or payload.get("contents") or []
        kept = (payload.get("history") or {}).get("kept", 0)
        tools = payload.get("tools") or []
        listed = "tools as before" if tools == "unchanged" else _count(len(tools), "tool")
        return f"request: {_count(kept + len(new), 'message')} ({len(new)} new), {listed}"
    try:
        turn = wire_format(hop.protocol).turn(payload, ())
    except SchemawireError:
        return payload
    calls = [f"{call.name}({fold(call.arguments, 70)})" for call in turn.tool_calls]
    return "calls " + ", ".join(calls) if calls else f"answer: {turn.text or ''}"


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def _checkpoint_summary(hop: Hop, payload: dict[str, Any]) -> str:
    """A checkpoint written (``send``), or the one a resumed run starts from (``receive``)."""
    step, where = shown(payload.get("step")), shown(payload.get("node") or "end")
    said = f"resumed at step {step}" if hop.direction == "receive" else f"step {step} saved"
    return f"{said}, next {where}: {fold(payload.get('state'), 70)}"


def _text_summary(hop: Hop, payload: dict[str, Any]) -> Any:
    return payload.get("text", "")


def _flow_summary(hop: Hop, payload: dict[str, Any]) -> str:
    return f"input: {fold(payload.get('input'), 90)}"


def _shortlist_summary(hop: Hop, payload: dict[str, Any]) -> str:
    """A shortlist decision: the query, and the tools chosen of how many that matched."""
    chosen = ", ".join(shown(tool.get("name")) for tool in payload.get("tools") or [])
    matched = f"{shown(payload.get('total_matches'))} matched"
    return f"{fold(payload.get('query'), 60)} -> {chosen or 'none'} ({matched})"


_DESCRIBE: dict[str, Callable[[Hop, dict[str, Any]], Any]] = {
    "mcp": _mcp_summary,
    "shortlist": _shortlist_summary,
    "text": _text_summary,
    "flow": _flow_summary,
    "checkpoint": _checkpoint_summary,
}
