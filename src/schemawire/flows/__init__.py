"""Flows: agents, their tools, the handoffs between them and the routes each takes.

- `schemawire.flows.definition`: a flow file (``flows/<name>.json``) read and checked against the
  flow schema: `Flow`, `AgentSpec`, `load_flow`.
- `schemawire.flows.findings`: what ``schemawire check`` reports about a repository's flows.

Flows need only the schemas and the handoff gate, so they sit one layer above the gates, below
the host (beside `schemawire.trace`): the checker reads them without the host, and the host's
`schemawire.host.workflow` runs them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from schemawire._lazy import LazyNames

if TYPE_CHECKING:
    from schemawire.flows.definition import END, FLOW_SCHEMA, AgentSpec, Flow, load_flow
    from schemawire.flows.findings import flow_findings

__all__ = ["END", "FLOW_SCHEMA", "AgentSpec", "Flow", "flow_findings", "load_flow"]

# Each module's names again, as in its own __all__: the facade names them to load lazily.
_HOMES = {
    "schemawire.flows.definition": ("END", "FLOW_SCHEMA", "AgentSpec", "Flow", "load_flow"),
    "schemawire.flows.findings": ("flow_findings",),
}
_NAMES = LazyNames("schemawire.flows", _HOMES)


def __getattr__(name: str) -> Any:
    return _NAMES.load(name)
