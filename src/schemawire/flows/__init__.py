"""Flows: agents, their tools, the handoffs between them and the routes each takes.

- `schemawire.flows.definition`: a flow file (``flows/<name>.json``) read and checked against the
  flow schema: `Flow`, `AgentSpec`, `load_flow`.
- `schemawire.flows.findings`: what ``schemawire check`` reports about a repository's flows.

Flows need only the schemas and the handoff gate, so they sit one layer above the gates, below
the host (beside `schemawire.trace`): the checker reads them without the host, and the host's
`schemawire.host.workflow` runs them.
"""
